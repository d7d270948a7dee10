/*
 * Started by a launcher (util/include/launch.h): a standalone distributed context takes
 * rank and size from srun's or Hydra's variables when RDLM_RANK/RDLM_SIZE are unset
 * (and RDLM_* wins when set); RDLM_RENDEZVOUS takes a host name, or only a port with
 * the host from srun's step node list, and a name that does not resolve fails at once
 * with a line naming it; the steps of one Slurm allocation are separate jobs with
 * separate segments; RDLM_RENDEZVOUS=launcher under srun alone (no PMIx) takes the
 * step's first host and its first reserved port or one derived from the job and step
 * ids, and without any launcher fails at once with a line saying what is missing.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api_util.h"

#define LAUNCH_MAX_PROCS 4

/* What one forked process of a job is told, and what it must find. */
typedef struct launch_proc {
    const char *rank_var, *size_var; /* the launcher's variables */
    unsigned rank, size;             /* what rdlm_ctx_dist_info must say */
    int rdlm_vars;                   /* also RDLM_RANK/SIZE (the launcher's reversed) */
    char rendezvous[64];
    char job[40];
} launch_proc_t;

static void launch_setenv_uint(const char *name, unsigned v)
{
    char text[16];

    snprintf(text, sizeof(text), "%u", v);
    setenv(name, text, 1);
}

/* A process of the job: join from the environment alone (params NULL). */
static int launch_join(void *arg)
{
    const launch_proc_t *p = arg;
    rdlm_ctx_dist_info_t di;
    rdlm_ctx_h ctx;
    int bad;

    unsetenv("RDLM_RANK");
    unsetenv("RDLM_SIZE");
    launch_setenv_uint(p->rank_var, p->rdlm_vars ? p->size - 1 - p->rank : p->rank);
    launch_setenv_uint(p->size_var, p->size);
    if (p->rdlm_vars) {
        launch_setenv_uint("RDLM_RANK", p->rank);
        launch_setenv_uint("RDLM_SIZE", p->size);
    }
    setenv("RDLM_RENDEZVOUS", p->rendezvous, 1);
    setenv("RDLM_JOB", p->job, 1);
    if (rdlm_ctx_create(NULL, &ctx) != RDLM_OK) {
        return 10;
    }
    bad = rdlm_ctx_dist_info(ctx, &di) != RDLM_OK || !di.distributed ||
          di.rank != p->rank || di.size != p->size || rdlm_ctx_barrier(ctx) != RDLM_OK;
    rdlm_ctx_destroy(ctx);
    return bad ? 11 : 0;
}

/* Start size processes told their rank by rank_var/size_var, rank 0 listening at
 * host:<a free port>; every one must join as that rank and pass a barrier. */
static void launch_job(api_fixture_t *f, const char *rank_var, const char *size_var,
                       unsigned size, int rdlm_vars, const char *host)
{
    launch_proc_t procs[LAUNCH_MAX_PROCS];
    pid_t pids[LAUNCH_MAX_PROCS];
    static int jobs; /* one port per job of this process */
    int port = 20000 + (int)((getpid() + 997 * jobs++) % 10000); /* not ephemeral */

    for (unsigned r = 0; r < size; r++) {
        procs[r] = (launch_proc_t){rank_var, size_var, r, size, rdlm_vars, "", ""};
        snprintf(procs[r].rendezvous, sizeof(procs[r].rendezvous), "%s:%d", host, port);
        snprintf(procs[r].job, sizeof(procs[r].job), "%s", f->job);
        pids[r] = api_fork(f, launch_join, &procs[r]);
    }
    for (unsigned r = 0; r < size; r++) {
        assert_int_equal(api_wait_child(f, pids[r], 20 * API_NSEC_PER_SEC), 0);
    }
}

static void test_srun_variables_give_rank_and_size(void **state)
{
    launch_job(*state, "SLURM_PROCID", "SLURM_NTASKS", 3, 0, "127.0.0.1");
}

static void test_hydra_variables_give_rank_and_size(void **state)
{
    launch_job(*state, "PMI_RANK", "PMI_SIZE", 2, 0, "127.0.0.1");
}

static void test_rdlm_rank_and_size_win_over_the_launcher(void **state)
{
    launch_job(*state, "SLURM_PROCID", "SLURM_NTASKS", 2, 1, "127.0.0.1");
}

static void test_rendezvous_by_host_name(void **state)
{
    launch_job(*state, "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", 2, 0, "localhost");
}

static void test_rendezvous_host_from_the_srun_step(void **state)
{
    setenv("SLURM_STEP_NODELIST", "localhost,other[1-4]", 1);
    setenv("SLURMD_NODENAME", "localhost", 1);
    launch_job(*state, "SLURM_PROCID", "SLURM_NTASKS", 2, 0,
               ""); /* RDLM_RENDEZVOUS=:port */
    unsetenv("SLURM_STEP_NODELIST");
    unsetenv("SLURMD_NODENAME");
}

/* Remove every variable of another launcher (ctest may run under mpirun or srun). */
static void launch_unset_launchers(void)
{
    static const char *const prefixes[] = {"OMPI_", "PMI_", "PMIX_", "SLURM_", "SLURMD_"};
    char name[256];
    int again = 1;

    while (again) { /* unsetenv moves environ: start over after each */
        again = 0;
        for (char **e = environ; *e != NULL && !again; e++) {
            size_t len = strcspn(*e, "=");

            for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]) && !again; i++) {
                if (strncmp(*e, prefixes[i], strlen(prefixes[i])) == 0 &&
                    len < sizeof(name)) {
                    memcpy(name, *e, len);
                    name[len] = '\0';
                    unsetenv(name);
                    again = 1;
                }
            }
        }
    }
}

/* One srun task as srun would start it (rank, size), with RDLM_RENDEZVOUS=launcher and
 * no RDLM_RANK/SIZE; resv_ports NULL: srun without --resv-ports. */
typedef struct launch_srun_task {
    unsigned rank, size, job_id, step_id;
    const char *resv_ports;
    const char *job; /* RDLM_JOB: the fixture's segments */
} launch_srun_task_t;

static int launch_srun_join(void *arg)
{
    const launch_srun_task_t *t = arg;
    rdlm_ctx_dist_info_t di;
    rdlm_ctx_h ctx;
    int bad;

    launch_unset_launchers();
    unsetenv("RDLM_RANK");
    unsetenv("RDLM_SIZE");
    launch_setenv_uint("SLURM_PROCID", t->rank);
    launch_setenv_uint("SLURM_NTASKS", t->size);
    launch_setenv_uint("SLURM_JOB_ID", t->job_id);
    launch_setenv_uint("SLURM_STEP_ID", t->step_id);
    setenv("SLURM_STEP_NODELIST", "localhost", 1);
    setenv("SLURMD_NODENAME", "localhost", 1);
    if (t->resv_ports != NULL) {
        setenv("SLURM_STEP_RESV_PORTS", t->resv_ports, 1);
    }
    setenv("RDLM_RENDEZVOUS", "launcher", 1);
    setenv("RDLM_JOB", t->job, 1);
    if (rdlm_ctx_create(NULL, &ctx) != RDLM_OK) {
        return 10;
    }
    bad = rdlm_ctx_dist_info(ctx, &di) != RDLM_OK || !di.distributed ||
          di.rank != t->rank || di.size != t->size || rdlm_ctx_barrier(ctx) != RDLM_OK;
    rdlm_ctx_destroy(ctx);
    return bad ? 11 : 0;
}

/* Three srun tasks of step step_id of a job numbered from this process's pid. */
static void launch_srun_job(api_fixture_t *f, unsigned step_id, const char *resv_ports)
{
    launch_srun_task_t tasks[3];
    pid_t pids[3];

    for (unsigned r = 0; r < 3; r++) {
        tasks[r] =
            (launch_srun_task_t){r, 3, (unsigned)getpid(), step_id, resv_ports, f->job};
        pids[r] = api_fork(f, launch_srun_join, &tasks[r]);
    }
    for (unsigned r = 0; r < 3; r++) {
        assert_int_equal(api_wait_child(f, pids[r], 40 * API_NSEC_PER_SEC), 0);
    }
}

static void test_launcher_rendezvous_from_srun_reserved_ports(void **state)
{
    char ports[32];
    unsigned port = 30000 + (unsigned)getpid() % 2700; /* below the ephemeral range */

    snprintf(ports, sizeof(ports), "%u-%u", port, port + 3);
    launch_srun_job(*state, 0, ports);
}

static void test_launcher_rendezvous_from_srun_job_and_step_ids(void **state)
{
    launch_srun_job(*state, 1, NULL);
}

/* RDLM_RENDEZVOUS=launcher with no launcher: its status, stderr in the file at fd
 * log_fd. */
static int launch_no_launcher(void *arg)
{
    int log_fd = *(const int *)arg;
    rdlm_ctx_h ctx = NULL;

    launch_unset_launchers();
    setenv("RDLM_RENDEZVOUS", "launcher", 1);
    setenv("RDLM_RANK", "1", 1);
    setenv("RDLM_SIZE", "2", 1);
    dup2(log_fd, STDERR_FILENO);
    return rdlm_ctx_create(NULL, &ctx) == RDLM_ERR_BAD_CONFIG && ctx == NULL ? 0 : 1;
}

/* Run fn (a child that writes its stderr to fd *arg) and return what it logged;
 * the child must exit 0 within 2 s. */
static void launch_fails_at_once(api_fixture_t *f, int (*fn)(void *), char *text,
                                 size_t cap)
{
    char path[] = "/tmp/rdlm-launch-log-XXXXXX";
    int fd = mkstemp(path);
    uint64_t t0 = api_now_ns();
    ssize_t n;

    assert_true(fd >= 0);
    unlink(path);
    assert_int_equal(api_wait_child(f, api_fork(f, fn, &fd), 10 * API_NSEC_PER_SEC), 0);
    assert_true(api_now_ns() - t0 < 2 * API_NSEC_PER_SEC); /* not the 30 s connect */
    n = pread(fd, text, cap - 1, 0);
    close(fd);
    assert_true(n > 0);
    text[n] = '\0';
}

static void test_launcher_rendezvous_without_a_launcher_fails_at_once(void **state)
{
    char text[1024];

    launch_fails_at_once(*state, launch_no_launcher, text, sizeof(text));
    assert_non_null(strstr(text, "RDLM_RENDEZVOUS=launcher: no launcher rendezvous: "
                                 "neither a PMIx server (PMIX_RANK"));
}

/* Rank 1 of 2 at a name that does not resolve: its status, with stderr in the file
 * at fd log_fd. */
static int launch_unresolvable(void *arg)
{
    int log_fd = *(const int *)arg;
    rdlm_ctx_h ctx = NULL;

    setenv("RDLM_RENDEZVOUS", "no-such-host.invalid:7000", 1);
    setenv("RDLM_RANK", "1", 1);
    setenv("RDLM_SIZE", "2", 1);
    dup2(log_fd, STDERR_FILENO);
    return rdlm_ctx_create(NULL, &ctx) == RDLM_ERR_BAD_CONFIG && ctx == NULL ? 0 : 1;
}

static void test_unresolvable_rendezvous_host_fails_at_once_naming_it(void **state)
{
    char text[1024];

    launch_fails_at_once(*state, launch_unresolvable, text, sizeof(text));
    assert_non_null(strstr(text, "RDLM_RENDEZVOUS: cannot resolve host "
                                 "'no-such-host.invalid': "));
}

/* A node-only context of job step: whether it created its segment. */
static int launch_step_created(api_fixture_t *f, int i, const char *step)
{
    rdlm_segment_info_t si;

    setenv("SLURM_STEP_ID", step, 1);
    assert_status(rdlm_ctx_create(NULL, &f->ctx[i]), RDLM_OK);
    assert_status(rdlm_ctx_segment_info(f->ctx[i], &si), RDLM_OK);
    return si.created;
}

static void test_slurm_steps_of_one_job_get_separate_segments(void **state)
{
    api_fixture_t *f = *state;
    char job[48], path[128];

    unsetenv("RDLM_JOB");
    setenv("SLURM_JOB_ID", f->job, 1);
    assert_true(launch_step_created(f, 0, "0"));
    assert_true(launch_step_created(f, 1, "1")); /* not the segment of step 0 */
    assert_false(launch_step_created(f, 2, "0"));
    snprintf(job, sizeof(job), "%s.1", f->job);
    api_segment_path(path, sizeof(path), job);
    assert_true(api_path_exists(path));
    api_ctx_destroy(f, 2);
    setenv("RDLM_JOB", job, 1); /* RDLM_JOB wins over the step */
    assert_false(launch_step_created(f, 2, "0"));
    unsetenv("RDLM_JOB");
    unsetenv("SLURM_JOB_ID");
    unsetenv("SLURM_STEP_ID");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_srun_variables_give_rank_and_size, api_setup,
                                        api_teardown),
        cmocka_unit_test_setup_teardown(test_hydra_variables_give_rank_and_size, api_setup,
                                        api_teardown),
        cmocka_unit_test_setup_teardown(test_rdlm_rank_and_size_win_over_the_launcher,
                                        api_setup, api_teardown),
        cmocka_unit_test_setup_teardown(test_rendezvous_by_host_name, api_setup,
                                        api_teardown),
        cmocka_unit_test_setup_teardown(test_rendezvous_host_from_the_srun_step, api_setup,
                                        api_teardown),
        cmocka_unit_test_setup_teardown(
            test_unresolvable_rendezvous_host_fails_at_once_naming_it, api_setup,
            api_teardown),
        cmocka_unit_test_setup_teardown(test_slurm_steps_of_one_job_get_separate_segments,
                                        api_setup, api_teardown),
        cmocka_unit_test_setup_teardown(test_launcher_rendezvous_from_srun_reserved_ports,
                                        api_setup, api_teardown),
        cmocka_unit_test_setup_teardown(test_launcher_rendezvous_from_srun_job_and_step_ids,
                                        api_setup, api_teardown),
        cmocka_unit_test_setup_teardown(
            test_launcher_rendezvous_without_a_launcher_fails_at_once, api_setup,
            api_teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
