/*
 * Shared helpers of the lease tests: a seeded PRNG with tunables from the environment
 * (RDLMTEST_SEED, RDLMTEST_ITERATIONS), command builders, and applying a command to a
 * state machine. Include after <cmocka.h>.
 */
#ifndef RDLM_LEASE_TEST_H
#define RDLM_LEASE_TEST_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "sm.h"

/* The seed of this run: RDLMTEST_SEED, or a fixed default; printed so a failure can
 * be replayed. */
static inline uint64_t lt_seed(const char *what)
{
    const char *v = getenv("RDLMTEST_SEED");
    uint64_t seed = v != NULL ? strtoull(v, NULL, 0) : UINT64_C(0x5eed1ea5e);

    fprintf(stderr, "%s: RDLMTEST_SEED=%" PRIu64 "\n", what, seed);
    return seed;
}

/* RDLMTEST_ITERATIONS, or dflt. */
static inline long lt_iterations(long dflt)
{
    const char *v = getenv("RDLMTEST_ITERATIONS");
    return v != NULL ? atol(v) : dflt;
}

/* splitmix64: deterministic, good enough to fuzz with. */
static inline uint64_t lt_rand(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

static inline uint64_t lt_below(uint64_t *state, uint64_t n)
{
    return lt_rand(state) % n;
}

/* A valid command of op: OPEN gets a TTL, name ops a name. */
static inline rdlm_lease_cmd_t lt_cmd(unsigned op, uint64_t session, uint64_t seq,
                                      const char *name)
{
    rdlm_lease_cmd_t c;

    memset(&c, 0, sizeof(c));
    c.op = (uint8_t)op;
    c.session = session;
    c.seq = seq;
    if (op == RDLM_LEASE_OP_OPEN) {
        c.ttl_ms = 5000;
    }
    if (name != NULL) {
        c.name_len = (uint16_t)strlen(name);
        memcpy(c.name, name, c.name_len + 1u);
    }
    return c;
}

/* Encode a command the test knows to be valid. */
static inline size_t lt_encode(const rdlm_lease_cmd_t *c, uint8_t buf[RDLM_LEASE_CMD_MAX])
{
    size_t n = rdlm_lease_cmd_encode(c, buf, RDLM_LEASE_CMD_MAX);
    assert_true(n >= RDLM_LEASE_CMD_FIXED);
    return n;
}

/* Encode c (valid) and apply it to sm; the result. */
static inline rdlm_lease_result_t lt_apply(rdlm_lease_sm_t *sm, const rdlm_lease_cmd_t *c)
{
    uint8_t buf[RDLM_LEASE_CMD_MAX];
    size_t n = lt_encode(c, buf);
    rdlm_lease_result_t res;

    rdlm_lease_sm_apply(sm, buf, n, &res);
    return res;
}

#endif
