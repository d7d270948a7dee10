/*
 * lease-renew's rdlmd adapter, through the public API of <rdlm/lease.h> only:
 *
 *   rdlmd-renew  open:   rdlm_session_open(RDLMBENCH_RDLMD, TTL 30 s) -> a session at
 *                        the leader, whose renewal thread also renews it every 10 s
 *                once:   rdlm_session_renew: the renewal thread's RENEW, one frame out,
 *                        one reply in; the leader restarts the session's timer, no
 *                        log entry. What it costs includes the public client's own
 *                        work (its lock, the validity update, its counters).
 *                close:  rdlm_session_close (CLOSE, a log entry)
 *
 * rdlm_bench_rdlmd_applied asks the replicas of RDLMBENCH_RDLMD which one leads
 * (rdlm_authority_status) and returns that one's last applied index.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdlm.h>
#include <rdlm/lease.h>

#include "lock_services.h"
#include "renew_ops.h"

#define RDLM_BENCH_RDLMD_STATUS_MS 1000u

static int rdlm_bench_rdlmd_open(const char *job, void **h_p, char *err, size_t errlen)
{
    const char *authority = getenv(RDLM_BENCH_ENV_RDLMD);
    rdlm_session_params_t params = {.field_mask = RDLM_SESSION_FIELD_TTL,
                                    .ttl_ms = RDLM_BENCH_SERVICE_TTL_MS};
    rdlm_session_h s;
    rdlm_status_t st;

    (void)job;
    if (authority == NULL || authority[0] == '\0') {
        snprintf(err, errlen, "%s not set (want a.b.c.d:port[,...])", RDLM_BENCH_ENV_RDLMD);
        return -1;
    }
    st = rdlm_session_open(authority, &params, &s);
    if (st != RDLM_OK) {
        snprintf(err, errlen, "rdlm_session_open(%s): %s", authority, rdlm_status_name(st));
        return -1;
    }
    *h_p = s;
    return 0;
}

static int rdlm_bench_rdlmd_once(void *h)
{
    rdlm_status_t st = rdlm_session_renew(h);

    if (st != RDLM_OK) {
        fprintf(stderr, "rdlm-bench: rdlm_session_renew: %s\n", rdlm_status_name(st));
        return -1;
    }
    return 0;
}

static void rdlm_bench_rdlmd_close(void *h)
{
    rdlm_session_close(h);
}

int rdlm_bench_rdlmd_applied(uint64_t *index_p)
{
    const char *authority = getenv(RDLM_BENCH_ENV_RDLMD);
    rdlm_authority_status_t status;
    char addr[64];
    const char *p;
    size_t len;

    for (p = authority != NULL ? authority : ""; *p != '\0'; p += len + (p[len] == ',')) {
        len = strcspn(p, ",");
        snprintf(addr, sizeof(addr), "%.*s", (int)len, p);
        if (rdlm_authority_status(addr, RDLM_BENCH_RDLMD_STATUS_MS, &status) == RDLM_OK &&
            status.is_leader) {
            *index_p = status.commit;
            return 0;
        }
    }
    fprintf(stderr, "rdlm-bench: no replica of %s says it leads\n",
            authority != NULL ? authority : RDLM_BENCH_ENV_RDLMD);
    return -1;
}

const rdlm_bench_renew_ops_t rdlm_bench_renew_rdlmd = {
    .name = "rdlmd-renew",
    .description = "rdlm_session_renew of a session at the rdlmd leader, public API "
                   "(loopback)",
    .env = RDLM_BENCH_ENV_RDLMD,
    .open = rdlm_bench_rdlmd_open,
    .once = rdlm_bench_rdlmd_once,
    .close = rdlm_bench_rdlmd_close,
};
