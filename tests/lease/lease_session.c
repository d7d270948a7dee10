/* Sessions for the tests of the public lease API (lease_session.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdatomic.h>
#include <stdlib.h>

#include "lease_session.h"
#include "rdlmd_cluster.h"

rdlm_session_h lease_session_open(uint32_t ttl_ms, int thread_renews,
                                  rdlm_lease_lost_func_t cb, void *arg)
{
    rdlm_session_params_t p = {.field_mask =
                                   RDLM_SESSION_FIELD_TTL | RDLM_SESSION_FIELD_TIMEOUT,
                               .ttl_ms = ttl_ms,
                               .connect_timeout_ms = 15000};
    rdlm_session_h s = NULL;
    rdlm_status_t st;

    if (cb != NULL) {
        p.field_mask |= RDLM_SESSION_FIELD_LOST_CB;
        p.lost_cb = cb;
        p.lost_arg = arg;
    }
    if (!thread_renews)
        setenv("RDLMTEST_LEASE_NO_RENEW", "1", 1);
    st = rdlm_session_open(C.authority, &p, &s);
    unsetenv("RDLMTEST_LEASE_NO_RENEW");
    assert_int_equal(st, RDLM_OK);
    assert_non_null(s);
    return s;
}

void lease_session_count_lost(void *arg, rdlm_session_h session)
{
    (void)session;
    atomic_fetch_add((atomic_int *)arg, 1);
}
