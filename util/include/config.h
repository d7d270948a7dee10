/*
 * Configuration: one declarative table of RDLM_* environment variables
 * (RDLM_CONFIG_LIST), parsed into rdlm_config_t. A bad value is an error naming the
 * variable; an unknown RDLM_* name is warned about (RDLM_UCX_* belongs to UCX).
 */
#ifndef RDLM_CONFIG_H
#define RDLM_CONFIG_H

#include <stdint.h>
#include <stdio.h>

#include <rdlm/status.h>

#include "shared.h"

#define RDLM_JOB_MAX 32
#define RDLM_IP_MAX 15   /* "255.255.255.255" */
#define RDLM_HOST_MAX 57 /* a host name in an address: RDLM_ADDR_MAX less ":65535" */
#define RDLM_ADDR_MAX 63 /* "host:port", as long as the lease wire's leader address */
#define RDLM_ADDRS_COUNT 7 /* addresses in an ADDRS list */
#define RDLM_ADDRS_MAX (RDLM_ADDRS_COUNT * (RDLM_ADDR_MAX + 1))
#define RDLM_NET_MAX 18 /* "255.255.255.255/32" */
#define RDLM_LOG_FILE_MAX 255 /* an RDLM_LOG_FILE pattern */
#define RDLM_PATH_MAX 1023    /* a PATH variable */

/* How a transport context completes operations that need the target's help (UCX over
 * TCP emulates remote atomics in the target's progress): name list of RDLM_PROGRESS.
 * X(enum suffix, name) */
#define RDLM_PROGRESS_LIST(X)                                                              \
    X(AUTO, "auto")     /* thread for distributed contexts, poll for a transport alone */  \
    X(POLL, "poll")     /* progress only inside the process's own calls */                 \
    X(THREAD, "thread") /* plus a progress thread sleeping on the worker's event fd */

typedef enum rdlm_progress_mode {
#define RDLM_PROGRESS_ENUM_(sym, name) RDLM_PROGRESS_##sym,
    RDLM_PROGRESS_LIST(RDLM_PROGRESS_ENUM_)
#undef RDLM_PROGRESS_ENUM_
    RDLM_PROGRESS_MODE_COUNT
} rdlm_progress_mode_t;

/* How the verbs transport connects its queue pairs: name list of RDLM_VERBS_CONNECT.
 * X(enum suffix, name) */
#define RDLM_VERBS_CONNECT_LIST(X)                                                         \
    X(CM, "cm")             /* librdmacm: address and route resolution, CM handshake */    \
    X(EXCHANGE, "exchange") /* queue-pair records through the bootstrap, set by hand */

typedef enum rdlm_verbs_connect {
#define RDLM_VERBS_CONNECT_ENUM_(sym, name) RDLM_VERBS_CONNECT_##sym,
    RDLM_VERBS_CONNECT_LIST(RDLM_VERBS_CONNECT_ENUM_)
#undef RDLM_VERBS_CONNECT_ENUM_
    RDLM_VERBS_CONNECT_COUNT
} rdlm_verbs_connect_t;

/* A setting that is on, off, or decided by rdlm (RDLM_PEER_FAILURE,
 * RDLM_BARRIER_LINKS, RDLM_OVERSUBSCRIBED): name list of the SWITCH type.
 * X(enum suffix, name) */
#define RDLM_SWITCH_LIST(X)                                                                \
    X(AUTO, "auto")                                                                        \
    X(ON, "on")                                                                            \
    X(OFF, "off")

typedef enum rdlm_switch {
#define RDLM_SWITCH_ENUM_(sym, name) RDLM_SWITCH_##sym,
    RDLM_SWITCH_LIST(RDLM_SWITCH_ENUM_)
#undef RDLM_SWITCH_ENUM_
        RDLM_SWITCH_COUNT
} rdlm_switch_t;

/* Which barrier librdlm_pmpi.so's MPI_Barrier runs: name list of RDLM_PMPI_BARRIER.
 * X(enum suffix, name) */
#define RDLM_PMPI_BARRIER_LIST(X)                                                          \
    X(MPI, "0")     /* PMPI_Barrier always */                                              \
    X(RDLM, "1")    /* rdlm's always */                                                    \
    X(AUTO, "auto") /* per communicator, whichever measured faster at its first barrier */

typedef enum rdlm_pmpi_barrier {
#define RDLM_PMPI_BARRIER_ENUM_(sym, name) RDLM_PMPI_BARRIER_##sym,
    RDLM_PMPI_BARRIER_LIST(RDLM_PMPI_BARRIER_ENUM_)
#undef RDLM_PMPI_BARRIER_ENUM_
    RDLM_PMPI_BARRIER_COUNT
} rdlm_pmpi_barrier_t;

/* X(field, variable, type, default, min, max, help)
 * types: LEVEL (log level name), UINT (decimal, min..max), JOB (job name), BOOL (0/1),
 * PROGRESS (a name of RDLM_PROGRESS_LIST), VERBS_CONNECT (a name of
 * RDLM_VERBS_CONNECT_LIST), SWITCH (a name of RDLM_SWITCH_LIST), PMPI_BARRIER (a
 * name of RDLM_PMPI_BARRIER_LIST), IP (empty
 * or an IPv4 address "a.b.c.d"), ADDR (empty, "host:port" with host an IPv4 address or a
 * host name: rdlm_config_hostport_parse, or ":port": the host is the launcher's),
 * ADDRS (empty or 1..RDLM_ADDRS_COUNT comma-separated host:port), NET (empty, or an IPv4
 * network "a.b.c.d/len", or one address "a.b.c.d" meaning "/32"), LOG_FILE (empty or a
 * path pattern of rdlm_log_file_expand, at most RDLM_LOG_FILE_MAX bytes), PATH (empty or
 * a path of at most RDLM_PATH_MAX bytes). */
#define RDLM_CONFIG_LIST(X)                                                                \
    X(log_level, "RDLM_LOG", LEVEL, "warn", 0, 0,                                          \
      "log threshold: error, warn, info, debug, trace")                                    \
    X(log_file, "RDLM_LOG_FILE", LOG_FILE, "", 0, 0,                                       \
      "log to this file (appended, created 0600) instead of stderr: %h host, %r rank "     \
      "(the launcher's, when the file is opened), %p pid, %% a %; opened at the first "    \
      "configuration load; unopenable: one error line, stderr kept")                       \
    X(job, "RDLM_JOB", JOB, "", 0, 0,                                                      \
      "job name shared by the processes of one job (default: SLURM_JOB_ID.SLURM_STEP_ID, " \
      "SLURM_JOB_ID, Open MPI's job id, PMIX_NAMESPACE, else default)")                    \
    X(capacity, "RDLM_CAPACITY", UINT, "65536", 16, 16777216,                              \
      "objects the node segment holds (set by its creator)")                               \
    X(max_procs, "RDLM_MAX_PROCS", UINT, "256", 2, 4095,                                   \
      "process slots in the node segment (set by its creator)")                            \
    X(shm_dir, "RDLM_SHM_DIR", PATH, "", 0, 0,                                             \
      "directory of this user's node segments and their lock files, created mode 0700 "    \
      "if missing; it must be this user's, not a symlink, without group or other access "  \
      "(empty: /dev/shm/rdlm-<uid>); every process of a job must name the same one")       \
    X(spin, "RDLM_SPIN", UINT, "4000", 0, 100000000,                                       \
      "busy-wait iterations before a waiter yields")                                       \
    X(yield, "RDLM_YIELD", UINT, "256", 0, 1000000,                                        \
      "sched_yield calls before a waiter sleeps on a futex")                               \
    X(park_slice_ms, "RDLM_PARK_SLICE_MS", UINT, "20", 1, 10000,                           \
      "futex sleep slice; dead holders are looked for once per slice")                     \
    X(oversubscribed, "RDLM_OVERSUBSCRIBED", SWITCH, "auto", 0, 0,                         \
      "whether this host has more processes than CPUs, so that waiters yield at once "     \
      "instead of spinning first: auto (more processes attached to the segment, or of "    \
      "the distributed context on this host, than online CPUs), on, off (spin as "         \
      "RDLM_SPIN says, e.g. when most of those processes sleep or wait elsewhere)")        \
    X(lock_bypass_us, "RDLM_LOCK_BYPASS_US", UINT, "1000", 1, 10000000,                    \
      "on-node locks (not FIFO ones), semaphores and rwlocks: a waiter that waited this "  \
      "long reserves the object for itself (the next holder; one waiter at a time), so "   \
      "that running processes stop taking it first; each process uses its own value. "    \
      "Service-wide locks (RDLM_AUTHORITY): a waiter that waited this long asks that the " \
      "lock be left to a waiter (WANT), and its holder's release does so")                  \
    X(stats, "RDLM_STATS", BOOL, "0", 0, 1,                                                \
      "print statistics at rdlm_ctx_destroy (a line per context, naming its job and "      \
      "rank; in a distributed context rank 0 also prints their sum over all ranks) and "   \
      "at transport context destroy")                                                      \
    X(progress, "RDLM_PROGRESS", PROGRESS, "auto", 0, 0,                                   \
      "transport progress: poll (inside rdlm calls only), thread (also a progress "        \
      "thread, so emulated remote atomics on this process's memory complete while it "     \
      "computes, and a lock's release over UCX or verbs is posted, not waited for), "      \
      "auto (thread in distributed contexts)")                                             \
    X(peer_failure, "RDLM_PEER_FAILURE", SWITCH, "auto", 0, 0,                             \
      "transport endpoints that report a dead peer as RDLM_ERR_PEER_DEAD instead of "      \
      "hanging: auto (peers not reached through shared memory), on (all), off (none); "    \
      "processes on this host are also watched through their records, whatever this says") \
    X(peer_timeout_ms, "RDLM_PEER_TIMEOUT_MS", UINT, "10000", 100, 3600000,                \
      "a watched peer that leaves a remote operation unanswered this long counts as "      \
      "dead (a process that is stopped or whose host vanished)")                           \
    X(transport, "RDLM_TRANSPORT", JOB, "ucx", 0, 0,                                       \
      "transport of distributed contexts: ucx, verbs or shm (rdlm_info lists them)")       \
    X(verbs_connect, "RDLM_VERBS_CONNECT", VERBS_CONNECT, "cm", 0, 0,                      \
      "how the verbs transport connects its queue pairs: cm (librdmacm) or exchange "      \
      "(queue-pair numbers through the bootstrap, moved to RTS by hand)")                  \
    X(verbs_addr, "RDLM_VERBS_ADDR", IP, "", 0, 0,                                         \
      "verbs with RDLM_VERBS_CONNECT=cm: this host's IPv4 address on the RDMA device's "   \
      "interface, where librdmacm listens (empty: the first IPv4 address in the port's "   \
      "GID table, i.e. of its RoCE interface)")                                            \
    X(virtual_nodes, "RDLM_VIRTUAL_NODES", UINT, "1", 1, 4096,                             \
      "split each host's processes, in rank order, into this many nodes of consecutive "   \
      "ranks; a node's lowest rank leads it (tests on one machine); rank 0's value "       \
      "applies to every process of a distributed context")                                 \
    X(cohort_bound, "RDLM_COHORT_BOUND", UINT, "64", 0, 1000000,                           \
      "local hand-offs of a global lock before it passes to another node")                 \
    X(lock_am, "RDLM_LOCK_AM", BOOL, "1", 0, 1,                                            \
      "cross-node exclusive locks and semaphores: 1 lets each one's home process serve "   \
      "its queue (and recover a dead holder's lock under leases) with active messages "    \
      "where the transport emulates remote atomics anyway (UCX over TCP); 0 keeps the "    \
      "remote-atomic protocols everywhere; every process must say 1 for it to apply")      \
    X(barrier_links, "RDLM_BARRIER_LINKS", SWITCH, "auto", 0, 0,                           \
      "the collective barrier's node leaders send their rounds over TCP connections of "   \
      "their own, made at context creation: auto where the transport would carry them "    \
      "over TCP anyway (UCX's tcp), on over any transport, off never; all or none: a "     \
      "process that says off (or auto where its rounds do not go over TCP), or a link "    \
      "not made within 5 s, keeps every process on the transport")                         \
    X(rank, "RDLM_RANK", UINT, "0", 0, 16777214,                                           \
      "this process's rank for the standalone rendezvous (with RDLM_RENDEZVOUS); "         \
      "with RDLM_SIZE unset, the launcher's: OMPI_COMM_WORLD_RANK, PMI_RANK, "             \
      "SLURM_PROCID")                                                                      \
    X(size, "RDLM_SIZE", UINT, "0", 0, 16777215,                                           \
      "processes joining the standalone rendezvous (with RDLM_RENDEZVOUS); unset: "        \
      "the launcher's OMPI_COMM_WORLD_SIZE, PMI_SIZE, SLURM_NTASKS")                       \
    X(rendezvous, "RDLM_RENDEZVOUS", ADDR, "", 0, 0,                                       \
      "host:port of rank 0 (an IPv4 address or a host name, resolved when joining): "      \
      "rdlm_ctx_create joins a distributed context; rank 0 listens there (on every "       \
      "interface if a name); under srun, :port takes the first host of the step; "         \
      "launcher: rank 0 publishes an ephemeral port through PMIx, else the port is "       \
      "srun's first --resv-ports port or derived from the job and step ids")               \
    X(pmpi_barrier, "RDLM_PMPI_BARRIER", PMPI_BARRIER, "auto", 0, 0,                       \
      "librdlm_pmpi.so: auto times both barriers at the first MPI_Barrier of each "        \
      "communicator and keeps the faster, 1 always runs the rdlm barrier, 0 always "       \
      "PMPI_Barrier (docs/barrier-replacement.md)")                                        \
    X(authority, "RDLM_AUTHORITY", ADDRS, "", 0, 0,                                        \
      "client addresses of the lease authority (rdlmd): every process of a context "       \
      "holds a lease, and the token epoch is committed there")                             \
    X(lease_ttl_ms, "RDLM_LEASE_TTL_MS", UINT, "5000", 100, 600000,                        \
      "TTL of the context's lease at the authority")                                       \
    X(lock_delay_ms, "RDLM_LOCK_DELAY_MS", UINT, "0", 0, 600000,                           \
      "with a lease: an acquire that takes a lock over from a holder whose lease ended "   \
      "(RDLM_OWNER_DEAD) returns this much later, for resources that cannot check "        \
      "tokens")                                                                            \
    X(job_authority, "RDLM_JOB_AUTHORITY", BOOL, "0", 0, 1,                                \
      "run the lease authority inside the job: a replica in the node leader of each of "   \
      "the first 3 nodes (1 with 1 or 2 nodes), each on its own thread; every process "    \
      "of a distributed context holds a lease there (not with RDLM_AUTHORITY)")            \
    X(job_authority_net, "RDLM_JOB_AUTHORITY_NET", NET, "", 0, 0,                          \
      "where in-job replicas listen: their host's address in this IPv4 network "           \
      "(a.b.c.d/len, or one address a.b.c.d); empty: the first address of an up "          \
      "interface other than loopback, else 127.0.0.1")                                     \
    X(python_library, "RDLM_LIBRARY", PATH, "", 0, 0,                                      \
      "the Python package (python/rdlm): librdlm.so to load instead of the installed "     \
      "prefix's or the loader's (docs/python.md)")                                         \
    X(python_mpi_library, "RDLM_MPI_LIBRARY", PATH, "", 0, 0,                              \
      "the Python package: librdlm_mpi.so to load instead of the one beside librdlm.so, "  \
      "the prefix's or the loader's (docs/python.md)")

#define RDLM_CONFIG_FIELD_(field, var, type, def, min, max, help)                          \
    RDLM_CONFIG_DECL_##type(field)
#define RDLM_CONFIG_DECL_LEVEL(f) unsigned f;
#define RDLM_CONFIG_DECL_UINT(f) uint32_t f;
#define RDLM_CONFIG_DECL_BOOL(f) int f;
#define RDLM_CONFIG_DECL_JOB(f) char f[RDLM_JOB_MAX + 1];
#define RDLM_CONFIG_DECL_PROGRESS(f) rdlm_progress_mode_t f;
#define RDLM_CONFIG_DECL_VERBS_CONNECT(f) rdlm_verbs_connect_t f;
#define RDLM_CONFIG_DECL_SWITCH(f) rdlm_switch_t f;
#define RDLM_CONFIG_DECL_PMPI_BARRIER(f) rdlm_pmpi_barrier_t f;
#define RDLM_CONFIG_DECL_IP(f) char f[RDLM_IP_MAX + 1];
#define RDLM_CONFIG_DECL_ADDR(f) char f[RDLM_ADDR_MAX + 1];
#define RDLM_CONFIG_DECL_ADDRS(f) char f[RDLM_ADDRS_MAX];
#define RDLM_CONFIG_DECL_NET(f) char f[RDLM_NET_MAX + 1];
#define RDLM_CONFIG_DECL_LOG_FILE(f) char f[RDLM_LOG_FILE_MAX + 1];
#define RDLM_CONFIG_DECL_PATH(f) char f[RDLM_PATH_MAX + 1];

/** The effective configuration. */
typedef struct rdlm_config {
    RDLM_CONFIG_LIST(RDLM_CONFIG_FIELD_)
} rdlm_config_t;

/** The position of each entry in RDLM_CONFIG_LIST: RDLM_CONFIG_INDEX_<field>. */
typedef enum rdlm_config_index {
#define RDLM_CONFIG_INDEX_(field, var, type, def, min, max, help) RDLM_CONFIG_INDEX_##field,
    RDLM_CONFIG_LIST(RDLM_CONFIG_INDEX_)
#undef RDLM_CONFIG_INDEX_
    RDLM_CONFIG_COUNT
} rdlm_config_index_t;

/** One entry of RDLM_CONFIG_LIST as text, for tools and documentation. */
typedef struct rdlm_config_entry {
    const char *var;  /**< "RDLM_LOG" */
    const char *def;     /**< built-in default, as the variable would be set ("" unset) */
    const char *allowed; /**< what a value may be: "16..16777216", "0 or 1", ... */
    const char *help;    /**< what it does */
    uint32_t min, max;   /**< a decimal integer's range (UINT entries; else 0, 0) */
} rdlm_config_entry_t;

/**
 * Parse envp (a NULL-terminated "NAME=value" array, e.g. environ) into *cfg_p, starting
 * from the defaults. Every bad value is logged (the variable, its value and what is
 * allowed) and leaves its default in place; then RDLM_ERR_BAD_CONFIG, with *cfg_p set
 * all the same (a process that must still meet others, e.g. for the create's vote,
 * finds its rendezvous there).
 */
RDLM_SHARED rdlm_status_t rdlm_config_parse(const char *const *envp, rdlm_config_t *cfg_p);

/** The value of variable name in envp (a NULL-terminated "NAME=value" array), or
 *  NULL. */
const char *rdlm_config_lookup(const char *const *envp, const char *name);

/** 1 if text is a decimal integer in min..max, with *out_p set; else 0. */
int rdlm_config_uint_parse(const char *text, uint32_t min, uint32_t max, uint32_t *out_p);

/** rdlm_config_parse(environ) and apply the log level and (the first time a file is
 *  named) the log file, also where another value is bad. */
RDLM_SHARED rdlm_status_t rdlm_config_load(rdlm_config_t *cfg_p);

/** 1 if text is "a.b.c.d:port" (port 1..65535); *ip_p (network order) and *port_p
 *  are set if not NULL. */
int rdlm_config_addr_parse(const char *text, uint32_t *ip_p, uint16_t *port_p);

/** 1 if host is an IPv4 address "a.b.c.d" or a host name (1..RDLM_HOST_MAX of
 *  [A-Za-z0-9._-], starting with a letter or digit, not all digits and dots). */
int rdlm_config_host_valid(const char *host);

/** 1 if text is "host:port" (port 1..65535), host an IPv4 address "a.b.c.d" or a host
 *  name (1..RDLM_HOST_MAX of [A-Za-z0-9._-], starting with a letter or digit, not all
 *  digits and dots); host_p (RDLM_HOST_MAX + 1 bytes) and *port_p are set if not
 *  NULL. Syntax only: nothing is looked up (rdlm_addr_resolve does, in resolve.h). */
int rdlm_config_hostport_parse(const char *text, char *host_p, uint16_t *port_p);

/** Split "host:port[,...]" into at most max addresses (each checked as
 *  rdlm_config_hostport_parse). 1 with *n_p set, 0 if empty, malformed or too many. */
RDLM_SHARED int rdlm_config_addrs_parse(const char *text, char out[][RDLM_ADDR_MAX + 1],
                                        unsigned max, unsigned *n_p);

/** 1 if text is "a.b.c.d/len" (len 0..32) or "a.b.c.d" (len 32); *ip_p (network
 *  order) and *len_p are set if not NULL. */
int rdlm_config_net_parse(const char *text, uint32_t *ip_p, unsigned *len_p);

/** 1 if name is a valid job name ([A-Za-z0-9._-], 1..RDLM_JOB_MAX bytes). */
RDLM_SHARED int rdlm_config_job_valid(const char *name);

/** Name of a progress mode ("poll", "thread"); NULL if out of range. */
RDLM_SHARED const char *rdlm_config_progress_name(rdlm_progress_mode_t mode);

/** Name of a verbs connection method ("cm", "exchange"); NULL if out of range. */
RDLM_SHARED const char *rdlm_config_verbs_connect_name(rdlm_verbs_connect_t method);

/** Name of a SWITCH setting ("auto", "on", "off"); NULL if out of range. */
RDLM_SHARED const char *rdlm_config_switch_name(rdlm_switch_t setting);
RDLM_SHARED const char *rdlm_config_pmpi_barrier_name(rdlm_pmpi_barrier_t setting);

/** Entry i (< RDLM_CONFIG_COUNT) of the table; NULL out of range. */
RDLM_SHARED const rdlm_config_entry_t *rdlm_config_entry(rdlm_config_index_t i);

/** Entry i's value in cfg as its variable would be set, written into buf (len bytes,
 *  cut to fit, always terminated). Empty out of range. */
RDLM_SHARED void rdlm_config_value(const rdlm_config_t *cfg, rdlm_config_index_t i,
                                   char *buf, size_t len);

/**
 * The job name a context created now uses when its parameters name none: cfg's
 * RDLM_JOB if set, else the launcher's (rdlm_launch_job: SLURM_JOB_ID.SLURM_STEP_ID,
 * SLURM_JOB_ID, OMPI_MCA_ess_base_jobid, PMIX_NAMESPACE), else "default". Copies it
 * into job and returns the variable it came from ("RDLM_JOB", "SLURM_JOB_ID", ...), or
 * NULL for "default". Not thread-safe against setenv.
 */
RDLM_SHARED const char *rdlm_config_job_effective(const rdlm_config_t *cfg,
                                                  char job[RDLM_JOB_MAX + 1]);

#endif
