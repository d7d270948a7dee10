/* The permits each rank holds at a semaphore's home (core/global/amq_sem_held.c): the
 * open-addressed table against a plain array, through growth and deletions that
 * shift probe runs back, and a returned entry that ignores its rank's late
 * releases. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "amq_home.h"

#define SLOTS 40u
#define RANKS 60u
#define OPS 20000

/* The table's count of (slot, rank), read without its hash: 0 if absent. */
static uint32_t table_k(const struct rdlm_amq_home *h, uint32_t slot, uint32_t rank,
                        int *found_p)
{
    *found_p = 0;
    for (uint32_t i = 0; i < h->held_cap; i++) {
        if (h->held[i].slot1 == slot + 1 && h->held[i].rank == rank) {
            *found_p += 1;
            return h->held[i].k;
        }
    }
    return 0;
}

static void matches_an_array_through_growth_and_deletes(void **state)
{
    static uint32_t ref[SLOTS][RANKS];
    struct rdlm_amq_home h = {0};
    uint32_t live;

    (void)state;
    srand(7);
    for (int op = 0; op < OPS; op++) {
        uint32_t slot = (uint32_t)rand() % SLOTS, rank = (uint32_t)rand() % RANKS;
        uint32_t k = 1 + (uint32_t)rand() % 3;

        if (ref[slot][rank] == 0 || rand() % 2) {
            rdlm_amq_held_grant(&h, slot, rank, k);
            ref[slot][rank] += k;
        } else {
            k = k < ref[slot][rank] ? k : ref[slot][rank];
            assert_int_equal(rdlm_amq_held_release(&h, slot, rank, k), k);
            ref[slot][rank] -= k;
        }
    }
    live = 0;
    for (uint32_t s = 0; s < SLOTS; s++) {
        for (uint32_t r = 0; r < RANKS; r++) {
            int found;

            assert_int_equal(table_k(&h, s, r, &found), ref[s][r]);
            assert_int_equal(found, ref[s][r] != 0); /* no entry left at 0 */
            live += ref[s][r] != 0;
        }
    }
    assert_int_equal(h.held_n, live);
    assert_true(2 * h.held_n <= h.held_cap);
    /* Everything given back: the table is empty. */
    for (uint32_t s = 0; s < SLOTS; s++) {
        for (uint32_t r = 0; r < RANKS; r++) {
            if (ref[s][r] != 0) {
                assert_int_equal(rdlm_amq_held_release(&h, s, r, ref[s][r]), ref[s][r]);
            }
        }
    }
    assert_int_equal(h.held_n, 0);
    for (uint32_t i = 0; i < h.held_cap; i++) {
        assert_int_equal(h.held[i].slot1, 0);
    }
    free(h.held);
}

static void a_returned_rank_gives_nothing_back(void **state)
{
    struct rdlm_amq_home h = {0};
    int found;

    (void)state;
    rdlm_amq_held_grant(&h, 3, 9, 2);
    rdlm_amq_held_grant(&h, 3, 10, 1);
    /* What rdlm_amq_sem_recover does once rank 9's lease ended. */
    for (uint32_t i = 0; i < h.held_cap; i++) {
        if (h.held[i].slot1 == 4 && h.held[i].rank == 9) {
            h.held[i].k = 0;
            h.held[i].returned = 1;
        }
    }
    assert_int_equal(rdlm_amq_held_release(&h, 3, 9, 2), 0); /* a late SEM_REL */
    assert_int_equal(rdlm_amq_held_release(&h, 3, 10, 1), 1);
    assert_int_equal(table_k(&h, 3, 10, &found), 0);
    assert_int_equal(found, 0);
    rdlm_amq_held_grant(&h, 3, 9, 1); /* a grant that reached it dead: returned stays */
    assert_int_equal(rdlm_amq_held_release(&h, 3, 9, 1), 0);
    free(h.held);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(matches_an_array_through_growth_and_deletes),
        cmocka_unit_test(a_returned_rank_gives_nothing_back),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
