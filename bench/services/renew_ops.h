/*
 * One lease renewal, or what stands for one, behind an adapter, so `lease-renew`
 * (bench_lease.c) times rdlmd's RENEW and its baselines with one loop:
 *
 *   open(job, &h, err)   connect, set up what is renewed (a session, a lease, a
 *                        key): 0, or -1 with why in err
 *   once(h)              one measured request and its reply: 0, or -1 after saying
 *                        why on stderr
 *   close(h)             undo open (close the session, revoke the lease)
 *
 *   rdlmd-renew     renew_rdlmd.c  rdlm_session_renew of a session at the leader
 *                                  (RDLMBENCH_RDLMD), public API
 *   tcp-echo        renew_echo.c   a RENEW's request and reply sizes, answered at once
 *                                  by a thread: the loopback floor
 *   etcd-keepalive  lock_etcd.c    POST /v3/lease/keepalive (RDLMBENCH_ETCD)
 *   redis-pexpire   lock_redis.c   PEXPIRE of a key (RDLMBENCH_REDIS)
 */
#ifndef RDLM_BENCH_RENEW_OPS_H
#define RDLM_BENCH_RENEW_OPS_H

#include <stddef.h>
#include <stdint.h>

typedef struct rdlm_bench_renew_ops {
    const char *name;        /**< short name used in tables and files */
    const char *description; /**< one line for the section header */
    const char *env;         /**< the server's variable; NULL: needs none */
    int (*open)(const char *job, void **h_p, char *err, size_t errlen);
    int (*once)(void *h);
    void (*close)(void *h);
} rdlm_bench_renew_ops_t;

extern const rdlm_bench_renew_ops_t rdlm_bench_renew_rdlmd;
extern const rdlm_bench_renew_ops_t rdlm_bench_renew_echo;
#if RDLM_BENCH_HAVE_ETCD
extern const rdlm_bench_renew_ops_t rdlm_bench_renew_etcd;
#endif
#if RDLM_BENCH_HAVE_REDIS
extern const rdlm_bench_renew_ops_t rdlm_bench_renew_redis;
#endif

/** rdlmd only: the last applied log index of the replica of RDLMBENCH_RDLMD that
 *  says it leads (its STATUS). 0, or -1 after saying why on stderr. */
int rdlm_bench_rdlmd_applied(uint64_t *index_p);

#endif
