/* Object table: insert and look up, kinds, home-position collisions, id collisions
 * told apart by the stored name, and a full table that refuses cleanly. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "table.h"

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
        assert_int_equal(rdlm_table_open(&seg, name, RDLM_KIND_LOCK, 0, 0, &idx[i]), RDLM_OK);
        for (int j = 0; j < i; j++) {
            assert_int_not_equal(idx[i], idx[j]);
        }
    }
    for (int i = 0; i < 40; i++) {
        snprintf(name, sizeof(name), "n%d", i);
        assert_int_equal(rdlm_table_open(&seg, name, RDLM_KIND_LOCK, 0, 0, &again), RDLM_OK);
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
        cmocka_unit_test(ids_are_never_zero_and_spread),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
