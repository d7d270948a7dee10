/* The UCX variables in effect for rdlm's UCX context, for error lines (ucx_internal.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ucx_internal.h"

extern char **environ;

/* Append to buf (at *off) one variable: RDLM_UCX_<name> over UCX_<name>, as
 * ucp_config_read("RDLM") reads them. */
static void rdlm_ucx_env_one(char *buf, size_t len, size_t *off, const char *name)
{
    char own[64], ucx[64];
    const char *own_v, *ucx_v;
    int n;

    snprintf(own, sizeof(own), "RDLM_UCX_%s", name);
    snprintf(ucx, sizeof(ucx), "UCX_%s", name);
    own_v = getenv(own);
    ucx_v = getenv(ucx);
    if (own_v != NULL && ucx_v != NULL) {
        n = snprintf(buf + *off, len - *off, "%s%s=%s (over %s=%s)", *off ? ", " : "", own,
                     own_v, ucx, ucx_v);
    } else if (own_v != NULL || ucx_v != NULL) {
        n = snprintf(buf + *off, len - *off, "%s%s=%s", *off ? ", " : "",
                     own_v != NULL ? own : ucx, own_v != NULL ? own_v : ucx_v);
    } else {
        n = snprintf(buf + *off, len - *off, "%s%s unset (all)", *off ? ", " : "", ucx);
    }
    *off = n > 0 && (size_t)n < len - *off ? *off + (size_t)n : len - 1;
}

void rdlm_ucx_env_describe(char *buf, size_t len)
{
    static const char *const chosen[] = {"TLS", "NET_DEVICES"};
    size_t off = 0;

    buf[0] = '\0';
    for (size_t i = 0; i < sizeof(chosen) / sizeof(chosen[0]); i++) {
        rdlm_ucx_env_one(buf, len, &off, chosen[i]);
    }
    for (char **e = environ; e != NULL && *e != NULL && off + 1 < len; e++) {
        size_t name_len = strcspn(*e, "=");
        int n;

        if (strncmp(*e, "RDLM_UCX_", 9) != 0 || strncmp(*e, "RDLM_UCX_TLS=", 13) == 0 ||
            strncmp(*e, "RDLM_UCX_NET_DEVICES=", 21) == 0) {
            continue;
        }
        n = snprintf(buf + off, len - off, ", %.*s set", (int)name_len, *e);
        off = n > 0 && (size_t)n < len - off ? off + (size_t)n : len - 1;
    }
}
