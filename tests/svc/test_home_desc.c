/*
 * The HOMES description of a lock home (core/svc/home_desc.c, layout.h): it round-trips; a
 * home of another layout version is refused with RDLM_ERR_MISMATCH and its version
 * (layout 2 reuses slots: a client of layout 1 would misread every slot), a wrong
 * magic or length with RDLM_ERR_PROTOCOL.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "home_layout.h"

static const uint8_t rec[5] = {1, 2, 3, 4, 5}, rkey[3] = {9, 8, 7};

static size_t encode(uint8_t *buf, size_t cap)
{
    rdlm_svc_desc_t d = {.epoch = 42,
                         .slots = 64,
                         .tags = 1024,
                         .rec_len = sizeof(rec),
                         .rkey_len = sizeof(rkey),
                         .rec = rec,
                         .rkey = rkey};

    return rdlm_svc_desc_encode(&d, buf, cap);
}

static void a_description_round_trips(void **state)
{
    uint8_t buf[128];
    size_t len = encode(buf, sizeof(buf));
    rdlm_svc_desc_t d;

    (void)state;
    assert_int_equal(len, 32 + sizeof(rec) + sizeof(rkey));
    assert_int_equal(rdlm_svc_desc_decode(buf, len, &d), RDLM_OK);
    assert_int_equal(d.epoch, 42);
    assert_int_equal(d.slots, 64);
    assert_int_equal(d.tags, 1024);
    assert_memory_equal(d.rec, rec, sizeof(rec));
    assert_memory_equal(d.rkey, rkey, sizeof(rkey));
    assert_int_equal(encode(buf, len - 1), 0);
}

static void another_layout_version_is_a_mismatch(void **state)
{
    uint8_t buf[128];
    size_t len = encode(buf, sizeof(buf));
    rdlm_svc_desc_t d;

    (void)state;
    buf[4] = 1; /* version 1: slots claimed once, never reused */
    assert_int_equal(rdlm_svc_desc_decode(buf, len, &d), RDLM_ERR_MISMATCH);
    assert_int_equal(d.version, 1);
    buf[4] = 2; /* version 2: no WANT bit in the word, 24-bit tags */
    assert_int_equal(rdlm_svc_desc_decode(buf, len, &d), RDLM_ERR_MISMATCH);
    assert_int_equal(d.version, 2);
    buf[4] = 4;
    assert_int_equal(rdlm_svc_desc_decode(buf, len, &d), RDLM_ERR_MISMATCH);
    assert_int_equal(d.version, 4);
}

static void a_bad_magic_or_length_is_a_protocol_error(void **state)
{
    uint8_t buf[128];
    size_t len = encode(buf, sizeof(buf));
    rdlm_svc_desc_t d;

    (void)state;
    assert_int_equal(rdlm_svc_desc_decode(buf, len - 1, &d), RDLM_ERR_PROTOCOL);
    assert_int_equal(rdlm_svc_desc_decode(buf, 16, &d), RDLM_ERR_PROTOCOL);
    buf[0] ^= 1;
    assert_int_equal(rdlm_svc_desc_decode(buf, len, &d), RDLM_ERR_PROTOCOL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_description_round_trips),
        cmocka_unit_test(another_layout_version_is_a_mismatch),
        cmocka_unit_test(a_bad_magic_or_length_is_a_protocol_error),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
