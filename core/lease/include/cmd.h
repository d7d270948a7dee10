/*
 * Lease-authority commands (cmd.c): the payload of a client request and, once the
 * leader validated it, of a Raft log entry. One encoding for both, so a logged entry is
 * decoded by the same code that checked the request.
 *
 * Encoding (little-endian, fixed order, no padding):
 *
 *   u8 op | u8 flags | u16 name_len | u32 ttl_ms | u32 timeout_ms | u32 uid | u32 gid
 *   u64 session | u64 seq | u64 nonce | u64 token
 *   u16 cred_len | name[name_len] | cred[cred_len]
 *
 * A decoded command is fully validated: known op, flags known for that op, name
 * 1..RDLM_LEASE_NAME_MAX printable bytes where the op needs a name (ACQUIRE, RELEASE,
 * CANCEL), 0..RDLM_LEASE_NAME_MAX on OPEN (the session's namespace), 0 otherwise,
 * ttl in [RDLM_LEASE_TTL_MIN_MS, RDLM_LEASE_TTL_MAX_MS] for OPEN, cred only on OPEN,
 * an EPOCH's token (its floor) at most RDLM_LEASE_EPOCH_MAX, total length exact.
 * Anything else is RDLM_ERR_PROTOCOL (never a crash, never a read past len).
 */
#ifndef RDLM_LEASE_CMD_H
#define RDLM_LEASE_CMD_H

#include <stddef.h>
#include <stdint.h>

#include <rdlm/status.h>

/** Longest lock name inside the authority (client name plus the "uid/job/" prefix
 *  the server adds in authenticated mode). */
#define RDLM_LEASE_NAME_MAX 127
/** Longest credential (a MUNGE credential is about 200 bytes). */
#define RDLM_LEASE_CRED_MAX 1024
#define RDLM_LEASE_TTL_MIN_MS 100u
#define RDLM_LEASE_TTL_MAX_MS 600000u
/** Largest epoch: epoch << 40 must fit a token. */
#define RDLM_LEASE_EPOCH_MAX ((UINT64_C(1) << 24) - 1)
/** Encoded size of the fixed part. */
#define RDLM_LEASE_CMD_FIXED 54u
/** Largest encoded command. */
#define RDLM_LEASE_CMD_MAX (RDLM_LEASE_CMD_FIXED + RDLM_LEASE_NAME_MAX + RDLM_LEASE_CRED_MAX)

/** Operations. "log" ones become Raft entries; "client" ones are answered by the
 *  replica without a log entry. */
typedef enum rdlm_lease_op {
    RDLM_LEASE_OP_OPEN = 1,    /**< log: nonce, ttl_ms, name = namespace, flags,
                                    token = address, (cred) -> new session id */
    RDLM_LEASE_OP_RENEW = 2,   /**< client: session; leader resets its timer, no log */
    RDLM_LEASE_OP_CLOSE = 3,   /**< log: session, seq; releases its locks, drops waits */
    RDLM_LEASE_OP_ACQUIRE = 4, /**< log: session, seq, name, flags, timeout_ms */
    RDLM_LEASE_OP_RELEASE = 5, /**< log: session, seq, name, token */
    RDLM_LEASE_OP_CANCEL = 6,  /**< log: session, seq, name; drops a wait or the hold
                                    that the acquire with this seq obtained */
    RDLM_LEASE_OP_EPOCH = 7,   /**< log: session, seq, token = floor (0: none); the
                                    epoch becomes max(epoch + 1, floor), returned */
    RDLM_LEASE_OP_STATUS = 8,  /**< client, no session: leader, term, epoch,
                                    sessions; token 0: the reply's token is the
                                    authority id (server.h) */
    RDLM_LEASE_OP_EXPIRE = 9,  /**< log, leader timer only (refused from clients):
                                    session */
    RDLM_LEASE_OP_FATE = 10,   /**< client: session, token = another session of the
                                    same namespace: RDLM_OK with broken 0 (open) or
                                    1 (ended, as committed), or RDLM_ERR_NOT_FOUND
                                    (never opened, or another namespace's) */
    RDLM_LEASE_OP_HOMES = 11,  /**< client (session and nonce: needed under --auth
                                    munge, server.h): the lock home this replica's
                                    rdlmd hosts, answered by a BLOB frame
                                    (core/svc/home_layout.h); RDLM_ERR_UNSUPPORTED if it
                                    hosts none, RDLM_ERR_UNAVAILABLE until it serves */
    RDLM_LEASE_OP_MAX_ = 11
} rdlm_lease_op_t;

/** ACQUIRE flags. */
#define RDLM_LEASE_ACQ_TRY 0x01u /**< never queue: busy -> RDLM_ERR_BUSY */
/** OPEN flags, set by the server (whatever a client sent is overwritten).
 *  COUNTED: the session counts against its identity's quotas (sm.h); clear for the
 *  daemon's own identity and in entries logged before identities existed. */
#define RDLM_LEASE_OPEN_COUNTED 0x01u

typedef struct rdlm_lease_cmd {
    uint8_t op;          /**< rdlm_lease_op_t */
    uint8_t flags;       /**< RDLM_LEASE_ACQ_* for ACQUIRE, RDLM_LEASE_OPEN_* for
                              OPEN, 0 otherwise */
    uint16_t name_len;   /**< bytes in name, without NUL */
    uint32_t ttl_ms;     /**< OPEN */
    uint32_t timeout_ms; /**< ACQUIRE: how long the leader keeps the waiter */
    uint32_t uid, gid;   /**< OPEN as logged: set by the server after authentication;
                              the server overwrites whatever a client sent */
    uint64_t session;    /**< every op but OPEN and STATUS */
    uint64_t seq;        /**< per-session request number, strictly increasing */
    uint64_t nonce;      /**< OPEN: the client's random id (re-sent OPEN -> same
                              session); every later request of the session carries it
                              too: the leader refuses a request whose nonce is not
                              its session's (RDLM_ERR_AUTH), so a session id alone
                              does not let another client act in that session */
    uint64_t token;      /**< RELEASE: the token the acquire returned; EPOCH: the
                              floor of the new epoch (<= RDLM_LEASE_EPOCH_MAX); FATE:
                              the session asked about (> 0); OPEN as logged: the
                              client's IPv4 address (host order) under --auth none,
                              0 under munge: with uid and namespace, its identity */
    uint16_t cred_len;   /**< OPEN from a client only; 0 in the log */
    const uint8_t *cred; /**< points into the decoded buffer (not owned) */
    char name[RDLM_LEASE_NAME_MAX + 1]; /**< NUL-terminated */
} rdlm_lease_cmd_t;

/** Encode cmd into buf (cap bytes). Returns the encoded length, or 0 if cap is too
 *  small or cmd is not valid by the rules above (nothing is logged; pure function). */
size_t rdlm_lease_cmd_encode(const rdlm_lease_cmd_t *cmd, uint8_t *buf, size_t cap);

/** Decode and validate len bytes into *cmd_p. RDLM_OK, or RDLM_ERR_PROTOCOL with
 *  *cmd_p unspecified. Pure: no logging, no allocation (cmd_p->cred points into buf). */
rdlm_status_t rdlm_lease_cmd_decode(const uint8_t *buf, size_t len, rdlm_lease_cmd_t *cmd_p);

/** True for ops that become log entries (OPEN CLOSE ACQUIRE RELEASE CANCEL EPOCH
 *  EXPIRE). */
int rdlm_lease_op_is_logged(unsigned op);

/** Constant name of an op ("ACQUIRE"), "?" if unknown. */
const char *rdlm_lease_op_name(unsigned op);

#endif
