/*
 * The one result format of the MPI programs (rdlm-mpi-lock-bench and
 * rdlm-mpi-barrier-bench, with --result-lines), written by rank 0 and read by
 * rdlm-bench: one line per figure of one implementation,
 *
 *   RESULT <impl> <key> <v0> <v1> ...
 *
 * impl is the program's implementation name ("info": facts of the run), key names the
 * figure, and the values are one number per round ("value", "p50_us", ...), one
 * number for the whole run (statistics summed over ranks and rounds), one word
 * ("info": the barrier's library), or ("note info") a finding in words, which
 * rdlm-bench reports as it is. Each program's header comment lists its keys.
 */
#ifndef RDLM_BENCH_MPI_RESULT_H
#define RDLM_BENCH_MPI_RESULT_H

#include <stddef.h>
#include <stdint.h>

#include "options.h"

/** The per-round figures every program prints for every implementation, in this
 *  order (a program's own follow): the round's figure, its percentiles (us) and the
 *  operations it timed. */
enum {
    RDLM_BENCH_FIG_VALUE,
    RDLM_BENCH_FIG_P50,
    RDLM_BENCH_FIG_P90,
    RDLM_BENCH_FIG_P99,
    RDLM_BENCH_FIG_OPS,
    RDLM_BENCH_FIG_N
};

/** Their keys: "value", "p50_us", "p90_us", "p99_us", "ops". */
extern const char *const rdlm_bench_fig_keys[RDLM_BENCH_FIG_N];

/** The statistics rdlm-mpi-lock-bench prints for its implementations in rdlm's
 *  distributed context, summed over ranks and rounds: RDLM_BENCH_ST_<name>, keyed by
 *  the string. */
#define RDLM_BENCH_STATS(X)                                                                \
    X(ACQ, "acquires") /* rdlm_ctx_stats deltas of the distributed context */              \
    X(GLOBAL, "global_acquires")                                                           \
    X(LOCAL, "local_handoffs")                                                             \
    X(HOME, "home_ops")                                                                    \
    X(POSTED, "home_posted") /* of home_ops, not waited for */                             \
    X(PEER, "peer_ops")                                                                    \
    X(COMBINED, "combined")                                                                \
    X(HANDOFFS, "handoffs")       /* critical sections entered after another rank's */     \
    X(OPS, "ops_total")           /* operations of the timed runs */                       \
    X(MEASURED, "measured")       /* pair: hand-offs inside the node (node lock: all) */   \
    X(HANDOFF_NS, "handoff_ns")   /* ... their summed latencies */                         \
    X(GLOBAL_NS, "global_ns")     /* ... the other hand-offs' */                           \
    X(CHECK_LOCAL, "check_local") /* pair, distributed lock: local hand-offs ... */        \
    X(CHECK_REMOTE, "check_remote_ops") /* ... their remote operations */                  \
    X(CHECK_HANDOFFS, "check_handoffs") /* ... and every hand-off checked */

#define RDLM_BENCH_STAT_ENUM(e, s) RDLM_BENCH_ST_##e,
enum { RDLM_BENCH_STATS(RDLM_BENCH_STAT_ENUM) RDLM_BENCH_NSTATS };

/** Their keys, in enum order. */
extern const char *const rdlm_bench_stat_keys[RDLM_BENCH_NSTATS];

/** One implementation's figures over rounds: fig[f][round]. */
typedef double rdlm_bench_rounds_t[RDLM_BENCH_MAX_ROUNDS];

/** At most this many values on one line (rounds, remote nodes used). */
#define RDLM_BENCH_RESULT_MAX 64u

/** Print "RESULT impl key v[0] .. v[n-1]" on stdout (%.6f each). */
void rdlm_bench_result_put(const char *impl, const char *key, const double *v, uint32_t n);

/** Print fig[0..nfig) of impl, each over rounds, keys[f] naming fig[f]. */
void rdlm_bench_result_figs(const char *impl, const rdlm_bench_rounds_t *fig,
                            const char *const *keys, uint32_t nfig, uint32_t rounds);

/** Print one number. */
void rdlm_bench_result_put1(const char *impl, const char *key, double v);

/** Print one word (no blank in it). */
void rdlm_bench_result_word(const char *impl, const char *key, const char *word);

/** Print "RESULT note info <text>", the text from fmt (one line, at most 255
 *  characters): a finding rdlm-bench reports as it is. */
void rdlm_bench_result_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/** The values of the next line of impl and key in out from *pos_p (*len_p bytes, up
 *  to the line's end), *pos_p moved past them; NULL when there is none. */
const char *rdlm_bench_result_next(const char **pos_p, const char *impl, const char *key,
                                   size_t *len_p);

/** The values of the first line of impl and key in out (a program's output), at most
 *  cap into v: their count, or -1 without such a line. */
int rdlm_bench_result_get(const char *out, const char *impl, const char *key, double *v,
                          uint32_t cap);

/** One number of impl and key in out into *v_p: 0, or -1 (*v_p unchanged). */
int rdlm_bench_result_get1(const char *out, const char *impl, const char *key, double *v_p);

/** The word of impl and key in out into buf (at most len - 1 bytes): 0, or -1 (buf
 *  unchanged). */
int rdlm_bench_result_get_word(const char *out, const char *impl, const char *key,
                               char *buf, size_t len);

#endif
