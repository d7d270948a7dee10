/* A replica embedded in a process (core/lease/authority/include/job_authority.h): the host
 * address inside a network, ports reserved against other binds until libuv takes them, a
 * one-replica authority on its own thread that serves sessions and epochs with a floor, a
 * stale data directory emptied and every data directory removed at stop, failed starts
 * that leave nothing running and nothing of the user's removed, and the sweep that
 * removes the directory of a killed replica's process and nothing else. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "client_internal.h"
#include "clock.h"
#include "job_authority.h"
#include "job_authority_addr.h"
#include "job_authority_dir.h"

static char tmp[64]; /* a private directory for the data directories */

static int tmp_up(void **state)
{
    (void)state;
    snprintf(tmp, sizeof(tmp), "/tmp/rdlm-test-embed-XXXXXX");
    return mkdtemp(tmp) != NULL ? 0 : -1;
}

static int tmp_down(void **state)
{
    (void)state;
    return rmdir(tmp); /* fails if a test left something behind */
}

static void host_address_is_chosen_inside_the_network(void **state)
{
    char ip[INET_ADDRSTRLEN];
    struct in_addr a;

    (void)state;
    assert_int_equal(rdlm_lease_host_ip("127.0.0.1", ip), RDLM_OK);
    assert_string_equal(ip, "127.0.0.1");
    assert_int_equal(rdlm_lease_host_ip("127.0.0.0/8", ip), RDLM_OK);
    assert_string_equal(ip, "127.0.0.1");
    assert_int_equal(rdlm_lease_host_ip("198.51.100.0/24", ip), RDLM_ERR_BAD_CONFIG);
    assert_int_equal(rdlm_lease_host_ip("not-an-address", ip), RDLM_ERR_BAD_CONFIG);
    assert_int_equal(rdlm_lease_host_ip("", ip), RDLM_OK); /* some address */
    assert_int_equal(inet_pton(AF_INET, ip, &a), 1);
}

/* 0 if a socket without SO_REUSEADDR could bind addr ("a.b.c.d:port"), else errno. */
static int plain_bind(const char *addr)
{
    struct sockaddr_in sa = {.sin_family = AF_INET};
    char host[32];
    int fd = socket(AF_INET, SOCK_STREAM, 0), err = 0;

    snprintf(host, sizeof(host), "%.*s", (int)strcspn(addr, ":"), addr);
    inet_pton(AF_INET, host, &sa.sin_addr);
    sa.sin_port = htons((uint16_t)atoi(strchr(addr, ':') + 1));
    if (bind(fd, (const struct sockaddr *)&sa, sizeof(sa)) != 0) {
        err = errno;
    }
    close(fd);
    return err;
}

static void reserved_port_is_refused_to_other_binds_until_released(void **state)
{
    rdlm_lease_port_t port;

    (void)state;
    assert_int_equal(rdlm_lease_port_reserve("127.0.0.1", &port), RDLM_OK);
    assert_true(port.fd >= 0);
    assert_int_equal(plain_bind(port.addr), EADDRINUSE);
    rdlm_lease_port_release(&port);
    assert_int_equal(port.fd, -1);
    rdlm_lease_port_release(&port); /* idempotent */
    assert_int_equal(plain_bind(port.addr), 0);
    assert_int_equal(rdlm_lease_port_reserve("localhost", &port), RDLM_ERR_INVALID_ARG);
}

static int exists(const char *path)
{
    struct stat st;

    return lstat(path, &st) == 0;
}

static void replica_serves_sessions_then_removes_its_data(void **state)
{
    rdlm_session_params_t sp = {.field_mask = RDLM_SESSION_FIELD_TTL, .ttl_ms = 2000};
    rdlm_job_authority_addrs_t addrs;
    rdlm_job_authority_t *h = NULL;
    rdlm_session_h s = NULL;
    char dir[128], junk[160];
    uint64_t epoch = 0, seed;
    FILE *f;

    (void)state;
    assert_int_equal(rdlm_job_authority_create("127.0.0.1", &h, &addrs), RDLM_OK);
    assert_int_equal(plain_bind(addrs.raft), EADDRINUSE);
    assert_int_equal(plain_bind(addrs.client), EADDRINUSE);
    /* A directory of an earlier run (of this user) is emptied, not trusted. */
    snprintf(dir, sizeof(dir), "%s/replica", tmp);
    snprintf(junk, sizeof(junk), "%s/metadata1", dir);
    assert_int_equal(mkdir(dir, 0755), 0);
    f = fopen(junk, "w");
    assert_non_null(f);
    fputs("a configuration from another run", f);
    fclose(f);
    rdlm_job_authority_params_t p = {.replicas = &addrs,
                                     .n_replicas = 1,
                                     .self = 0,
                                     .data_dir = dir,
                                     .election_timeout_ms = 200,
                                     .heartbeat_ms = 20,
                                     .max_clients = 4};
    assert_int_equal(rdlm_job_authority_start(h, &p), RDLM_OK);
    assert_int_equal(rdlm_session_open(addrs.client, &sp, &s), RDLM_OK);
    /* The first epoch of a fresh in-job authority rises to the floor rank 0 asks
     * (its host's epoch); after that floors are ignored: the epoch bumps, at least to
     * the leader's clock epoch. */
    seed = rdlm_clock_epoch(time(NULL)) + 5000;
    assert_int_equal(rdlm_lease_session_new_epoch_above(s, seed, &epoch), RDLM_OK);
    assert_true(epoch == seed);
    assert_int_equal(rdlm_lease_session_new_epoch_above(s, seed + 9000, &epoch), RDLM_OK);
    assert_true(epoch == seed + 1);
    assert_int_equal(rdlm_session_new_epoch(s, &epoch), RDLM_OK);
    assert_true(epoch == seed + 2);
    assert_int_equal(rdlm_lease_session_new_epoch_above(s, 1u << 24, &epoch),
                     RDLM_ERR_INVALID_ARG);
    rdlm_session_close(s);
    rdlm_job_authority_stop(h);
    assert_false(exists(dir));
}

static void failed_starts_leave_nothing_running_and_keep_what_is_not_theirs(void **state)
{
    rdlm_job_authority_addrs_t addrs, other;
    rdlm_job_authority_t *h = NULL;
    char path[128];
    FILE *f;

    (void)state;
    assert_int_equal(rdlm_job_authority_create("127.0.0.1", &h, &addrs), RDLM_OK);
    other = addrs;
    snprintf(other.client, sizeof(other.client), "127.0.0.1:1");
    snprintf(path, sizeof(path), "%s/not-a-directory", tmp);
    rdlm_job_authority_params_t p = {.replicas = &other,
                                     .n_replicas = 1,
                                     .self = 0,
                                     .data_dir = path,
                                     .election_timeout_ms = 200,
                                     .heartbeat_ms = 20,
                                     .max_clients = 4};
    /* Not its own reserved addresses. */
    assert_int_equal(rdlm_job_authority_start(h, &p), RDLM_ERR_INVALID_ARG);
    /* A file where the data directory goes: refused, and left alone. */
    p.replicas = &addrs;
    f = fopen(path, "w");
    assert_non_null(f);
    fclose(f);
    assert_int_equal(rdlm_job_authority_start(h, &p), RDLM_ERR_IO);
    rdlm_job_authority_stop(h);
    assert_true(exists(path));
    assert_int_equal(unlink(path), 0);
    assert_int_equal(plain_bind(addrs.client), 0); /* the reservations are gone */
}

/* The child's replica in killed_replica_dir: a real one; under ThreadSanitizer, which
 * kills a child that starts threads after a multi-threaded fork (the earlier tests ran
 * replica threads), its directory as a replica leaves it: made and marked, its lock
 * file taken. 0 when up. */
static int child_replica(const char *dir)
{
#if defined(__SANITIZE_THREAD__)
    char lock[192];
    int fd;

    snprintf(lock, sizeof(lock), "%s/rdlm.lock", dir);
    if (rdlm_job_authority_dir_make(dir) != RDLM_OK ||
        (fd = open(lock, O_RDWR | O_CREAT, 0600)) < 0)
        return -1;
    return flock(fd, LOCK_EX | LOCK_NB);
#else
    rdlm_job_authority_addrs_t addrs;
    rdlm_job_authority_t *h = NULL;
    rdlm_job_authority_params_t p = {.replicas = &addrs,
                                     .n_replicas = 1,
                                     .data_dir = dir,
                                     .election_timeout_ms = 200,
                                     .heartbeat_ms = 20,
                                     .max_clients = 4};

    return rdlm_job_authority_create("127.0.0.1", &h, &addrs) == RDLM_OK &&
                   rdlm_job_authority_start(h, &p) == RDLM_OK
               ? 0
               : -1;
#endif
}

/* A replica started in a child that is then killed (as a rank of an aborted job is)
 * leaves its data directory, named as core/api names it; returns the child's pid. */
static pid_t killed_replica_dir(char *dir, size_t len)
{
    int ready[2];
    char byte;
    pid_t pid;

    assert_int_equal(pipe(ready), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        snprintf(dir, len, "%s/rdlm-%u-job-%d-0", tmp, (unsigned)geteuid(), (int)getpid());
        if (child_replica(dir) != 0) {
            _exit(1);
        }
        (void)!write(ready[1], "r", 1);
        pause(); /* until killed */
        _exit(0);
    }
    close(ready[1]);
    assert_int_equal(read(ready[0], &byte, 1), 1);
    close(ready[0]);
    assert_int_equal(kill(pid, SIGKILL), 0);
    assert_int_equal(waitpid(pid, NULL, 0), pid);
    snprintf(dir, len, "%s/rdlm-%u-job-%d-0", tmp, (unsigned)geteuid(), (int)pid);
    return pid;
}

static void sweep_removes_only_what_ended_replicas_left(void **state)
{
    char killed[128], live[128], locked[128], unmarked[128], other[128], lockfile[160];
    char prefix[32];
    pid_t gone;
    int fd;

    (void)state;
    gone = killed_replica_dir(killed, sizeof(killed));
    assert_true(exists(killed));
    snprintf(prefix, sizeof(prefix), "rdlm-%u-", (unsigned)geteuid());
    /* The same name and marker, but: a live process (this one); a lock held; no
     * marker (an rdlmd's data directory); another user's prefix. */
    snprintf(live, sizeof(live), "%s/%sjob-%d-0", tmp, prefix, (int)getpid());
    snprintf(locked, sizeof(locked), "%s/%sjob-%d-1", tmp, prefix, (int)gone);
    snprintf(unmarked, sizeof(unmarked), "%s/%sjob-%d-2", tmp, prefix, (int)gone);
    snprintf(other, sizeof(other), "%s/rdlm-%u-job-%d-0", tmp, (unsigned)geteuid() + 1,
             (int)gone);
    assert_int_equal(rdlm_job_authority_dir_make(live), RDLM_OK);
    assert_int_equal(rdlm_job_authority_dir_make(locked), RDLM_OK);
    assert_int_equal(rdlm_job_authority_dir_make(other), RDLM_OK);
    assert_int_equal(mkdir(unmarked, 0700), 0);
    snprintf(lockfile, sizeof(lockfile), "%s/rdlm.lock", locked);
    fd = open(lockfile, O_RDWR | O_CREAT, 0600);
    assert_true(fd >= 0);
    assert_int_equal(flock(fd, LOCK_EX | LOCK_NB), 0);

    assert_int_equal(rdlm_job_authority_sweep(tmp, prefix), 1);
    assert_false(exists(killed));
    assert_true(exists(live));
    assert_true(exists(locked));
    assert_true(exists(unmarked));
    assert_true(exists(other));
    close(fd); /* the lock is free now: the next sweep takes that one too */
    assert_int_equal(rdlm_job_authority_sweep(tmp, prefix), 1);
    assert_false(exists(locked));
    rdlm_job_authority_dir_remove(live);
    rdlm_job_authority_dir_remove(other);
    assert_int_equal(rmdir(unmarked), 0);
}

/* The replicas of a job on one host sweep at the same time: the directory must go
 * (three sweeps at once left it empty: each met the others' unlinks and gave up). */
static void concurrent_sweeps_remove_the_directory(void **state)
{
    char killed[128], prefix[32];
    pid_t sweepers[3];
    int go[2], status;

    (void)state;
    killed_replica_dir(killed, sizeof(killed));
    for (int i = 0; i < 2000; i++) { /* libraft's segments, many: the sweeps overlap */
        char file[192];
        int fd;

        snprintf(file, sizeof(file), "%s/%d-%d", killed, i, i);
        fd = open(file, O_WRONLY | O_CREAT, 0600);
        assert_true(fd >= 0);
        close(fd);
    }
    snprintf(prefix, sizeof(prefix), "rdlm-%u-", (unsigned)geteuid());
    assert_int_equal(pipe(go), 0);
    for (int i = 0; i < 3; i++) {
        sweepers[i] = fork();
        assert_true(sweepers[i] >= 0);
        if (sweepers[i] == 0) {
            char byte;

            close(go[1]);
            _exit(read(go[0], &byte, 1) == 0 ? (int)rdlm_job_authority_sweep(tmp, prefix)
                                             : 99);
        }
    }
    close(go[0]);
    close(go[1]); /* all three start now */
    for (int i = 0; i < 3; i++) {
        assert_int_equal(waitpid(sweepers[i], &status, 0), sweepers[i]);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) <= 1);
    }
    assert_false(exists(killed));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(host_address_is_chosen_inside_the_network),
        cmocka_unit_test(reserved_port_is_refused_to_other_binds_until_released),
        cmocka_unit_test(replica_serves_sessions_then_removes_its_data),
        cmocka_unit_test(failed_starts_leave_nothing_running_and_keep_what_is_not_theirs),
        cmocka_unit_test(sweep_removes_only_what_ended_replicas_left),
        cmocka_unit_test(concurrent_sweeps_remove_the_directory),
    };
    return cmocka_run_group_tests(tests, tmp_up, tmp_down);
}
