/*
 * tl_links — the TCP links of transport/links.c (ctest transport.links.p4). 4 forked
 * processes meet through the TCP bootstrap (rank 0 takes the parent's listening
 * socket) and make the links of a dissemination among 4: link k goes to
 * (r + 2^k) mod 4 and comes from (r - 2^k) mod 4, so link 0 is two connections and
 * link 1 one connection both ways (its two ends are one pair). In order:
 *   1. rank 3 votes against links: every process gets RDLM_ERR_UNSUPPORTED and none;
 *   2. all vote for them: every process gets its links;
 *   3. ITERS rounds: each process sends i on every link, then reads every in-link
 *      until it brought i: each message must come whole and in order (exactly i);
 *   4. rank 3 exits; rank 0 (link 0 comes from 3) and rank 1 (link 1 is the pair
 *      1-3) must read RDLM_ERR_PEER_DEAD on that link within DEAD_LIMIT_S.
 * Exit: 0 pass, 1 fail (a line on stderr says why).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bootstrap.h"
#include "links.h"

#define NPROCS 4u
#define NLINKS 2u
#define ITERS 2000u
#define DEAD_LIMIT_S 5.0
#define PARENT_LIMIT_S 60

static unsigned g_rank;

#define FAIL(...)                                                                          \
    do {                                                                                   \
        fprintf(stderr, "tl_links rank %u: ", g_rank);                                     \
        fprintf(stderr, __VA_ARGS__);                                                      \
        fputc('\n', stderr);                                                               \
        _exit(1);                                                                          \
    } while (0)

static double now_s(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Read in-link k until a message comes (within limit_s): its status and value. */
static rdlm_status_t read_one(rdlm_links_t *l, uint32_t k, double limit_s, uint64_t *v_p)
{
    const double deadline = now_s() + limit_s;

    while (now_s() < deadline) {
        struct pollfd p = {.fd = rdlm_links_fd(l, k), .events = POLLIN};
        int got;
        rdlm_status_t st = rdlm_links_recv(l, k, &got, v_p);

        if (st != RDLM_OK || got) {
            return st;
        }
        (void)poll(&p, 1, 10);
    }
    return RDLM_ERR_TIMEOUT;
}

static int child(unsigned rank, int listen_fd, uint16_t port)
{
    rdlm_tl_boot_tcp_params_t bp = {.rank = rank,
                                    .size = NPROCS,
                                    .port = port,
                                    .listen_fd = rank == 0 ? listen_fd : -1,
                                    .timeout_ms = 20000};
    uint32_t to[NLINKS], from[NLINKS];
    rdlm_tl_boot_tcp_t *boot;
    const rdlm_tl_bootstrap_t *b;
    rdlm_links_t *l = NULL;
    rdlm_status_t st;

    g_rank = rank;
    if (rdlm_tl_boot_tcp_create(&bp, &boot) != RDLM_OK)
        FAIL("no bootstrap");
    b = rdlm_tl_boot_tcp_get(boot);
    for (uint32_t k = 0; k < NLINKS; k++) {
        to[k] = (rank + (1u << k)) % NPROCS;
        from[k] = (rank + NPROCS - (1u << k)) % NPROCS;
    }
    st = rdlm_links_open(b, NULL, rank != 3, to, from, NLINKS, 5000, &l);
    if (st != RDLM_ERR_UNSUPPORTED || l != NULL)
        FAIL("with rank 3 against links: %s and %s links (want RDLM_ERR_UNSUPPORTED, none)",
             rdlm_status_name(st), l != NULL ? "some" : "no");
    st = rdlm_links_open(b, NULL, 1, to, from, NLINKS, 5000, &l);
    if (st != RDLM_OK || l == NULL)
        FAIL("links with every vote for them: %s", rdlm_status_name(st));
    for (uint64_t i = 1; i <= ITERS; i++) {
        for (uint32_t k = 0; k < NLINKS; k++)
            if (rdlm_links_send(l, k, i) != RDLM_OK)
                FAIL("send %llu on link %u failed", (unsigned long long)i, k);
        for (uint32_t k = 0; k < NLINKS; k++) {
            uint64_t v = 0;

            st = read_one(l, k, 10.0, &v);
            if (st != RDLM_OK || v != i)
                FAIL("link %u from rank %u: %s, value %llu (want %llu, in order)", k,
                     from[k], rdlm_status_name(st), (unsigned long long)v,
                     (unsigned long long)i);
        }
    }
    if (b->barrier(b->arg, NULL) != RDLM_OK)
        FAIL("bootstrap barrier failed");
    if (rank == 3)
        _exit(0); /* its sockets close with it */
    if (rank <= 1) {
        const uint32_t k = rank; /* rank 0: link 0 from 3; rank 1: link 1, the pair 1-3 */
        const double t0 = now_s();
        uint64_t v;

        st = read_one(l, k, DEAD_LIMIT_S, &v);
        if (st != RDLM_ERR_PEER_DEAD)
            FAIL("link %u after rank 3 exited: %s after %.2f s (want RDLM_ERR_PEER_DEAD)",
                 k, rdlm_status_name(st), now_s() - t0);
        printf("rank %u: link %u: RDLM_ERR_PEER_DEAD %.3f s after rank 3 exited\n", rank, k,
               now_s() - t0);
    }
    rdlm_links_close(l);
    rdlm_tl_boot_tcp_destroy(boot);
    return 0;
}

int main(void)
{
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(a);
    int lfd = socket(AF_INET, SOCK_STREAM, 0), failed = 0;
    pid_t pids[NPROCS];

    g_rank = NPROCS;
    setvbuf(stdout, NULL, _IONBF, 0);
    if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
        listen(lfd, 16) != 0 || getsockname(lfd, (struct sockaddr *)&a, &len) != 0)
        FAIL("no listening socket for the bootstrap");
    for (unsigned r = 0; r < NPROCS; r++) {
        pids[r] = fork();
        if (pids[r] == 0) {
            alarm(PARENT_LIMIT_S);
            _exit(child(r, lfd, ntohs(a.sin_port)));
        }
        if (pids[r] < 0)
            FAIL("fork failed");
    }
    for (unsigned r = 0; r < NPROCS; r++) {
        int status;

        if (waitpid(pids[r], &status, 0) != pids[r] || !WIFEXITED(status) ||
            WEXITSTATUS(status) != 0) {
            fprintf(stderr, "tl_links: rank %u failed (status 0x%x)\n", r, status);
            failed = 1;
        }
    }
    printf("tl_links: %s\n", failed ? "FAILED" : "passed");
    return failed;
}
