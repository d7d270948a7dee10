/*
 * rdlm_info's transports section (-d): the backends built, whether each opens here,
 * UCX's transports, and the capabilities of RDLM_TRANSPORT's context; as text or as
 * transport:NAME:FIELD:VALUE lines (-d -p).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdlm.h>

#include "rdlm_info.h"
#include "transport.h"

#if RDLM_INFO_HAVE_UCX
#include <ucp/api/ucp.h>
#endif
#if RDLM_INFO_HAVE_VERBS
#include <infiniband/verbs.h>
#endif

#if RDLM_INFO_HAVE_UCX
/* 1 if the n bytes at word are one of the space-separated words of list. */
static int rdlm_info_listed(const char *list, const char *word, size_t n)
{
    while (*list != '\0') {
        size_t len = strcspn(list, " ");

        if (len == n && strncmp(list, word, n) == 0)
            return 1;
        list += len;
        list += strspn(list, " ");
    }
    return 0;
}

/* The UCX transports a context configured like rdlm's (RDLM_UCX_* over UCX_*) has:
 * the distinct "tl" of every "resource N : md M dev D flags -- tl/dev" line. */
static void rdlm_info_ucx_resources(char *buf, size_t len)
{
    ucp_params_t up = {.field_mask = UCP_PARAM_FIELD_FEATURES,
                       .features = UCP_FEATURE_AMO64 | UCP_FEATURE_RMA | UCP_FEATURE_AM};
    ucp_config_t *config;
    ucp_context_h context;
    char *text = NULL, *line, *save = NULL;
    size_t size = 0, used = 0;
    FILE *f;

    buf[0] = '\0';
    if (ucp_config_read("RDLM", NULL, &config) != UCS_OK)
        return;
    if (ucp_init(&up, config, &context) != UCS_OK) {
        ucp_config_release(config);
        return;
    }
    ucp_config_release(config);
    f = open_memstream(&text, &size);
    if (f != NULL) {
        ucp_context_print_info(context, f);
        fclose(f);
        for (line = strtok_r(text, "\n", &save); line != NULL;
             line = strtok_r(NULL, "\n", &save)) {
            const char *tl = strrchr(line, ' ');
            size_t n;

            if (strstr(line, "resource") == NULL || tl == NULL || strchr(tl, '/') == NULL)
                continue;
            tl++;
            n = (size_t)(strchr(tl, '/') - tl);
            if (rdlm_info_listed(buf, tl, n))
                continue; /* several devices of one transport */
            if (used + n + 2 < len)
                used += (size_t)snprintf(buf + used, len - used, "%s%.*s", used ? " " : "",
                                         (int)n, tl);
        }
        free(text);
    }
    ucp_cleanup(context);
}
#endif

/* 1 if the backend name can be opened here with cfg's transport settings (then *ctx_p
 * is open), 0 with why_p set. */
static int rdlm_info_probe(const rdlm_config_t *cfg, const char *name, rdlm_tl_ctx_h *ctx_p,
                           const char **why_p)
{
    rdlm_tl_params_t params = {.bootstrap = rdlm_tl_bootstrap_self()};
    rdlm_status_t st;

    rdlm_tl_params_from_config(cfg, &params);

#if RDLM_INFO_HAVE_VERBS
    if (strcmp(name, "verbs") == 0) {
        int n = 0;
        struct ibv_device **list = ibv_get_device_list(&n);

        if (list != NULL)
            ibv_free_device_list(list);
        if (list == NULL || n == 0) {
            *why_p = "ibv_get_device_list found no RDMA device (for soft-RoCE: modprobe "
                     "rdma_rxe; rdma link add rxe0 type rxe netdev <if>)";
            return 0;
        }
    }
#endif
    st = rdlm_tl_open(name, &params, ctx_p);
    if (st != RDLM_OK) {
        *why_p = st == RDLM_ERR_UNSUPPORTED ? "open refused (reason logged above)"
                                            : rdlm_status_str(st);
        return 0;
    }
    return 1;
}

/* The operations of caps' flags, space-separated, into buf (len >= 80). */
static void rdlm_info_ops(const rdlm_tl_caps_t *caps, char *buf, size_t len)
{
    snprintf(buf, len, "%s%s%s%s%s%s", caps->flags & RDLM_TL_CAP_AMO64 ? " amo64" : "",
             caps->flags & RDLM_TL_CAP_AMO64_POST ? " amo64-posted" : "",
             caps->flags & RDLM_TL_CAP_RMA ? " put/get" : "",
             caps->flags & RDLM_TL_CAP_AM ? " active-messages" : "",
             caps->flags & RDLM_TL_CAP_LOOPBACK ? " loopback" : "",
             caps->flags & RDLM_TL_CAP_PEER_FAILURE ? " peer-failure" : "");
}

static void rdlm_info_caps(rdlm_tl_ctx_h ctx)
{
    rdlm_tl_caps_t caps;
    char ops[128];

    if (ctx->setup->query(ctx, &caps) != RDLM_OK) {
        printf("    capabilities: query failed\n");
        return;
    }
    rdlm_info_ops(&caps, ops, sizeof(ops));
    printf("    operations  :%s\n", ops);
    printf("    atomics     : domain %s; target progress needed: %s\n",
           rdlm_tl_atomic_domain_str(caps.atomic_domain),
           caps.amo_needs_target_progress ? "yes" : "no");
    printf("    threads     : granted %s%s\n",
           caps.thread_mode == RDLM_TL_THREAD_MULTI ? "multi" : "single",
           caps.serialized_by_rdlm ? " (serialised by rdlm)" : "");
    printf("    am payload  : %zu B\n", caps.am_max_payload);
    printf("    (a 1-process context: its lanes are loopback ones; between processes over "
           "shared memory atomics are cpu and one-sided, over tcp they are emulated and "
           "need the target's progress: RDLM_PROGRESS=thread)\n");
}

void rdlm_info_transports(const rdlm_config_t *cfg)
{
    const rdlm_tl_backend_t *const *b;
    rdlm_tl_ctx_h ctx = NULL;
    const char *why = NULL;

    printf("  built :");
    for (b = rdlm_tl_backends(); *b != NULL; b++)
        printf(" %s", (*b)->name);
    printf("  (plus the on-node lock segment, which needs no transport)\n");
    for (b = rdlm_tl_backends(); *b != NULL; b++) {
        int ok;

        ctx = NULL;
        why = NULL;
        fflush(stdout);
        ok = rdlm_info_probe(cfg, (*b)->name, &ctx, &why);
        printf("  %-6s: %s", (*b)->name, ok ? "usable" : "not usable: ");
        if (!ok)
            printf("%s", why);
#if RDLM_INFO_HAVE_UCX
        if (strcmp((*b)->name, "ucx") == 0) {
            char tls[256];

            printf("; UCX %s", ucp_get_version_string());
            if (ok) {
                rdlm_info_ucx_resources(tls, sizeof(tls));
                printf("; transports: %s", tls[0] ? tls : "?");
            }
        }
#endif
#if RDLM_INFO_HAVE_VERBS
        if (strcmp((*b)->name, "verbs") == 0)
            printf("; connections: RDLM_VERBS_CONNECT=%s (%s)",
                   rdlm_config_verbs_connect_name(cfg->verbs_connect),
                   cfg->verbs_connect == RDLM_VERBS_CONNECT_CM
                       ? "librdmacm"
                       : "queue-pair numbers through the bootstrap");
#endif
        printf("\n");
        rdlm_tl_destroy(ctx); /* NULL-safe */
        ctx = NULL;
    }
    /* Distributed contexts open RDLM_TRANSPORT; nothing falls back silently. */
    for (b = rdlm_tl_backends(); *b != NULL && strcmp((*b)->name, cfg->transport) != 0;
         b++) {
    }
    if (*b == NULL) {
        printf("  chosen: RDLM_TRANSPORT=%s is not built: distributed contexts will fail\n",
               cfg->transport);
    } else if (!rdlm_info_probe(cfg, (*b)->name, &ctx, &why)) {
        printf("  chosen: RDLM_TRANSPORT=%s, not usable here: distributed contexts will "
               "fail (%s)\n",
               cfg->transport, why);
    } else {
        printf("  chosen: RDLM_TRANSPORT=%s for distributed contexts\n", cfg->transport);
        rdlm_info_caps(ctx);
        rdlm_tl_destroy(ctx);
    }
    printf("  progress: RDLM_PROGRESS=%s\n", rdlm_config_progress_name(cfg->progress));
    printf("  dead peers: RDLM_PEER_FAILURE=%s, RDLM_PEER_TIMEOUT_MS=%u (%s)\n",
           rdlm_config_switch_name(cfg->peer_failure), (unsigned)cfg->peer_timeout_ms,
           cfg->peer_failure == RDLM_SWITCH_OFF
               ? "not detected: an operation on a dead peer may hang"
               : "an operation on a dead watched peer returns RDLM_ERR_PEER_DEAD");
}

/* transport:NAME:FIELD:VALUE lines of the capabilities of ctx (backend name). */
static void rdlm_info_caps_parsable(const char *name, rdlm_tl_ctx_h ctx)
{
    rdlm_tl_caps_t caps;
    char ops[128];

    if (ctx->setup->query(ctx, &caps) != RDLM_OK) {
        printf("transport:%s:capabilities:query failed\n", name);
        return;
    }
    rdlm_info_ops(&caps, ops, sizeof(ops));
    printf("transport:%s:operations:%s\n", name, ops[0] ? ops + 1 : "");
    printf("transport:%s:atomic_domain:%s\n", name,
           rdlm_tl_atomic_domain_str(caps.atomic_domain));
    printf("transport:%s:target_progress:%s\n", name,
           caps.amo_needs_target_progress ? "yes" : "no");
    printf("transport:%s:threads:%s\n", name,
           caps.thread_mode == RDLM_TL_THREAD_MULTI ? "multi" : "single");
    printf("transport:%s:serialized_by_rdlm:%s\n", name,
           caps.serialized_by_rdlm ? "yes" : "no");
    printf("transport:%s:am_payload:%zu\n", name, caps.am_max_payload);
}

void rdlm_info_transports_parsable(const rdlm_config_t *cfg)
{
    for (const rdlm_tl_backend_t *const *b = rdlm_tl_backends(); *b != NULL; b++) {
        const char *name = (*b)->name;
        int chosen = strcmp(name, cfg->transport) == 0;
        rdlm_tl_ctx_h ctx = NULL;
        const char *why = NULL;
        int ok;

        fflush(stdout); /* a refused open logs on stderr */
        ok = rdlm_info_probe(cfg, name, &ctx, &why);
        printf("transport:%s:usable:%s\n", name, ok ? "yes" : "no");
        if (!ok) {
            printf("transport:%s:reason:%s\n", name, why);
        }
        printf("transport:%s:chosen:%s\n", name, chosen ? "yes" : "no");
#if RDLM_INFO_HAVE_UCX
        if (strcmp(name, "ucx") == 0) {
            char tls[256];

            printf("transport:ucx:version:%s\n", ucp_get_version_string());
            if (ok) {
                rdlm_info_ucx_resources(tls, sizeof(tls));
                printf("transport:ucx:transports:%s\n", tls);
            }
        }
#endif
#if RDLM_INFO_HAVE_VERBS
        if (strcmp(name, "verbs") == 0) {
            printf("transport:verbs:connect:%s\n",
                   rdlm_config_verbs_connect_name(cfg->verbs_connect));
        }
#endif
        if (ok && chosen) {
            rdlm_info_caps_parsable(name, ctx);
        }
        rdlm_tl_destroy(ctx); /* NULL-safe */
    }
}
