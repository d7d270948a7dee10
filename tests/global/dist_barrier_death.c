/*
 * dist_barrier_death — a process that dies between two collective barriers does not
 * leave the others waiting for ever: the next rdlm_ctx_barrier of every other process
 * returns RDLM_ERR_PEER_DEAD within ANSWER_LIMIT_S, leaders or not. Before, the
 * leaders' wait for a round's message checked nothing but the message (and the
 * context's closing), and nobody else's wait checked anything: they never returned.
 *
 * Processes forked by the parent join one context (standalone rendezvous on
 * 127.0.0.1). After a first barrier the victim kills itself; 300 ms later the others
 * call the barrier again. Second argument, the shape:
 *   leaders (default): 4 processes on 4 virtual nodes, so each leads its node: in
 *     round 0 leader i sends to i + 1, in round 1 to i + 2 (mod 4). Rank 3 dies. Rank 0
 *     waits in round 0 for rank 3 and rank 1 in round 1 for rank 3: they learn of the
 *     death directly. Rank 2 waits in round 1 for rank 0, which will not send it: rank
 *     0 must break the barrier for it (its links shut down, or its partners' flags
 *     raised to "broken").
 *   member: 4 processes on 2 nodes ({0, 1}, {2, 3}); rank 3, which leads nothing,
 *     dies. Its leader, rank 2, waits for its arrival and must see it gone; rank 0
 *     waits for rank 2's round (rank 2 must break the barrier); rank 1 waits for its
 *     leader's release (rank 0 must mark its node broken).
 *   leader: the same nodes; rank 2 dies. Rank 3 waits for its dead leader's release
 *     and must see it gone; rank 0 learns from its round, rank 1 from rank 0.
 *   pair: 2 processes on one node (the pair barrier); rank 1 dies.
 *   node: 3 processes on one node (the count); rank 2 dies.
 *
 * First argument, the path between the nodes: "links" (UCX TCP,
 * RDLM_BARRIER_LINKS=auto: the leaders' own TCP links; a link closes), "transport"
 * (UCX TCP, RDLM_BARRIER_LINKS=off: UCX's active messages; the transport or the
 * process record on this host says the sender is dead) or "shm" (UCX's default
 * transports on one host: shared memory, which nobody watches: the process record).
 * The processes log at info to one file, which the parent reads to check that the
 * barrier ran on the links in the first case (rank 0 says so once) and not in the
 * others.
 *
 * Exit: 0 pass, 1 fail.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <rdlm.h>

#include "procs.h"

#define MAXPROCS 4
#define ANSWER_LIMIT_S 5.0
#define PARENT_LIMIT_S 60.0
#define LINKS_LINE "over TCP links of their own"

/* What the parent reads. */
static struct shared {
    int status[MAXPROCS];
    double waited_s[MAXPROCS];
} * sh;

/* The shape (top of the file). */
static const struct shape {
    const char *name;
    unsigned procs;
    const char *virtual_nodes;
    unsigned victim;
} shapes[] = {
    {"leaders", 4, "4", 3}, {"member", 4, "2", 3}, {"leader", 4, "2", 2},
    {"pair", 2, "1", 1},    {"node", 3, "1", 2},
};
static const struct shape *shape = &shapes[0];

#define FAIL(...) procs_fail("dist_barrier_death", rank, __VA_ARGS__)

static int child(unsigned rank, const char *rendezvous)
{
    rdlm_ctx_h ctx;
    double t0;

    if (procs_join(rank, shape->procs, rendezvous, &ctx) != RDLM_OK)
        FAIL("rdlm_ctx_create failed");
    if (rdlm_ctx_barrier(ctx) != RDLM_OK)
        FAIL("the first barrier failed");
    if (rank == shape->victim)
        raise(SIGKILL);
    usleep(300000);
    t0 = procs_now_s();
    sh->status[rank] = rdlm_ctx_barrier(ctx);
    sh->waited_s[rank] = procs_now_s() - t0;
    printf("rank %u: rdlm_ctx_barrier: %s after %.3f s\n", rank,
           rdlm_status_name(sh->status[rank]), sh->waited_s[rank]);
    rdlm_ctx_destroy(ctx);
    return 0;
}

/* 1 if the log file says the leaders use links. */
static int log_says_links(const char *path)
{
    char line[512];
    FILE *f = fopen(path, "r");
    int found = 0;

    while (f != NULL && !found && fgets(line, sizeof(line), f) != NULL)
        found = strstr(line, LINKS_LINE) != NULL;
    if (f != NULL)
        fclose(f);
    return found;
}

int main(int argc, char **argv)
{
    unsigned rank = MAXPROCS; /* the parent, for FAIL */
    const int links = argc >= 2 && strcmp(argv[1], "links") == 0,
              shm = argc >= 2 && strcmp(argv[1], "shm") == 0;
    char log[64], job[32];
    int failed;

    for (unsigned k = 0; argc == 3 && k < sizeof(shapes) / sizeof(shapes[0]); k++)
        if (strcmp(argv[2], shapes[k].name) == 0)
            shape = &shapes[k];
    if (argc < 2 || argc > 3 || (argc == 3 && strcmp(argv[2], shape->name) != 0) ||
        (!links && !shm && strcmp(argv[1], "transport") != 0))
        FAIL("usage: dist_barrier_death links|transport|shm "
             "[leaders|member|leader|pair|node]");
    setvbuf(stdout, NULL, _IONBF, 0); /* children end with _exit */
    sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED)
        FAIL("no shared memory");
    snprintf(log, sizeof(log), "/tmp/rdlm-barrier-death-%d.log", (int)getpid());
    setenv("RDLM_BARRIER_LINKS", links || shm ? "auto" : "off", 1);
    setenv("RDLM_LOG", "info", 1);
    setenv("RDLM_LOG_FILE", log, 1);
    snprintf(job, sizeof(job), "t-bdeath-%c-%s", argv[1][0], shape->name);
    failed = !procs_run(job, shape->virtual_nodes, shm, shape->procs, child, shape->victim,
                        PARENT_LIMIT_S, "dist_barrier_death");
    for (unsigned r = 0; r < shape->procs; r++) {
        if (r != shape->victim &&
            (sh->status[r] != RDLM_ERR_PEER_DEAD || sh->waited_s[r] > ANSWER_LIMIT_S)) {
            fprintf(stderr,
                    "dist_barrier_death: rank %u: %s after %.2f s (want "
                    "RDLM_ERR_PEER_DEAD within %.0f s)\n",
                    r, rdlm_status_name(sh->status[r]), sh->waited_s[r], ANSWER_LIMIT_S);
            failed = 1;
        }
    }
    if (log_says_links(log) != links) {
        fprintf(stderr, "dist_barrier_death: the log (%s) %s \"%s\"\n", log,
                links ? "lacks" : "has", LINKS_LINE);
        failed = 1;
    }
    unlink(log);
    printf("dist_barrier_death %s %s: %s\n", argv[1], shape->name,
           failed ? "FAILED" : "passed");
    return failed;
}
