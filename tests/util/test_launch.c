/*
 * Launcher variables (util/include/launch.h) and host names (util/include/resolve.h): which
 * launcher's rank and size count, what a bad pair falls through to, the job name of a
 * Slurm step, rank 0's host from srun's host lists, and looking up names and
 * addresses.
 */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "launch.h"
#include "resolve.h"

/* mpirun's pair wins over Hydra's, and both over srun's: ranks that mpirun or Hydra
 * started inside a Slurm allocation inherit SLURM_PROCID/SLURM_NTASKS from their
 * node's launch daemon. */
static void mpirun_and_hydra_win_over_srun(void **state)
{
    /* In the environment in this order; each launcher's pair must win over the later
     * ones, wherever they stand: */
    const char *env[] = {"SLURM_NTASKS=7",
                         "SLURM_PROCID=2",
                         "PMI_RANK=0",
                         "PMI_SIZE=9",
                         "OMPI_COMM_WORLD_RANK=1",
                         "OMPI_COMM_WORLD_SIZE=8",
                         NULL};
    const char *source = NULL;
    uint32_t rank = 99, size = 99;

    (void)state;
    assert_true(rdlm_launch_peers(env, &rank, &size, &source));
    assert_int_equal(rank, 1);
    assert_int_equal(size, 8);
    assert_string_equal(source, "OMPI_COMM_WORLD_RANK");
    assert_int_equal(rdlm_launch_rank(env), 1);
    env[5] = NULL; /* no OMPI_COMM_WORLD_SIZE: half of mpirun's pair */
    assert_true(rdlm_launch_peers(env, &rank, &size, &source));
    assert_int_equal(rank, 0);
    assert_int_equal(size, 9);
    assert_string_equal(source, "PMI_RANK");
    env[2] = NULL; /* srun's pair alone */
    assert_true(rdlm_launch_peers(env, &rank, &size, &source));
    assert_int_equal(rank, 2);
    assert_int_equal(size, 7);
    assert_string_equal(source, "SLURM_PROCID");
    assert_int_equal(rdlm_launch_rank(env), 2);
}

/* The rank alone (log lines): the same order, then PMIX_RANK; -1 without any. */
static void launcher_rank_alone(void **state)
{
    const char *slurm_pmix[] = {"PMIX_RANK=5", "SLURM_PROCID=2", NULL};
    const char *pmix[] = {"PMIX_RANK=5", "SLURM_PROCID=x", NULL};
    const char *none[] = {"HOME=/", NULL};

    (void)state;
    assert_int_equal(rdlm_launch_rank(slurm_pmix), 2);
    assert_int_equal(rdlm_launch_rank(pmix), 5);
    assert_int_equal(rdlm_launch_rank(none), -1);
}

static void a_bad_or_half_pair_does_not_count(void **state)
{
    const char *const bad[][3] = {
        {"SLURM_PROCID=3", "SLURM_NTASKS=3", NULL},
        {"SLURM_PROCID=0", "SLURM_NTASKS=0", NULL},
        {"SLURM_PROCID=x", "SLURM_NTASKS=2", NULL},
        {"SLURM_PROCID=0", NULL, NULL},
        {"PMI_SIZE=2", NULL, NULL},
        {"PMI_RANK=-1", "PMI_SIZE=2", NULL},
        {"PMI_RANK=0", "PMI_SIZE=16777216", NULL},
    };
    const char *env[] = {"SLURM_PROCID=5", "SLURM_NTASKS=2", "PMI_RANK=1", "PMI_SIZE=2",
                         NULL};
    const char *source = NULL;
    uint32_t rank = 99, size = 99;

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_false(rdlm_launch_peers(bad[i], &rank, &size, &source));
    }
    assert_int_equal(rank, 99); /* untouched */
    assert_true(rdlm_launch_peers(env, &rank, &size, &source));
    assert_string_equal(source, "PMI_RANK"); /* past srun's rank 5 of 2 */
    assert_int_equal(rank, 1);
}

static void a_slurm_step_is_a_job_of_its_own(void **state)
{
    const char *step[] = {"SLURM_STEP_ID=4", "SLURM_JOB_ID=123", NULL};
    const char *batch[] = {"OMPI_MCA_ess_base_jobid=77", "SLURM_JOB_ID=123", NULL};
    const char *long_step[] = {"SLURM_JOB_ID=1234567890123456",
                               "SLURM_STEP_ID=1234567890123456", NULL};
    const char *mpirun[] = {"PMIX_NAMESPACE=ns/x", "OMPI_MCA_ess_base_jobid=77", NULL};
    const char *none[] = {"SLURM_STEP_ID=4", "PMIX_NAMESPACE=bad/ns", NULL};
    char job[RDLM_JOB_MAX + 1];

    (void)state;
    assert_true(rdlm_launch_job(step, job));
    assert_string_equal(job, "123.4");
    assert_true(rdlm_launch_job(batch, job)); /* no step: the batch script */
    assert_string_equal(job, "123");
    assert_true(rdlm_launch_job(long_step, job)); /* 33 bytes with the step */
    assert_string_equal(job, "1234567890123456");
    assert_true(rdlm_launch_job(mpirun, job));
    assert_string_equal(job, "77");
    assert_null(rdlm_launch_job(none, job));
}

static void first_host_of_a_slurm_host_list(void **state)
{
    const char *const cases[][2] = {
        {"node[07-09,11],gpu1", "node07"},
        {"a,b", "a"},
        {"n[1-2]-ib[3-4]", "n1-ib3"},
        {"node[001-004]", "node001"},
        {"login1", "login1"},
        {"rack2-n[5]", "rack2-n5"},
    };
    const char *const bad[] = {"",      "node[", "node[]",          "node[-3]",
                               "[1-2]", "a b,c", "10.0.0.[256-257]"};
    char host[RDLM_HOST_MAX + 1];

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        assert_true(rdlm_launch_first_host(cases[i][0], host));
        assert_string_equal(host, cases[i][1]);
    }
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_false(rdlm_launch_first_host(bad[i], host));
    }
}

static void rendezvous_host_from_srun(void **state)
{
    const char *step[] = {"SLURM_JOB_NODELIST=big[1-9]", "SLURM_STEP_NODELIST=n[3-4]",
                          "SLURMD_NODENAME=n4", NULL};
    const char *job[] = {"SLURM_JOB_NODELIST=big[1-9]", "SLURMD_NODENAME=big1", NULL};
    const char *none[] = {"SLURMD_NODENAME=n1", NULL};
    char host[RDLM_HOST_MAX + 1];

    (void)state;
    assert_int_equal(rdlm_launch_rendezvous_host(step, 1, host), RDLM_OK);
    assert_string_equal(host, "n3");
    /* Rank 0 is not on the step's first host: it says so instead of listening where
     * nobody connects. */
    assert_int_equal(rdlm_launch_rendezvous_host(step, 0, host), RDLM_ERR_BAD_CONFIG);
    assert_int_equal(rdlm_launch_rendezvous_host(job, 0, host), RDLM_OK);
    assert_string_equal(host, "big1");
    assert_int_equal(rdlm_launch_rendezvous_host(none, 1, host), RDLM_ERR_BAD_CONFIG);
}

static void names_and_addresses_resolve(void **state)
{
    struct sockaddr_in sa = {0};

    (void)state;
    assert_int_equal(rdlm_addr_resolve("t", "10.1.2.3", 7000, RDLM_LOG_ERROR, &sa),
                     RDLM_OK);
    assert_int_equal(sa.sin_family, AF_INET);
    assert_int_equal(sa.sin_addr.s_addr, htonl(0x0a010203));
    assert_int_equal(sa.sin_port, htons(7000));
    assert_int_equal(rdlm_addr_resolve("t", "localhost", 1, RDLM_LOG_ERROR, &sa), RDLM_OK);
    assert_int_equal(sa.sin_addr.s_addr, htonl(INADDR_LOOPBACK));
    assert_int_equal(sa.sin_port, htons(1));
    sa.sin_port = 0;
    assert_int_equal(rdlm_addr_resolve("t", "no-such-host.invalid", 1, RDLM_LOG_ERROR, &sa),
                     RDLM_ERR_BAD_CONFIG);
    assert_int_equal(sa.sin_port, 0); /* untouched */
    assert_true(rdlm_addr_is_ip("127.0.0.1"));
    assert_false(rdlm_addr_is_ip("localhost"));
}

/* RDLM_RENDEZVOUS=launcher's port under srun: the first reserved port, else derived
 * from the job and step ids; neither: none. */
static void slurm_port_from_reserved_ports_or_ids(void **state)
{
    const char *range[] = {"SLURM_STEP_RESV_PORTS=12000-12003", "SLURM_JOB_ID=7",
                           "SLURM_STEP_ID=1", NULL};
    const char *list[] = {"SLURM_STEP_RESV_PORTS=12005,12007", NULL};
    const char *ids[] = {"SLURM_JOB_ID=1234", "SLURM_STEP_ID=5", NULL};
    const char *bad[] = {"SLURM_STEP_RESV_PORTS=x", "SLURM_JOB_ID=12", NULL};
    const char *source = NULL;
    uint16_t port = 0;

    (void)state;
    assert_true(rdlm_launch_slurm_port(range, &port, &source));
    assert_int_equal(port, 12000);
    assert_string_equal(source, "SLURM_STEP_RESV_PORTS");
    assert_true(rdlm_launch_slurm_port(list, &port, &source));
    assert_int_equal(port, 12005);
    assert_true(rdlm_launch_slurm_port(ids, &port, &source));
    assert_int_equal(port, RDLM_LAUNCH_PORT_BASE + (1234 * 10 + 5) % RDLM_LAUNCH_PORT_SPAN);
    assert_string_equal(source, "SLURM_JOB_ID/SLURM_STEP_ID");
    assert_false(rdlm_launch_slurm_port(bad, &port, &source)); /* no step id */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(slurm_port_from_reserved_ports_or_ids),
        cmocka_unit_test(mpirun_and_hydra_win_over_srun),
        cmocka_unit_test(launcher_rank_alone),
        cmocka_unit_test(a_bad_or_half_pair_does_not_count),
        cmocka_unit_test(a_slurm_step_is_a_job_of_its_own),
        cmocka_unit_test(first_host_of_a_slurm_host_list),
        cmocka_unit_test(rendezvous_host_from_srun),
        cmocka_unit_test(names_and_addresses_resolve),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
