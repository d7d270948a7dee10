/*
 * The relay bootstraps (transport/include/bootstrap.h) over UCX: a server opens its context
 * alone, over the recording bootstrap, with a progress thread, registers a region and
 * hands its records and remote key to CLIENTS client processes through a pipe. Each
 * client opens its context over the replaying bootstrap and does ITERS fetch-adds and
 * ITERS compare-and-swap increments on two words of the server's region. The server
 * never calls the library meanwhile (its progress thread answers); it then checks both
 * words: CLIENTS * ITERS each, so no operation was lost or applied twice across
 * clients that never met. Also: garbage records are refused (RDLM_ERR_PROTOCOL).
 * The clients are this program run again (--client, the blob on stdin): a child that
 * only forked would inherit the server's UCX state without its async thread.
 * Exit 0 pass, 1 fail, 77 skip (UCX unusable here).
 */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bootstrap.h"
#include "transport.h"

#define CLIENTS 3
#define ITERS 500
#define REGION 4096
#define BLOB_MAX 8192
#define LIMIT_S 60

typedef struct blob {
    size_t rec_len, rkey_len;
    uint8_t rec[BLOB_MAX], rkey[RDLM_TL_RKEY_MAX];
} blob_t;

static int fail(const char *what, rdlm_status_t st)
{
    fprintf(stderr, "tl_relay: %s: %s\n", what, rdlm_status_name(st));
    return 1;
}

static int client(const blob_t *b)
{
    rdlm_tl_params_t tp = {.thread_mode = RDLM_TL_THREAD_SINGLE};
    rdlm_tl_boot_relay_t *relay;
    rdlm_tl_ctx_h ctx;
    rdlm_tl_rkey_h rkey;
    rdlm_status_t st;
    uint64_t old, seen;

    st = rdlm_tl_boot_replay_create(b->rec, b->rec_len, &relay);
    if (st != RDLM_OK)
        return fail("replay_create", st);
    tp.bootstrap = rdlm_tl_boot_relay_get(relay);
    st = rdlm_tl_open("ucx", &tp, &ctx);
    if (st != RDLM_OK)
        return fail("client open", st);
    st = ctx->mem->rkey_unpack(ctx, 0, b->rkey, b->rkey_len, &rkey);
    if (st != RDLM_OK)
        return fail("rkey_unpack", st);
    for (int i = 0; i < ITERS && st == RDLM_OK; i++)
        st = rdlm_tl_fadd64(ctx, rkey, 0, 1, &old);
    seen = 0;
    for (int i = 0; i < ITERS && st == RDLM_OK; i++) {
        st = rdlm_tl_cswap64(ctx, rkey, 8, seen, seen + 1, &old);
        if (st == RDLM_OK && old != seen)
            i--; /* lost the race: retry with what the word holds */
        seen = old == seen ? seen + 1 : old;
    }
    if (st != RDLM_OK)
        return fail("atomics on the server's region", st);
    rdlm_tl_destroy(ctx);
    rdlm_tl_boot_relay_destroy(relay);
    return 0;
}

/* Start a client: this program with --client, the blob on its stdin. */
static pid_t client_start(const char *self, const blob_t *b)
{
    int fds[2];
    pid_t pid;

    if (pipe(fds) != 0)
        return -1;
    pid = fork();
    if (pid == 0) {
        dup2(fds[0], 0);
        close(fds[0]);
        close(fds[1]);
        execl(self, self, "--client", (char *)NULL);
        _exit(127);
    }
    close(fds[0]);
    if (pid > 0 && write(fds[1], b, sizeof(*b)) != (ssize_t)sizeof(*b)) {
        kill(pid, SIGKILL);
    }
    close(fds[1]);
    return pid;
}

static int client_main(void)
{
    static blob_t b;
    size_t got = 0;

    while (got < sizeof(b)) {
        ssize_t n = read(0, (uint8_t *)&b + got, sizeof(b) - got);

        if (n <= 0) {
            fprintf(stderr, "tl_relay: client: short blob\n");
            return 1;
        }
        got += (size_t)n;
    }
    return client(&b);
}

int main(int argc, char **argv)
{
    rdlm_tl_params_t tp = {.thread_mode = RDLM_TL_THREAD_SINGLE, .progress_thread = 1};
    static blob_t b;
    rdlm_tl_boot_relay_t *relay, *bad;
    rdlm_tl_ctx_h ctx;
    rdlm_tl_mem_h mem;
    rdlm_status_t st;
    uint64_t *words;
    size_t len;
    pid_t kids[CLIENTS];
    int failed = 0;
    static const uint8_t garbage[12] = {1, 2, 3};

    alarm(LIMIT_S);
    if (argc > 1 && strcmp(argv[1], "--client") == 0)
        return client_main();
    if (rdlm_tl_boot_replay_create(garbage, sizeof(garbage), &bad) != RDLM_ERR_PROTOCOL) {
        fprintf(stderr, "tl_relay: garbage records were accepted\n");
        return 1;
    }
    st = rdlm_tl_boot_record_create(&relay);
    if (st != RDLM_OK)
        return fail("record_create", st);
    tp.bootstrap = rdlm_tl_boot_relay_get(relay);
    st = rdlm_tl_open("ucx", &tp, &ctx);
    if (st == RDLM_ERR_NOT_FOUND || st == RDLM_ERR_UNSUPPORTED) {
        printf("tl_relay: SKIP: UCX not usable here (%s)\n", rdlm_status_name(st));
        return 77;
    }
    if (st != RDLM_OK)
        return fail("server open", st);
    st = ctx->mem->reg(ctx, NULL, REGION, &mem);
    if (st == RDLM_OK)
        st = ctx->mem->rkey_pack(ctx, mem, b.rkey, sizeof(b.rkey), &b.rkey_len);
    if (st == RDLM_OK)
        st = rdlm_tl_boot_record_pack(relay, b.rec, sizeof(b.rec), &b.rec_len);
    if (st != RDLM_OK)
        return fail("server region and records", st);
    ctx->mem->addr(ctx, mem, (void **)&words, &len);

    fflush(NULL);
    for (int k = 0; k < CLIENTS; k++)
        kids[k] = client_start("/proc/self/exe", &b);
    for (int k = 0; k < CLIENTS; k++) {
        int wst = 0;

        if (kids[k] < 0 || waitpid(kids[k], &wst, 0) < 0)
            wst = -1;
        if (!WIFEXITED(wst) || WEXITSTATUS(wst) != 0) {
            fprintf(stderr, "tl_relay: client %d failed (status %#x)\n", k, wst);
            failed = 1;
        }
    }
    if (!failed && (__atomic_load_n(&words[0], __ATOMIC_SEQ_CST) != CLIENTS * ITERS ||
                    __atomic_load_n(&words[1], __ATOMIC_SEQ_CST) != CLIENTS * ITERS)) {
        fprintf(stderr, "tl_relay: words %" PRIu64 " and %" PRIu64 ", want %d each\n",
                words[0], words[1], CLIENTS * ITERS);
        failed = 1;
    }
    if (!failed)
        printf("tl_relay: %d clients x %d fetch-adds and CAS increments on a server they "
               "reached through its records: %" PRIu64 " and %" PRIu64 "\n",
               CLIENTS, ITERS, words[0], words[1]);
    ctx->mem->dereg(ctx, mem);
    rdlm_tl_destroy(ctx);
    rdlm_tl_boot_relay_destroy(relay);
    return failed;
}
