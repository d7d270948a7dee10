/* Liveness of the slots' processes by pidfd (alive.h). */
#include "alive.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "log.h"
#include "proc.h"

/* At most this many pidfds per process (rdlm_alive_fd_budget). */
#define RDLM_ALIVE_MAX_FDS 64u

/* The pidfd of one slot's process, or fd -1. */
typedef struct rdlm_alive_slot {
    pid_t pid;
    uint64_t start_time;
    int fd;
} rdlm_alive_slot_t;

struct rdlm_alive {
    pthread_mutex_t lock; /* the main thread and the progress thread both check */
    int no_pidfd;         /* pidfd_open was refused: every check reads /proc */
    int budget_said;      /* the info line that the budget is spent was logged */
    uint32_t slots;
    uint32_t fds, max_fds; /* pidfds kept, and the most that may be */
    rdlm_alive_slot_t slot[];
};

uint32_t rdlm_alive_fd_budget(void)
{
    struct rlimit r;

    if (getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur != RLIM_INFINITY &&
        r.rlim_cur / 16 < RDLM_ALIVE_MAX_FDS) {
        return (uint32_t)(r.rlim_cur / 16);
    }
    return RDLM_ALIVE_MAX_FDS;
}

rdlm_alive_t *rdlm_alive_create(uint32_t slots, uint32_t max_fds)
{
    rdlm_alive_t *a = malloc(sizeof(*a) + (size_t)slots * sizeof(a->slot[0]));

    if (a == NULL) {
        return NULL;
    }
    pthread_mutex_init(&a->lock, NULL);
    a->no_pidfd = 0;
    a->budget_said = 0;
    a->slots = slots;
    a->fds = 0;
    a->max_fds = max_fds;
    for (uint32_t s = 0; s < slots; s++) {
        a->slot[s].fd = -1;
    }
    return a;
}

/* Close slot e's pidfd, if any. Lock held. */
static void rdlm_alive_forget(rdlm_alive_t *a, rdlm_alive_slot_t *e)
{
    if (e->fd >= 0) {
        close(e->fd);
        e->fd = -1;
        a->fds--;
    }
}

void rdlm_alive_destroy(rdlm_alive_t *a)
{
    if (a == NULL) {
        return;
    }
    for (uint32_t s = 0; s < a->slots; s++) {
        rdlm_alive_forget(a, &a->slot[s]);
    }
    pthread_mutex_destroy(&a->lock);
    free(a);
}

/* A pidfd for pid (close-on-exec), or -1 with errno. */
static int rdlm_alive_pidfd_open(pid_t pid)
{
#ifdef SYS_pidfd_open
    return (int)syscall(SYS_pidfd_open, pid, 0);
#else
    (void)pid;
    errno = ENOSYS;
    return -1;
#endif
}

/* Slot e's cached pidfd, which names (pid, start_time): 1 running, 0 ended, -1 the
 * poll failed. */
static int rdlm_alive_poll(const rdlm_alive_slot_t *e)
{
    struct pollfd p = {.fd = e->fd, .events = POLLIN};
    int n = poll(&p, 1, 0);

    return n < 0 ? -1 : n == 0;
}

/* Whether a new pidfd may be kept; says once when the budget is spent. Lock held. */
static int rdlm_alive_room(rdlm_alive_t *a)
{
    if (a->fds < a->max_fds) {
        return 1;
    }
    if (!a->budget_said) {
        a->budget_said = 1;
        rdlm_info("liveness: %u pidfds kept (the budget: 64, or 1/16 of the open-file "
                  "limit); other node-mates' liveness is read from /proc (8 us a check)",
                  a->max_fds);
    }
    return 0;
}

/* Open a pidfd for slot e's process (pid, start_time) and keep it if it names that
 * process: 1 running, 0 ended, -1 not known (then /proc tells). Lock held. */
static int rdlm_alive_open(rdlm_alive_t *a, rdlm_alive_slot_t *e, pid_t pid,
                           uint64_t start_time)
{
    int alive, fd = rdlm_alive_pidfd_open(pid);

    if (fd < 0) {
        if (errno == ESRCH) {
            return 0;
        }
        if (errno != EMFILE && errno != ENFILE && errno != ENOMEM) {
            rdlm_info("liveness: pidfd_open refused (%s): node-mates' liveness is read "
                      "from /proc (8 us a check, where a pidfd takes 0.6)",
                      strerror(errno));
            a->no_pidfd = 1; /* ENOSYS, EPERM (seccomp), EINVAL: for good */
        }
        return -1;
    }
    /* Opened first, confirmed after: a pid reused in between fails here, and then the
     * pidfd names another process: not kept. */
    alive = rdlm_proc_alive(pid, start_time);
    if (!alive) {
        close(fd);
        return 0;
    }
    e->pid = pid;
    e->start_time = start_time;
    e->fd = fd;
    a->fds++;
    return 1;
}

int rdlm_alive_check(rdlm_alive_t *a, uint32_t slot, pid_t pid, uint64_t start_time)
{
    rdlm_alive_slot_t *e;
    int alive = -1;

    if (a == NULL || slot >= a->slots || pid <= 0) {
        return rdlm_proc_alive(pid, start_time);
    }
    pthread_mutex_lock(&a->lock);
    e = &a->slot[slot];
    if (e->fd >= 0 && e->pid == pid && e->start_time == start_time) {
        alive = rdlm_alive_poll(e);
        if (alive == 0) {
            rdlm_alive_forget(a, e); /* ended: its descriptor goes back to the budget */
        }
    } else if (!a->no_pidfd) {
        rdlm_alive_forget(a, e); /* the slot's earlier process */
        if (rdlm_alive_room(a)) {
            alive = rdlm_alive_open(a, e, pid, start_time);
        }
    }
    pthread_mutex_unlock(&a->lock);
    return alive >= 0 ? alive : rdlm_proc_alive(pid, start_time);
}
