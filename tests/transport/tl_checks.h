/*
 * Checks shared by the transport conformance suite (tl_conformance.c) and the MPI
 * bootstrap test (tests/mpi/mpi_bootstrap_ucx.c): run by every rank, each against a
 * word or slot in rank 0's region, with rank 0 printing the PASS/SKIP lines.
 *
 *   fadd_hammer_exact_and_distinct           writers x iters fetch-adds on one word:
 *                                            final value exact, the old values
 *                                            (gathered through the bootstrap on rank 0)
 *                                            a permutation of 0..total-1
 *   cswap_increment_no_lost_update           CAS-retry increments: final value exact
 *   put_get_round_trip                       per-rank slots, read back by every rank
 *
 * A failing check prints "<prog> rank <rank>: FAIL: <message>" to stderr and calls the
 * program's die hook (the conformance suite exits the rank, the MPI test calls
 * MPI_Abort); it must not return.
 */
#ifndef RDLM_TESTS_TL_CHECKS_H
#define RDLM_TESTS_TL_CHECKS_H

#include <stdint.h>

#include "transport.h"

#define TL_CHECKS_SLOT_BYTES 256

typedef struct tl_checks {
    unsigned rank, n;
    const rdlm_tl_bootstrap_t *b;
    rdlm_tl_ctx_h ctx;
    rdlm_tl_caps_t caps;
    rdlm_tl_idle_t idle; /* passed to the bootstrap's collectives */
    rdlm_tl_mem_h mem;   /* rank 0 */
    rdlm_tl_rkey_h rk;   /* rank 0's region */
    int active;          /* this rank issues remote operations */
    unsigned writers;    /* ranks that do */
    unsigned iters;      /* operations per active rank */
    uint64_t deadline;   /* rdlm_clock_now_ns() past this: fail */
    /* Offsets in rank 0's region. */
    uint64_t off_fadd, off_cswap;
    uint64_t off_slots; /* TL_CHECKS_SLOT_BYTES per rank */
    const char *prog;   /* names the program in FAIL lines */
    void (*die)(void);  /* ends the run after a FAIL line; never returns */
    const void *user;   /* the program's own state */
} tl_checks_t;

/* The FAIL line for c->prog and c->rank, then c->die(). */
void tl_checks_fail(const tl_checks_t *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3), noreturn));

#define TL_CHECK_OK(c, call)                                                               \
    do {                                                                                   \
        rdlm_status_t st_ = (call);                                                        \
        if (st_ != RDLM_OK)                                                                \
            tl_checks_fail((c), "%s: %s (%s:%d)", #call, rdlm_status_name(st_), __FILE__,  \
                           __LINE__);                                                      \
    } while (0)

void tl_checks_barrier(const tl_checks_t *c);
void tl_checks_deadline(const tl_checks_t *c, const char *what);
int tl_checks_cmp_u64(const void *a, const void *b);

/* The word at off in rank 0's region, read by rank 0 (through the transport when it
 * can, else by the CPU after everyone flushed: only a check, never an update). */
uint64_t tl_checks_read_word0(const tl_checks_t *c, uint64_t off);

/* iters fetch-adds of 1 per active rank on c->off_fadd. */
void tl_checks_fadd_hammer(const tl_checks_t *c, unsigned iters);
/* c->iters CAS-retry increments per active rank on c->off_cswap. */
void tl_checks_cswap_increment(const tl_checks_t *c);
/* Each active rank puts its slot at c->off_slots and reads every slot back. */
void tl_checks_put_get(const tl_checks_t *c);

#endif
