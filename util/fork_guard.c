/* Fork guards (fork_guard.h). */
#include "fork_guard.h"

#include "log.h"

static pthread_mutex_t rdlm_fork_guards_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t *rdlm_fork_guards[RDLM_FORK_GUARDS_MAX];
static unsigned rdlm_fork_guards_n; /* under rdlm_fork_guards_lock */
static pthread_once_t rdlm_fork_guards_once = PTHREAD_ONCE_INIT;

static void rdlm_fork_prepare(void)
{
    pthread_mutex_lock(&rdlm_fork_guards_lock);
    for (unsigned i = 0; i < rdlm_fork_guards_n; i++) {
        pthread_mutex_lock(rdlm_fork_guards[i]);
    }
}

/* In the parent and in the child: the forking thread holds them all. */
static void rdlm_fork_release(void)
{
    for (unsigned i = rdlm_fork_guards_n; i > 0; i--) {
        pthread_mutex_unlock(rdlm_fork_guards[i - 1]);
    }
    pthread_mutex_unlock(&rdlm_fork_guards_lock);
}

static void rdlm_fork_guards_install(void)
{
    pthread_atfork(rdlm_fork_prepare, rdlm_fork_release, rdlm_fork_release);
}

void rdlm_fork_guard(pthread_mutex_t *m)
{
    unsigned i;

    pthread_once(&rdlm_fork_guards_once, rdlm_fork_guards_install);
    pthread_mutex_lock(&rdlm_fork_guards_lock);
    for (i = 0; i < rdlm_fork_guards_n && rdlm_fork_guards[i] != m; i++) {
    }
    if (i == rdlm_fork_guards_n && i < RDLM_FORK_GUARDS_MAX) {
        rdlm_fork_guards[rdlm_fork_guards_n++] = m;
    }
    pthread_mutex_unlock(&rdlm_fork_guards_lock);
    if (i == RDLM_FORK_GUARDS_MAX) {
        rdlm_error("fork guards: more than %d mutexes; one is not guarded",
                   RDLM_FORK_GUARDS_MAX);
    }
}
