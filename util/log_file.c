/* RDLM_LOG_FILE (see log.h): its pattern, and the one descriptor lines go to. */
#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "atomics.h"

static _Atomic int rdlm_log_file_fd = -1;
static pthread_mutex_t rdlm_log_file_lock = PTHREAD_MUTEX_INITIALIZER;
static int rdlm_log_file_tried; /* under rdlm_log_file_lock */

int rdlm_log_file_expand(const char *pattern, char *out, size_t len)
{
    size_t n = 0;

    for (const char *c = pattern; *c != '\0'; c++) {
        char field[24] = {*c, '\0'};
        const char *add = field;
        size_t add_len;

        if (*c == '%') {
            switch (*++c) {
            case 'h':
                add = rdlm_log_host();
                break;
            case 'r':
                rdlm_log_rank_format(field, sizeof(field));
                break;
            case 'p':
                snprintf(field, sizeof(field), "%d", (int)getpid());
                break;
            case '%':
                break; /* field holds the '%' */
            default:
                return 0; /* another letter, or a '%' ending the pattern */
            }
        }
        add_len = strlen(add);
        if (n + add_len >= len) {
            return 0;
        }
        memcpy(out + n, add, add_len);
        n += add_len;
    }
    if (len == 0) {
        return 0;
    }
    out[n] = '\0';
    return 1;
}

void rdlm_log_open_file(const char *pattern)
{
    char path[PATH_MAX];
    int fd;

    if (pattern[0] == '\0') {
        return;
    }
    pthread_mutex_lock(&rdlm_log_file_lock);
    if (!rdlm_log_file_tried) {
        rdlm_log_file_tried = 1;
        if (!rdlm_log_file_expand(pattern, path, sizeof(path))) {
            rdlm_error("RDLM_LOG_FILE=\"%s\": not a path with %%h, %%r, %%p, %%%%; logging "
                       "to stderr",
                       pattern);
        } else if ((fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600)) < 0) {
            rdlm_error("RDLM_LOG_FILE=\"%s\": cannot open %s: %s; logging to stderr",
                       pattern, path, strerror(errno));
        } else {
            rdlm_store(&rdlm_log_file_fd, fd, RDLM_RELEASE);
        }
    }
    pthread_mutex_unlock(&rdlm_log_file_lock);
}

int rdlm_log_fd(void)
{
    int fd = rdlm_load(&rdlm_log_file_fd, RDLM_ACQUIRE);

    return fd >= 0 ? fd : STDERR_FILENO;
}
