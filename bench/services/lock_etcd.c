/*
 * Baseline: etcd's own lock service (the v3 `Lock` API that `etcdctl lock` and the
 * Go client's concurrency.Mutex build on), through etcd's HTTP/JSON gateway with
 * libcurl: no C client of etcd's gRPC API is packaged in Debian.
 *
 *   attach:   POST /v3/lease/grant  {"TTL":30}                       -> lease ID
 *   acquire:  POST /v3/lock/lock    {"name":b64(rdlmbench/<job>),"lease":ID}
 *             -> {"key": b64(name/<lease hex>)}; the server creates the key with
 *             the lease (a txn: create_revision == 0) and, when others hold older
 *             keys under the name, waits for their deletion itself: no polling
 *   release:  POST /v3/lock/unlock  {"key": the key}                 (a delete)
 *   detach:   POST /v3/lease/revoke {"ID":ID}
 *
 * and lease-renew's baseline (renew_ops.h), on the same plumbing:
 *
 *   open:     POST /v3/lease/grant  {"TTL":30}                       -> lease ID
 *   once:     POST /v3/lease/keepalive {"ID":ID}  -> {"result":{..."TTL":"30"}}
 *             LeaseKeepAlive is a gRPC stream: the gateway turns each HTTP request
 *             into a stream carrying one message. The leader renews the lease in
 *             memory, without a raft entry.
 *   close:    POST /v3/lease/revoke {"ID":ID}
 *
 * Debian's etcd 3.4 serves the lock API on the gateway (checked), so the recipe is
 * etcd's own rather than a hand-made txn + watch. One curl handle per worker keeps
 * one HTTP/1.1 connection alive; proxies from the environment are ignored.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "lock_services.h"
#include "renew_ops.h"

#define RDLM_BENCH_ETCD_BODY_MAX 2048

typedef struct rdlm_bench_etcd {
    CURL *curl;
    struct curl_slist *headers;
    char base[160];    /* http://host:port */
    char name_b64[96]; /* base64 of rdlmbench/<job> */
    char lease[32];    /* decimal lease ID */
    char key_b64[192]; /* the held key, from the lock reply */
    char reply[RDLM_BENCH_ETCD_BODY_MAX];
    size_t reply_len;
    int reply_cut;
} rdlm_bench_etcd_t;

static void rdlm_bench_etcd_b64(const char *in, char *out, size_t outlen)
{
    static const char tab[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t n = strlen(in);
    size_t o = 0;
    size_t k;

    for (k = 0; k < n && o + 5 <= outlen; k += 3) {
        uint32_t v = (uint32_t)(unsigned char)in[k] << 16;

        v |= k + 1 < n ? (uint32_t)(unsigned char)in[k + 1] << 8 : 0;
        v |= k + 2 < n ? (uint32_t)(unsigned char)in[k + 2] : 0;
        out[o++] = tab[(v >> 18) & 63];
        out[o++] = tab[(v >> 12) & 63];
        out[o++] = k + 1 < n ? tab[(v >> 6) & 63] : '=';
        out[o++] = k + 2 < n ? tab[v & 63] : '=';
    }
    out[o] = '\0';
}

static size_t rdlm_bench_etcd_write(char *ptr, size_t size, size_t nmemb, void *user)
{
    rdlm_bench_etcd_t *l = user;
    size_t n = size * nmemb;
    size_t room = sizeof(l->reply) - 1 - l->reply_len;

    if (n > room) {
        l->reply_cut = 1;
    }
    memcpy(l->reply + l->reply_len, ptr, n < room ? n : room);
    l->reply_len += n < room ? n : room;
    l->reply[l->reply_len] = '\0';
    return n;
}

/* POST body to base + path; 0 with the reply in l->reply on HTTP 200, else an
 * rdlm_bench_service_err after saying why on stderr (or into err). */
static int rdlm_bench_etcd_post(rdlm_bench_etcd_t *l, const char *path, const char *body,
                                char *err, size_t errlen)
{
    char url[200];
    long status = 0;
    CURLcode rc;

    snprintf(url, sizeof(url), "%s%s", l->base, path);
    l->reply_len = 0;
    l->reply_cut = 0;
    l->reply[0] = '\0';
    curl_easy_setopt(l->curl, CURLOPT_URL, url);
    curl_easy_setopt(l->curl, CURLOPT_POSTFIELDS, body);
    rc = curl_easy_perform(l->curl);
    if (rc != CURLE_OK) {
        if (err != NULL) {
            snprintf(err, errlen, "etcd %s: %s", url, curl_easy_strerror(rc));
        } else {
            fprintf(stderr, "rdlm-bench: etcd %s: %s\n", url, curl_easy_strerror(rc));
        }
        return rc == CURLE_OPERATION_TIMEDOUT ? RDLM_BENCH_SERVICE_ETIME
                                              : RDLM_BENCH_SERVICE_ECONN;
    }
    curl_easy_getinfo(l->curl, CURLINFO_RESPONSE_CODE, &status);
    if (status != 200 || l->reply_cut) {
        if (err != NULL) {
            snprintf(err, errlen, "etcd %s: HTTP %ld: %.120s", url, status, l->reply);
        } else {
            fprintf(stderr, "rdlm-bench: etcd %s: HTTP %ld: %.200s\n", url, status,
                    l->reply);
        }
        return RDLM_BENCH_SERVICE_EREPLY;
    }
    return 0;
}

/* Copy the JSON string value of "field" in l->reply into out; 0 or -1. */
static int rdlm_bench_etcd_field(const rdlm_bench_etcd_t *l, const char *field, char *out,
                                 size_t outlen)
{
    char pat[40];
    const char *p;
    const char *end;

    snprintf(pat, sizeof(pat), "\"%s\":\"", field);
    p = strstr(l->reply, pat);
    if (p == NULL) {
        return -1;
    }
    p += strlen(pat);
    end = strchr(p, '"');
    if (end == NULL || (size_t)(end - p) >= outlen) {
        return -1;
    }
    memcpy(out, p, (size_t)(end - p));
    out[end - p] = '\0';
    return 0;
}

/* A kept-alive connection to the etcd of RDLMBENCH_ETCD and a new lease: the state,
 * or NULL with why in err. */
static rdlm_bench_etcd_t *rdlm_bench_etcd_connect(char *err, size_t errlen)
{
    rdlm_bench_service_addr_t addr;
    rdlm_bench_etcd_t *l;
    char body[64];

    l = rdlm_bench_service_new(RDLM_BENCH_ENV_ETCD, sizeof(*l), &addr, err, errlen);
    if (l == NULL) {
        return NULL;
    }
    if (curl_global_init(CURL_GLOBAL_NOTHING) != CURLE_OK) {
        snprintf(err, errlen, "curl_global_init failed");
        goto err_free;
    }
    l->curl = curl_easy_init();
    l->headers = curl_slist_append(NULL, "Content-Type: application/json");
    if (l->curl == NULL || l->headers == NULL) {
        snprintf(err, errlen, "curl_easy_init failed");
        goto err_curl;
    }
    snprintf(l->base, sizeof(l->base), "http://%s:%d", addr.host, addr.port);
    curl_easy_setopt(l->curl, CURLOPT_HTTPHEADER, l->headers);
    curl_easy_setopt(l->curl, CURLOPT_WRITEFUNCTION, rdlm_bench_etcd_write);
    curl_easy_setopt(l->curl, CURLOPT_WRITEDATA, l);
    curl_easy_setopt(l->curl, CURLOPT_PROXY, "");
    curl_easy_setopt(l->curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(l->curl, CURLOPT_TCP_NODELAY, 1L);
    curl_easy_setopt(l->curl, CURLOPT_CONNECTTIMEOUT_MS, 5000L);
    curl_easy_setopt(l->curl, CURLOPT_TIMEOUT_MS, (long)RDLM_BENCH_SERVICE_WAIT_MS);
    snprintf(body, sizeof(body), "{\"TTL\":%d}", RDLM_BENCH_SERVICE_TTL_MS / 1000);
    if (rdlm_bench_etcd_post(l, "/v3/lease/grant", body, err, errlen) != 0) {
        goto err_curl;
    }
    if (rdlm_bench_etcd_field(l, "ID", l->lease, sizeof(l->lease)) != 0) {
        snprintf(err, errlen, "etcd lease grant: no ID in %.120s", l->reply);
        goto err_curl;
    }
    return l;

err_curl:
    curl_slist_free_all(l->headers);
    if (l->curl != NULL) {
        curl_easy_cleanup(l->curl);
    }
    curl_global_cleanup();
err_free:
    free(l);
    return NULL;
}

static int rdlm_bench_etcd_attach(void *shared, const char *job, void **lock_p, char *err,
                                  size_t errlen)
{
    rdlm_bench_etcd_t *l;
    char name[80];

    (void)shared;
    l = rdlm_bench_etcd_connect(err, errlen);
    if (l == NULL) {
        return -1;
    }
    snprintf(name, sizeof(name), "rdlmbench/%s", job);
    rdlm_bench_etcd_b64(name, l->name_b64, sizeof(l->name_b64));
    *lock_p = l;
    return 0;
}

/* token_p: not filled (the service's own token stays inside the adapter). */
static int rdlm_bench_etcd_acquire(void *lock, uint64_t *token_p)
{
    rdlm_bench_etcd_t *l = lock;
    char body[200];
    int rc;

    (void)token_p;
    snprintf(body, sizeof(body), "{\"name\":\"%s\",\"lease\":\"%s\"}", l->name_b64,
             l->lease);
    rc = rdlm_bench_etcd_post(l, "/v3/lock/lock", body, NULL, 0);
    if (rc != 0) {
        return rc;
    }
    if (rdlm_bench_etcd_field(l, "key", l->key_b64, sizeof(l->key_b64)) != 0) {
        fprintf(stderr, "rdlm-bench: etcd lock: no key in %.200s\n", l->reply);
        return RDLM_BENCH_SERVICE_EREPLY;
    }
    return 0;
}

static int rdlm_bench_etcd_release(void *lock)
{
    rdlm_bench_etcd_t *l = lock;
    char body[240];

    snprintf(body, sizeof(body), "{\"key\":\"%s\"}", l->key_b64);
    return rdlm_bench_etcd_post(l, "/v3/lock/unlock", body, NULL, 0);
}

static void rdlm_bench_etcd_detach(void *lock)
{
    rdlm_bench_etcd_t *l = lock;
    char body[64];

    snprintf(body, sizeof(body), "{\"ID\":\"%s\"}", l->lease);
    (void)rdlm_bench_etcd_post(l, "/v3/lease/revoke", body, NULL, 0);
    curl_slist_free_all(l->headers);
    curl_easy_cleanup(l->curl);
    curl_global_cleanup();
    free(l);
}

const rdlm_bench_lock_ops_t rdlm_bench_lock_etcd = {
    .name = "etcd",
    .description = "etcd v3 Lock API with a lease (HTTP/JSON gateway, libcurl, loopback)",
    .shared_size = 0,
    .shared_init = rdlm_bench_lock_nop_init,
    .shared_fini = rdlm_bench_lock_nop_fini,
    .attach = rdlm_bench_etcd_attach,
    .acquire = rdlm_bench_etcd_acquire,
    .release = rdlm_bench_etcd_release,
    .try_acquire = rdlm_bench_lock_no_try,
    .error_name = rdlm_bench_service_error_name,
    .stats = rdlm_bench_lock_no_stats,
    .detach = rdlm_bench_etcd_detach,
};

/* ---- lease-renew: the lease keepalive --------------------------------------------- */

static int rdlm_bench_etcd_renew_open(const char *job, void **h_p, char *err, size_t errlen)
{
    (void)job;
    *h_p = rdlm_bench_etcd_connect(err, errlen);
    return *h_p != NULL ? 0 : -1;
}

static int rdlm_bench_etcd_keepalive(void *h)
{
    rdlm_bench_etcd_t *l = h;
    char body[64];
    char ttl[16];

    snprintf(body, sizeof(body), "{\"ID\":\"%s\"}", l->lease);
    if (rdlm_bench_etcd_post(l, "/v3/lease/keepalive", body, NULL, 0) != 0) {
        return -1;
    }
    if (rdlm_bench_etcd_field(l, "TTL", ttl, sizeof(ttl)) != 0 || atoi(ttl) <= 0) {
        fprintf(stderr, "rdlm-bench: etcd keepalive: lease not renewed: %.200s\n",
                l->reply);
        return -1;
    }
    return 0;
}

const rdlm_bench_renew_ops_t rdlm_bench_renew_etcd = {
    .name = "etcd-keepalive",
    .description = "etcd LeaseKeepAlive, POST /v3/lease/keepalive (HTTP/JSON gateway, "
                   "libcurl, loopback)",
    .env = RDLM_BENCH_ENV_ETCD,
    .open = rdlm_bench_etcd_renew_open,
    .once = rdlm_bench_etcd_keepalive,
    .close = rdlm_bench_etcd_detach,
};
