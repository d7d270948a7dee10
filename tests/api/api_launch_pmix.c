/*
 * One process of a standalone distributed context started by a PMIx server (Open
 * MPI's mpirun) with the launcher's OMPI_COMM_WORLD_RANK/SIZE removed from its
 * environment and no RDLM_RANK/RDLM_SIZE: rank and size must come from PMIx
 * (util/launch_pmix.c).
 *
 * usage: mpirun -np N env -u OMPI_COMM_WORLD_RANK -u OMPI_COMM_WORLD_SIZE \
 *            rdlm_api_launch_pmix N [launcher]
 *
 * Without "launcher", the rendezvous port and the job name are derived from the PMIx
 * namespace, which all processes of the run share. With it, RDLM_RENDEZVOUS=launcher:
 * rank 0 publishes its address through PMIx (launch.h), and nothing else is set; every
 * rank then also takes a lock of the job a few times, each token above the last.
 * Exit: 0 joined as PMIx's rank of N and passed a barrier (and the locks); 1 otherwise
 * (said on stderr).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdlm.h>

#define LAUNCH_PMIX_LOCKS 20 /* acquires per rank */

/* RDLM_RENDEZVOUS and RDLM_JOB from the namespace, all processes alike. */
static void launch_pmix_derive(const char *ns)
{
    unsigned hash = 5381;
    char rendezvous[32], job[32];

    for (const char *c = ns; *c != '\0'; c++) {
        hash = hash * 33 + (unsigned char)*c;
    }
    snprintf(rendezvous, sizeof(rendezvous), "127.0.0.1:%u", 20000 + hash % 20000);
    snprintf(job, sizeof(job), "t-pmix-%08x", hash);
    setenv("RDLM_RENDEZVOUS", rendezvous, 1);
    setenv("RDLM_JOB", job, 1);
}

/* Take the job's lock LAUNCH_PMIX_LOCKS times: 0 if every token rose. */
static int launch_pmix_lock(rdlm_ctx_h ctx, const char *rank)
{
    uint64_t token, last = 0;
    rdlm_lock_h lock = NULL;
    rdlm_status_t st = rdlm_lock_open(ctx, "launch-pmix", &lock);

    for (int i = 0; st == RDLM_OK && i < LAUNCH_PMIX_LOCKS; i++) {
        st = rdlm_lock_acquire(lock, 10000000000ull, &token);
        if (st == RDLM_OK && token <= last) {
            fprintf(stderr, "PMIx rank %s: token %llu after %llu\n", rank,
                    (unsigned long long)token, (unsigned long long)last);
            st = RDLM_ERR_PROTOCOL;
        }
        last = token;
        if (st == RDLM_OK) {
            st = rdlm_lock_release(lock);
        }
    }
    if (lock != NULL && rdlm_lock_close(lock) != RDLM_OK && st == RDLM_OK) {
        st = RDLM_ERR_BAD_HANDLE;
    }
    if (st != RDLM_OK) {
        fprintf(stderr, "PMIx rank %s: lock: %s\n", rank, rdlm_status_str(st));
    }
    return st == RDLM_OK ? 0 : 1;
}

int main(int argc, char **argv)
{
    const char *rank = getenv("PMIX_RANK"), *ns = getenv("PMIX_NAMESPACE");
    unsigned size = argc >= 2 ? (unsigned)strtoul(argv[1], NULL, 10) : 0;
    int launcher = argc == 3 && strcmp(argv[2], "launcher") == 0, bad;
    rdlm_ctx_dist_info_t di;
    rdlm_status_t st;
    rdlm_ctx_h ctx;

    if (rank == NULL || ns == NULL || size == 0 || (argc == 3 && !launcher) || argc > 3 ||
        getenv("OMPI_COMM_WORLD_RANK") != NULL) {
        fprintf(stderr,
                "usage: mpirun -np N env -u OMPI_COMM_WORLD_RANK "
                "-u OMPI_COMM_WORLD_SIZE %s N [launcher]\n",
                argv[0]);
        return 1;
    }
    if (launcher) {
        setenv("RDLM_RENDEZVOUS", "launcher", 1);
    } else {
        launch_pmix_derive(ns);
    }
    unsetenv("RDLM_RANK");
    unsetenv("RDLM_SIZE");
    st = rdlm_ctx_create(NULL, &ctx);
    if (st != RDLM_OK) {
        fprintf(stderr, "PMIx rank %s: rdlm_ctx_create: %s\n", rank, rdlm_status_str(st));
        return 1;
    }
    st = rdlm_ctx_dist_info(ctx, &di);
    bad = st != RDLM_OK || di.rank != strtoul(rank, NULL, 10) || di.size != size ||
          rdlm_ctx_barrier(ctx) != RDLM_OK;
    if (bad) {
        fprintf(stderr, "PMIx rank %s: joined as %u of %u, expected %s of %u\n", rank,
                di.rank, di.size, rank, size);
    } else if (launcher) {
        bad = launch_pmix_lock(ctx, rank) || rdlm_ctx_barrier(ctx) != RDLM_OK;
    }
    if (!bad) {
        printf("rank %u of %u from PMIx%s\n", di.rank, di.size,
               launcher ? ", rendezvous from PMIx" : "");
    }
    rdlm_ctx_destroy(ctx);
    return bad;
}
