/*
 * Divergence between replicas (core/lease/authority/witness.c, raft_fsm.c, confirm.c,
 * server.c).
 *
 * Proves: replicas that apply the same entries have equal marks at every n, and the
 * first entry where they differ makes every later mark differ; a check against a mark
 * not in the ring (not applied yet, or too old) agrees, a differing one diverges the
 * checker for good; a snapshot carries its mark through restore, and one without it
 * (an older version's) restores with no known mark, taking no part; and, with three
 * real replicas on 127.0.0.1 (embedded, one process), renewals make the leader compare
 * its chain with the followers' and find nothing while they agree, and, once a
 * follower's marks are made to differ, the leader fails closed: a lock request gets
 * no grant, and its STATUS answers RDLM_ERR_CORRUPT.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rdlm/lease.h>

#include "job_authority.h"
#include "raft_fsm.h"
#include "witness.h"

#define N_REPLICAS 3
#define WAIT_MS 5000

static void sleep_ms(unsigned ms)
{
    struct timespec t = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000};
    nanosleep(&t, NULL);
}

static void marks_agree_until_the_first_different_entry(void **state)
{
    rdlm_lease_witness_t a, b;
    rdlm_lease_mark_t ma, mb;
    uint64_t chain;
    char entry[24];

    (void)state;
    rdlm_lease_witness_init(&a);
    rdlm_lease_witness_init(&b);
    for (int i = 0; i < 10; i++) {
        snprintf(entry, sizeof(entry), "entry-%d", i);
        rdlm_lease_witness_apply(&a, entry, strlen(entry));
        /* b applies something else at the 6th entry, the same before and after */
        rdlm_lease_witness_apply(&b, i == 5 ? "other" : entry, i == 5 ? 5 : strlen(entry));
        assert_int_equal(rdlm_lease_witness_newest(&a, &ma), 1);
        assert_int_equal(rdlm_lease_witness_newest(&b, &mb), 1);
        assert_true(ma.n == (uint64_t)i + 1 && mb.n == ma.n);
        assert_true((ma.chain == mb.chain) == (i < 5));
    }
    /* Not applied yet, and too old: nothing to compare, so no divergence. */
    assert_int_equal(rdlm_lease_witness_lookup(&a, 11, &chain), 0);
    assert_int_equal(rdlm_lease_witness_check(&a, 11, 42, "b"), 1);
    assert_int_equal(rdlm_lease_witness_lookup(&b, 5, &chain), 1);
    assert_int_equal(rdlm_lease_witness_check(&a, 5, chain, "b"), 1); /* equal there */
    assert_int_equal(rdlm_lease_witness_diverged(&a), 0);
    assert_int_equal(rdlm_lease_witness_lookup(&b, 6, &chain), 1);
    assert_int_equal(rdlm_lease_witness_check(&a, 6, chain, "b"), 0);
    assert_int_equal(rdlm_lease_witness_diverged(&a), 1);
    assert_int_equal(rdlm_lease_witness_check(&a, 5, 0, "b"), 0);
    assert_int_equal(rdlm_lease_witness_diverged(&a), 1); /* sticky */
    assert_int_equal(rdlm_lease_witness_diverged(&b), 0); /* only the checker judges */
    rdlm_lease_witness_fini(&a);
    rdlm_lease_witness_fini(&b);
}

static void ring_forgets_old_marks(void **state)
{
    rdlm_lease_witness_t w;
    uint64_t chain;

    (void)state;
    rdlm_lease_witness_init(&w);
    for (unsigned i = 0; i < RDLM_LEASE_WITNESS_RING + 10; i++) {
        rdlm_lease_witness_apply(&w, &i, sizeof(i));
    }
    assert_int_equal(rdlm_lease_witness_lookup(&w, 5, &chain), 0);
    assert_int_equal(rdlm_lease_witness_check(&w, 5, 1, "x"), 1);
    assert_int_equal(rdlm_lease_witness_lookup(&w, RDLM_LEASE_WITNESS_RING + 10, &chain),
                     1);
    assert_int_equal(rdlm_lease_witness_diverged(&w), 0);
    rdlm_lease_witness_fini(&w);
}

/* Apply n valid OPEN entries through the adapter. */
static void apply_opens(struct raft_fsm *fsm, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        rdlm_lease_cmd_t c = {.op = RDLM_LEASE_OP_OPEN, .ttl_ms = 5000, .nonce = 100 + i};
        uint8_t buf[RDLM_LEASE_CMD_MAX];
        struct raft_buffer b = {.base = buf,
                                .len = rdlm_lease_cmd_encode(&c, buf, sizeof(buf))};
        void *result;

        assert_int_equal(fsm->apply(fsm, &b, &result), 0);
    }
}

static void snapshot_carries_the_mark_and_an_old_one_has_none(void **state)
{
    rdlm_lease_raft_fsm_t a, b;
    struct raft_fsm fa, fb;
    struct raft_buffer *bufs, copy;
    rdlm_lease_mark_t ma, mb;
    unsigned n_bufs;

    (void)state;
    assert_int_equal(rdlm_lease_raft_fsm_init(&a, &fa, NULL), RDLM_OK);
    assert_int_equal(rdlm_lease_raft_fsm_init(&b, &fb, NULL), RDLM_OK);
    apply_opens(&fa, 7);
    assert_int_equal(fa.snapshot(&fa, &bufs, &n_bufs), 0);
    assert_int_equal(n_bufs, 1);
    /* restore owns the buffer on success: hand it a copy */
    copy.len = bufs[0].len;
    copy.base = raft_malloc(copy.len);
    memcpy(copy.base, bufs[0].base, copy.len);
    assert_int_equal(fb.restore(&fb, &copy), 0);
    assert_int_equal(rdlm_lease_witness_newest(&a.witness, &ma), 1);
    assert_int_equal(rdlm_lease_witness_newest(&b.witness, &mb), 1);
    assert_true(ma.n == 7 && mb.n == 7 && ma.chain == mb.chain);
    apply_opens(&fa, 1);
    apply_opens(&fb, 1);
    rdlm_lease_witness_newest(&a.witness, &ma);
    rdlm_lease_witness_newest(&b.witness, &mb);
    assert_true(ma.n == 8 && mb.n == 8 && ma.chain == mb.chain);
    /* The same state without the mark's 20 bytes: an older version's snapshot. */
    copy.len = bufs[0].len - 20;
    copy.base = raft_malloc(copy.len);
    memcpy(copy.base, bufs[0].base, copy.len);
    assert_int_equal(fb.restore(&fb, &copy), 0);
    assert_int_equal(rdlm_lease_witness_newest(&b.witness, &mb), 0);
    assert_int_equal(rdlm_lease_witness_check(&b.witness, 7, 1, "x"), 1);
    assert_int_equal(rdlm_lease_sm_session_count(b.sm), 7);
    raft_free(bufs[0].base);
    raft_free(bufs);
    rdlm_lease_raft_fsm_close(&a);
    rdlm_lease_raft_fsm_close(&b);
}

/* ---- three real replicas ------------------------------------------------------- */

typedef struct cluster {
    rdlm_job_authority_t *h[N_REPLICAS];
    rdlm_job_authority_addrs_t addrs[N_REPLICAS];
    char dir[64], clients[N_REPLICAS * 24];
} cluster_t;

static void cluster_start(cluster_t *c)
{
    char path[96];
    size_t off = 0;

    snprintf(c->dir, sizeof(c->dir), "/tmp/rdlm-test-witness-XXXXXX");
    assert_non_null(mkdtemp(c->dir));
    for (int i = 0; i < N_REPLICAS; i++) {
        assert_int_equal(rdlm_job_authority_create("127.0.0.1", &c->h[i], &c->addrs[i]),
                         RDLM_OK);
        off += (size_t)snprintf(c->clients + off, sizeof(c->clients) - off, "%s%s",
                                i ? "," : "", c->addrs[i].client);
    }
    for (int i = 0; i < N_REPLICAS; i++) {
        rdlm_job_authority_params_t p = {.replicas = c->addrs,
                                         .n_replicas = N_REPLICAS,
                                         .self = (unsigned)i,
                                         .data_dir = path,
                                         .election_timeout_ms = 300,
                                         .heartbeat_ms = 30,
                                         .max_clients = 4};

        snprintf(path, sizeof(path), "%s/r%d", c->dir, i);
        assert_int_equal(rdlm_job_authority_start(c->h[i], &p), RDLM_OK);
    }
}

static void cluster_stop(cluster_t *c)
{
    for (int i = 0; i < N_REPLICAS; i++) {
        rdlm_job_authority_stop(c->h[i]);
    }
    rmdir(c->dir);
}

static int find_leader(cluster_t *c)
{
    for (int t = 0; t < WAIT_MS / 50; t++) {
        for (int i = 0; i < N_REPLICAS; i++) {
            rdlm_authority_status_t st;

            if (rdlm_authority_status(c->addrs[i].client, 500, &st) == RDLM_OK &&
                st.is_leader) {
                return i;
            }
        }
        sleep_ms(50);
    }
    return -1;
}

/* Wait until replica i's newest mark is at least n. */
static int wait_mark(cluster_t *c, int i, uint64_t n)
{
    rdlm_lease_mark_t m;

    for (int t = 0; t < WAIT_MS / 10; t++) {
        if (rdlm_lease_witness_newest(rdlm_job_authority_witness(c->h[i]), &m) &&
            m.n >= n) {
            return 1;
        }
        sleep_ms(10);
    }
    return 0;
}

static void leader_fails_closed_once_a_follower_applied_otherwise(void **state)
{
    rdlm_session_params_t sp = {.field_mask = RDLM_SESSION_FIELD_TTL, .ttl_ms = 900};
    rdlm_authority_status_t st;
    rdlm_lease_mark_t lm, fm;
    rdlm_session_h s = NULL;
    uint64_t token;
    cluster_t c;
    int leader, follower, diverged = 0;

    (void)state;
    memset(&c, 0, sizeof(c));
    cluster_start(&c);
    assert_int_equal(rdlm_session_open(c.clients, &sp, &s), RDLM_OK);
    for (int i = 0; i < 5; i++) {
        assert_int_equal(rdlm_session_lock(s, "w", 2000000000ull, &token), RDLM_OK);
        assert_int_equal(rdlm_session_unlock(s, "w", token), RDLM_OK);
    }
    leader = find_leader(&c);
    assert_true(leader >= 0);
    follower = (leader + 1) % N_REPLICAS;
    assert_int_equal(
        rdlm_lease_witness_newest(rdlm_job_authority_witness(c.h[leader]), &lm), 1);
    assert_true(wait_mark(&c, follower, lm.n));
    /* Renewals (every TTL/3) ask for rounds; the followers agree: no divergence. */
    sleep_ms(1200);
    for (int i = 0; i < N_REPLICAS; i++) {
        assert_int_equal(rdlm_lease_witness_diverged(rdlm_job_authority_witness(c.h[i])),
                         0);
    }
    assert_int_equal(rdlm_session_lock(s, "w", 2000000000ull, &token), RDLM_OK);
    assert_int_equal(rdlm_session_unlock(s, "w", token), RDLM_OK);

    /* Plant a divergence: the follower's newest mark as if it had applied another
     * entry there (what a lost committed entry leaves behind). */
    assert_true(wait_mark(&c, follower, lm.n + 2));
    rdlm_lease_witness_newest(rdlm_job_authority_witness(c.h[follower]), &fm);
    fm.chain ^= 1;
    rdlm_lease_witness_restart(rdlm_job_authority_witness(c.h[follower]), fm, 1);
    for (int t = 0; t < WAIT_MS / 50 && !diverged; t++) {
        sleep_ms(50);
        diverged = rdlm_lease_witness_diverged(rdlm_job_authority_witness(c.h[leader]));
    }
    assert_true(diverged);
    assert_int_not_equal(rdlm_session_lock(s, "w", 1000000000ull, &token), RDLM_OK);
    assert_int_equal(rdlm_authority_status(c.addrs[leader].client, 1000, &st),
                     RDLM_ERR_CORRUPT);
    rdlm_session_close(s);
    cluster_stop(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(marks_agree_until_the_first_different_entry),
        cmocka_unit_test(ring_forgets_old_marks),
        cmocka_unit_test(snapshot_carries_the_mark_and_an_old_one_has_none),
        cmocka_unit_test(leader_fails_closed_once_a_follower_applied_otherwise),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
