/*
 * Which barrier a communicator's MPI_Barrier runs (RDLM_PMPI_BARRIER,
 * docs/barrier-replacement.md):
 *
 *   0     PMPI_Barrier
 *   1     rdlm_mpi_barrier
 *   auto  (default) the first MPI_Barrier on a communicator times both. A block of
 *         each as a warm-up (the first rdlm barrier wires the context up, the first
 *         messages connect), then
 *         RDLM_PMPI_TRIAL_BLOCKS blocks of RDLM_PMPI_TRIAL_LEN back-to-back barriers in
 *         the order rdlm, MPI, MPI, rdlm, rdlm, MPI. A block's time is the maximum
 *         over ranks (one PMPI_Allreduce for all blocks), a barrier's the median of
 *         its blocks' / RDLM_PMPI_TRIAL_LEN. rdlm's is kept iff it is not slower.
 *         Every rank decides from the same reduced figures, so all ranks of the
 *         communicator agree; rank 0 of the communicator logs the figures and the
 *         choice at info.
 *
 * If rdlm's barrier fails on a communicator (logged once), its MPI_Barrier is MPI's
 * from then on.
 *
 * The choice lives in an attribute on the communicator (a duplicate measures again)
 * and, for the call after, in a per-thread hint that every attribute deletion
 * invalidates (a freed communicator's handle may come back for another one).
 */
#include "choose.h"

#include <stdint.h>
#include <stdlib.h>

#include <rdlm/mpi.h>

#include "atomics.h"
#include "clock.h"
#include "config.h"
#include "log.h"

#define RDLM_PMPI_TRIAL_BLOCKS 6
#define RDLM_PMPI_TRIAL_LEN 16

/* The attribute's value: the choice + 1 (no allocation). */
enum { RDLM_PMPI_USE_MPI = 1, RDLM_PMPI_USE_RDLM = 2 };

typedef struct rdlm_pmpi_hint {
    MPI_Comm comm;
    int use;
    uint32_t epoch; /* 0: empty */
} rdlm_pmpi_hint_t;

static __thread rdlm_pmpi_hint_t rdlm_pmpi_hint;
static rdlm_atomic_u32_t rdlm_pmpi_epoch = 1;
static int rdlm_pmpi_keyval = MPI_KEYVAL_INVALID;

static int rdlm_pmpi_choice_deleted(MPI_Comm comm, int keyval, void *attr, void *extra)
{
    (void)comm;
    (void)keyval;
    (void)attr;
    (void)extra;
    rdlm_fetch_add(&rdlm_pmpi_epoch, 1, RDLM_ACQ_REL);
    return MPI_SUCCESS;
}

/* RDLM_PMPI_BARRIER, read once (MPI's on a bad configuration, which is logged). */
static rdlm_pmpi_barrier_t rdlm_pmpi_setting(void)
{
    static int setting = -1;
    rdlm_config_t cfg;

    if (setting < 0) {
        setting = rdlm_config_load(&cfg) == RDLM_OK ? (int)cfg.pmpi_barrier
                                                    : (int)RDLM_PMPI_BARRIER_MPI;
        rdlm_info("librdlm_pmpi: RDLM_PMPI_BARRIER=%s",
                  rdlm_config_pmpi_barrier_name((rdlm_pmpi_barrier_t)setting));
    }
    return (rdlm_pmpi_barrier_t)setting;
}

/* One rdlm barrier; its failure is logged once and makes the caller use MPI's. */
static int rdlm_pmpi_rdlm_ok(MPI_Comm comm)
{
    static int warned;
    rdlm_status_t s = rdlm_mpi_barrier(comm);

    if (s != RDLM_OK && !warned) {
        warned = 1;
        rdlm_warn("librdlm_pmpi: rdlm barrier failed (%s); using PMPI_Barrier",
                  rdlm_status_name(s));
    }
    return s == RDLM_OK;
}

static int rdlm_pmpi_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

/* The median of the blocks of one barrier (rdlm if which, else MPI), us. */
static double rdlm_pmpi_trial_us(const double *ns, const int *is_rdlm, int which)
{
    double mine[RDLM_PMPI_TRIAL_BLOCKS];
    int n = 0;

    for (int b = 0; b < RDLM_PMPI_TRIAL_BLOCKS; b++) {
        if (is_rdlm[b] == which) {
            mine[n++] = ns[b];
        }
    }
    qsort(mine, (size_t)n, sizeof(mine[0]), rdlm_pmpi_cmp_double);
    return mine[n / 2] / RDLM_PMPI_TRIAL_LEN / 1e3;
}

/* auto: time both on comm (collective) and return the faster. */
static int rdlm_pmpi_trial(MPI_Comm comm, int size)
{
    static const int is_rdlm[RDLM_PMPI_TRIAL_BLOCKS] = {1, 0, 0, 1, 1, 0};
    double ns[RDLM_PMPI_TRIAL_BLOCKS], max_ns[RDLM_PMPI_TRIAL_BLOCKS], us_rdlm, us_mpi;
    int rank = 0, use;

    for (int i = 0; i < RDLM_PMPI_TRIAL_LEN; i++) {
        if (!rdlm_pmpi_rdlm_ok(comm)) {
            return RDLM_PMPI_USE_MPI;
        }
        PMPI_Barrier(comm);
    }
    for (int b = 0; b < RDLM_PMPI_TRIAL_BLOCKS; b++) {
        uint64_t t0 = rdlm_clock_now_ns();

        for (int i = 0; i < RDLM_PMPI_TRIAL_LEN; i++) {
            if (!is_rdlm[b]) {
                PMPI_Barrier(comm);
            } else if (!rdlm_pmpi_rdlm_ok(comm)) {
                return RDLM_PMPI_USE_MPI;
            }
        }
        ns[b] = (double)(rdlm_clock_now_ns() - t0);
    }
    if (PMPI_Allreduce(ns, max_ns, RDLM_PMPI_TRIAL_BLOCKS, MPI_DOUBLE, MPI_MAX, comm) !=
        MPI_SUCCESS) {
        rdlm_warn("librdlm_pmpi: MPI_Allreduce failed; using PMPI_Barrier");
        return RDLM_PMPI_USE_MPI;
    }
    us_rdlm = rdlm_pmpi_trial_us(max_ns, is_rdlm, 1);
    us_mpi = rdlm_pmpi_trial_us(max_ns, is_rdlm, 0);
    use = us_rdlm <= us_mpi ? RDLM_PMPI_USE_RDLM : RDLM_PMPI_USE_MPI;
    PMPI_Comm_rank(comm, &rank);
    if (rank == 0) {
        rdlm_info("librdlm_pmpi: communicator of %d ranks: rdlm barrier %.2f us, "
                  "PMPI_Barrier %.2f us: MPI_Barrier runs %s",
                  size, us_rdlm, us_mpi, use == RDLM_PMPI_USE_RDLM ? "rdlm's" : "MPI's");
    }
    return use;
}

/* The choice for comm, made (collectively) at its first barrier; *keep_p = 1 if it
 * may be kept in the hint (it is in comm's attribute, or it is the setting's). */
static int rdlm_pmpi_choice(MPI_Comm comm, int *keep_p)
{
    rdlm_pmpi_barrier_t setting = rdlm_pmpi_setting();
    int inter = 1, size = 1, found = 0, use;
    void *attr = NULL;

    *keep_p = setting == RDLM_PMPI_BARRIER_MPI;
    if (setting == RDLM_PMPI_BARRIER_MPI || comm == MPI_COMM_NULL ||
        PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter ||
        PMPI_Comm_size(comm, &size) != MPI_SUCCESS || size == 1) {
        return RDLM_PMPI_USE_MPI; /* not cached: these are cheap to tell again */
    }
    if (rdlm_pmpi_keyval == MPI_KEYVAL_INVALID &&
        PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, rdlm_pmpi_choice_deleted,
                                &rdlm_pmpi_keyval, NULL) != MPI_SUCCESS) {
        rdlm_warn("librdlm_pmpi: MPI_Comm_create_keyval failed; using PMPI_Barrier");
        return RDLM_PMPI_USE_MPI;
    }
    PMPI_Comm_get_attr(comm, rdlm_pmpi_keyval, &attr, &found);
    if (found) {
        *keep_p = 1;
        return (int)(intptr_t)attr;
    }
    use = setting == RDLM_PMPI_BARRIER_RDLM ? RDLM_PMPI_USE_RDLM
                                            : rdlm_pmpi_trial(comm, size);
    *keep_p =
        PMPI_Comm_set_attr(comm, rdlm_pmpi_keyval, (void *)(intptr_t)use) == MPI_SUCCESS;
    return use;
}

int rdlm_pmpi_barrier(MPI_Comm comm)
{
    rdlm_pmpi_hint_t *h = &rdlm_pmpi_hint;
    uint32_t epoch = rdlm_load(&rdlm_pmpi_epoch, RDLM_ACQUIRE);
    int use, keep;

    if (h->epoch == epoch && h->comm == comm) {
        use = h->use;
    } else {
        use = rdlm_pmpi_choice(comm, &keep);
        if (keep) {
            *h = (rdlm_pmpi_hint_t){.comm = comm, .use = use, .epoch = epoch};
        }
    }
    if (use == RDLM_PMPI_USE_RDLM) {
        if (rdlm_pmpi_rdlm_ok(comm)) {
            return MPI_SUCCESS;
        }
        /* MPI's from now on, not one more collective creation per call (a failed
         * creation fails on every rank: it is collective). Replacing the attribute
         * deletes the old value, which invalidates every hint. */
        PMPI_Comm_set_attr(comm, rdlm_pmpi_keyval, (void *)(intptr_t)RDLM_PMPI_USE_MPI);
    }
    return PMPI_Barrier(comm);
}
