/*
 * Three real rdlmd replicas on 127.0.0.1 for the tests of this directory (free ports,
 * a temporary directory with their data and logs, --auth none or munge), as cmocka group
 * fixtures: cluster_up starts them and waits for a leader, cluster_down kills them and
 * removes the directory (kept with RDLMTEST_KEEP set); they die with the test process
 * when it ends otherwise. Every wait is bounded.
 */
#ifndef RDLM_TEST_RDLMD_CLUSTER_H
#define RDLM_TEST_RDLMD_CLUSTER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define MS 1000000ull
#define N_REPLICAS 3

typedef struct replica {
    char raft[32], client[32], data[256], log[256];
    pid_t pid;
} replica_t;

typedef struct cluster {
    const char *auth; /* rdlmd --auth: "none" (cluster_up) or "munge" (cluster_up_munge) */
    const char *home_slots; /* rdlmd --home-slots; NULL: rdlmd's default (set before up) */
    char dir[128];
    char peers[256];
    char authority[128]; /* the client addresses, comma-separated */
    replica_t r[N_REPLICAS];
} cluster_t;

extern cluster_t C;

uint64_t now_ns(void);
void sleep_ms(unsigned ms);
/** 2 * N_REPLICAS free loopback ports, chosen by the kernel and released together. */
void free_ports(unsigned ports[2 * N_REPLICAS]);
/** Start argv[0] (argv NULL-terminated) in a child that the kernel kills when this
 *  process ends, also by an abort or a sanitizer's halt that skips the fixture's
 *  teardown; stdout and stderr appended to log unless it is NULL. Its pid. */
pid_t spawn_tied(char *const argv[], const char *log);
/** Start replica r as --id id (its log appended to r->log). */
void replica_start(replica_t *r, int id);
/** Kill with sig and reap, bounded: SIGKILL after 10 s. */
void replica_kill(replica_t *r, int sig);
/** Index of the replica that says it is the leader, waiting up to limit_ms; -1. */
int find_leader(unsigned limit_ms);
int cluster_up(void **state);
/** cluster_up with the replicas run as --auth munge; starts nothing when no munged
 *  answers (then need_munge skips). */
int cluster_up_munge(void **state);
int cluster_down(void **state);
/** Skip the calling test when rdlmd is not built. */
void need_rdlmd(void);
/** need_rdlmd, and skip unless the cluster runs --auth munge (munged answered). */
void need_munge(void);
/** need_rdlmd, and skip unless a context made from the current environment (the
 *  caller sets RDLM_AUTHORITY and RDLM_JOB) takes a lock on a home, which this librdlm
 *  reaches only when built with UCX. */
void need_homes(void);
/** Exit status of child pid, waiting up to limit_s (then SIGKILL: -1; a signal:
 *  128 + its number). */
int child_reap(pid_t pid, unsigned limit_s);
/** A shared mapping of size bytes of the file at path, created (truncated, mode 0600)
 *  when create, for the test's processes to share; NULL on any failure. */
void *shared_file_map(const char *path, size_t size, int create);

#endif
