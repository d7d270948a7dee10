/* Lease commands: every op round-trips; every validation rule of cmd.h rejects, at
 * encode and at decode; every truncation is refused; random bytes and random
 * mutations of valid encodings never crash, some of them decode, and they decode only
 * when they are the canonical encoding of a valid command. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "lease_test.h"

/* Byte offsets in the fixed part (cmd.h). */
enum {
    OFF_OP = 0,
    OFF_FLAGS = 1,
    OFF_NAME_LEN = 2,
    OFF_TTL = 4,
    OFF_SESSION = 20,
    OFF_TOKEN = 44,
    OFF_CRED_LEN = 52
};

static const uint8_t cred[] = {0x00, 0xff, 0x10, 0x20, 0x7f};

/* Random inputs past which the fuzz loops below must have decoded some (about 1 in
 * 28 random inputs and 1 in 2 mutations decode), so that their re-encoding check is
 * known to have run; RDLMTEST_ITERATIONS below it is a smoke run. */
#define ENOUGH_TO_DECODE 1000

/* A valid command of every op, with every field it may carry set. */
static rdlm_lease_cmd_t sample(unsigned op)
{
    static const char *const names[RDLM_LEASE_OP_MAX_ + 1] = {
        "", "job-ns", "", "", "lock/a", "lock/b", "lock/c", "", "", "", "", ""};
    rdlm_lease_cmd_t c = lt_cmd(op,
                                op == RDLM_LEASE_OP_OPEN || op == RDLM_LEASE_OP_STATUS ||
                                        op == RDLM_LEASE_OP_HOMES
                                    ? 0
                                    : 0x0102030405060708u + op,
                                0x1112131415161718u, names[op][0] ? names[op] : NULL);

    c.timeout_ms = 0xa1a2a3a4u;
    c.uid = 1000;
    c.gid = 2000;
    c.nonce = 0x2122232425262728u;
    c.token = op == RDLM_LEASE_OP_EPOCH ? RDLM_LEASE_EPOCH_MAX : 0x3132333435363738u;
    if (op == RDLM_LEASE_OP_OPEN) {
        c.ttl_ms = RDLM_LEASE_TTL_MAX_MS;
        c.cred = cred;
        c.cred_len = sizeof(cred);
    }
    if (op == RDLM_LEASE_OP_ACQUIRE) {
        c.flags = RDLM_LEASE_ACQ_TRY;
    }
    return c;
}

static void assert_cmd_equal(const rdlm_lease_cmd_t *a, const rdlm_lease_cmd_t *b)
{
    assert_int_equal(a->op, b->op);
    assert_int_equal(a->flags, b->flags);
    assert_int_equal(a->name_len, b->name_len);
    assert_memory_equal(a->name, b->name, a->name_len);
    assert_int_equal(b->name[b->name_len], '\0');
    assert_int_equal(a->ttl_ms, b->ttl_ms);
    assert_int_equal(a->timeout_ms, b->timeout_ms);
    assert_int_equal(a->uid, b->uid);
    assert_int_equal(a->gid, b->gid);
    assert_true(a->session == b->session && a->seq == b->seq);
    assert_true(a->nonce == b->nonce && a->token == b->token);
    assert_int_equal(a->cred_len, b->cred_len);
    if (a->cred_len != 0) {
        assert_memory_equal(a->cred, b->cred, a->cred_len);
    }
}

static void every_op_round_trips_little_endian(void **state)
{
    uint8_t buf[RDLM_LEASE_CMD_MAX];
    rdlm_lease_cmd_t out;

    (void)state;
    for (unsigned op = 1; op <= RDLM_LEASE_OP_MAX_; op++) {
        rdlm_lease_cmd_t in = sample(op);
        size_t n = lt_encode(&in, buf);
        assert_int_equal(n, RDLM_LEASE_CMD_FIXED + in.name_len + in.cred_len);
        assert_int_equal(rdlm_lease_cmd_decode(buf, n, &out), RDLM_OK);
        assert_cmd_equal(&in, &out);
        assert_ptr_equal(out.cred, in.cred_len ? buf + n - in.cred_len : NULL);
    }
    /* Field order and byte order are fixed. */
    rdlm_lease_cmd_t in = sample(RDLM_LEASE_OP_ACQUIRE);
    lt_encode(&in, buf);
    assert_int_equal(buf[OFF_OP], RDLM_LEASE_OP_ACQUIRE);
    assert_int_equal(buf[OFF_NAME_LEN], 6);
    assert_int_equal(buf[OFF_NAME_LEN + 1], 0);
    assert_int_equal(buf[8], 0xa4); /* timeout_ms, low byte first */
    assert_int_equal(buf[OFF_SESSION], 0x08 + RDLM_LEASE_OP_ACQUIRE);
    assert_int_equal(buf[OFF_SESSION + 7], 0x01);
    assert_memory_equal(buf + RDLM_LEASE_CMD_FIXED, "lock/a", 6);
    /* The longest command fits RDLM_LEASE_CMD_MAX exactly. */
    static uint8_t big_cred[RDLM_LEASE_CRED_MAX];
    in = sample(RDLM_LEASE_OP_OPEN);
    in.name_len = RDLM_LEASE_NAME_MAX;
    memset(in.name, 'n', RDLM_LEASE_NAME_MAX);
    in.cred = big_cred;
    in.cred_len = RDLM_LEASE_CRED_MAX;
    assert_int_equal(rdlm_lease_cmd_encode(&in, buf, sizeof(buf)), RDLM_LEASE_CMD_MAX);
    assert_int_equal(rdlm_lease_cmd_encode(&in, buf, sizeof(buf) - 1), 0);
    assert_int_equal(rdlm_lease_cmd_decode(buf, RDLM_LEASE_CMD_MAX, &out), RDLM_OK);
    assert_cmd_equal(&in, &out);
}

static void op_names_and_logged_ops(void **state)
{
    (void)state;
    assert_string_equal(rdlm_lease_op_name(RDLM_LEASE_OP_ACQUIRE), "ACQUIRE");
    assert_string_equal(rdlm_lease_op_name(RDLM_LEASE_OP_EXPIRE), "EXPIRE");
    assert_string_equal(rdlm_lease_op_name(RDLM_LEASE_OP_FATE), "FATE");
    assert_string_equal(rdlm_lease_op_name(RDLM_LEASE_OP_HOMES), "HOMES");
    assert_string_equal(rdlm_lease_op_name(0), "?");
    assert_string_equal(rdlm_lease_op_name(RDLM_LEASE_OP_MAX_ + 1), "?");
    for (unsigned op = 0; op <= RDLM_LEASE_OP_MAX_ + 1; op++) {
        int logged = op >= 1 && op <= RDLM_LEASE_OP_MAX_ && op != RDLM_LEASE_OP_RENEW &&
                     op != RDLM_LEASE_OP_STATUS && op != RDLM_LEASE_OP_FATE &&
                     op != RDLM_LEASE_OP_HOMES;
        assert_int_equal(rdlm_lease_op_is_logged(op), logged);
    }
}

/* bad breaks one rule: encode refuses it. */
static void assert_refused(const rdlm_lease_cmd_t *bad)
{
    uint8_t buf[RDLM_LEASE_CMD_MAX + 2];

    assert_int_equal(rdlm_lease_cmd_encode(bad, buf, sizeof(buf)), 0);
}

/* A valid encoding of op with byte off set to value is refused by decode. */
static void assert_patched_refused(unsigned op, size_t off, uint8_t value)
{
    uint8_t buf[RDLM_LEASE_CMD_MAX];
    rdlm_lease_cmd_t c = sample(op), out;
    size_t n = lt_encode(&c, buf);

    buf[off] = value;
    assert_int_equal(rdlm_lease_cmd_decode(buf, n, &out), RDLM_ERR_PROTOCOL);
}

static void every_validation_rule_rejects(void **state)
{
    rdlm_lease_cmd_t c;
    uint8_t buf[RDLM_LEASE_CMD_MAX];

    (void)state;
    /* Unknown op. */
    c = sample(RDLM_LEASE_OP_EPOCH);
    c.op = 0;
    assert_refused(&c);
    c.op = RDLM_LEASE_OP_MAX_ + 1;
    assert_refused(&c);
    assert_patched_refused(RDLM_LEASE_OP_EPOCH, OFF_OP, 0);
    assert_patched_refused(RDLM_LEASE_OP_EPOCH, OFF_OP, RDLM_LEASE_OP_MAX_ + 1);
    /* Flags: only TRY, only on ACQUIRE; only COUNTED, only on OPEN. */
    c = sample(RDLM_LEASE_OP_OPEN);
    c.flags = RDLM_LEASE_OPEN_COUNTED;
    lt_encode(&c, buf);
    c.flags = 0x02;
    assert_refused(&c);
    c = sample(RDLM_LEASE_OP_ACQUIRE);
    c.flags = 0x02;
    assert_refused(&c);
    assert_patched_refused(RDLM_LEASE_OP_ACQUIRE, OFF_FLAGS, 0x03);
    c = sample(RDLM_LEASE_OP_RELEASE);
    c.flags = RDLM_LEASE_ACQ_TRY;
    assert_refused(&c);
    assert_patched_refused(RDLM_LEASE_OP_RELEASE, OFF_FLAGS, RDLM_LEASE_ACQ_TRY);
    /* Name required on ACQUIRE, RELEASE, CANCEL. */
    for (unsigned op = RDLM_LEASE_OP_ACQUIRE; op <= RDLM_LEASE_OP_CANCEL; op++) {
        c = sample(op);
        c.name_len = 0;
        assert_refused(&c);
    }
    /* Name forbidden on CLOSE, EPOCH, STATUS, EXPIRE, RENEW. */
    c = sample(RDLM_LEASE_OP_CLOSE);
    c.name_len = 1;
    c.name[0] = 'x';
    assert_refused(&c);
    c.op = RDLM_LEASE_OP_EXPIRE;
    assert_refused(&c);
    /* Name printable 0x21..0x7e; length at most NAME_MAX. */
    const uint8_t bad_bytes[] = {0x00, ' ', 0x7f, 0x80, 0xff, '\n'};
    for (size_t i = 0; i < sizeof(bad_bytes); i++) {
        c = sample(RDLM_LEASE_OP_ACQUIRE);
        c.name[2] = (char)bad_bytes[i];
        assert_refused(&c);
        assert_patched_refused(RDLM_LEASE_OP_ACQUIRE, RDLM_LEASE_CMD_FIXED + 2,
                               bad_bytes[i]);
        c = sample(RDLM_LEASE_OP_OPEN);
        c.name[0] = (char)bad_bytes[i];
        assert_refused(&c);
    }
    c = sample(RDLM_LEASE_OP_ACQUIRE);
    c.name_len = RDLM_LEASE_NAME_MAX + 1;
    memset(c.name, 'a', RDLM_LEASE_NAME_MAX);
    assert_refused(&c);
    /* TTL in range on OPEN, zero elsewhere. */
    c = sample(RDLM_LEASE_OP_OPEN);
    c.ttl_ms = RDLM_LEASE_TTL_MIN_MS - 1;
    assert_refused(&c);
    c.ttl_ms = RDLM_LEASE_TTL_MAX_MS + 1;
    assert_refused(&c);
    assert_patched_refused(RDLM_LEASE_OP_OPEN, OFF_TTL + 3, 0xff);
    c = sample(RDLM_LEASE_OP_ACQUIRE);
    c.ttl_ms = 1000;
    assert_refused(&c);
    assert_patched_refused(RDLM_LEASE_OP_ACQUIRE, OFF_TTL, 1);
    /* Credential only on OPEN, at most CRED_MAX, present when announced. */
    c = sample(RDLM_LEASE_OP_CLOSE);
    c.cred = cred;
    c.cred_len = 1;
    assert_refused(&c);
    c = sample(RDLM_LEASE_OP_OPEN);
    c.cred_len = RDLM_LEASE_CRED_MAX + 1;
    assert_refused(&c);
    c.cred_len = 3;
    c.cred = NULL;
    assert_refused(&c);
    /* An EPOCH's floor (its token) at most EPOCH_MAX. */
    c = sample(RDLM_LEASE_OP_EPOCH);
    c.token = RDLM_LEASE_EPOCH_MAX + 1;
    assert_refused(&c);
    assert_patched_refused(RDLM_LEASE_OP_EPOCH, OFF_TOKEN + 3, 0x01);
    assert_patched_refused(RDLM_LEASE_OP_EPOCH, OFF_TOKEN + 7, 0x80);
    /* A FATE names the session it asks about. */
    c = sample(RDLM_LEASE_OP_FATE);
    c.token = 0;
    assert_refused(&c);
    /* Session required but on OPEN, STATUS and HOMES. */
    for (unsigned op = 1; op <= RDLM_LEASE_OP_MAX_; op++) {
        c = sample(op);
        c.session = 0;
        if (op == RDLM_LEASE_OP_OPEN || op == RDLM_LEASE_OP_STATUS ||
            op == RDLM_LEASE_OP_HOMES) {
            assert_true(rdlm_lease_cmd_encode(&c, buf, sizeof(buf)) > 0);
        } else {
            assert_refused(&c);
        }
    }
    /* Length fields that do not match the length. */
    assert_patched_refused(RDLM_LEASE_OP_ACQUIRE, OFF_NAME_LEN, 7);
    assert_patched_refused(RDLM_LEASE_OP_ACQUIRE, OFF_NAME_LEN, 5);
    assert_patched_refused(RDLM_LEASE_OP_OPEN, OFF_CRED_LEN + 1, 0x10);
    assert_patched_refused(RDLM_LEASE_OP_OPEN, OFF_CRED_LEN, 4);
}

static void every_truncation_and_extension_is_refused(void **state)
{
    uint8_t buf[RDLM_LEASE_CMD_MAX + 1];
    rdlm_lease_cmd_t out;

    (void)state;
    assert_int_equal(rdlm_lease_cmd_decode(NULL, 0, &out), RDLM_ERR_PROTOCOL);
    for (unsigned op = 1; op <= RDLM_LEASE_OP_MAX_; op++) {
        rdlm_lease_cmd_t c = sample(op);
        size_t n = lt_encode(&c, buf);
        for (size_t len = 0; len < n; len++) {
            assert_int_equal(rdlm_lease_cmd_decode(buf, len, &out), RDLM_ERR_PROTOCOL);
        }
        buf[n] = 'x';
        assert_int_equal(rdlm_lease_cmd_decode(buf, n + 1, &out), RDLM_ERR_PROTOCOL);
        assert_int_equal(rdlm_lease_cmd_decode(buf, n, &out), RDLM_OK);
        assert_int_equal(rdlm_lease_cmd_encode(&c, buf, n - 1), 0);
    }
}

/* Decoding bytes either fails or yields the command whose encoding they are. Run on
 * a heap copy of exactly len bytes so a read past len is caught by ASan. */
static int decode_is_canonical(const uint8_t *bytes, size_t len)
{
    uint8_t *copy = malloc(len ? len : 1);
    uint8_t again[RDLM_LEASE_CMD_MAX];
    rdlm_lease_cmd_t c;
    int decoded;

    assert_non_null(copy);
    memcpy(copy, bytes, len);
    decoded = rdlm_lease_cmd_decode(copy, len, &c) == RDLM_OK;
    if (decoded) {
        assert_int_equal(rdlm_lease_cmd_encode(&c, again, sizeof(again)), len);
        assert_memory_equal(again, copy, len);
    }
    free(copy);
    return decoded;
}

static void random_bytes_never_crash_and_decode_only_when_valid(void **state)
{
    uint64_t rng = lt_seed("random_bytes");
    long iters = lt_iterations(100000);
    uint8_t buf[RDLM_LEASE_CMD_MAX + 16];
    long decoded = 0;

    (void)state;
    for (long i = 0; i < iters; i++) {
        size_t len = (size_t)lt_below(&rng, sizeof(buf) + 1);
        for (size_t k = 0; k < len; k++) {
            buf[k] = (uint8_t)lt_rand(&rng);
        }
        if (len >= RDLM_LEASE_CMD_FIXED + 16 && (i & 1)) {
            /* Half of them are made plausible (op, flags, ttl, lengths, name bytes
             * mostly right) so that the checks past the first ones run too. */
            unsigned op = (unsigned)(1 + lt_below(&rng, RDLM_LEASE_OP_MAX_));
            buf[OFF_OP] = (uint8_t)op;
            buf[OFF_FLAGS] &= (uint8_t)(lt_below(&rng, 4) == 0 ? 0xff : 0x01);
            memset(buf + OFF_TTL, 0, 4);
            buf[OFF_TTL + 1] = op == RDLM_LEASE_OP_OPEN ? 0x10 : 0;
            buf[OFF_NAME_LEN] = (uint8_t)lt_below(&rng, 9);
            buf[OFF_NAME_LEN + 1] = 0;
            buf[OFF_CRED_LEN] = (uint8_t)lt_below(&rng, 8);
            buf[OFF_CRED_LEN + 1] = 0;
            for (size_t k = 0; k < buf[OFF_NAME_LEN]; k++) {
                buf[RDLM_LEASE_CMD_FIXED + k] = (uint8_t)(0x20 + lt_below(&rng, 0x61));
            }
            len = RDLM_LEASE_CMD_FIXED + buf[OFF_NAME_LEN] + buf[OFF_CRED_LEN];
        }
        decoded += decode_is_canonical(buf, len);
    }
    fprintf(stderr, "random_bytes: %ld of %ld decoded\n", decoded, iters);
    /* Some decoded (3.6% at the default seed), so the re-encoding check ran on them. */
    if (iters >= ENOUGH_TO_DECODE) {
        assert_true(decoded > 0);
    }
}

static void mutations_of_valid_encodings_decode_only_when_valid(void **state)
{
    uint64_t rng = lt_seed("mutations");
    long iters = lt_iterations(100000);
    uint8_t buf[RDLM_LEASE_CMD_MAX + 16];
    long decoded = 0;

    (void)state;
    for (long i = 0; i < iters; i++) {
        rdlm_lease_cmd_t c = sample((unsigned)(1 + lt_below(&rng, RDLM_LEASE_OP_MAX_)));
        size_t len = lt_encode(&c, buf);
        int flips = 1 + (int)lt_below(&rng, 3);
        for (int f = 0; f < flips; f++) {
            size_t at = (size_t)lt_below(&rng, len);
            buf[at] = lt_below(&rng, 2) ? (uint8_t)lt_rand(&rng)
                                        : (uint8_t)(buf[at] ^ (1u << lt_below(&rng, 8)));
        }
        if (lt_below(&rng, 8) == 0) {
            len = (size_t)lt_below(&rng, len + 16);
        }
        decoded += decode_is_canonical(buf, len);
    }
    fprintf(stderr, "mutations: %ld of %ld still decoded\n", decoded, iters);
    if (iters >= ENOUGH_TO_DECODE) {
        assert_true(decoded > 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_op_round_trips_little_endian),
        cmocka_unit_test(op_names_and_logged_ops),
        cmocka_unit_test(every_validation_rule_rejects),
        cmocka_unit_test(every_truncation_and_extension_is_refused),
        cmocka_unit_test(random_bytes_never_crash_and_decode_only_when_valid),
        cmocka_unit_test(mutations_of_valid_encodings_decode_only_when_valid),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
