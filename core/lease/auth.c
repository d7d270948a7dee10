/*
 * Session credentials (see auth.h). With MUNGE: the credential is munge_encode's
 * base64 string carrying the binding of auth.h as payload; munged binds the caller's
 * uid and gid and, on decode, refuses forged, replayed, expired and rewound
 * credentials. The binding is what stops a credential from serving another purpose:
 * a credential taken from one OPEN (sniffed, or sent to an authority that is not the
 * one it was made for) names that OPEN's nonce and authority, so it opens no other
 * session and at no other authority; an empty payload (`munge -n`) binds nothing and
 * is refused.
 *
 * A job name is 0..RDLM_LEASE_JOB_MAX bytes of printable ASCII other than space and
 * '/': the server builds lock names as "uid/job/name", so a '/' inside a job would
 * let two jobs of one user name the same lock. create refuses a bad job with
 * RDLM_ERR_INVALID_ARG, verify a credential carrying one with RDLM_ERR_AUTH.
 *
 * Both calls block for one round trip to munged over its UNIX socket (libmunge gives
 * up after about 10 s when munged hangs, at once when it is not running). They are
 * thread-safe: each call uses a MUNGE context of its own.
 */
#include "auth.h"

#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "log.h"

#if RDLM_HAVE_MUNGE
#include <errno.h>
#include <munge.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "byteorder.h"

/* The binding (auth.h): MAGIC, the version and its fields, each id 16 hex digits. */
#define RDLM_LEASE_AUTH_MAGIC "rdlm-open v"
#define RDLM_LEASE_AUTH_V1 RDLM_LEASE_AUTH_MAGIC "1 authority="
#define RDLM_LEASE_AUTH_NONCE " nonce="
#define RDLM_LEASE_AUTH_JOB " job="
#define RDLM_LEASE_AUTH_HEX 16
/* The payload's longest form, without a NUL. */
#define RDLM_LEASE_AUTH_PAYLOAD_MAX                                                        \
    (sizeof(RDLM_LEASE_AUTH_V1 RDLM_LEASE_AUTH_NONCE RDLM_LEASE_AUTH_JOB) - 1 +            \
     2 * RDLM_LEASE_AUTH_HEX + RDLM_LEASE_JOB_MAX)

/* 1 if the len bytes of job form a valid job name (see the top of the file). */
static int rdlm_lease_auth_job_valid(const void *job, size_t len)
{
    return len <= RDLM_LEASE_JOB_MAX && rdlm_le_printable(job, len) &&
           (len == 0 || memchr(job, '/', len) == NULL);
}

/* munged's detail for a failed call, "" when it says no more than munge_strerror. */
static const char *rdlm_lease_auth_detail(munge_ctx_t ctx, munge_err_t err)
{
    const char *detail = munge_ctx_strerror(ctx);
    return detail == NULL || strcmp(detail, munge_strerror(err)) == 0 ? "" : detail;
}

int rdlm_lease_auth_available(void)
{
    return 1;
}

/* 1 unless nothing listens on munged's socket (absent, or refusing connections): then
 * libmunge would retry for about 2 s before failing. Logged at info: an authority
 * with --auth munge will refuse the session, and this line says why. */
static int rdlm_lease_auth_munged_listens(munge_ctx_t ctx)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    char *path = NULL;
    int fd, rc;

    if (munge_ctx_get(ctx, MUNGE_OPT_SOCKET, &path) != EMUNGE_SUCCESS || path == NULL ||
        strlen(path) >= sizeof(a.sun_path))
        return 1; /* unknown: let libmunge try */
    memcpy(a.sun_path, path, strlen(path) + 1);
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return 1;
    rc = connect(fd, (const struct sockaddr *)&a, sizeof(a));
    if (rc != 0 && (errno == ENOENT || errno == ECONNREFUSED)) {
        rdlm_info("auth: munged is not listening on %s (%s): no credential", path,
                  strerror(errno));
        close(fd);
        return 0;
    }
    close(fd);
    return 1;
}

rdlm_status_t rdlm_lease_auth_create(uint64_t authority, uint64_t nonce, const char *job,
                                     uint8_t *buf, size_t cap, size_t *len_p)
{
    char payload[RDLM_LEASE_AUTH_PAYLOAD_MAX + 1];
    rdlm_status_t status = RDLM_OK;
    munge_ctx_t ctx;
    munge_err_t err;
    char *cred = NULL;
    size_t len;

    if (job == NULL || !rdlm_lease_auth_job_valid(job, strlen(job))) {
        rdlm_error("auth: a job name is at most %d printable bytes, no space or '/'",
                   RDLM_LEASE_JOB_MAX);
        return RDLM_ERR_INVALID_ARG;
    }
    ctx = munge_ctx_create();
    if (ctx == NULL) {
        rdlm_error("auth: munge_ctx_create failed");
        return RDLM_ERR_NO_MEMORY;
    }
    if (!rdlm_lease_auth_munged_listens(ctx)) {
        status = RDLM_ERR_UNAVAILABLE;
        goto out_ctx;
    }
    len = (size_t)snprintf(payload, sizeof(payload),
                           RDLM_LEASE_AUTH_V1 "%016llx" RDLM_LEASE_AUTH_NONCE
                                              "%016llx" RDLM_LEASE_AUTH_JOB "%s",
                           (unsigned long long)authority, (unsigned long long)nonce, job);
    err = munge_encode(&cred, ctx, payload, (int)len);
    if (err != EMUNGE_SUCCESS) {
        const char *detail = rdlm_lease_auth_detail(ctx, err);
        rdlm_error("auth: munge_encode: %s%s%s", munge_strerror(err), *detail ? ": " : "",
                   detail);
        status = RDLM_ERR_AUTH;
        goto out_ctx;
    }
    len = strlen(cred);
    if (len > cap || len > RDLM_LEASE_CRED_MAX) {
        rdlm_error("auth: credential of %zu bytes does not fit in %zu", len, cap);
        status = RDLM_ERR_NO_RESOURCE;
        goto out_cred;
    }
    memcpy(buf, cred, len);
    *len_p = len;
out_cred:
    free(cred);
out_ctx:
    munge_ctx_destroy(ctx);
    return status;
}

/* Consume the literal lit at *q (before end): 1, or 0 if it is not there. */
static int rdlm_lease_auth_take(const char **q, const char *end, const char *lit)
{
    size_t n = strlen(lit);

    if ((size_t)(end - *q) < n || memcmp(*q, lit, n) != 0) {
        return 0;
    }
    *q += n;
    return 1;
}

/* Consume RDLM_LEASE_AUTH_HEX lowercase hex digits at *q (before end), as create
 * writes them, into *v_p: 1, or 0 if they are not there. */
static int rdlm_lease_auth_take_hex(const char **q, const char *end, uint64_t *v_p)
{
    uint64_t v = 0;

    if (end - *q < RDLM_LEASE_AUTH_HEX) {
        return 0;
    }
    for (int i = 0; i < RDLM_LEASE_AUTH_HEX; i++) {
        char c = (*q)[i];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;

        if (d < 0) {
            return 0;
        }
        v = v << 4 | (uint64_t)d;
    }
    *q += RDLM_LEASE_AUTH_HEX;
    *v_p = v;
    return 1;
}

/* Check the payload (len bytes, NUL-terminated) against the OPEN it must bind:
 * RDLM_OK with the job copied out, else the status of auth.h and the reason. */
static rdlm_status_t rdlm_lease_auth_binding(const char *p, size_t len, uint64_t authority,
                                             uint64_t nonce,
                                             char job_p[RDLM_LEASE_JOB_MAX + 1],
                                             char why_p[RDLM_LEASE_AUTH_WHY_MAX])
{
    const size_t magic = sizeof(RDLM_LEASE_AUTH_MAGIC) - 1;
    const char *q = p, *end = p + len;
    uint64_t a, n;

    if (len < magic || memcmp(p, RDLM_LEASE_AUTH_MAGIC, magic) != 0) {
        snprintf(why_p, RDLM_LEASE_AUTH_WHY_MAX,
                 "credential payload binds no OPEN (%zu bytes; empty, or a bare job "
                 "from a client older than this rdlmd)",
                 len);
        return RDLM_ERR_AUTH;
    }
    if (len >= magic + 2 && (p[magic] != '1' || p[magic + 1] != ' ')) {
        snprintf(why_p, RDLM_LEASE_AUTH_WHY_MAX,
                 "credential payload is binding version '%.8s', this rdlmd speaks "
                 "'rdlm-open v1'",
                 p + magic);
        return RDLM_ERR_PROTOCOL;
    }
    if (!rdlm_lease_auth_take(&q, end, RDLM_LEASE_AUTH_V1) ||
        !rdlm_lease_auth_take_hex(&q, end, &a) ||
        !rdlm_lease_auth_take(&q, end, RDLM_LEASE_AUTH_NONCE) ||
        !rdlm_lease_auth_take_hex(&q, end, &n) ||
        !rdlm_lease_auth_take(&q, end, RDLM_LEASE_AUTH_JOB) ||
        !rdlm_lease_auth_job_valid(q, (size_t)(end - q))) {
        snprintf(why_p, RDLM_LEASE_AUTH_WHY_MAX,
                 "credential payload is not a valid rdlm-open v1 binding");
        return RDLM_ERR_AUTH;
    }
    if (a != authority) {
        snprintf(why_p, RDLM_LEASE_AUTH_WHY_MAX,
                 "credential made for authority %016llx, this is %016llx",
                 (unsigned long long)a, (unsigned long long)authority);
        return RDLM_ERR_AUTH;
    }
    if (n != nonce) {
        snprintf(why_p, RDLM_LEASE_AUTH_WHY_MAX,
                 "credential made for another OPEN (its nonce differs)");
        return RDLM_ERR_AUTH;
    }
    memcpy(job_p, q, (size_t)(end - q) + 1); /* with the NUL at end */
    return RDLM_OK;
}

rdlm_status_t rdlm_lease_auth_verify(const uint8_t *cred, size_t len, uint64_t authority,
                                     uint64_t nonce, uint32_t *uid_p, uint32_t *gid_p,
                                     char job_p[RDLM_LEASE_JOB_MAX + 1],
                                     char why_p[RDLM_LEASE_AUTH_WHY_MAX])
{
    char text[RDLM_LEASE_CRED_MAX + 1], payload_text[RDLM_LEASE_AUTH_PAYLOAD_MAX + 1];
    rdlm_status_t status = RDLM_ERR_AUTH;
    munge_ctx_t ctx;
    munge_err_t err;
    void *payload = NULL;
    int payload_len = 0;
    uid_t uid;
    gid_t gid;

    if (cred == NULL || len == 0 || len > RDLM_LEASE_CRED_MAX ||
        memchr(cred, '\0', len) != NULL) {
        snprintf(why_p, RDLM_LEASE_AUTH_WHY_MAX,
                 "credential missing, longer than %d bytes or not a string",
                 RDLM_LEASE_CRED_MAX);
        return RDLM_ERR_AUTH;
    }
    memcpy(text, cred, len);
    text[len] = '\0';

    ctx = munge_ctx_create();
    if (ctx == NULL) {
        rdlm_error("auth: munge_ctx_create failed");
        why_p[0] = '\0';
        return RDLM_ERR_AUTH;
    }
    /* Payload memory is allocated for some errors too (EXPIRED, REWOUND, REPLAYED). */
    err = munge_decode(text, ctx, &payload, &payload_len, &uid, &gid);
    if (err != EMUNGE_SUCCESS) {
        /* Credential faults are the client's; the others mean munged is unusable. */
        const char *detail = rdlm_lease_auth_detail(ctx, err);

        why_p[0] = '\0';
        if (err >= EMUNGE_BAD_CRED) {
            snprintf(why_p, RDLM_LEASE_AUTH_WHY_MAX,
                     "credential refused by munge_decode: %s%s%s", munge_strerror(err),
                     *detail ? ": " : "", detail);
        } else {
            rdlm_error("auth: credential not verified: munge_decode: %s%s%s",
                       munge_strerror(err), *detail ? ": " : "", detail);
        }
        goto out_payload;
    }
    if (payload_len < 0 || (size_t)payload_len > RDLM_LEASE_AUTH_PAYLOAD_MAX) {
        snprintf(why_p, RDLM_LEASE_AUTH_WHY_MAX,
                 "credential payload of %d bytes binds no OPEN", payload_len);
        goto out_payload;
    }
    if (payload_len > 0) {
        memcpy(payload_text, payload, (size_t)payload_len);
    }
    payload_text[payload_len] = '\0';
    status = rdlm_lease_auth_binding(payload_text, (size_t)payload_len, authority, nonce,
                                     job_p, why_p);
    if (status == RDLM_OK) {
        *uid_p = (uint32_t)uid;
        *gid_p = (uint32_t)gid;
    }
out_payload:
    free(payload);
    munge_ctx_destroy(ctx);
    return status;
}

#else /* !RDLM_HAVE_MUNGE */

int rdlm_lease_auth_available(void)
{
    return 0;
}

rdlm_status_t rdlm_lease_auth_create(uint64_t authority, uint64_t nonce, const char *job,
                                     uint8_t *buf, size_t cap, size_t *len_p)
{
    (void)authority, (void)nonce, (void)job, (void)buf, (void)cap, (void)len_p;
    rdlm_error("auth: built without MUNGE (libmunge-dev was not found at configure time)");
    return RDLM_ERR_UNSUPPORTED;
}

rdlm_status_t rdlm_lease_auth_verify(const uint8_t *cred, size_t len, uint64_t authority,
                                     uint64_t nonce, uint32_t *uid_p, uint32_t *gid_p,
                                     char job_p[RDLM_LEASE_JOB_MAX + 1],
                                     char why_p[RDLM_LEASE_AUTH_WHY_MAX])
{
    (void)cred, (void)len, (void)authority, (void)nonce, (void)uid_p, (void)gid_p,
        (void)job_p;
    snprintf(why_p, RDLM_LEASE_AUTH_WHY_MAX, "built without MUNGE");
    rdlm_error("auth: built without MUNGE (libmunge-dev was not found at configure time)");
    return RDLM_ERR_UNSUPPORTED;
}

#endif
