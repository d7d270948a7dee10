/* Lease wire format: a header with a wrong magic, version, kind, reserved field or an
 * oversized length is refused (so a peer never makes us allocate what it says);
 * replies round-trip; wrong lengths, addresses and flag bytes are refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "lease_test.h"
#include "wire.h"

static void header_round_trips_and_is_little_endian(void **state)
{
    uint8_t hdr[RDLM_WIRE_HEADER];
    uint32_t len = 0;

    (void)state;
    rdlm_wire_header_encode(hdr, RDLM_WIRE_REQUEST, 300);
    assert_memory_equal(hdr, "RDLM", 4);
    assert_int_equal(hdr[4], RDLM_WIRE_VERSION);
    assert_int_equal(hdr[5], RDLM_WIRE_REQUEST);
    assert_int_equal(hdr[8], 300 & 0xff);
    assert_int_equal(hdr[9], 300 >> 8);
    assert_int_equal(rdlm_wire_header_decode(hdr, RDLM_WIRE_REQUEST, &len), RDLM_OK);
    assert_int_equal(len, 300);
    rdlm_wire_header_encode(hdr, RDLM_WIRE_REPLY, RDLM_WIRE_MAX_PAYLOAD);
    assert_int_equal(rdlm_wire_header_decode(hdr, RDLM_WIRE_REPLY, &len), RDLM_OK);
    assert_int_equal(len, RDLM_WIRE_MAX_PAYLOAD);
    rdlm_wire_header_encode(hdr, RDLM_WIRE_REPLY, 0);
    assert_int_equal(rdlm_wire_header_decode(hdr, RDLM_WIRE_REPLY, &len), RDLM_OK);
    assert_int_equal(len, 0);
}

/* A valid request header with byte at set to value is refused, len untouched. */
static void assert_header_refused(size_t at, uint8_t value)
{
    uint8_t hdr[RDLM_WIRE_HEADER];
    uint32_t len = 0xdeadbeef;

    rdlm_wire_header_encode(hdr, RDLM_WIRE_REQUEST, 100);
    hdr[at] = value;
    assert_int_equal(rdlm_wire_header_decode(hdr, RDLM_WIRE_REQUEST, &len),
                     RDLM_ERR_PROTOCOL);
    assert_int_equal(len, 0xdeadbeef);
}

static void bad_headers_are_refused_before_any_allocation(void **state)
{
    uint8_t hdr[RDLM_WIRE_HEADER];
    uint32_t len = 0;
    rdlm_wire_kind_t kind;

    (void)state;
    assert_header_refused(0, 'X'); /* magic */
    assert_header_refused(3, 'm');
    assert_header_refused(4, 0); /* version */
    assert_header_refused(4, RDLM_WIRE_VERSION + 1);
    assert_header_refused(5, RDLM_WIRE_REPLY); /* kind: a reply where a request is due */
    assert_header_refused(5, 0);
    assert_header_refused(5, RDLM_WIRE_BLOB); /* a known kind, but not a request */
    assert_header_refused(5, RDLM_WIRE_BLOB + 1);
    assert_header_refused(6, 1); /* reserved zero */
    assert_header_refused(7, 0x80);
    assert_header_refused(11, 1);    /* 16 MiB and more */
    assert_header_refused(10, 0x01); /* 64 KiB */
    rdlm_wire_header_encode(hdr, RDLM_WIRE_REQUEST, RDLM_WIRE_MAX_PAYLOAD + 1);
    assert_int_equal(rdlm_wire_header_decode(hdr, RDLM_WIRE_REQUEST, &len),
                     RDLM_ERR_PROTOCOL);
    rdlm_wire_header_encode(hdr, RDLM_WIRE_REQUEST, UINT32_MAX);
    assert_int_equal(rdlm_wire_header_decode(hdr, RDLM_WIRE_REQUEST, &len),
                     RDLM_ERR_PROTOCOL);
    /* Any known kind, told to the caller (a HOMES answer is a BLOB or a REPLY). */
    rdlm_wire_header_encode(hdr, RDLM_WIRE_BLOB, 7);
    assert_int_equal(rdlm_wire_header_decode_any(hdr, &kind, &len), RDLM_OK);
    assert_int_equal(kind, RDLM_WIRE_BLOB);
    assert_int_equal(len, 7);
    hdr[5] = RDLM_WIRE_BLOB + 1;
    assert_int_equal(rdlm_wire_header_decode_any(hdr, &kind, &len), RDLM_ERR_PROTOCOL);
    /* Every command fits a frame. */
    assert_true(RDLM_LEASE_CMD_MAX <= RDLM_WIRE_MAX_PAYLOAD);
    assert_true(RDLM_WIRE_REPLY_FIXED + RDLM_WIRE_ADDR_MAX <= RDLM_WIRE_MAX_PAYLOAD);
}

static rdlm_lease_reply_t sample_reply(const char *addr)
{
    rdlm_lease_reply_t r;

    memset(&r, 0, sizeof(r));
    r.status = RDLM_ERR_NOT_LEADER;
    r.broken = 1;
    r.is_leader = 0;
    r.term = 0x0102030405060708u;
    r.session = 42;
    r.token = UINT64_C(3) << 40 | 17;
    r.epoch = 3;
    r.seq = 99;
    r.leader_id = 2;
    r.sessions = 7;
    r.commit = 123456789;
    r.ttl_ms = 5000;
    r.locks = 11;
    snprintf(r.leader_addr, sizeof(r.leader_addr), "%s", addr);
    return r;
}

static void assert_reply_equal(const rdlm_lease_reply_t *a, const rdlm_lease_reply_t *b)
{
    assert_int_equal(a->status, b->status);
    assert_int_equal(a->broken, b->broken);
    assert_int_equal(a->is_leader, b->is_leader);
    assert_true(a->term == b->term && a->session == b->session && a->token == b->token);
    assert_true(a->epoch == b->epoch && a->seq == b->seq && a->leader_id == b->leader_id);
    assert_true(a->sessions == b->sessions && a->commit == b->commit);
    assert_int_equal(a->ttl_ms, b->ttl_ms);
    assert_int_equal(a->locks, b->locks);
    assert_string_equal(a->leader_addr, b->leader_addr);
}

static void replies_round_trip(void **state)
{
    char longest[RDLM_WIRE_ADDR_MAX + 1];
    const char *addrs[] = {"", "10.0.0.2:7001", "[fe80::1%eth0]:7001", longest};
    uint8_t buf[RDLM_WIRE_REPLY_FIXED + RDLM_WIRE_ADDR_MAX];
    rdlm_lease_reply_t in, out;

    (void)state;
    memset(longest, 'h', RDLM_WIRE_ADDR_MAX);
    longest[RDLM_WIRE_ADDR_MAX] = '\0';
    for (size_t i = 0; i < sizeof(addrs) / sizeof(addrs[0]); i++) {
        in = sample_reply(addrs[i]);
        in.is_leader = (uint8_t)(i & 1);
        size_t n = rdlm_wire_reply_encode(&in, buf, sizeof(buf));
        assert_int_equal(n, RDLM_WIRE_REPLY_FIXED + strlen(addrs[i]));
        memset(&out, 0xa5, sizeof(out));
        assert_int_equal(rdlm_wire_reply_decode(buf, n, &out), RDLM_OK);
        assert_reply_equal(&in, &out);
        /* A cap one byte short is refused. */
        assert_int_equal(rdlm_wire_reply_encode(&in, buf, n - 1), 0);
    }
    /* Negative status, little-endian, first. */
    in = sample_reply("");
    rdlm_wire_reply_encode(&in, buf, sizeof(buf));
    assert_int_equal(buf[0], (uint8_t)(RDLM_ERR_NOT_LEADER & 0xff));
    assert_int_equal(buf[3], 0xff);
}

static void bad_replies_are_refused(void **state)
{
    uint8_t buf[RDLM_WIRE_REPLY_FIXED + RDLM_WIRE_ADDR_MAX + 1];
    rdlm_lease_reply_t in = sample_reply("node1:7001"), out;
    size_t n = rdlm_wire_reply_encode(&in, buf, sizeof(buf));

    (void)state;
    assert_int_equal(n, RDLM_WIRE_REPLY_FIXED + 10);
    assert_int_equal(rdlm_wire_reply_decode(NULL, 0, &out), RDLM_ERR_PROTOCOL);
    for (size_t len = 0; len < n; len++) {
        assert_int_equal(rdlm_wire_reply_decode(buf, len, &out), RDLM_ERR_PROTOCOL);
    }
    buf[n] = 'x';
    assert_int_equal(rdlm_wire_reply_decode(buf, n + 1, &out), RDLM_ERR_PROTOCOL);
    /* addr_len beyond the maximum even when the length agrees. */
    buf[6] = RDLM_WIRE_ADDR_MAX + 1;
    assert_int_equal(
        rdlm_wire_reply_decode(buf, RDLM_WIRE_REPLY_FIXED + RDLM_WIRE_ADDR_MAX + 1, &out),
        RDLM_ERR_PROTOCOL);
    n = rdlm_wire_reply_encode(&in, buf, sizeof(buf));
    /* Address bytes outside 0x21..0x7e. */
    buf[RDLM_WIRE_REPLY_FIXED + 3] = ' ';
    assert_int_equal(rdlm_wire_reply_decode(buf, n, &out), RDLM_ERR_PROTOCOL);
    buf[RDLM_WIRE_REPLY_FIXED + 3] = 0;
    assert_int_equal(rdlm_wire_reply_decode(buf, n, &out), RDLM_ERR_PROTOCOL);
    /* Flag bytes other than 0/1. */
    n = rdlm_wire_reply_encode(&in, buf, sizeof(buf));
    buf[4] = 2;
    assert_int_equal(rdlm_wire_reply_decode(buf, n, &out), RDLM_ERR_PROTOCOL);
    buf[4] = 1;
    buf[5] = 0xff;
    assert_int_equal(rdlm_wire_reply_decode(buf, n, &out), RDLM_ERR_PROTOCOL);
    /* The encoder refuses what the decoder would. */
    in.broken = 2;
    assert_int_equal(rdlm_wire_reply_encode(&in, buf, sizeof(buf)), 0);
    in = sample_reply("a b");
    assert_int_equal(rdlm_wire_reply_encode(&in, buf, sizeof(buf)), 0);
    memset(in.leader_addr, 'h', sizeof(in.leader_addr)); /* no NUL: 64 bytes */
    assert_int_equal(rdlm_wire_reply_encode(&in, buf, sizeof(buf)), 0);
}

static void random_replies_never_crash(void **state)
{
    uint64_t rng = lt_seed("random_replies");
    long iters = lt_iterations(100000);
    uint8_t buf[RDLM_WIRE_REPLY_FIXED + RDLM_WIRE_ADDR_MAX + 8], again[sizeof(buf)];
    rdlm_lease_reply_t r;

    (void)state;
    for (long i = 0; i < iters; i++) {
        size_t len = (size_t)lt_below(&rng, sizeof(buf) + 1);
        for (size_t k = 0; k < len; k++) {
            buf[k] = (uint8_t)lt_rand(&rng);
        }
        if (len >= RDLM_WIRE_REPLY_FIXED && (i & 1)) {
            buf[4] &= 1;
            buf[5] &= 1;
            buf[6] = (uint8_t)(len - RDLM_WIRE_REPLY_FIXED);
            buf[7] = 0;
        }
        if (rdlm_wire_reply_decode(buf, len, &r) == RDLM_OK) {
            assert_int_equal(rdlm_wire_reply_encode(&r, again, sizeof(again)), len);
            assert_memory_equal(again, buf, len);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(header_round_trips_and_is_little_endian),
        cmocka_unit_test(bad_headers_are_refused_before_any_allocation),
        cmocka_unit_test(replies_round_trip),
        cmocka_unit_test(bad_replies_are_refused),
        cmocka_unit_test(random_replies_never_crash),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
