/*
 * One process of a standalone distributed context started by a PMIx server (Open
 * MPI's mpirun) with the launcher's OMPI_COMM_WORLD_RANK/SIZE removed from its
 * environment and no RDLM_RANK/RDLM_SIZE: rank and size must come from PMIx
 * (core/util/launch_pmix.c).
 *
 * usage: mpirun -np N env -u OMPI_COMM_WORLD_RANK -u OMPI_COMM_WORLD_SIZE \
 *            rdlm_api_launch_pmix N
 *
 * The rendezvous port and the job name are derived from the PMIx namespace, which all
 * processes of the run share. Exit: 0 joined as PMIx's rank of N and passed a barrier;
 * 1 otherwise (said on stderr).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdlm.h>

int main(int argc, char **argv)
{
    const char *rank = getenv("PMIX_RANK"), *ns = getenv("PMIX_NAMESPACE");
    unsigned size = argc == 2 ? (unsigned)strtoul(argv[1], NULL, 10) : 0, hash = 5381;
    char rendezvous[32], job[32];
    rdlm_ctx_dist_info_t di;
    rdlm_status_t st;
    rdlm_ctx_h ctx;

    if (rank == NULL || ns == NULL || size == 0 || getenv("OMPI_COMM_WORLD_RANK") != NULL) {
        fprintf(stderr,
                "usage: mpirun -np N env -u OMPI_COMM_WORLD_RANK "
                "-u OMPI_COMM_WORLD_SIZE %s N\n",
                argv[0]);
        return 1;
    }
    for (const char *c = ns; *c != '\0'; c++) {
        hash = hash * 33 + (unsigned char)*c;
    }
    snprintf(rendezvous, sizeof(rendezvous), "127.0.0.1:%u", 20000 + hash % 20000);
    snprintf(job, sizeof(job), "t-pmix-%08x", hash);
    setenv("RDLM_RENDEZVOUS", rendezvous, 1);
    setenv("RDLM_JOB", job, 1);
    unsetenv("RDLM_RANK");
    unsetenv("RDLM_SIZE");
    st = rdlm_ctx_create(NULL, &ctx);
    if (st != RDLM_OK) {
        fprintf(stderr, "PMIx rank %s: rdlm_ctx_create: %s\n", rank, rdlm_status_str(st));
        return 1;
    }
    st = rdlm_ctx_dist_info(ctx, &di);
    if (st != RDLM_OK || di.rank != strtoul(rank, NULL, 10) || di.size != size ||
        rdlm_ctx_barrier(ctx) != RDLM_OK) {
        fprintf(stderr, "PMIx rank %s: joined as %u of %u, expected %s of %u\n", rank,
                di.rank, di.size, rank, size);
        rdlm_ctx_destroy(ctx);
        return 1;
    }
    printf("rank %u of %u from PMIx\n", di.rank, di.size);
    rdlm_ctx_destroy(ctx);
    return 0;
}
