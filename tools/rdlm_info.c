/*
 * rdlm_info: what this build of rdlm is and what it would do here — version, build
 * options, transports, node topology, the effective RDLM_* configuration and the
 * segment size it implies. Selectors print single sections (-b, -d, -t, -c), --parsable
 * as "section:key:value" lines; --cleanup removes what dead jobs left in their segment
 * directory (and in /dev/shm under earlier versions' names); see
 * the usage text. Exit 0; 2 on a bad flag (one line) or an invalid configuration.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include <rdlm.h>

#include "cli.h"
#include "config.h"
#include "rdlm_info.h"
#include "topo.h"

enum {
    RDLM_INFO_BUILD = 1 << 0,
    RDLM_INFO_DEVICES = 1 << 1,
    RDLM_INFO_TOPOLOGY = 1 << 2,
    RDLM_INFO_CONFIG = 1 << 3,
    RDLM_INFO_ALL = (1 << 4) - 1,
};

static const char rdlm_info_usage[] =
    "usage: rdlm_info [-b] [-d] [-t] [-c] [-p]\n"
    "       rdlm_info --cleanup [--job NAME] [-n|--dry-run]\n"
    "       rdlm_info --config-markdown | -V|--version | -h|--help\n"
    "Print what this build of rdlm is and what it would do here. No selector: every\n"
    "section, in this order.\n"
    "  -b, --build       version and build options (RDLM_WITH_*, RDLM_HAVE_HWLOC,\n"
    "                    RDLM_HAVE_MUNGE, build type)\n"
    "  -d, --devices     transports: the backends built, which of them open here, UCX's\n"
    "                    transports and RDLM_TRANSPORT's capabilities\n"
    "  -t, --topology    this node's packages, NUMA nodes, cores, hardware threads\n"
    "  -c, --config      every RDLM_* variable: effective value (RDLM_JOB: the job a\n"
    "                    context created now joins), source (env, default, or the\n"
    "                    launcher variable of the job) and default; then the segment\n"
    "  -p, --parsable    one \"section:key:value\" line per field: build:version:X.Y.Z,\n"
    "                    build:OPTION:VALUE, transport:NAME:FIELD:VALUE,\n"
    "                    topology:FIELD:VALUE, config:NAME:FIELD:TEXT with FIELD value,\n"
    "                    default, allowed, source, help (the value runs to the end of\n"
    "                    the line and may contain ':')\n"
    "      --cleanup     remove the calling user's segments and lock files in\n"
    "                    RDLM_SHM_DIR (default /dev/shm/rdlm-<uid>), and under an\n"
    "                    earlier version's names in /dev/shm, that no live process\n"
    "                    is attached to (left by crashed jobs;\n"
    "                    for job epilogs); one line per job: \"removed JOB: ...\" or\n"
    "                    \"kept JOB: why\", then \"cleanup: N removed, M kept\". Other\n"
    "                    users' files are never touched\n"
    "      --job NAME    with --cleanup: only job NAME (the RDLM_JOB, e.g. Slurm's\n"
    "                    job id) and its distributed contexts' node segments\n"
    "  -n, --dry-run     with --cleanup: list (\"would remove JOB\"), remove nothing\n"
    "      --config-markdown  the configuration table of README.md, from the built-in\n"
    "                    list (scripts/config-table.sh puts it there)\n"
    "  -V, --version     print the version and exit\n"
    "  -h, --help        print this help and exit\n"
    "Exit: 0; 2 on a bad command line (one line on stderr) or an invalid RDLM_*\n"
    "configuration (the error names the variable); --cleanup: 0 (also when it kept\n"
    "segments in use), 1 if a directory cannot be listed or is refused.\n";

/* What the command line asks for. */
typedef struct rdlm_info_opts {
    unsigned sections; /* RDLM_INFO_* bits, 0: all */
    int parsable;
    int cleanup, dry_run;
    const char *job; /* --job, NULL: every job */
} rdlm_info_opts_t;

/* RDLM_BUILD_OPTIONS ("NAME=VALUE ..." from tools/CMakeLists.txt) as text or lines. */
static void rdlm_info_build(int parsable)
{
    const char *opt = RDLM_BUILD_OPTIONS;

    if (!parsable) {
        printf("rdlm %s\nbuild options:\n  %s\n", rdlm_get_version(), opt);
        return;
    }
    printf("build:version:%s\n", rdlm_get_version());
    while (*opt != '\0') {
        size_t len = strcspn(opt, " ");
        size_t name_len = strcspn(opt, "=");

        if (name_len < len) {
            printf("build:%.*s:%.*s\n", (int)name_len, opt, (int)(len - name_len - 1),
                   opt + name_len + 1);
        }
        opt += len;
        opt += strspn(opt, " ");
    }
}

static void rdlm_info_topology(int parsable)
{
    rdlm_topo_t topo;
    int ok = rdlm_topo_discover(&topo) == RDLM_OK;

    if (!parsable) {
        printf("topology:\n");
        if (ok) {
            rdlm_topo_print(&topo, stdout);
        } else {
            printf("  unavailable\n");
        }
    } else if (ok) {
        printf("topology:source:%s\n", topo.from_hwloc ? "hwloc" : "sysconf");
        printf("topology:packages:%d\ntopology:numa_nodes:%d\n", topo.packages,
               topo.numa_nodes);
        printf("topology:cores:%d\ntopology:hw_threads:%d\n", topo.cores, topo.pus);
    }
}

/* Check the combination of options: --job and --dry-run need --cleanup, which takes
 * no selector. -1 if fine, else the exit status of a one-line usage error. */
static int rdlm_info_options_check(const rdlm_info_opts_t *o)
{
    if (!o->cleanup && (o->job != NULL || o->dry_run)) {
        return rdlm_cli_usage_error("rdlm_info", "%s needs --cleanup",
                                    o->job != NULL ? "--job" : "--dry-run");
    }
    if (o->cleanup && (o->sections != 0 || o->parsable)) {
        return rdlm_cli_usage_error("rdlm_info", "--cleanup takes no section selector");
    }
    return -1;
}

/* Fill *o from the command line. -1: go on; else the exit status, after --help,
 * --version or --config-markdown printed, or a bad command line reported in one
 * line. */
static int rdlm_info_options(int argc, char **argv, rdlm_info_opts_t *o)
{
    enum { OPT_MARKDOWN = 256, OPT_CLEANUP, OPT_JOB };
    static const struct option longopts[] = {
        {"build", no_argument, NULL, 'b'},
        {"devices", no_argument, NULL, 'd'},
        {"topology", no_argument, NULL, 't'},
        {"config", no_argument, NULL, 'c'},
        {"parsable", no_argument, NULL, 'p'},
        {"cleanup", no_argument, NULL, OPT_CLEANUP},
        {"job", required_argument, NULL, OPT_JOB},
        {"dry-run", no_argument, NULL, 'n'},
        {"config-markdown", no_argument, NULL, OPT_MARKDOWN},
        {"version", no_argument, NULL, 'V'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    static const char optstring[] = ":bdtcpnVh";
    int c;

    opterr = 0; /* rdlm_cli_bad_option reports */
    while ((c = getopt_long(argc, argv, optstring, longopts, NULL)) != -1) {
        switch (c) {
        case 'b':
            o->sections |= RDLM_INFO_BUILD;
            break;
        case 'd':
            o->sections |= RDLM_INFO_DEVICES;
            break;
        case 't':
            o->sections |= RDLM_INFO_TOPOLOGY;
            break;
        case 'c':
            o->sections |= RDLM_INFO_CONFIG;
            break;
        case 'p':
            o->parsable = 1;
            break;
        case OPT_CLEANUP:
            o->cleanup = 1;
            break;
        case OPT_JOB:
            if (!rdlm_config_job_valid(optarg)) {
                return rdlm_cli_bad_value("rdlm_info", c, longopts, optarg);
            }
            o->job = optarg;
            break;
        case 'n':
            o->dry_run = 1;
            break;
        case OPT_MARKDOWN:
            rdlm_info_config_markdown();
            return 0;
        case 'V':
            return rdlm_cli_version("rdlm_info");
        case 'h':
            fputs(rdlm_info_usage, stdout);
            return 0;
        default:
            return rdlm_cli_bad_option("rdlm_info", c, optstring, argv);
        }
    }
    if (optind != argc) {
        return rdlm_cli_usage_error("rdlm_info", "unexpected argument '%s'", argv[optind]);
    }
    return rdlm_info_options_check(o);
}

int main(int argc, char **argv)
{
    rdlm_info_opts_t o = {0};
    int rc = rdlm_info_options(argc, argv, &o);
    unsigned sections = o.sections != 0 ? o.sections : RDLM_INFO_ALL;
    int parsable = o.parsable;
    rdlm_config_t cfg;
    rdlm_status_t cfg_st;

    if (rc >= 0) {
        return rc;
    }
    /* Loaded first for the log level and RDLM_PROGRESS; printed (or refused) below. */
    cfg_st = rdlm_config_load(&cfg);
    if (cfg_st != RDLM_OK) {
        (void)rdlm_config_parse((const char *const[]){NULL}, &cfg);
    }
    if (o.cleanup) {
        return rdlm_info_cleanup(cfg.shm_dir, o.job, o.dry_run);
    }
    if (sections & RDLM_INFO_BUILD) {
        rdlm_info_build(parsable);
    }
    if ((sections & RDLM_INFO_DEVICES) && parsable) {
        rdlm_info_transports_parsable(&cfg);
    } else if (sections & RDLM_INFO_DEVICES) {
        printf("transports:\n");
        rdlm_info_transports(&cfg);
    }
    if (sections & RDLM_INFO_TOPOLOGY) {
        rdlm_info_topology(parsable);
    }
    if (sections & RDLM_INFO_CONFIG) {
        return rdlm_info_config(cfg_st == RDLM_OK ? &cfg : NULL, parsable);
    }
    return 0;
}
