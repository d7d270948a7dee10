/*
 * rdlmctl: look at a running lease authority through the public API
 * (rdlm_authority_status of <rdlm/lease.h>).
 *
 *   rdlmctl status --authority a:p,b:p,c:p [--json] [--timeout-ms 1000]
 *
 * One line per replica: its address, its id if known (the leader's own id; a
 * follower's is not in its answer), leader yes/no, term, epoch, sessions, locks and
 * the last applied index, and "disk=full" for a replica whose data disk is full,
 * read-only or gone (RDLM_ERR_NO_SPACE: the leader then refuses writes), or why it
 * did not answer (DIVERGED: it found that another replica applied other entries, and
 * serves nothing). With --json, one JSON object per line ("disk": "ok" or "full").
 * Exit 0 when a majority answered, exactly one of them is the leader and no disk is
 * full, 1 otherwise, 2 on bad usage (one line on stderr). --version prints the
 * version.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdlm.h>
#include <rdlm/lease.h>

#include "cli.h"
#include "config.h"

static void rdlm_ctl_usage(FILE *out)
{
    fputs("usage: rdlmctl status --authority host:port[,...] [--json] "
          "[--timeout-ms 1000]\n"
          "       rdlmctl -V|--version | -h|--help\n"
          "\n"
          "Ask every replica of the authority for its status (client addresses, 1-7;\n"
          "host an IPv4 address or a host name).\n"
          "disk=full: that replica's data disk is full, read-only or gone (the\n"
          "leader then refuses writes with RDLM_ERR_NO_SPACE).\n"
          "Exit 0 if a majority answered, exactly one of them is the leader and no\n"
          "disk is full, else 1; 2 on bad usage.\n",
          out);
}

/* The replica's own id when it is the leader (its answer names itself), whatever
 * spelling of its address was asked. */
static const char *rdlm_ctl_id(const rdlm_authority_status_t *st, char *buf, size_t len)
{
    if (st->is_leader && st->leader_id != 0) {
        snprintf(buf, len, "%" PRIu64, st->leader_id);
    } else {
        snprintf(buf, len, "%s", "-");
    }
    return buf;
}

static void rdlm_ctl_print(const char *addr, rdlm_status_t s,
                           const rdlm_authority_status_t *st, int json)
{
    char id[24];
    int full = s == RDLM_ERR_NO_SPACE; /* answered: st is filled */

    if (full) {
        s = RDLM_OK;
    }
    if (s != RDLM_OK && json) {
        printf("{\"address\":\"%s\",\"error\":\"%s\"}\n", addr, rdlm_status_name(s));
    } else if (s == RDLM_ERR_CORRUPT) {
        printf("%s DIVERGED: it applied other entries than another replica and refuses "
               "every request (see its log)\n",
               addr);
    } else if (s != RDLM_OK) {
        printf("%s no answer (%s)\n", addr, rdlm_status_name(s));
    } else if (json) {
        rdlm_ctl_id(st, id, sizeof(id));
        printf("{\"address\":\"%s\",\"id\":%s,\"leader\":%s,\"term\":%" PRIu64
               ",\"leader_id\":%" PRIu64 ",\"leader_address\":\"%s\",\"epoch\":%" PRIu64
               ",\"sessions\":%" PRIu64 ",\"locks\":%" PRIu64 ",\"commit\":%" PRIu64
               ",\"disk\":\"%s\"}\n",
               addr, strcmp(id, "-") == 0 ? "null" : id, st->is_leader ? "true" : "false",
               st->term, st->leader_id, st->leader_addr, st->epoch, st->sessions, st->locks,
               st->commit, full ? "full" : "ok");
    } else {
        printf("%s id=%s leader=%s term=%" PRIu64 " epoch=%" PRIu64 " sessions=%" PRIu64
               " locks=%" PRIu64 " commit=%" PRIu64 "%s\n",
               addr, rdlm_ctl_id(st, id, sizeof(id)), st->is_leader ? "yes" : "no",
               st->term, st->epoch, st->sessions, st->locks, st->commit,
               full ? " disk=full (writes refused: RDLM_ERR_NO_SPACE)" : "");
    }
}

static int rdlm_ctl_status(const char *authority, uint32_t timeout_ms, int json)
{
    char addrs[RDLM_ADDRS_COUNT][RDLM_ADDR_MAX + 1];
    unsigned n, answered = 0, leaders = 0, full = 0;

    if (!rdlm_config_addrs_parse(authority, addrs, RDLM_ADDRS_COUNT, &n)) {
        return rdlm_cli_usage_error("rdlmctl", "--authority '%s' is not 1-%u host:port",
                                    authority, RDLM_ADDRS_COUNT);
    }
    for (unsigned i = 0; i < n; i++) {
        rdlm_authority_status_t st;
        rdlm_status_t s = rdlm_authority_status(addrs[i], timeout_ms, &st);

        rdlm_ctl_print(addrs[i], s, &st, json);
        full += s == RDLM_ERR_NO_SPACE;
        if (s == RDLM_ERR_NO_SPACE) {
            s = RDLM_OK;
        }
        answered += s == RDLM_OK;
        leaders += s == RDLM_OK && st.is_leader;
    }
    if (!json) {
        printf("%u of %u replicas answered, %u leader%s", answered, n, leaders,
               leaders == 1 ? "" : "s");
        if (full != 0) {
            printf(", %u with a full disk", full);
        }
        printf("\n");
    }
    return 2 * answered > n && leaders == 1 && full == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    enum { OPT_AUTHORITY = 256, OPT_JSON, OPT_TIMEOUT };
    static const struct option longopts[] = {
        {"authority", required_argument, NULL, OPT_AUTHORITY},
        {"json", no_argument, NULL, OPT_JSON},
        {"timeout-ms", required_argument, NULL, OPT_TIMEOUT},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    static const char optstring[] = ":hV";
    const char *authority = NULL;
    unsigned long timeout_ms = 1000;
    int json = 0, c;
    char *end;

    opterr = 0; /* rdlm_cli_bad_option reports */
    while ((c = getopt_long(argc, argv, optstring, longopts, NULL)) != -1) {
        switch (c) {
        case OPT_AUTHORITY:
            authority = optarg;
            break;
        case OPT_JSON:
            json = 1;
            break;
        case OPT_TIMEOUT:
            timeout_ms = strtoul(optarg, &end, 10);
            if (optarg[0] < '0' || optarg[0] > '9' || *end != '\0' || timeout_ms == 0 ||
                timeout_ms > 600000) {
                return rdlm_cli_usage_error("rdlmctl", "invalid --timeout-ms '%s'", optarg);
            }
            break;
        case 'h':
            rdlm_ctl_usage(stdout);
            return 0;
        case 'V':
            return rdlm_cli_version("rdlmctl");
        default:
            return rdlm_cli_bad_option("rdlmctl", c, optstring, argv);
        }
    }
    if (optind + 1 != argc || strcmp(argv[optind], "status") != 0 || authority == NULL) {
        return rdlm_cli_usage_error("rdlmctl", "expected: status --authority LIST");
    }
    return rdlm_ctl_status(authority, (uint32_t)timeout_ms, json);
}
