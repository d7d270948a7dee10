/* Log lines: every field is present and parses (UTC time, short host, rank, pid and
 * thread id), the launchers' rank variables are read, RDLM_LOG_FILE expands its pattern
 * and takes the lines from stderr (or leaves them there, with one error line, when it
 * cannot be opened), and lines of concurrent threads stay whole.
 *
 * Lines are captured by pointing descriptor 2 at a file around the calls (cmocka
 * itself reports on stderr, so only around them). What depends on process-wide state
 * read once (the launcher's rank, the log file) runs in a child: a fork for the file,
 * this program re-executed for the launcher's variables. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "config.h"
#include "log.h"

#define LINE_MAX_ 1024
#define CHILD_LAUNCHER "--child-launcher-rank"

static const char *const launcher_vars[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK",
                                            "SLURM_PROCID"};
static char tmpdir[] = "/tmp/rdlm_test_log.XXXXXX";
static char self_exe[4096];

/* A line's fields, as rdlm_log_write writes them. */
typedef struct log_line {
    char stamp[40], host[80], rank[16], level[16], file[80], msg[LINE_MAX_];
    int pid, tid, line;
} log_line_t;

/* 1 if text is one whole line of the format with its time parsed into *when_p. */
static int parse_line(const char *text, log_line_t *l, time_t *when_p)
{
    struct tm tm;
    unsigned usec;
    char z, *rest;
    int used = 0;

    memset(l, 0, sizeof(*l));
    if (sscanf(text, "rdlm %39s %79s r%15s %d/%d %15s %79[^:]:%d: %n", l->stamp, l->host,
               l->rank, &l->pid, &l->tid, l->level, l->file, &l->line, &used) != 8 ||
        used == 0) {
        return 0;
    }
    snprintf(l->msg, sizeof(l->msg), "%s", text + used);
    l->msg[strcspn(l->msg, "\n")] = '\0';
    memset(&tm, 0, sizeof(tm));
    rest = strptime(l->stamp, "%Y-%m-%dT%H:%M:%S", &tm);
    if (rest == NULL || strlen(rest) != 8 || sscanf(rest, ".%6u%c", &usec, &z) != 2 ||
        z != 'Z' || usec > 999999) {
        return 0;
    }
    *when_p = timegm(&tm);
    return 1;
}

/* The whole content of path (NUL-terminated, malloc'd), or NULL if it does not exist. */
static char *read_all(const char *path)
{
    FILE *f = fopen(path, "r");
    char *buf;
    long len;

    if (f == NULL) {
        return NULL;
    }
    fseek(f, 0, SEEK_END);
    len = ftell(f);
    rewind(f);
    buf = calloc(1, (size_t)len + 1);
    if (buf != NULL && fread(buf, 1, (size_t)len, f) != (size_t)len) {
        buf[0] = '\0';
    }
    fclose(f);
    return buf;
}

/* Descriptor 2 to a fresh file path (cleared) until capture_end, which returns what was
 * written there. The saved descriptor, or -1 (callers assert: threads too use it). */
static int capture_begin(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int saved = dup(STDERR_FILENO);

    if (fd < 0 || saved < 0 || dup2(fd, STDERR_FILENO) != STDERR_FILENO) {
        return -1;
    }
    close(fd);
    return saved;
}

static char *capture_end(int saved, const char *path)
{
    dup2(saved, STDERR_FILENO);
    close(saved);
    return read_all(path);
}

static void short_host(char *out, size_t len)
{
    assert_int_equal(gethostname(out, len), 0);
    out[strcspn(out, ".")] = '\0';
}

static void path_in_tmpdir(char *out, size_t len, const char *name)
{
    snprintf(out, len, "%s/%s", tmpdir, name);
}

/* One line written now through rdlm_log_write, captured and parsed. */
static void write_and_parse(log_line_t *l, time_t *when_p)
{
    char path[256];
    char *out;
    int saved, err;

    path_in_tmpdir(path, sizeof(path), "stderr");
    saved = capture_begin(path);
    assert_true(saved >= 0);
    errno = EAGAIN;
    rdlm_log_write(RDLM_LOG_WARN, "some/dir/source.c", 42, "hello %d", 7);
    err = errno; /* callers log and then look at errno */
    out = capture_end(saved, path);
    assert_int_equal(err, EAGAIN);
    assert_non_null(out);
    assert_true(parse_line(out, l, when_p));
    assert_string_equal(strchr(out, '\n'), "\n"); /* exactly one line */
    free(out);
}

static void every_field_parses_and_rank_is_unknown_before_set(void **state)
{
    char host[256];
    log_line_t l;
    time_t when, now = time(NULL);

    (void)state;
    write_and_parse(&l, &when);
    short_host(host, sizeof(host));
    assert_true(when >= now - 5 && when <= now + 5);
    assert_string_equal(l.host, host);
    assert_string_equal(l.rank, "-");
    assert_int_equal(l.pid, getpid());
    assert_int_equal(l.tid, gettid());
    assert_string_equal(l.level, "warn");
    assert_string_equal(l.file, "source.c");
    assert_int_equal(l.line, 42);
    assert_string_equal(l.msg, "hello 7");
}

static void lines_show_the_rank_last_set(void **state)
{
    log_line_t l;
    time_t when;

    (void)state;
    rdlm_log_set_rank(3);
    write_and_parse(&l, &when);
    assert_string_equal(l.rank, "3");
    rdlm_log_set_rank(-1);
    write_and_parse(&l, &when);
    assert_string_equal(l.rank, "-");
}

typedef struct tid_thread {
    log_line_t line;
    time_t when;
    int tid;
    int parsed;
} tid_thread_t;

/* Workers record; the main thread asserts (cmocka is not thread-safe). */
static void *write_from_thread(void *arg)
{
    tid_thread_t *t = arg;
    char path[256];
    char *out;
    int saved;

    t->tid = gettid();
    path_in_tmpdir(path, sizeof(path), "stderr.thread");
    saved = capture_begin(path);
    if (saved < 0) {
        return NULL;
    }
    rdlm_log_write(RDLM_LOG_INFO, __FILE__, __LINE__, "from a thread");
    out = capture_end(saved, path);
    t->parsed = out != NULL && parse_line(out, &t->line, &t->when);
    free(out);
    return NULL;
}

static void a_second_threads_line_carries_its_thread_id(void **state)
{
    tid_thread_t t = {0};
    pthread_t th;

    (void)state;
    assert_int_equal(pthread_create(&th, NULL, write_from_thread, &t), 0);
    pthread_join(th, NULL);
    assert_true(t.parsed);
    assert_int_equal(t.line.pid, getpid());
    assert_int_equal(t.line.tid, t.tid);
    assert_int_not_equal(t.line.tid, getpid());
    assert_string_equal(t.line.level, "info");
    assert_string_equal(t.line.msg, "from a thread");
}

/* Fork; child(arg) runs in the child, which exits 0 if it returns. The child's stderr
 * (through a file named name in the test's directory) in *out_p (malloc'd); asserts
 * that the child exited 0. Returns the child's pid. */
static pid_t fork_captured(const char *name, void (*child)(void *), void *arg, char **out_p)
{
    char path[256];
    int saved, status;
    pid_t pid;

    path_in_tmpdir(path, sizeof(path), name);
    saved = capture_begin(path);
    assert_true(saved >= 0);
    pid = fork();
    if (pid == 0) {
        child(arg);
        _exit(0);
    }
    waitpid(pid, &status, 0);
    *out_p = capture_end(saved, path);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    assert_non_null(*out_p);
    return pid;
}

static void exec_self(void *env)
{
    char *const argv[] = {self_exe, CHILD_LAUNCHER, NULL};

    execve(self_exe, argv, env);
    _exit(127);
}

/* Run this program as CHILD_LAUNCHER with env; its stderr in *out_p (malloc'd). */
static void run_self(char *const env[], char **out_p)
{
    fork_captured("stderr.exec", exec_self, (void *)env, out_p);
}

static void launchers_rank_shows_mpi_before_slurm(void **state)
{
    char *const both[] = {"SLURM_PROCID=7", "OMPI_COMM_WORLD_RANK=5", NULL};
    char *const slurm[] = {"SLURM_PROCID=7", NULL};
    char *const pmi[] = {"PMI_RANK=12", "SLURM_PROCID=7", NULL};
    char *out;
    log_line_t l;
    time_t when;

    (void)state;
    run_self(both, &out);
    assert_true(parse_line(out, &l, &when));
    assert_string_equal(l.rank, "5"); /* mpirun in an allocation: Slurm's is the daemon's */
    free(out);
    run_self(slurm, &out);
    assert_true(parse_line(out, &l, &when));
    assert_string_equal(l.rank, "7");
    free(out);
    run_self(pmi, &out);
    assert_true(parse_line(out, &l, &when));
    assert_string_equal(l.rank, "12");
    free(out);
}

/* A writing thread of child_logging_to. */
typedef struct many_arg {
    pthread_barrier_t *start; /* so that the threads write at the same time */
    int thread, lines;
} many_arg_t;

static void *write_many(void *arg)
{
    const many_arg_t *a = arg;

    pthread_barrier_wait(a->start);
    for (int i = 0; i < a->lines; i++) {
        rdlm_log_write(RDLM_LOG_INFO, __FILE__, __LINE__, "thread %d line %d %0300d",
                       a->thread, i, 0);
    }
    return NULL;
}

typedef struct logging_child {
    const char *pattern;
    int threads, lines;
} logging_child_t;

static void log_from_threads(void *arg)
{
    const logging_child_t *c = arg;
    rdlm_config_t cfg;
    pthread_t th[2];
    many_arg_t args[2];
    pthread_barrier_t start;

    setenv("RDLM_LOG_FILE", c->pattern, 1);
    if (rdlm_config_load(&cfg) != RDLM_OK) {
        _exit(3);
    }
    pthread_barrier_init(&start, NULL, (unsigned)c->threads);
    for (int t = 0; t < c->threads; t++) {
        args[t] = (many_arg_t){.start = &start, .thread = t, .lines = c->lines};
        pthread_create(&th[t], NULL, write_many, &args[t]);
    }
    for (int t = 0; t < c->threads; t++) {
        pthread_join(th[t], NULL);
    }
}

/* In a fork (the log file is opened once per process): RDLM_LOG_FILE=pattern, the
 * configuration loaded, then threads x lines lines "thread T line N <pad>". Returns the
 * child's pid; its stderr in *err_p (malloc'd). */
static pid_t child_logging_to(const char *pattern, int threads, int lines, char **err_p)
{
    logging_child_t c = {pattern, threads, lines};

    return fork_captured("stderr.fork", log_from_threads, &c, err_p);
}

static void log_file_pattern_expands_and_takes_the_lines(void **state)
{
    char pattern[256], path[512], host[256];
    char *err, *text;
    struct stat st;
    log_line_t l;
    time_t when;
    pid_t pid;

    (void)state;
    short_host(host, sizeof(host));
    snprintf(pattern, sizeof(pattern), "%s/l.%%h.%%r.%%p.%%%%.log", tmpdir);
    pid = child_logging_to(pattern, 1, 1, &err);
    snprintf(path, sizeof(path), "%s/l.%s.-.%d.%%.log", tmpdir, host, (int)pid);
    text = read_all(path);
    assert_non_null(text);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0077, 0); /* 0600: lines name hosts and ports */
    assert_true(parse_line(text, &l, &when));
    assert_int_equal(l.pid, pid);
    assert_true(strncmp(l.msg, "thread 0 line 0 ", 16) == 0);
    assert_string_equal(strchr(text, '\n'), "\n");
    assert_null(strstr(err, "thread 0 line 0"));
    free(text);
    free(err);
}

/* Lines of text whose message is want (whole) or starts with prefix. */
static int count_lines(char *text, const char *want, const char *prefix)
{
    char *line, *save = NULL;
    int n = 0;

    for (line = strtok_r(text, "\n", &save); line != NULL;
         line = strtok_r(NULL, "\n", &save)) {
        log_line_t l;
        time_t when;

        n += parse_line(line, &l, &when) &&
             (want != NULL ? strcmp(l.msg, want) == 0
                           : strncmp(l.msg, prefix, strlen(prefix)) == 0);
    }
    return n;
}

static void unopenable_log_file_leaves_lines_on_stderr_with_one_error(void **state)
{
    char pattern[256], want[1024];
    char *err, *copy;

    (void)state;
    snprintf(pattern, sizeof(pattern), "%s/no-such-dir/x.log", tmpdir);
    child_logging_to(pattern, 1, 1, &err);
    snprintf(want, sizeof(want),
             "RDLM_LOG_FILE=\"%s\": cannot open %s: %s; logging to stderr", pattern,
             pattern, strerror(ENOENT));
    copy = strdup(err);
    assert_int_equal(count_lines(err, want, NULL), 1);
    assert_int_equal(count_lines(copy, NULL, "thread 0 line 0 "), 1);
    free(copy);
    free(err);
}

static void two_threads_lines_stay_whole_in_the_file(void **state)
{
    const char *env = getenv("RDLM_TEST_LOG_LINES");
    int lines = env != NULL ? atoi(env) : 1000;
    int next[2] = {0, 0}, count = 0, whole = 1;
    char pattern[256], *err, *text, *line, *save = NULL;

    (void)state;
    path_in_tmpdir(pattern, sizeof(pattern), "many.log");
    child_logging_to(pattern, 2, lines, &err);
    text = read_all(pattern);
    assert_non_null(text);
    for (line = strtok_r(text, "\n", &save); line != NULL;
         line = strtok_r(NULL, "\n", &save)) {
        log_line_t l;
        time_t when;
        int t, i, used = 0;

        count++;
        if (!parse_line(line, &l, &when) ||
            sscanf(l.msg, "thread %d line %d %n", &t, &i, &used) != 2 || t < 0 || t > 1 ||
            i != next[t] || strlen(l.msg + used) != 300 ||
            strspn(l.msg + used, "0") != 300) {
            whole = 0;
            break;
        }
        next[t]++;
    }
    assert_true(whole);
    assert_int_equal(count, 2 * lines);
    assert_int_equal(next[0], lines);
    assert_int_equal(next[1], lines);
    free(text);
    free(err);
}

/* The re-executed child: one line, with nothing but the launcher's environment. */
static int child_launcher_rank(void)
{
    rdlm_log_write(RDLM_LOG_WARN, __FILE__, __LINE__, "launcher");
    return 0;
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_field_parses_and_rank_is_unknown_before_set),
        cmocka_unit_test(lines_show_the_rank_last_set),
        cmocka_unit_test(a_second_threads_line_carries_its_thread_id),
        cmocka_unit_test(launchers_rank_shows_mpi_before_slurm),
        cmocka_unit_test(log_file_pattern_expands_and_takes_the_lines),
        cmocka_unit_test(unopenable_log_file_leaves_lines_on_stderr_with_one_error),
        cmocka_unit_test(two_threads_lines_stay_whole_in_the_file),
    };
    char cmd[64];
    int rc;

    if (argc > 1 && strcmp(argv[1], CHILD_LAUNCHER) == 0) {
        return child_launcher_rank();
    }
    /* Not inherited from a launcher running the tests: "r-" until set. */
    for (size_t i = 0; i < sizeof(launcher_vars) / sizeof(launcher_vars[0]); i++) {
        unsetenv(launcher_vars[i]);
    }
    if (readlink("/proc/self/exe", self_exe, sizeof(self_exe) - 1) < 0 ||
        mkdtemp(tmpdir) == NULL) {
        perror("test_log setup");
        return 1;
    }
    rc = cmocka_run_group_tests(tests, NULL, NULL);
    snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
    if (system(cmd) != 0) {
        fprintf(stderr, "test_log: could not remove %s\n", tmpdir);
    }
    return rc;
}
