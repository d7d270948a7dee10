/* What the lock-service adapters share; see lock_services.h. */
#include "lock_services.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *rdlm_bench_service_error_name(int code)
{
    switch (code) {
    case RDLM_BENCH_SERVICE_ECONN:
        return "connection or I/O error";
    case RDLM_BENCH_SERVICE_EREPLY:
        return "unexpected reply";
    case RDLM_BENCH_SERVICE_ELOST:
        return "lock not held at release (expired or taken)";
    case RDLM_BENCH_SERVICE_ETIME:
        return "timed out";
    default:
        return "unknown error";
    }
}

const char *rdlm_bench_service_skip_reason(const char *env, const char *hint)
{
    char var[64];
    const char *reason;

    snprintf(var, sizeof(var), "%s_SKIP", env);
    reason = getenv(var);
    return reason != NULL && reason[0] != '\0' ? reason : hint;
}

/* Split "host:port" (port 1..65535) into host_p (len bytes) and port_p; 0 or -1. */
static int rdlm_bench_service_split(const char *addr, char *host_p, size_t len, int *port_p)
{
    const char *colon = strrchr(addr, ':');
    char *end;
    long port;

    if (colon == NULL || colon == addr || (size_t)(colon - addr) >= len) {
        return -1;
    }
    port = strtol(colon + 1, &end, 10);
    if (*end != '\0' || port < 1 || port > 65535) {
        return -1;
    }
    memcpy(host_p, addr, (size_t)(colon - addr));
    host_p[colon - addr] = '\0';
    *port_p = (int)port;
    return 0;
}

void *rdlm_bench_service_new(const char *env, size_t size,
                             rdlm_bench_service_addr_t *addr_p, char *err, size_t errlen)
{
    rdlm_bench_service_addr_t addr = {.text = getenv(env)};
    void *state;

    if (addr.text == NULL || rdlm_bench_service_split(addr.text, addr.host,
                                                      sizeof(addr.host), &addr.port) != 0) {
        snprintf(err, errlen, "%s %s (want host:port)", env,
                 addr.text == NULL ? "not set" : "malformed");
        return NULL;
    }
    state = calloc(1, size);
    if (state == NULL) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    *addr_p = addr;
    return state;
}
