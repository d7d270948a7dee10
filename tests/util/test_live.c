/* Live handles (util/include/live.h): a node is on its set from add to remove; a
 * second remove says it was not there (so a second destroy frees nothing); a lookup of
 * a node not on the set is refused without reading it; sets are independent. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "live.h"

static void node_is_live_from_add_to_remove(void **state)
{
    rdlm_live_set_t set = RDLM_LIVE_SET_INIT;
    rdlm_live_node_t a = {0}, b = {0}, c = {0};

    (void)state;
    assert_false(rdlm_live_has(&set, &a));
    rdlm_live_add(&set, &a);
    rdlm_live_add(&set, &b);
    rdlm_live_add(&set, &c);
    assert_true(rdlm_live_has(&set, &a));
    assert_true(rdlm_live_has(&set, &b));
    assert_int_equal(rdlm_live_remove(&set, &b), 1); /* from the middle */
    assert_false(rdlm_live_has(&set, &b));
    assert_true(rdlm_live_has(&set, &a));
    assert_true(rdlm_live_has(&set, &c));
    assert_int_equal(rdlm_live_remove(&set, &b), 0); /* a second destroy */
    assert_int_equal(rdlm_live_remove(&set, &a), 1);
    assert_int_equal(rdlm_live_remove(&set, &c), 1);
    assert_null(set.head);
}

static void sets_are_independent(void **state)
{
    rdlm_live_set_t one = RDLM_LIVE_SET_INIT, two = RDLM_LIVE_SET_INIT;
    rdlm_live_node_t a = {0};

    (void)state;
    rdlm_live_add(&one, &a);
    assert_false(rdlm_live_has(&two, &a));
    assert_int_equal(rdlm_live_remove(&two, &a), 0);
    assert_true(rdlm_live_has(&one, &a));
    assert_int_equal(rdlm_live_remove(&one, &a), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(node_is_live_from_add_to_remove),
        cmocka_unit_test(sets_are_independent),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
