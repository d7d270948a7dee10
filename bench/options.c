/* rdlm-bench command line; see options.h and the usage text below. */
#include "options.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char rdlm_bench_usage_text[] =
    "Usage: rdlm-bench [OPTIONS] [BENCHMARK...]\n"
    "\n"
    "Measures rdlm on this node against baselines measured in the same run,\n"
    "alternating rdlm and baseline in every round; figures are medians over rounds.\n"
    "\n"
    "Benchmarks (default: all but the opt-in ones, in this order):\n"
    "  lock-latency     uncontended acquire+release, 1 process: rdlm vs TAS spinlock\n"
    "                   vs process-shared pthread_mutex (us per pair)\n"
    "  lock-contended   throughput of N processes on one lock (Mops/s), default N=2,16\n"
    "  try-lock         one-attempt acquire, lock free (try+release) and held by another\n"
    "                   process (failed try): rdlm vs pthread_mutex_trylock (us per call)\n"
    "  rwlock-ratio     N processes on one rwlock at 0/50/90/99% reads: rdlm vs pshared\n"
    "                   pthread_rwlock (Mops/s), default N=2\n"
    "  sem              N processes on one semaphore of K permits (K = 1 and N/2),\n"
    "                   acquire(1)/release(1): rdlm vs pshared POSIX sem_t (Mops/s),\n"
    "                   default N=1,2,4\n"
    "  cas-pingpong     one-way hand-off between 2 processes pinned to 2 CPUs: rdlm\n"
    "                   lock vs a compare-and-swap ping-pong on one word, the floor\n"
    "                   (ns; -i round trips, default 500000; -x 10000)\n"
    "  barrier          rdlm barrier vs MPI_Barrier (Open MPI, shared memory), us per\n"
    "                   barrier (max over processes), default N=2\n"
    "  dist-barrier     collective barrier (rdlm_ctx_barrier) vs MPI_Barrier in one\n"
    "                   mpirun, us (max over ranks): 2 ranks on one node (shared\n"
    "                   memory); when named, also N ranks as N virtual nodes over\n"
    "                   TCP (default N=2,4) with messages per barrier, the split\n"
    "                   phase, and MPI_Barrier replaced by LD_PRELOAD=librdlm_pmpi.so\n"
    "  memory           segment bytes per lock, 1,000,000-lock segment size, resident\n"
    "                   memory growth per 10,000 locks opened\n"
    "  tl-fadd          remote fetch-add through the transport vs raw UCX, shared\n"
    "                   memory and TCP (built with UCX)\n"
    "  services         rdlm vs Redis, etcd, ZooKeeper and rdlmd (lease authority)\n"
    "                   locks on loopback (started by bench/services/services.sh;\n"
    "                   each skipped when its RDLMBENCH_REDIS/_ETCD/_ZK/_RDLMD is unset)\n"
    "  lease-renew      one lease renewal at the rdlmd leader vs etcd lease keepalive,\n"
    "                   Redis PEXPIRE and a loopback round trip (us per request); log\n"
    "                   entries and bytes written per renewal vs per lock+unlock pair\n"
    "                   (bench/services/services.sh; skipped without RDLMBENCH_RDLMD)\n"
    "\n"
    "Opt-in (only when named), one machine as virtual nodes, everything over TCP:\n"
    "  dist-lock        cross-node acquire+release vs raw ucp atomics, MPI_Win_lock,\n"
    "                   an MPI CAS spinlock; hand-off inside a node (4 ranks)\n"
    "  dist-contended   cross-node lock throughput, cohort bound 64 vs 1 (4 ranks)\n"
    "  dist-memory      home bytes per lock; resident memory of the context\n"
    "  dist-counter     cross-node counter fetch-add throughput vs MPI_Fetch_and_op;\n"
    "                   sharded counter; semaphore acquire+release, 2 permits (4 ranks)\n"
    "\n"
    "Options:\n"
    "  -b, --bench NAME[,NAME]  run only these benchmarks (also as operands)\n"
    "  -i, --iterations N       measured iterations per process for lock-latency and\n"
    "                           try-lock (default 1000000), rwlock-ratio (100000),\n"
    "                           barrier and dist-barrier (default 10000; dist-barrier\n"
    "                           over TCP 2000), lease-renew requests per round, at most\n"
    "                           (2000; also the renewals of its disk phase)\n"
    "  -x, --warmup N           warm-up iterations per process before each measurement\n"
    "                           (default 10000 lock-latency and try-lock, 200\n"
    "                           lock-contended, 1000 rwlock-ratio, barrier and\n"
    "                           dist-barrier, 200 over TCP, 20 lease-renew)\n"
    "  -d, --duration MS        measured window of throughput benchmarks (default 300;\n"
    "                           dist-contended, dist-counter 500)\n"
    "  -r, --rounds N           rounds, each measuring rdlm and every baseline once in\n"
    "                           alternating order (default 5, 1..51)\n"
    "  -p, --procs LIST         process counts, comma-separated, 1..64 (e.g. 2,16);\n"
    "                           applies to lock-contended, rwlock-ratio, sem, barrier,\n"
    "                           dist-barrier\n"
    "                           (cross-node), dist-lock, dist-contended, dist-memory,\n"
    "                           dist-counter\n"
    "  -f, --full               also print min and max over rounds\n"
    "  -z, --percentiles        also print p50/p90/p99 of single operations\n"
    "      --csv FILE           write every measurement and comparison as CSV\n"
    "      --json FILE          write header, measurements and comparisons as JSON\n"
    "  -v, --verbose            print every round and the commands run\n"
    "  -V, --version            print the version and exit\n"
    "  -h, --help               print this help and exit\n"
    "\n"
    "Environment: RDLM_SPIN, RDLM_YIELD, RDLM_PARK_SLICE_MS set rdlm's waiting policy\n"
    "and are echoed in the header. Exit status: 0 ran (targets met or not), 1 a\n"
    "measurement failed, 2 bad command line (one line on stderr says why).\n";

static int rdlm_bench_parse_u64(const char *text, uint64_t min, uint64_t max,
                                uint64_t *value_p)
{
    char *end = NULL;
    unsigned long long v;

    if (text[0] == '\0' || text[0] == '-') {
        return -1;
    }
    errno = 0;
    v = strtoull(text, &end, 10);
    if (errno != 0 || *end != '\0' || v < min || v > max) {
        return -1;
    }
    *value_p = v;
    return 0;
}

static int rdlm_bench_parse_procs(const char *text, rdlm_bench_opts_t *opts)
{
    char buf[256];
    char *save = NULL;
    char *tok;
    uint64_t v;

    if (strlen(text) >= sizeof(buf)) {
        return -1;
    }
    strcpy(buf, text);
    opts->nprocs_count = 0;
    for (tok = strtok_r(buf, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
        if (opts->nprocs_count == RDLM_BENCH_MAX_PROC_COUNTS ||
            rdlm_bench_parse_u64(tok, 1, RDLM_BENCH_MAX_PROCS, &v) != 0) {
            return -1;
        }
        opts->procs[opts->nprocs_count++] = (uint32_t)v;
    }
    return opts->nprocs_count > 0 ? 0 : -1;
}

/* The known name equal to the len bytes at name, or NULL. */
static const char *rdlm_bench_known(const char *const *known_names, const char *name,
                                    size_t len)
{
    for (; *known_names != NULL; known_names++) {
        if (strlen(*known_names) == len && strncmp(*known_names, name, len) == 0) {
            return *known_names;
        }
    }
    return NULL;
}

/* Add a comma-separated list of names; "all" selects everything. The list (argv,
 * which the header echoes) is left as it is; the names kept are known_names'. */
static int rdlm_bench_select(const char *list, const char *const *known_names,
                             rdlm_bench_opts_t *opts)
{
    const char *name;
    const char *tok;
    size_t len;

    for (tok = list; *tok != '\0'; tok += len + (tok[len] == ',')) {
        len = strcspn(tok, ",");
        if (len == 0 || (len == 3 && strncmp(tok, "all", 3) == 0)) {
            continue;
        }
        name = rdlm_bench_known(known_names, tok, len);
        if (name == NULL) {
            rdlm_cli_usage_error("rdlm-bench", "unknown benchmark '%.*s'", (int)len, tok);
            return -1;
        }
        if (opts->nselected == RDLM_BENCH_MAX_SELECTED) {
            rdlm_cli_usage_error("rdlm-bench", "more than %d benchmark names",
                                 RDLM_BENCH_MAX_SELECTED);
            return -1;
        }
        opts->selected[opts->nselected++] = name;
    }
    return 0;
}

static enum rdlm_bench_parse rdlm_bench_bad(const char *what, const char *value)
{
    rdlm_cli_usage_error("rdlm-bench", "invalid %s '%s'", what, value);
    return RDLM_BENCH_PARSE_USAGE;
}

enum rdlm_bench_parse rdlm_bench_opts_parse(int argc, char **argv,
                                            const char *const *known_names,
                                            rdlm_bench_opts_t *opts_p)
{
    enum { OPT_CSV = 256, OPT_JSON };
    static const struct option longopts[] = {
        {"bench", required_argument, NULL, 'b'},
        {"iterations", required_argument, NULL, 'i'},
        {"warmup", required_argument, NULL, 'x'},
        {"duration", required_argument, NULL, 'd'},
        {"rounds", required_argument, NULL, 'r'},
        {"procs", required_argument, NULL, 'p'},
        {"full", no_argument, NULL, 'f'},
        {"percentiles", no_argument, NULL, 'z'},
        {"csv", required_argument, NULL, OPT_CSV},
        {"json", required_argument, NULL, OPT_JSON},
        {"verbose", no_argument, NULL, 'v'},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    static const char optstring[] = ":b:i:x:d:r:p:fzvhV";
    rdlm_bench_opts_t opts = {.warmup = UINT64_MAX, .rounds = 5};
    uint64_t v;
    int c;

    opterr = 0; /* rdlm_cli_bad_option reports */
    optind = 1;
    while ((c = getopt_long(argc, argv, optstring, longopts, NULL)) != -1) {
        switch (c) {
        case 'b':
            if (rdlm_bench_select(optarg, known_names, &opts) != 0) {
                return RDLM_BENCH_PARSE_USAGE;
            }
            break;
        case 'i':
            if (rdlm_bench_parse_u64(optarg, 1, UINT64_C(1) << 40, &v) != 0) {
                return rdlm_bench_bad("iteration count", optarg);
            }
            opts.iterations = v;
            break;
        case 'x':
            if (rdlm_bench_parse_u64(optarg, 0, UINT64_C(1) << 40, &v) != 0) {
                return rdlm_bench_bad("warm-up count", optarg);
            }
            opts.warmup = v;
            break;
        case 'd':
            if (rdlm_bench_parse_u64(optarg, 1, 600000, &v) != 0) {
                return rdlm_bench_bad("duration (ms)", optarg);
            }
            opts.duration_ms = (uint32_t)v;
            break;
        case 'r':
            if (rdlm_bench_parse_u64(optarg, 1, RDLM_BENCH_MAX_ROUNDS, &v) != 0) {
                return rdlm_bench_bad("round count", optarg);
            }
            opts.rounds = (uint32_t)v;
            break;
        case 'p':
            if (rdlm_bench_parse_procs(optarg, &opts) != 0) {
                return rdlm_bench_bad("process list", optarg);
            }
            break;
        case 'f':
            opts.full = 1;
            break;
        case 'z':
            opts.percentiles = 1;
            break;
        case 'v':
            opts.verbose = 1;
            break;
        case OPT_CSV:
            opts.csv_path = optarg;
            break;
        case OPT_JSON:
            opts.json_path = optarg;
            break;
        case 'h':
            fputs(rdlm_bench_usage_text, stdout);
            return RDLM_BENCH_PARSE_HELP;
        case 'V':
            rdlm_cli_version("rdlm-bench");
            return RDLM_BENCH_PARSE_HELP;
        default:
            rdlm_cli_bad_option("rdlm-bench", c, optstring, argv);
            return RDLM_BENCH_PARSE_USAGE;
        }
    }
    for (; optind < argc; optind++) {
        if (rdlm_bench_select(argv[optind], known_names, &opts) != 0) {
            return RDLM_BENCH_PARSE_USAGE;
        }
    }
    *opts_p = opts;
    return RDLM_BENCH_PARSE_RUN;
}

int rdlm_bench_opts_selects(const rdlm_bench_opts_t *opts, const char *name)
{
    uint32_t k;

    if (opts->nselected == 0) {
        return 1;
    }
    for (k = 0; k < opts->nselected; k++) {
        if (strcmp(opts->selected[k], name) == 0) {
            return 1;
        }
    }
    return 0;
}

uint32_t rdlm_bench_opts_procs(const rdlm_bench_opts_t *opts, const uint32_t *defaults,
                               uint32_t ndefaults, const uint32_t **list_p)
{
    if (opts->nprocs_count > 0) {
        *list_p = opts->procs;
        return opts->nprocs_count;
    }
    *list_p = defaults;
    return ndefaults;
}
