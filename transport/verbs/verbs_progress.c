/*
 * The verbs backend's posted compare-and-swap and its progress thread (see verbs.c for
 * the rest of the design).
 *
 * Posted CAS (cswap64_post, verbs_ops.c): the WR's result lands in one of
 * RDLM_VERBS_POSTS scratch words; the slot remembers the WR's id and the caller's op.
 * Whoever polls the CQ next (a blocking call of any thread, progress(), or the
 * progress thread) finds the completion and finishes the op (rdlm_verbs_post_done).
 * With every slot in use the CAS runs blocking, done at return.
 *
 * Progress thread (params.progress_thread, RDLM_PROGRESS=thread, the default of
 * distributed contexts): the adapter executes remote atomics without it; it exists so
 * that a posted CAS is finished, and the owner's after_progress hook runs (core/global
 * finishes a posted release there: a failed free hands the lock on), while the
 * owner's threads are busy elsewhere. It polls the CQ every RDLM_VERBS_BUSY_MS while
 * posted CASes are in flight and every RDLM_VERBS_IDLE_MS otherwise (the hook's rate
 * when idle: the rwlock sweep); a post that finds it in the long sleep wakes it
 * (stop_fd). It does not sleep on the CQ's completion channel: an event per
 * completion woke it at every release, and in the soft-RoCE VM an uncontended lock
 * cycle took 6.6 times a raw pair of atomics with it, 1.09 times with the thread
 * left asleep (one run each; the VM's times swing, docs/rdma.md).
 * No wake-up is lost: the thread marks its long sleep, then reads posts_n under the
 * lock; a post adds to posts_n, then reads the mark, under the lock.
 */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "log.h"
#include "verbs_internal.h"

/* The thread's poll period while posted CASes are in flight, and when idle. */
#define RDLM_VERBS_BUSY_MS 1
#define RDLM_VERBS_IDLE_MS 100

/* Wake the thread from its sleep (it then polls, or sees the stop flag). */
static void rdlm_verbs_thread_wake(rdlm_verbs_ctx_t *c)
{
    uint64_t one = 1;

    if (write(c->stop_fd, &one, sizeof(one)) != (ssize_t)sizeof(one)) {
        rdlm_debug("verbs: waking the progress thread failed: it wakes within %d ms",
                   RDLM_VERBS_IDLE_MS);
    }
}

void rdlm_verbs_posts_track(rdlm_verbs_ctx_t *c, uint32_t i, uint64_t wr_id,
                            rdlm_tl_op_t *op)
{
    c->posts[i] = (rdlm_verbs_posted_t){wr_id, op};
    c->posts_n++;
    if (c->thread_sleeps_long) {
        c->thread_sleeps_long = 0; /* one wake-up is enough */
        rdlm_verbs_thread_wake(c);
    }
}

void rdlm_verbs_post_done(rdlm_verbs_ctx_t *c, uint64_t wr_id, rdlm_status_t st)
{
    for (uint32_t i = 0; i < RDLM_VERBS_POSTS && c->posts_n > 0; i++) {
        rdlm_verbs_posted_t *p = &c->posts[i];

        if (p->wr_id != wr_id) {
            continue;
        }
        p->op->status = st;
        p->op->old = rdlm_verbs_result(c, c->scratch[RDLM_VERBS_POST_WORD + i]);
        rdlm_store(&p->op->done, 1, RDLM_RELEASE);
        *p = (rdlm_verbs_posted_t){0, NULL};
        c->posts_n--;
        return;
    }
}

void rdlm_verbs_posts_fail(rdlm_verbs_ctx_t *c, uint32_t peer, rdlm_status_t st)
{
    for (uint32_t i = 0; i < RDLM_VERBS_POSTS && c->posts_n > 0; i++) {
        if (c->posts[i].wr_id != 0 &&
            (peer == RDLM_TL_PEER_ALL || (uint32_t)c->posts[i].wr_id == peer)) {
            rdlm_verbs_post_done(c, c->posts[i].wr_id, st);
        }
    }
}

/* Poll the CQ once; the number of completions (0 on an error, said by the poll). */
static int rdlm_verbs_thread_poll(rdlm_verbs_ctx_t *c)
{
    rdlm_status_t dummy;
    int found = 0, n;

    pthread_mutex_lock(&c->lock);
    n = rdlm_verbs_poll(c, 0, &found, &dummy);
    pthread_mutex_unlock(&c->lock);
    return n > 0 ? n : 0;
}

/* How long to sleep: RDLM_VERBS_BUSY_MS while posted CASes are in flight, else
 * RDLM_VERBS_IDLE_MS with the long sleep marked (the top of the file). */
static int rdlm_verbs_thread_nap_ms(rdlm_verbs_ctx_t *c)
{
    int ms;

    pthread_mutex_lock(&c->lock);
    c->thread_sleeps_long = c->posts_n == 0;
    ms = c->thread_sleeps_long ? RDLM_VERBS_IDLE_MS : RDLM_VERBS_BUSY_MS;
    pthread_mutex_unlock(&c->lock);
    return ms;
}

static void *rdlm_verbs_thread_main(void *arg)
{
    rdlm_verbs_ctx_t *c = arg;
    uint64_t woken;

    while (!rdlm_load(&c->stop, RDLM_ACQUIRE)) {
        struct pollfd fd = {.fd = c->stop_fd, .events = POLLIN};
        int n = rdlm_verbs_thread_poll(c);

        if (c->super.after_progress != NULL) {
            c->super.after_progress(c->super.after_progress_arg);
        }
        if (n > 0) {
            continue; /* more may have come meanwhile */
        }
        if (poll(&fd, 1, rdlm_verbs_thread_nap_ms(c)) < 0 && errno != EINTR) {
            rdlm_error("verbs: progress thread: poll: %s", strerror(errno));
            break;
        }
        if ((fd.revents & POLLIN) && read(c->stop_fd, &woken, sizeof(woken)) < 0) {
            rdlm_debug("verbs: progress thread: read: %s", strerror(errno));
        }
        pthread_mutex_lock(&c->lock);
        c->thread_sleeps_long = 0;
        pthread_mutex_unlock(&c->lock);
    }
    return NULL;
}

rdlm_status_t rdlm_verbs_thread_start(rdlm_verbs_ctx_t *c)
{
    int rc;

    c->stop_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (c->stop_fd < 0) {
        rdlm_warn("verbs: the progress thread's eventfd: %s: no progress thread",
                  strerror(errno));
        return RDLM_ERR_NO_RESOURCE;
    }
    rc = pthread_create(&c->thread, NULL, rdlm_verbs_thread_main, c);
    c->thread_running = rc == 0;
    if (rc != 0) {
        rdlm_warn("verbs: starting the progress thread: %s: a posted operation completes "
                  "only inside rdlm calls",
                  strerror(rc));
        return RDLM_ERR_NO_RESOURCE;
    }
    return RDLM_OK;
}

void rdlm_verbs_thread_stop(rdlm_verbs_ctx_t *c)
{
    if (!c->thread_running) {
        return;
    }
    rdlm_store(&c->stop, 1, RDLM_RELEASE);
    rdlm_verbs_thread_wake(c);
    pthread_join(c->thread, NULL);
    c->thread_running = 0;
}
