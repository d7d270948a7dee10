/*
 * The HOMES description of a lock home (core/svc/home_desc.c, home_layout.h): it
 * round-trips, members included; a home of another layout version is refused with
 * RDLM_ERR_MISMATCH and its version (layout 2 reuses slots: a client of layout 1
 * would misread every slot), a wrong magic or length, or members out of order or
 * without the home's own replica, with RDLM_ERR_PROTOCOL. A replica without a home
 * describes itself with slots 0 and its members (layout 5), and nothing else.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "home_layout.h"

static const uint8_t rec[5] = {1, 2, 3, 4, 5}, rkey[3] = {9, 8, 7};

static rdlm_svc_desc_t described(void)
{
    rdlm_svc_desc_t d = {.epoch = 42,
                         .slots = 64,
                         .tags = 1024,
                         .rec_len = sizeof(rec),
                         .rkey_len = sizeof(rkey),
                         .rec = rec,
                         .rkey = rkey,
                         .self_id = 7,
                         .n_members = 3,
                         .members = {{2, "10.0.0.1:9101"}, {7, "node02:9101"}, {9, "h:1"}}};

    return d;
}

static size_t encode(uint8_t *buf, size_t cap)
{
    rdlm_svc_desc_t d = described();

    return rdlm_svc_desc_encode(&d, buf, cap);
}

/* The members' part: 8 bytes, then 5 and the address per member. */
#define MEMBERS_LEN (8 + (5 + 13) + (5 + 11) + (5 + 3))

static void a_description_round_trips(void **state)
{
    uint8_t buf[256];
    size_t len = encode(buf, sizeof(buf));
    rdlm_svc_desc_t d;

    (void)state;
    assert_int_equal(len, 32 + sizeof(rec) + sizeof(rkey) + MEMBERS_LEN);
    assert_int_equal(rdlm_svc_desc_decode(buf, len, &d), RDLM_OK);
    assert_int_equal(d.epoch, 42);
    assert_int_equal(d.slots, 64);
    assert_int_equal(d.tags, 1024);
    assert_memory_equal(d.rec, rec, sizeof(rec));
    assert_memory_equal(d.rkey, rkey, sizeof(rkey));
    assert_int_equal(d.self_id, 7);
    assert_int_equal(d.n_members, 3);
    assert_int_equal(d.members[0].id, 2);
    assert_string_equal(d.members[0].addr, "10.0.0.1:9101");
    assert_int_equal(d.members[1].id, 7);
    assert_string_equal(d.members[1].addr, "node02:9101");
    assert_int_equal(d.members[2].id, 9);
    assert_string_equal(d.members[2].addr, "h:1");
    assert_int_equal(encode(buf, len - 1), 0);
}

static void another_layout_version_is_a_mismatch(void **state)
{
    uint8_t buf[256];
    size_t len = encode(buf, sizeof(buf));
    rdlm_svc_desc_t d;

    (void)state;
    buf[4] = 1; /* version 1: slots claimed once, never reused */
    assert_int_equal(rdlm_svc_desc_decode(buf, len, &d), RDLM_ERR_MISMATCH);
    assert_int_equal(d.version, 1);
    buf[4] = 2; /* version 2: no WANT bit in the word, 24-bit tags */
    assert_int_equal(rdlm_svc_desc_decode(buf, len, &d), RDLM_ERR_MISMATCH);
    assert_int_equal(d.version, 2);
    buf[4] = 3; /* version 3: no members (homes picked from the client's list) */
    assert_int_equal(rdlm_svc_desc_decode(buf, len, &d), RDLM_ERR_MISMATCH);
    assert_int_equal(d.version, 3);
    buf[4] = 4; /* version 4: a replica without a home answered no members */
    assert_int_equal(rdlm_svc_desc_decode(buf, len, &d), RDLM_ERR_MISMATCH);
    assert_int_equal(d.version, 4);
    buf[4] = 6;
    assert_int_equal(rdlm_svc_desc_decode(buf, len, &d), RDLM_ERR_MISMATCH);
    assert_int_equal(d.version, 6);
}

/* "No home here" (slots 0) round-trips with its members; with a region's fields
 * (epoch, tags, records, key) it is malformed. */
static void a_replica_without_a_home_describes_its_members(void **state)
{
    uint8_t buf[256];
    rdlm_svc_desc_t none = described(), d, bad;
    size_t len;

    (void)state;
    none = (rdlm_svc_desc_t){.self_id = 7, .n_members = 3};
    memcpy(none.members, described().members, sizeof(none.members));
    len = rdlm_svc_desc_encode(&none, buf, sizeof(buf));
    assert_int_equal(len, 32 + MEMBERS_LEN);
    assert_int_equal(rdlm_svc_desc_decode(buf, len, &d), RDLM_OK);
    assert_int_equal(d.slots, 0);
    assert_int_equal(d.n_members, 3);
    assert_string_equal(d.members[1].addr, "node02:9101");
    for (int field = 0; field < 3; field++) {
        bad = none;
        bad.epoch = field == 0 ? 42 : 0;
        bad.tags = field == 1 ? 1024 : 0;
        bad.rkey_len = field == 2 ? sizeof(rkey) : 0;
        bad.rkey = rkey;
        len = rdlm_svc_desc_encode(&bad, buf, sizeof(buf));
        assert_int_equal(rdlm_svc_desc_decode(buf, len, &d), RDLM_ERR_PROTOCOL);
    }
}

static void a_bad_magic_or_length_is_a_protocol_error(void **state)
{
    uint8_t buf[256];
    size_t len = encode(buf, sizeof(buf));
    rdlm_svc_desc_t d;

    (void)state;
    assert_int_equal(rdlm_svc_desc_decode(buf, len - 1, &d), RDLM_ERR_PROTOCOL);
    assert_int_equal(rdlm_svc_desc_decode(buf, 16, &d), RDLM_ERR_PROTOCOL);
    buf[0] ^= 1;
    assert_int_equal(rdlm_svc_desc_decode(buf, len, &d), RDLM_ERR_PROTOCOL);
}

/* Members that would let two clients disagree on a lock's home are refused. */
static void bad_members_are_a_protocol_error(void **state)
{
    uint8_t buf[256];
    rdlm_svc_desc_t d, bad;
    size_t len;

    (void)state;
    bad = described();
    bad.self_id = 3; /* not a member */
    len = rdlm_svc_desc_encode(&bad, buf, sizeof(buf));
    assert_int_equal(rdlm_svc_desc_decode(buf, len, &d), RDLM_ERR_PROTOCOL);
    bad = described();
    bad.members[1].id = 2; /* ids not increasing */
    bad.self_id = 2;
    len = rdlm_svc_desc_encode(&bad, buf, sizeof(buf));
    assert_int_equal(rdlm_svc_desc_decode(buf, len, &d), RDLM_ERR_PROTOCOL);
    bad = described();
    bad.members[2].addr[0] = '\0'; /* no address */
    len = rdlm_svc_desc_encode(&bad, buf, sizeof(buf));
    assert_int_equal(rdlm_svc_desc_decode(buf, len, &d), RDLM_ERR_PROTOCOL);
    bad = described();
    bad.n_members = 0;
    len = rdlm_svc_desc_encode(&bad, buf, sizeof(buf));
    assert_int_equal(rdlm_svc_desc_decode(buf, len, &d), RDLM_ERR_PROTOCOL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_description_round_trips),
        cmocka_unit_test(another_layout_version_is_a_mismatch),
        cmocka_unit_test(a_replica_without_a_home_describes_its_members),
        cmocka_unit_test(a_bad_magic_or_length_is_a_protocol_error),
        cmocka_unit_test(bad_members_are_a_protocol_error),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
