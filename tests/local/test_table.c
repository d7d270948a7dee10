/* Object table: insert and look up, kinds, home-position collisions, id collisions
 * told apart by the stored name, a full table that refuses cleanly, the last close
 * of a lock retiring its entry with its tokens kept by the floor (a counter's entry
 * stays), and a creation lock left by a dead holder taken over and repaired (its
 * half-keyed entry retired, the floor of the entry it retired raised). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "table.h"

static uint64_t state_of(const rdlm_segment_t *seg, uint32_t idx)
{
    return rdlm_load(&seg->entries[idx].state, RDLM_RELAXED);
}

static int attach(rdlm_segment_t *seg, uint32_t capacity, const char *tag)
{
    char job[32];
    rdlm_segment_params_t p = {.job = job, .capacity = capacity, .max_procs = 4};

    snprintf(job, sizeof(job), "ut-%d-%s", (int)getpid(), tag);
    return rdlm_segment_attach(&p, seg);
}

static void open_twice_gives_same_entry_and_kind_is_enforced(void **state)
{
    rdlm_segment_t seg;
    uint32_t a, b, c;

    (void)state;
    assert_int_equal(attach(&seg, 64, "kind"), RDLM_OK);
    assert_int_equal(rdlm_table_open(&seg, "alpha", RDLM_KIND_LOCK, 0, 0, &a), RDLM_OK);
    assert_int_equal(rdlm_table_open(&seg, "alpha", RDLM_KIND_LOCK, 0, 0, &b), RDLM_OK);
    assert_int_equal(a, b);
    assert_int_equal(rdlm_table_open(&seg, "beta", RDLM_KIND_COUNTER, 0, 0, &c), RDLM_OK);
    assert_int_not_equal(a, c);
    assert_int_equal(rdlm_table_open(&seg, "alpha", RDLM_KIND_COUNTER, 0, 0, &c),
                     RDLM_ERR_KIND_MISMATCH);
    assert_int_equal(rdlm_load(&seg.hdr->used, RDLM_RELAXED), 2);
    assert_string_equal(seg.names[a], "alpha");
    rdlm_segment_detach(&seg);
}

static void many_names_in_a_small_table_probe_past_collisions(void **state)
{
    rdlm_segment_t seg;
    uint32_t idx[40], again;
    char name[16];

    (void)state;
    assert_int_equal(attach(&seg, 40, "probe"), RDLM_OK);
    for (int i = 0; i < 40; i++) {
        snprintf(name, sizeof(name), "n%d", i);
        assert_int_equal(rdlm_table_open(&seg, name, RDLM_KIND_LOCK, 0, 0, &idx[i]),
                         RDLM_OK);
        for (int j = 0; j < i; j++) {
            assert_int_not_equal(idx[i], idx[j]);
        }
    }
    for (int i = 0; i < 40; i++) {
        snprintf(name, sizeof(name), "n%d", i);
        assert_int_equal(rdlm_table_open(&seg, name, RDLM_KIND_LOCK, 0, 0, &again),
                         RDLM_OK);
        assert_int_equal(again, idx[i]);
    }
    rdlm_segment_detach(&seg);
}

static void same_id_different_name_gets_its_own_entry(void **state)
{
    rdlm_segment_t seg;
    uint32_t planted, idx;
    uint64_t id = rdlm_table_id("victim");

    (void)state;
    assert_int_equal(attach(&seg, 64, "idcoll"), RDLM_OK);
    /* Plant another name with the same id at the victim's home position (the fresh
     * table is empty there). */
    planted = (uint32_t)(((unsigned __int128)id * seg.hdr->table_size) >> 64);
    rdlm_store(&seg.entries[planted].key, id, RDLM_RELAXED);
    strcpy(seg.names[planted], "impostor");
    rdlm_store(&seg.entries[planted].meta, RDLM_KIND_LOCK | RDLM_META_READY, RDLM_RELEASE);
    rdlm_store(&seg.entries[planted].state, RDLM_STATE_MAKE(1, RDLM_PHASE_LIVE, 1),
               RDLM_RELEASE);
    rdlm_fetch_add(&seg.hdr->used, 1, RDLM_RELAXED);

    assert_int_equal(rdlm_table_open(&seg, "victim", RDLM_KIND_LOCK, 0, 0, &idx), RDLM_OK);
    assert_int_not_equal(idx, planted);
    assert_string_equal(seg.names[idx], "victim");
    assert_string_equal(seg.names[planted], "impostor");
    rdlm_segment_detach(&seg);
}

static void full_table_refuses_and_keeps_existing_entries(void **state)
{
    rdlm_segment_t seg;
    uint32_t idx, first;
    char name[16];

    (void)state;
    assert_int_equal(attach(&seg, 16, "full"), RDLM_OK);
    for (int i = 0; i < 16; i++) {
        snprintf(name, sizeof(name), "f%d", i);
        assert_int_equal(rdlm_table_open(&seg, name, RDLM_KIND_LOCK, 0, 0, &idx), RDLM_OK);
        if (i == 0) {
            first = idx;
        }
    }
    assert_int_equal(rdlm_table_open(&seg, "one-too-many", RDLM_KIND_LOCK, 0, 0, &idx),
                     RDLM_ERR_TABLE_FULL);
    assert_int_equal(rdlm_load(&seg.hdr->used, RDLM_RELAXED), 16);
    assert_int_equal(rdlm_table_open(&seg, "f0", RDLM_KIND_LOCK, 0, 0, &idx), RDLM_OK);
    assert_int_equal(idx, first);
    rdlm_segment_detach(&seg);
}

static void last_close_retires_a_lock_and_its_floor_keeps_tokens(void **state)
{
    rdlm_segment_t seg;
    uint32_t a, again, c;
    uint64_t used_token;

    (void)state;
    assert_int_equal(attach(&seg, 16, "retire"), RDLM_OK);
    assert_int_equal(rdlm_table_open(&seg, "a", RDLM_KIND_LOCK, 0, 0, &a), RDLM_OK);
    assert_int_equal(rdlm_table_open(&seg, "a", RDLM_KIND_LOCK, 0, 0, &again), RDLM_OK);
    assert_int_equal(again, a);
    assert_int_equal(RDLM_STATE_OPENS(state_of(&seg, a)), 2);
    used_token = rdlm_load(&seg.entries[a].token, RDLM_RELAXED) + 1000; /* as if used */
    rdlm_store(&seg.entries[a].token, used_token, RDLM_RELAXED);
    rdlm_table_close(&seg, a);
    assert_int_equal(RDLM_STATE_PHASE(state_of(&seg, a)), RDLM_PHASE_LIVE);
    rdlm_table_close(&seg, a); /* the last: retired, and trimmed (the next is free) */
    assert_int_equal(RDLM_STATE_PHASE(state_of(&seg, a)), RDLM_PHASE_FREE);
    assert_int_equal(rdlm_load(&seg.hdr->used, RDLM_RELAXED), 0);
    assert_int_equal(rdlm_table_open(&seg, "a", RDLM_KIND_LOCK, 0, 0, &again), RDLM_OK);
    assert_true(rdlm_load(&seg.entries[again].token, RDLM_RELAXED) >= used_token);
    assert_int_equal(RDLM_STATE_GEN(state_of(&seg, again)), 2);
    /* A held lock's last close leaves it live (closing releases first in the API). */
    rdlm_store(&seg.entries[again].word, RDLM_MUTEX_MAKE(seg.self_owner, 0), RDLM_RELAXED);
    rdlm_table_close(&seg, again);
    assert_int_equal(RDLM_STATE_PHASE(state_of(&seg, again)), RDLM_PHASE_LIVE);
    /* A counter keeps its value: never retired. */
    assert_int_equal(rdlm_table_open(&seg, "c", RDLM_KIND_COUNTER, 0, 0, &c), RDLM_OK);
    rdlm_table_close(&seg, c);
    assert_int_equal(RDLM_STATE_PHASE(state_of(&seg, c)), RDLM_PHASE_LIVE);
    /* Nor is a kept entry (a cross-node context's). */
    assert_int_equal(rdlm_table_open(&seg, "k", RDLM_KIND_LOCK, 0, 1, &c), RDLM_OK);
    rdlm_table_close(&seg, c);
    assert_int_equal(RDLM_STATE_PHASE(state_of(&seg, c)), RDLM_PHASE_LIVE);
    rdlm_segment_detach(&seg);
}

static void dead_holder_of_the_creation_lock_is_taken_over(void **state)
{
    rdlm_segment_t seg;
    uint32_t left = 3, idx;
    uint32_t dead;

    (void)state;
    assert_int_equal(attach(&seg, 16, "takeover"), RDLM_OK);
    dead = RDLM_OWNER_MAKE(seg.self_slot, RDLM_OWNER_GEN(seg.self_owner) + 1);
    /* A creator died half-way through keying entry 3, holding the lock. */
    rdlm_store(&seg.hdr->create_lock, dead, RDLM_RELAXED);
    rdlm_store(&seg.hdr->create_idx, left, RDLM_RELAXED);
    rdlm_store(&seg.entries[left].key, 0x1234, RDLM_RELAXED);
    rdlm_store(&seg.entries[left].state, RDLM_STATE_MAKE(1, RDLM_PHASE_CREATING, 0),
               RDLM_RELAXED);
    rdlm_fetch_add(&seg.hdr->used, 1, RDLM_RELAXED);
    rdlm_fetch_add(&seg.hdr->used, 1, RDLM_RELAXED); /* and its count is one off */
    assert_int_equal(rdlm_table_open(&seg, "new", RDLM_KIND_LOCK, 0, 0, &idx), RDLM_OK);
    assert_int_equal(rdlm_load(&seg.hdr->create_lock, RDLM_RELAXED), 0);
    assert_int_equal(rdlm_load(&seg.hdr->create_idx, RDLM_RELAXED), RDLM_TABLE_NONE);
    assert_int_not_equal(RDLM_STATE_PHASE(state_of(&seg, left)), RDLM_PHASE_CREATING);
    assert_int_not_equal(RDLM_STATE_PHASE(state_of(&seg, left)), RDLM_PHASE_LIVE);
    assert_int_equal(rdlm_load(&seg.hdr->used, RDLM_RELAXED),
                     1 + (RDLM_STATE_PHASE(state_of(&seg, left)) != RDLM_PHASE_FREE));
    /* Another died after retiring "old" (token 5000 above the epoch's) and before
     * raising its floor: the taker-over raises it, so "old" opened again starts
     * above. */
    rdlm_table_close(&seg, idx);
    assert_int_equal(rdlm_table_open(&seg, "old", RDLM_KIND_LOCK, 0, 0, &idx), RDLM_OK);
    rdlm_store(&seg.entries[idx].token, ((uint64_t)seg.hdr->epoch << 40) + 5000,
               RDLM_RELAXED);
    rdlm_store(&seg.entries[idx].state,
               RDLM_STATE_MAKE(RDLM_STATE_GEN(state_of(&seg, idx)), RDLM_PHASE_RETIRED, 0),
               RDLM_RELAXED);
    rdlm_store(&seg.hdr->create_lock, dead, RDLM_RELAXED);
    rdlm_store(&seg.hdr->create_idx, idx, RDLM_RELAXED);
    assert_int_equal(rdlm_table_open(&seg, "old", RDLM_KIND_LOCK, 0, 0, &idx), RDLM_OK);
    assert_true(rdlm_load(&seg.entries[idx].token, RDLM_RELAXED) >=
                ((uint64_t)seg.hdr->epoch << 40) + 5000);
    rdlm_segment_detach(&seg);
}

static void ids_are_never_zero_and_spread(void **state)
{
    (void)state;
    assert_int_not_equal(rdlm_table_id(""), 0);
    assert_int_not_equal(rdlm_table_id("a"), rdlm_table_id("b"));
    assert_int_not_equal(rdlm_table_id("lock1"), rdlm_table_id("lock2"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(open_twice_gives_same_entry_and_kind_is_enforced),
        cmocka_unit_test(many_names_in_a_small_table_probe_past_collisions),
        cmocka_unit_test(same_id_different_name_gets_its_own_entry),
        cmocka_unit_test(full_table_refuses_and_keeps_existing_entries),
        cmocka_unit_test(last_close_retires_a_lock_and_its_floor_keeps_tokens),
        cmocka_unit_test(dead_holder_of_the_creation_lock_is_taken_over),
        cmocka_unit_test(ids_are_never_zero_and_spread),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
