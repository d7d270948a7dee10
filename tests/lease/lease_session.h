/*
 * Sessions at the authority of the fixture tests/common/rdlmd_cluster.c, for the tests
 * of the public lease API (test_lease_client.c, test_lease_renew.c). cmocka: call from
 * the main thread.
 */
#ifndef RDLM_TEST_LEASE_SESSION_H
#define RDLM_TEST_LEASE_SESSION_H

#include <stdint.h>

#include <rdlm.h>
#include <rdlm/lease.h>

/** A session at C.authority with a TTL of ttl_ms (connect timeout 15 s) and, when cb is
 *  set, the lost callback cb(arg); its renewal thread renews it unless thread_renews
 *  is 0 (the test hook RDLMTEST_LEASE_NO_RENEW). Asserts that it opened. */
rdlm_session_h lease_session_open(uint32_t ttl_ms, int thread_renews,
                                  rdlm_lease_lost_func_t cb, void *arg);

/** A lost callback that adds one to the atomic_int at arg. */
void lease_session_count_lost(void *arg, rdlm_session_h session);

#endif
