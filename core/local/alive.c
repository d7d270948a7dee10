/* Liveness of the slots' processes by pidfd (alive.h). */
#include "alive.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "log.h"
#include "proc.h"

/* The pidfd of one slot's process, or fd -1. */
typedef struct rdlm_alive_slot {
    pid_t pid;
    uint64_t start_time;
    int fd;
} rdlm_alive_slot_t;

struct rdlm_alive {
    pthread_mutex_t lock; /* the main thread and the progress thread both check */
    int no_pidfd;         /* pidfd_open was refused: every check reads /proc */
    uint32_t slots;
    rdlm_alive_slot_t slot[];
};

rdlm_alive_t *rdlm_alive_create(uint32_t slots)
{
    rdlm_alive_t *a = malloc(sizeof(*a) + (size_t)slots * sizeof(a->slot[0]));

    if (a == NULL) {
        return NULL;
    }
    pthread_mutex_init(&a->lock, NULL);
    a->no_pidfd = 0;
    a->slots = slots;
    for (uint32_t s = 0; s < slots; s++) {
        a->slot[s].fd = -1;
    }
    return a;
}

void rdlm_alive_destroy(rdlm_alive_t *a)
{
    if (a == NULL) {
        return;
    }
    for (uint32_t s = 0; s < a->slots; s++) {
        if (a->slot[s].fd >= 0) {
            close(a->slot[s].fd);
        }
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

int rdlm_alive_check(rdlm_alive_t *a, uint32_t slot, pid_t pid, uint64_t start_time)
{
    rdlm_alive_slot_t *e;
    int alive = -1, fd;

    if (a == NULL || slot >= a->slots || pid <= 0) {
        return rdlm_proc_alive(pid, start_time);
    }
    pthread_mutex_lock(&a->lock);
    e = &a->slot[slot];
    if (e->fd >= 0 && e->pid == pid && e->start_time == start_time) {
        alive = rdlm_alive_poll(e);
    } else if (!a->no_pidfd) {
        if (e->fd >= 0) {
            close(e->fd); /* the slot's earlier process */
            e->fd = -1;
        }
        fd = rdlm_alive_pidfd_open(pid);
        if (fd >= 0) {
            /* Opened first, confirmed after: a pid reused in between fails here, and
             * then the pidfd names another process: not kept. */
            alive = rdlm_proc_alive(pid, start_time);
            if (alive) {
                e->pid = pid;
                e->start_time = start_time;
                e->fd = fd;
            } else {
                close(fd);
            }
        } else if (errno == ESRCH) {
            alive = 0;
        } else if (errno != EMFILE && errno != ENFILE && errno != ENOMEM) {
            rdlm_info("liveness: pidfd_open refused (%s): node-mates' liveness is read "
                      "from /proc (8 us a check, where a pidfd takes 0.6)",
                      strerror(errno));
            a->no_pidfd = 1; /* ENOSYS, EPERM (seccomp), EINVAL: for good */
        }
    }
    pthread_mutex_unlock(&a->lock);
    return alive >= 0 ? alive : rdlm_proc_alive(pid, start_time);
}
