/**
 * @file
 * rdlm status codes: one list, one enum, one to-string.
 *
 *   RDLM_OK = 0            success
 *   positive               success with information, or "in progress"
 *   -1   .. -99            the caller's argument or handle is wrong
 *   -100 .. -199           the lock/object is in a state that refuses the request
 *   -200 .. -299           a peer, process or link failed
 *   -300 .. -399           fatal: the context cannot continue
 */
#ifndef RDLM_STATUS_H
#define RDLM_STATUS_H

#include <rdlm/export.h>

/** The status list: X(name, value, text) for every status, in one place. */
#define RDLM_STATUS_LIST(X)                                                              \
    X(RDLM_OK, 0, "success")                                                             \
    X(RDLM_INPROGRESS, 1, "operation in progress")                                       \
    X(RDLM_OWNER_DEAD, 2, "acquired; the previous holder died and the lock was recovered") \
    X(RDLM_ERR_INVALID_ARG, -1, "invalid argument")                                      \
    X(RDLM_ERR_NAME_TOO_LONG, -2, "name empty or longer than RDLM_NAME_MAX")             \
    X(RDLM_ERR_BAD_HANDLE, -3, "handle is NULL or not an rdlm handle")                   \
    X(RDLM_ERR_CLOSED, -4, "handle was closed")                                          \
    X(RDLM_ERR_KIND_MISMATCH, -5, "name is open as another kind of object")              \
    X(RDLM_ERR_BAD_CONFIG, -6, "invalid configuration value")                            \
    X(RDLM_ERR_UNSUPPORTED, -7, "operation not supported")                               \
    X(RDLM_ERR_NOT_FOUND, -8, "no such object")                                          \
    X(RDLM_ERR_BUSY, -100, "held by another owner")                                      \
    X(RDLM_ERR_TIMEOUT, -101, "timed out")                                               \
    X(RDLM_ERR_NOT_OWNER, -102, "not held by this context")                              \
    X(RDLM_ERR_TABLE_FULL, -103, "lock table is full")                                   \
    X(RDLM_ERR_NO_RESOURCE, -104, "per-process resource exhausted")                      \
    X(RDLM_ERR_MISMATCH, -105, "object exists with different parameters")                \
    X(RDLM_ERR_STALE_TOKEN, -106, "fencing token older than one already accepted")       \
    X(RDLM_ERR_LEASE_EXPIRED, -107, "session lease expired or unknown; open a new session") \
    X(RDLM_ERR_QUOTA, -108, "quota exceeded: per session, per identity or global")       \
    X(RDLM_ERR_AUTH, -109, "credential missing, forged or refused")                      \
    X(RDLM_ERR_PEER_DEAD, -200, "a participating process died")                          \
    X(RDLM_ERR_IO, -201, "system call failed")                                           \
    X(RDLM_ERR_NOT_LEADER, -202, "authority replica is not the leader")                  \
    X(RDLM_ERR_UNAVAILABLE, -203, "no authority leader or lock home reachable")          \
    X(RDLM_ERR_PROTOCOL, -204, "malformed or unexpected wire message")                   \
    X(RDLM_ERR_NO_SPACE, -205, "authority disk full, read-only or gone; writes refused") \
    X(RDLM_ERR_NO_MEMORY, -300, "out of memory")                                         \
    X(RDLM_ERR_PERMISSION, -301, "segment belongs to another user or has unsafe mode")   \
    X(RDLM_ERR_CORRUPT, -302, "segment or authority replicas are inconsistent")

/** One enumerator of the status list (undefined after use). */
#define RDLM_STATUS_ENUM_(name, value, text) name = value,
/** Result of every rdlm call that can fail. */
typedef enum rdlm_status { RDLM_STATUS_LIST(RDLM_STATUS_ENUM_) } rdlm_status_t;
#undef RDLM_STATUS_ENUM_

#ifdef __cplusplus
extern "C" {
#endif

/** Constant text for a status; "unknown status" for values outside the list.
 *  Never NULL, thread-safe, no allocation. */
RDLM_EXPORT const char *rdlm_status_str(rdlm_status_t status);

/** Symbolic name of a status ("RDLM_ERR_TIMEOUT"); "RDLM_?" if unknown. */
RDLM_EXPORT const char *rdlm_status_name(rdlm_status_t status);

#ifdef __cplusplus
}
#endif
#endif
