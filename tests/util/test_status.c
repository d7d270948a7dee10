/* Status codes: every listed code has a distinct text and name; unknown values get
 * the fallback text; the grouping by sign holds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <rdlm/status.h>

static const rdlm_status_t all[] = {
#define X_(name, value, text) name,
    RDLM_STATUS_LIST(X_)
#undef X_
};
#define N_ALL (sizeof(all) / sizeof(all[0]))

static void every_status_has_distinct_text_and_name(void **state)
{
    (void)state;
    for (size_t i = 0; i < N_ALL; i++) {
        assert_string_not_equal(rdlm_status_str(all[i]), "unknown status");
        assert_string_not_equal(rdlm_status_name(all[i]), "RDLM_?");
        for (size_t j = 0; j < i; j++) {
            assert_int_not_equal(all[i], all[j]);
            assert_string_not_equal(rdlm_status_str(all[i]), rdlm_status_str(all[j]));
        }
    }
    assert_string_equal(rdlm_status_name(RDLM_ERR_TIMEOUT), "RDLM_ERR_TIMEOUT");
}

static void unknown_status_gets_fallback(void **state)
{
    (void)state;
    assert_string_equal(rdlm_status_str((rdlm_status_t)-9999), "unknown status");
    assert_string_equal(rdlm_status_name((rdlm_status_t)12345), "RDLM_?");
}

static void ok_is_zero_and_errors_are_negative(void **state)
{
    (void)state;
    assert_int_equal(RDLM_OK, 0);
    assert_true(RDLM_OWNER_DEAD > 0);
    assert_true(RDLM_ERR_INVALID_ARG < 0 && RDLM_ERR_INVALID_ARG > -100);
    assert_true(RDLM_ERR_TIMEOUT <= -100 && RDLM_ERR_TIMEOUT > -200);
    assert_true(RDLM_ERR_PEER_DEAD <= -200 && RDLM_ERR_PEER_DEAD > -300);
    assert_true(RDLM_ERR_NO_MEMORY <= -300);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_status_has_distinct_text_and_name),
        cmocka_unit_test(unknown_status_gets_fallback),
        cmocka_unit_test(ok_is_zero_and_errors_are_negative),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
