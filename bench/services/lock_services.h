/*
 * The classic lock services as lock adapters (lock_ops.h), for the `services`
 * benchmark: each worker process connects to a server on loopback that
 * bench/services/services.sh started, and the server's address comes from the environment.
 *
 *   redis  redis-server, hiredis
 *          acquire: SET key token NX PX ttl; release: EVALSHA compare-and-delete
 *   etcd   etcd 3.4's v3 HTTP/JSON gateway through libcurl, a lease per process
 *          acquire: POST /v3/lock/lock; release: POST /v3/lock/unlock
 *   zk     ZooKeeper, its C client (libzookeeper_mt)
 *          acquire: create an EPHEMERAL|SEQUENTIAL child, lowest holds, else watch
 *          the predecessor; release: delete the child
 *   rdlmd  rdlm's lease authority (3 replicas), the public API of <rdlm/lease.h>, a
 *          session per process; acquire: rdlm_session_lock; release:
 *          rdlm_session_unlock (one committed Raft entry each)
 *   rdlmd-homes  the lock homes the same rdlmd replicas host (core/svc), the public
 *          API of <rdlm.h> with RDLM_AUTHORITY, a context (own job) per process;
 *          acquire: rdlm_lock_acquire; release: rdlm_lock_release (one remote
 *          compare-and-swap on the home's word each, UCX; no Raft entry)
 *
 * Each adapter but rdlmd's two exists only when its client library was found at
 * configure time (RDLM_BENCH_HAVE_REDIS / _ETCD / _ZK); attach fails with a message
 * when its variable is unset or the server does not answer. The variables are RDLMBENCH_*,
 * not RDLM_*: librdlm warns about RDLM_* names it does not know.
 */
#ifndef RDLM_BENCH_LOCK_SERVICES_H
#define RDLM_BENCH_LOCK_SERVICES_H

#include "lock_ops.h"

#define RDLM_BENCH_ENV_REDIS "RDLMBENCH_REDIS" /**< host:port */
#define RDLM_BENCH_ENV_ETCD "RDLMBENCH_ETCD"   /**< host:port of the client URL (http) */
#define RDLM_BENCH_ENV_ZK "RDLMBENCH_ZK"       /**< host:port */
/** The authority's client addresses, a.b.c.d:port[,...] (lease.h) */
#define RDLM_BENCH_ENV_RDLMD "RDLMBENCH_RDLMD"
/** Its replicas' process ids, space-separated (lease-renew reads their disk writes) */
#define RDLM_BENCH_ENV_RDLMD_PIDS "RDLMBENCH_RDLMD_PIDS"

/** Lease / TTL of a service lock, and the longest one acquire may wait, in ms. */
#define RDLM_BENCH_SERVICE_TTL_MS 30000
#define RDLM_BENCH_SERVICE_WAIT_MS 20000

/** Adapter error codes (error_name of every service adapter names them). */
enum rdlm_bench_service_err {
    RDLM_BENCH_SERVICE_ECONN = 1,  /**< connection or I/O error (details on stderr) */
    RDLM_BENCH_SERVICE_EREPLY = 2, /**< unexpected reply (details on stderr) */
    RDLM_BENCH_SERVICE_ELOST = 3,  /**< release found the lock not ours (expired?) */
    RDLM_BENCH_SERVICE_ETIME = 4,  /**< acquire waited longer than the limit */
};

/** The name of an rdlm_bench_service_err. */
const char *rdlm_bench_service_error_name(int code);

/** A server's address, from its variable. */
typedef struct rdlm_bench_service_addr {
    const char *text; /**< "host:port" as the variable has it */
    char host[128];
    int port; /**< 1..65535 */
} rdlm_bench_service_addr_t;

/** Why variable env is unset: the reason bench/services/services.sh left in env_SKIP when
 * it did not start that server, else hint. */
const char *rdlm_bench_service_skip_reason(const char *env, const char *hint);

/** What every adapter's attach starts with: the server's address from variable env
 *  into *addr_p, and size zeroed bytes for the adapter's state (free them with
 *  free()). The state, or NULL with why in err (unset, malformed, out of memory). */
void *rdlm_bench_service_new(const char *env, size_t size,
                             rdlm_bench_service_addr_t *addr_p, char *err, size_t errlen);

#if RDLM_BENCH_HAVE_REDIS
extern const rdlm_bench_lock_ops_t rdlm_bench_lock_redis;
#endif
#if RDLM_BENCH_HAVE_ETCD
extern const rdlm_bench_lock_ops_t rdlm_bench_lock_etcd;
#endif
#if RDLM_BENCH_HAVE_ZK
extern const rdlm_bench_lock_ops_t rdlm_bench_lock_zk;
#endif
extern const rdlm_bench_lock_ops_t rdlm_bench_lock_rdlmd;
extern const rdlm_bench_lock_ops_t rdlm_bench_lock_rdlmd_homes;

#endif
