/*
 * Session credentials (core/lease/auth.c) against the local munged: a round trip binds
 * the creating process's uid, gid and job to one OPEN (authority and nonce); a
 * flipped byte, a replay, garbage, a credential made for another authority or
 * another nonce, an empty payload, a bare job (an older client's) and a binding
 * whose job is not a job name are refused with RDLM_ERR_AUTH (another binding
 * version with RDLM_ERR_PROTOCOL), with a reason, and leave the outputs untouched;
 * job names are checked on both sides.
 *
 * Needs a running munged (bash scripts/munged.sh start): without one every test is
 * skipped and the program exits 77 (ctest: skipped). A build without libmunge-dev
 * checks only that both calls return RDLM_ERR_UNSUPPORTED.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "auth.h"
#include "cmd.h"

#if RDLM_HAVE_MUNGE
#include <munge.h>
#include <pwd.h>
#include <sys/wait.h>

#define SENTINEL 0xdeadbeefu
#define AUTHORITY 0x0123456789abcdefull
#define NONCE 0xfedcba9876543210ull

static int munged_up;

static void needs_munged(void)
{
    if (!munged_up) {
        print_message("needs munged: bash scripts/munged.sh start\n");
        skip();
    }
}

typedef struct cred {
    uint8_t buf[RDLM_LEASE_CRED_MAX];
    size_t len;
} cred_t;

static void create(const char *job, cred_t *c)
{
    assert_int_equal(
        rdlm_lease_auth_create(AUTHORITY, NONCE, job, c->buf, sizeof(c->buf), &c->len),
        RDLM_OK);
    assert_true(c->len > 0 && c->len <= RDLM_LEASE_CRED_MAX);
}

/* Verify for the OPEN of AUTHORITY and NONCE. */
static rdlm_status_t verify(const uint8_t *buf, size_t len, uint32_t *uid_p,
                            uint32_t *gid_p, char job_p[RDLM_LEASE_JOB_MAX + 1])
{
    char why[RDLM_LEASE_AUTH_WHY_MAX];

    return rdlm_lease_auth_verify(buf, len, AUTHORITY, NONCE, uid_p, gid_p, job_p, why);
}

/* Verify (for authority and nonce) must refuse buf with want, give a reason and
 * leave every output as it was. */
static void assert_refused_for(const uint8_t *buf, size_t len, uint64_t authority,
                               uint64_t nonce, rdlm_status_t want)
{
    uint32_t uid = SENTINEL, gid = SENTINEL;
    char job[RDLM_LEASE_JOB_MAX + 1] = "untouched", why[RDLM_LEASE_AUTH_WHY_MAX] = "";

    assert_int_equal(
        rdlm_lease_auth_verify(buf, len, authority, nonce, &uid, &gid, job, why), want);
    assert_true(why[0] != '\0');
    assert_int_equal(uid, SENTINEL);
    assert_int_equal(gid, SENTINEL);
    assert_string_equal(job, "untouched");
}

static void assert_refused(const uint8_t *buf, size_t len)
{
    assert_refused_for(buf, len, AUTHORITY, NONCE, RDLM_ERR_AUTH);
}

/* A credential of ours carrying the len bytes of payload, as any process may make. */
static void assert_payload_refused(const void *payload, int len, rdlm_status_t want)
{
    char *cred = NULL;

    assert_int_equal(munge_encode(&cred, NULL, payload, len), EMUNGE_SUCCESS);
    assert_refused_for((const uint8_t *)cred, strlen(cred), AUTHORITY, NONCE, want);
    free(cred);
}

static void round_trip_gives_our_uid_gid_and_job(void **state)
{
    (void)state;
    assert_true(rdlm_lease_auth_available());
    needs_munged();
    const char *jobs[] = {"4242", "", "slurm.job-7_x"};
    for (size_t i = 0; i < sizeof(jobs) / sizeof(jobs[0]); i++) {
        cred_t c;
        uint32_t uid, gid;
        char job[RDLM_LEASE_JOB_MAX + 1];
        create(jobs[i], &c);
        assert_int_equal(verify(c.buf, c.len, &uid, &gid, job), RDLM_OK);
        assert_int_equal(uid, (uint32_t)geteuid());
        assert_int_equal(gid, (uint32_t)getegid());
        assert_string_equal(job, jobs[i]);
    }
}

static void longest_job_round_trips_and_one_more_byte_is_refused(void **state)
{
    (void)state;
    needs_munged();
    char job[RDLM_LEASE_JOB_MAX + 2];
    char out[RDLM_LEASE_JOB_MAX + 1];
    uint32_t uid, gid;
    cred_t c;

    memset(job, 'j', RDLM_LEASE_JOB_MAX);
    job[RDLM_LEASE_JOB_MAX] = '\0';
    create(job, &c);
    assert_int_equal(verify(c.buf, c.len, &uid, &gid, out), RDLM_OK);
    assert_string_equal(out, job);

    job[RDLM_LEASE_JOB_MAX] = 'j';
    job[RDLM_LEASE_JOB_MAX + 1] = '\0';
    c.len = 0;
    assert_int_equal(
        rdlm_lease_auth_create(AUTHORITY, NONCE, job, c.buf, sizeof(c.buf), &c.len),
        RDLM_ERR_INVALID_ARG);
    assert_int_equal(c.len, 0);
}

static void job_with_slash_space_or_control_byte_is_refused_at_create(void **state)
{
    (void)state;
    needs_munged();
    const char *bad[] = {"a/b", "a b", "tab\t", "\x7f"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        cred_t c;
        assert_int_equal(
            rdlm_lease_auth_create(AUTHORITY, NONCE, bad[i], c.buf, sizeof(c.buf), &c.len),
            RDLM_ERR_INVALID_ARG);
    }
    cred_t c;
    assert_int_equal(
        rdlm_lease_auth_create(AUTHORITY, NONCE, NULL, c.buf, sizeof(c.buf), &c.len),
        RDLM_ERR_INVALID_ARG);
}

static void too_small_buffer_is_no_resource(void **state)
{
    (void)state;
    needs_munged();
    uint8_t buf[16];
    size_t len = 0;
    assert_int_equal(rdlm_lease_auth_create(AUTHORITY, NONCE, "1", buf, sizeof(buf), &len),
                     RDLM_ERR_NO_RESOURCE);
    assert_int_equal(len, 0);
}

static void flipped_byte_is_refused(void **state)
{
    (void)state;
    needs_munged();
    cred_t c;
    uint32_t uid, gid;
    char job[RDLM_LEASE_JOB_MAX + 1];

    create("77", &c);
    /* A byte in the middle of the base64 body: all of its bits are significant. */
    size_t at = c.len / 2;
    uint8_t was = c.buf[at];
    c.buf[at] = was == 'A' ? 'B' : 'A';
    assert_refused(c.buf, c.len);
    /* The original still verifies: the flip, not the credential, was refused. */
    c.buf[at] = was;
    assert_int_equal(verify(c.buf, c.len, &uid, &gid, job), RDLM_OK);
    assert_string_equal(job, "77");
}

static void replayed_credential_is_refused(void **state)
{
    (void)state;
    needs_munged();
    cred_t c;
    uint32_t uid, gid;
    char job[RDLM_LEASE_JOB_MAX + 1];

    create("88", &c);
    assert_int_equal(verify(c.buf, c.len, &uid, &gid, job), RDLM_OK);
    assert_refused(c.buf, c.len);
}

static void missing_empty_and_garbage_are_refused(void **state)
{
    (void)state;
    needs_munged();
    const char *garbage[] = {"not a credential", "MUNGE:", "MUNGE:AAAA:", "MUNGE::", ":"};
    static uint8_t too_long[RDLM_LEASE_CRED_MAX + 1];
    cred_t c;

    assert_refused(NULL, 0);
    assert_refused((const uint8_t *)"x", 0);
    for (size_t i = 0; i < sizeof(garbage) / sizeof(garbage[0]); i++) {
        assert_refused((const uint8_t *)garbage[i], strlen(garbage[i]));
    }
    memset(too_long, 'A', sizeof(too_long));
    assert_refused(too_long, sizeof(too_long));
    /* A real credential with a NUL inside, and one cut short. */
    create("99", &c);
    uint8_t was = c.buf[10];
    c.buf[10] = '\0';
    assert_refused(c.buf, c.len);
    c.buf[10] = was;
    assert_refused(c.buf, c.len - 8);
}

#define BINDING "rdlm-open v1 authority=0123456789abcdef nonce=fedcba9876543210 job="

static void binding_whose_job_is_not_a_job_is_refused(void **state)
{
    (void)state;
    needs_munged();
    char long_job[sizeof(BINDING) + RDLM_LEASE_JOB_MAX + 1];
    snprintf(long_job, sizeof(long_job), "%s", BINDING);
    memset(long_job + sizeof(BINDING) - 1, '1', RDLM_LEASE_JOB_MAX + 1);
    const struct {
        const void *p;
        int len;
    } payloads[] = {{long_job, (int)sizeof(long_job)},
                    {BINDING "1/2", (int)sizeof(BINDING) + 2},
                    {BINDING "a\0b", (int)sizeof(BINDING) + 2},
                    {BINDING "\x01", (int)sizeof(BINDING)},
                    {BINDING "a b", (int)sizeof(BINDING) + 2}};

    /* The binding itself is sound: with a good job it verifies. */
    uint32_t uid, gid;
    char job[RDLM_LEASE_JOB_MAX + 1], *cred = NULL;
    assert_int_equal(munge_encode(&cred, NULL, BINDING "j1", (int)sizeof(BINDING) + 1),
                     EMUNGE_SUCCESS);
    assert_int_equal(verify((const uint8_t *)cred, strlen(cred), &uid, &gid, job), RDLM_OK);
    assert_string_equal(job, "j1");
    free(cred);
    for (size_t i = 0; i < sizeof(payloads) / sizeof(payloads[0]); i++) {
        assert_payload_refused(payloads[i].p, payloads[i].len, RDLM_ERR_AUTH);
    }
}

/* `munge -n` (an empty payload) binds nothing; neither does a bare job, which is what
 * clients sent before credentials were bound to an OPEN. */
static void empty_payload_and_bare_job_are_refused(void **state)
{
    (void)state;
    needs_munged();
    assert_payload_refused(NULL, 0, RDLM_ERR_AUTH);
    assert_payload_refused("4242", 4, RDLM_ERR_AUTH);
    assert_payload_refused("rdlm-open v", 11, RDLM_ERR_AUTH);
    assert_payload_refused("rdlm-open v1 authority=0123456789abcdef", 39, RDLM_ERR_AUTH);
    assert_payload_refused(BINDING "j"
                                   "\n",
                           (int)sizeof(BINDING) + 1, RDLM_ERR_AUTH);
}

static void binding_of_another_version_is_a_protocol_error(void **state)
{
    (void)state;
    needs_munged();
    assert_payload_refused("rdlm-open v2 authority=0123456789abcdef", 39,
                           RDLM_ERR_PROTOCOL);
    assert_payload_refused("rdlm-open v10 x", 15, RDLM_ERR_PROTOCOL);
}

static void credential_for_another_authority_or_nonce_is_refused(void **state)
{
    (void)state;
    needs_munged();
    cred_t c;
    uint32_t uid, gid;
    char job[RDLM_LEASE_JOB_MAX + 1];

    create("55", &c);
    assert_refused_for(c.buf, c.len, AUTHORITY + 1, NONCE, RDLM_ERR_AUTH);
    assert_refused_for(c.buf, c.len, AUTHORITY, NONCE ^ 1, RDLM_ERR_AUTH);
    /* Neither refusal consumed it: decoded twice, it would now be a replay. The
     * check on authority and nonce comes after munged decoded it, so this one is. */
    assert_refused(c.buf, c.len);
    create("56", &c);
    assert_int_equal(verify(c.buf, c.len, &uid, &gid, job), RDLM_OK);
    assert_string_equal(job, "56");
}

/* Run as root: a child that switched to nobody creates the credential; verify must
 * report nobody's uid and gid, not ours. */
static void credential_names_the_user_that_created_it(void **state)
{
    (void)state;
    needs_munged();
    const struct passwd *pw = getpwnam("nobody");
    if (geteuid() != 0 || pw == NULL) {
        print_message("needs root and a 'nobody' user\n");
        skip();
    }
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        cred_t c;
        close(fds[0]);
        if (setgid(pw->pw_gid) != 0 || setuid(pw->pw_uid) != 0 ||
            rdlm_lease_auth_create(AUTHORITY, NONCE, "other", c.buf, sizeof(c.buf),
                                   &c.len) != RDLM_OK ||
            write(fds[1], c.buf, c.len) != (ssize_t)c.len) {
            _exit(1);
        }
        _exit(0);
    }
    close(fds[1]);
    cred_t c = {.len = 0};
    ssize_t n;
    while ((n = read(fds[0], c.buf + c.len, sizeof(c.buf) - c.len)) > 0) {
        c.len += (size_t)n;
    }
    close(fds[0]);
    int wstatus;
    assert_int_equal(waitpid(pid, &wstatus, 0), pid);
    assert_true(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0);

    uint32_t uid, gid;
    char job[RDLM_LEASE_JOB_MAX + 1];
    assert_int_equal(verify(c.buf, c.len, &uid, &gid, job), RDLM_OK);
    assert_int_equal(uid, (uint32_t)pw->pw_uid);
    assert_int_equal(gid, (uint32_t)pw->pw_gid);
    assert_string_equal(job, "other");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(round_trip_gives_our_uid_gid_and_job),
        cmocka_unit_test(longest_job_round_trips_and_one_more_byte_is_refused),
        cmocka_unit_test(job_with_slash_space_or_control_byte_is_refused_at_create),
        cmocka_unit_test(too_small_buffer_is_no_resource),
        cmocka_unit_test(flipped_byte_is_refused),
        cmocka_unit_test(replayed_credential_is_refused),
        cmocka_unit_test(missing_empty_and_garbage_are_refused),
        cmocka_unit_test(binding_whose_job_is_not_a_job_is_refused),
        cmocka_unit_test(empty_payload_and_bare_job_are_refused),
        cmocka_unit_test(binding_of_another_version_is_a_protocol_error),
        cmocka_unit_test(credential_for_another_authority_or_nonce_is_refused),
        cmocka_unit_test(credential_names_the_user_that_created_it),
    };
    cred_t probe;

    munged_up = rdlm_lease_auth_create(AUTHORITY, NONCE, "", probe.buf, sizeof(probe.buf),
                                       &probe.len) == RDLM_OK;
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    return failed == 0 && !munged_up ? 77 : failed;
}

#else /* !RDLM_HAVE_MUNGE */

static void without_munge_both_calls_are_unsupported(void **state)
{
    (void)state;
    uint8_t buf[64];
    size_t len;
    uint32_t uid, gid;
    char job[RDLM_LEASE_JOB_MAX + 1];
    char why[RDLM_LEASE_AUTH_WHY_MAX];

    assert_false(rdlm_lease_auth_available());
    assert_int_equal(rdlm_lease_auth_create(1, 2, "1", buf, sizeof(buf), &len),
                     RDLM_ERR_UNSUPPORTED);
    assert_int_equal(
        rdlm_lease_auth_verify((const uint8_t *)"MUNGE:x:", 8, 1, 2, &uid, &gid, job, why),
        RDLM_ERR_UNSUPPORTED);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(without_munge_both_calls_are_unsupported),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

#endif
