/* Names of what jobs leave in /dev/shm: a distributed context's node segment names
 * (first 20 bytes of the job, context id, node) match their job and no other; a job's
 * own segment matches; a name with a malformed node suffix does not. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "leftovers.h"

static void node_segments_match_their_job_only(void **state)
{
    char name[RDLM_LEFTOVERS_JOB];

    (void)state;
    rdlm_leftovers_node_job(name, sizeof(name), "12345", 0x0123456789abcdefull, 7);
    assert_string_equal(name, "12345.0123456789abcdef.n7");
    assert_true(rdlm_leftovers_job_matches(name, "12345"));
    assert_false(rdlm_leftovers_job_matches(name, "1234"));
    assert_false(rdlm_leftovers_job_matches(name, "123456"));
    assert_true(rdlm_leftovers_job_matches("12345", "12345"));
    assert_false(rdlm_leftovers_job_matches("12345.lock", "12345"));
}

static void long_jobs_match_through_their_first_20_bytes(void **state)
{
    const char *job = "a-very-long-job-name-of-32-bytes";
    char name[RDLM_LEFTOVERS_JOB];

    (void)state;
    rdlm_leftovers_node_job(name, sizeof(name), job, 1, 4095);
    assert_string_equal(name, "a-very-long-job-name.0000000000000001.n4095");
    assert_true(rdlm_leftovers_job_matches(name, job));
}

static void malformed_node_suffixes_do_not_match(void **state)
{
    (void)state;
    assert_false(rdlm_leftovers_job_matches("j.0123456789abcdef.n", "j"));
    assert_false(rdlm_leftovers_job_matches("j.0123456789abcde.n1", "j"));
    assert_false(rdlm_leftovers_job_matches("j.0123456789ABCDEF.n1", "j"));
    assert_false(rdlm_leftovers_job_matches("j.0123456789abcdef.n1x", "j"));
    assert_false(rdlm_leftovers_job_matches("j.0123456789abcdef.x1", "j"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(node_segments_match_their_job_only),
        cmocka_unit_test(long_jobs_match_through_their_first_20_bytes),
        cmocka_unit_test(malformed_node_suffixes_do_not_match),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
