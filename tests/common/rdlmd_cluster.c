/* Three real rdlmd replicas on 127.0.0.1 (rdlmd_cluster.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <rdlm.h>
#include <rdlm/lease.h>

#include "rdlmd_cluster.h"

#ifndef RDLM_TEST_RDLMD
#define RDLM_TEST_RDLMD ""
#endif

extern char **environ;

cluster_t C;

uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void sleep_ms(unsigned ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

void free_ports(unsigned ports[2 * N_REPLICAS])
{
    int fds[2 * N_REPLICAS];

    for (int i = 0; i < 2 * N_REPLICAS; i++) {
        struct sockaddr_in sa = {.sin_family = AF_INET,
                                 .sin_addr.s_addr = htonl(0x7f000001)};
        socklen_t sl = sizeof(sa);

        fds[i] = socket(AF_INET, SOCK_STREAM, 0);
        assert_true(fds[i] >= 0);
        assert_int_equal(bind(fds[i], (struct sockaddr *)&sa, sizeof(sa)), 0);
        assert_int_equal(getsockname(fds[i], (struct sockaddr *)&sa, &sl), 0);
        ports[i] = ntohs(sa.sin_port);
    }
    for (int i = 0; i < 2 * N_REPLICAS; i++)
        close(fds[i]);
}

pid_t spawn_tied(char *const argv[], const char *log)
{
    pid_t parent = getpid(), pid = fork();

    if (pid == 0) { /* async-signal-safe calls only: the parent may have threads */
        int fd;

        if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
            _exit(126);
        if (log != NULL) {
            fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
            if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
                _exit(126);
            if (fd > 2)
                close(fd);
        }
        execve(argv[0], argv, environ);
        _exit(127);
    }
    assert_true(pid > 0);
    return pid;
}

void replica_start(replica_t *r, int id)
{
    char id_s[16];
    char *argv[] = {RDLM_TEST_RDLMD,      "--id",  id_s,     "--peers",      C.peers,
                    "--data-dir",         r->data, "--auth", (char *)C.auth, "--home-slots",
                    (char *)C.home_slots, NULL};

    snprintf(id_s, sizeof(id_s), "%d", id);
    if (C.home_slots == NULL)
        argv[9] = NULL; /* rdlmd's default for --home-slots */
    r->pid = spawn_tied(argv, r->log);
}

void replica_kill(replica_t *r, int sig)
{
    uint64_t end = now_ns() + 10000 * MS;

    if (r->pid <= 0)
        return;
    kill(r->pid, sig);
    while (waitpid(r->pid, NULL, WNOHANG) == 0) {
        if (now_ns() > end) {
            kill(r->pid, SIGKILL);
            waitpid(r->pid, NULL, 0);
            break;
        }
        sleep_ms(10);
    }
    r->pid = 0;
}

int find_leader(unsigned limit_ms)
{
    uint64_t end = now_ns() + (uint64_t)limit_ms * MS;

    do {
        for (int i = 0; i < N_REPLICAS; i++) {
            rdlm_authority_status_t st;

            if (C.r[i].pid > 0 &&
                rdlm_authority_status(C.r[i].client, 200, &st) == RDLM_OK && st.is_leader)
                return i;
        }
        sleep_ms(50);
    } while (now_ns() < end);
    return -1;
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

/* Start the replicas as C.auth says and wait for a leader. */
static int cluster_start(void)
{
    unsigned ports[2 * N_REPLICAS];
    char dir[sizeof(C.dir)];
    size_t off = 0;

    snprintf(C.dir, sizeof(C.dir), "%s/rdlm-lease-client.XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (mkdtemp(C.dir) == NULL)
        return -1;
    free_ports(ports);
    memcpy(dir, C.dir, sizeof(dir)); /* not C's own bytes: -Wrestrict under ASan */
    for (int i = 0; i < N_REPLICAS; i++) {
        replica_t *r = &C.r[i];

        snprintf(r->raft, sizeof(r->raft), "127.0.0.1:%u", ports[2 * i]);
        snprintf(r->client, sizeof(r->client), "127.0.0.1:%u", ports[2 * i + 1]);
        snprintf(r->data, sizeof(r->data), "%s/data%d", dir, i + 1);
        snprintf(r->log, sizeof(r->log), "%s/rdlmd%d.log", dir, i + 1);
        off += (size_t)snprintf(C.peers + off, sizeof(C.peers) - off, "%s%d=%s=%s",
                                i ? "," : "", i + 1, r->raft, r->client);
        snprintf(C.authority + strlen(C.authority),
                 sizeof(C.authority) - strlen(C.authority), "%s%s", i ? "," : "",
                 r->client);
    }
    for (int i = 0; i < N_REPLICAS; i++)
        replica_start(&C.r[i], i + 1);
    if (find_leader(20000) < 0) {
        fprintf(stderr, "no rdlmd leader within 20 s; logs in %s\n", C.dir);
        return -1;
    }
    return 0;
}

int cluster_up(void **state)
{
    (void)state;
    C = (cluster_t){.auth = "none", .home_slots = C.home_slots};
    if (RDLM_TEST_RDLMD[0] == '\0')
        return 0;
    return cluster_start();
}

int cluster_up_munge(void **state)
{
    (void)state;
    C = (cluster_t){.auth = "none"};
    if (RDLM_TEST_RDLMD[0] == '\0' ||
        system("munge -n 2>/dev/null | unmunge >/dev/null 2>&1") != 0)
        return 0;
    C.auth = "munge";
    return cluster_start();
}

int cluster_down(void **state)
{
    (void)state;
    for (int i = 0; i < N_REPLICAS; i++)
        replica_kill(&C.r[i], SIGTERM);
    if (C.dir[0] != '\0' && getenv("RDLMTEST_KEEP") == NULL)
        nftw(C.dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    return 0;
}

void need_rdlmd(void)
{
    if (RDLM_TEST_RDLMD[0] == '\0') {
        print_message("skipped: rdlmd is not built (RDLM_WITH_AUTHORITY=OFF or no "
                      "tools/rdlmd target)\n");
        skip();
    }
}

void need_munge(void)
{
    need_rdlmd();
    if (strcmp(C.auth, "munge") != 0) {
        print_message("skipped: needs a running munged (bash scripts/munged.sh start)\n");
        skip();
    }
}

void need_homes(void)
{
    rdlm_lock_info_t info;
    rdlm_lock_h lock;
    rdlm_ctx_h ctx;
    uint64_t token;

    need_rdlmd();
    assert_int_equal(rdlm_ctx_create(NULL, &ctx), RDLM_OK);
    assert_int_equal(rdlm_lock_open(ctx, "homes-probe", &lock), RDLM_OK);
    assert_int_equal(rdlm_lock_acquire(lock, 20000 * MS, &token), RDLM_OK);
    assert_int_equal(rdlm_lock_query(lock, &info), RDLM_OK);
    assert_int_equal(rdlm_lock_release(lock), RDLM_OK);
    rdlm_ctx_destroy(ctx);
    if (info.home_node < 0) {
        print_message("skipped: this librdlm has no lock homes (built without UCX)\n");
        skip();
    }
    assert_true(info.home_node < N_REPLICAS);
}

int child_reap(pid_t pid, unsigned limit_s)
{
    int st = 0;

    for (unsigned i = 0; i < limit_s * 100; i++) {
        if (waitpid(pid, &st, WNOHANG) == pid)
            return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        sleep_ms(10);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    return -1;
}

void *shared_file_map(const char *path, size_t size, int create)
{
    int fd = open(path, O_RDWR | (create ? O_CREAT | O_TRUNC : 0), 0600);
    void *p;

    if (fd < 0)
        return NULL;
    if (create && ftruncate(fd, (off_t)size) != 0) {
        close(fd);
        return NULL;
    }
    p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    return p == MAP_FAILED ? NULL : p;
}
