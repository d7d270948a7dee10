/*
 * Session authentication for service mode (auth.c). With MUNGE (built when
 * libmunge-dev is found; needs a running munged): the client's credential binds its
 * uid and gid, and its payload binds the OPEN it is made for:
 *
 *   "rdlm-open v1 authority=<16 hex> nonce=<16 hex> job=<job>"
 *
 * authority: the id of the authority the client opens at (STATUS answers it; every
 * replica of one authority has the same); nonce: the OPEN's. The server decodes it
 * with munge_decode, which rejects forged, replayed and expired credentials, and
 * refuses one made for another authority or another nonce, or whose payload is not
 * this binding (an empty one included). Without MUNGE support built in, create and
 * verify return RDLM_ERR_UNSUPPORTED.
 */
#ifndef RDLM_LEASE_AUTH_H
#define RDLM_LEASE_AUTH_H

#include <stddef.h>
#include <stdint.h>

#include <rdlm/status.h>

#define RDLM_LEASE_JOB_MAX 47

/** 1 if this build has MUNGE support. */
int rdlm_lease_auth_available(void);

/** Largest reason verify gives, NUL included. */
#define RDLM_LEASE_AUTH_WHY_MAX 160

/** Credential of the calling process for an OPEN of nonce at authority, carrying job
 *  (may be ""). RDLM_OK with *len_p; RDLM_ERR_INVALID_ARG (bad job);
 *  RDLM_ERR_UNAVAILABLE (nothing listens on munged's socket: logged at info, without
 *  libmunge's 2 s of retries), RDLM_ERR_AUTH (munged failed: logged with its reason),
 *  RDLM_ERR_NO_RESOURCE (cap too small), RDLM_ERR_UNSUPPORTED. */
rdlm_status_t rdlm_lease_auth_create(uint64_t authority, uint64_t nonce, const char *job,
                                     uint8_t *buf, size_t cap, size_t *len_p);

/** Verify a credential for an OPEN of nonce at authority. RDLM_OK with uid, gid and
 *  the job (NUL-terminated, at most RDLM_LEASE_JOB_MAX bytes, printable). Else the
 *  reason in why_p, not logged (the caller logs it, rate-limited: these are the
 *  client's faults): RDLM_ERR_AUTH if missing, forged, replayed, expired, made for
 *  another authority or nonce, or its payload is not the binding above;
 *  RDLM_ERR_PROTOCOL if the binding is of another version than v1. munged failing
 *  (not the client's fault) is logged here at error and gives RDLM_ERR_AUTH with
 *  why_p "". RDLM_ERR_UNSUPPORTED. Thread-safe, blocking (a round trip to munged). */
rdlm_status_t rdlm_lease_auth_verify(const uint8_t *cred, size_t len, uint64_t authority,
                                     uint64_t nonce, uint32_t *uid_p, uint32_t *gid_p,
                                     char job_p[RDLM_LEASE_JOB_MAX + 1],
                                     char why_p[RDLM_LEASE_AUTH_WHY_MAX]);

#endif
