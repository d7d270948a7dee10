/*
 * Session authentication for service mode (auth.c). With MUNGE (built when
 * libmunge-dev is found; needs a running munged): the client's credential binds its
 * uid and gid and carries its job name as payload; the server decodes it with
 * munge_decode, which rejects forged, replayed and expired credentials.
 * Without MUNGE support built in, create and verify return RDLM_ERR_UNSUPPORTED.
 */
#ifndef RDLM_LEASE_AUTH_H
#define RDLM_LEASE_AUTH_H

#include <stddef.h>
#include <stdint.h>

#include <rdlm/status.h>

#define RDLM_LEASE_JOB_MAX 47

/** 1 if this build has MUNGE support. */
int rdlm_lease_auth_available(void);

/** Credential of the calling process carrying job (may be ""). RDLM_OK with *len_p;
 *  RDLM_ERR_UNAVAILABLE (nothing listens on munged's socket: logged at info, without
 *  libmunge's 2 s of retries), RDLM_ERR_AUTH (munged failed: logged with its reason),
 *  RDLM_ERR_NO_RESOURCE (cap too small), RDLM_ERR_UNSUPPORTED. */
rdlm_status_t rdlm_lease_auth_create(const char *job, uint8_t *buf, size_t cap,
                                     size_t *len_p);

/** Verify a credential. RDLM_OK with uid, gid and the job (NUL-terminated, at most
 *  RDLM_LEASE_JOB_MAX bytes, printable); RDLM_ERR_AUTH if missing, forged, replayed,
 *  expired or carrying a bad job (logged); RDLM_ERR_UNSUPPORTED. */
rdlm_status_t rdlm_lease_auth_verify(const uint8_t *cred, size_t len, uint32_t *uid_p,
                                     uint32_t *gid_p,
                                     char job_p[RDLM_LEASE_JOB_MAX + 1]);

#endif
