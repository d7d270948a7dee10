/* Configuration table: defaults, valid overrides, and every kind of bad value is
 * rejected with RDLM_ERR_BAD_CONFIG and leaves the output untouched. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "config.h"
#include "log.h"

static void defaults_without_environment(void **state)
{
    const char *env[] = {NULL};
    rdlm_config_t cfg;

    (void)state;
    assert_int_equal(rdlm_config_parse(env, &cfg), RDLM_OK);
    assert_int_equal(cfg.log_level, RDLM_LOG_WARN);
    assert_int_equal(cfg.capacity, 65536);
    assert_int_equal(cfg.max_procs, 256);
    assert_string_equal(cfg.job, "");
    assert_int_equal(cfg.stats, 0);
    assert_int_equal(cfg.progress, RDLM_PROGRESS_AUTO);
    assert_int_equal(cfg.job_authority, 0);
    assert_string_equal(cfg.job_authority_net, "");
    assert_int_equal(cfg.verbs_connect, RDLM_VERBS_CONNECT_CM);
    assert_string_equal(cfg.verbs_addr, "");
    assert_string_equal(cfg.log_file, "");
}

static void valid_values_override_defaults(void **state)
{
    const char *env[] = {"RDLM_LOG=debug",
                         "RDLM_CAPACITY=1000",
                         "RDLM_JOB=job-1.a_b",
                         "RDLM_STATS=1",
                         "PATH=/bin",
                         "RDLM_UCX_TLS=tcp",
                         "RDLM_PROGRESS=thread",
                         "RDLM_LOG_FILE=/tmp/rdlm.%h.%r.%p.%%.log",
                         NULL};
    rdlm_config_t cfg;

    (void)state;
    assert_int_equal(rdlm_config_parse(env, &cfg), RDLM_OK);
    assert_int_equal(cfg.log_level, RDLM_LOG_DEBUG);
    assert_int_equal(cfg.capacity, 1000);
    assert_string_equal(cfg.job, "job-1.a_b");
    assert_int_equal(cfg.stats, 1);
    assert_int_equal(cfg.progress, RDLM_PROGRESS_THREAD);
    assert_string_equal(cfg.log_file, "/tmp/rdlm.%h.%r.%p.%%.log");
}

static void distributed_variables(void **state)
{
    const char *env[] = {"RDLM_VIRTUAL_NODES=4", "RDLM_COHORT_BOUND=0",
                         "RDLM_RENDEZVOUS=10.1.2.3:7000", "RDLM_RANK=3", "RDLM_SIZE=4",
                         "RDLM_TRANSPORT=shm", "RDLM_VERBS_CONNECT=exchange",
                         "RDLM_VERBS_ADDR=255.255.255.255", "RDLM_OVERSUBSCRIBED=off",
                         NULL};
    rdlm_config_t cfg;
    uint32_t ip = 0;
    uint16_t port = 0;

    (void)state;
    assert_int_equal(rdlm_config_parse(env, &cfg), RDLM_OK);
    assert_int_equal(cfg.virtual_nodes, 4);
    assert_int_equal(cfg.cohort_bound, 0);
    assert_string_equal(cfg.rendezvous, "10.1.2.3:7000");
    assert_int_equal(cfg.rank, 3);
    assert_int_equal(cfg.size, 4);
    assert_string_equal(cfg.transport, "shm");
    assert_int_equal(cfg.verbs_connect, RDLM_VERBS_CONNECT_EXCHANGE);
    assert_string_equal(cfg.verbs_addr, "255.255.255.255");
    assert_int_equal(cfg.oversubscribed, RDLM_SWITCH_OFF);
    assert_true(rdlm_config_addr_parse(cfg.rendezvous, &ip, &port));
    assert_int_equal(port, 7000);
    assert_int_equal(ip, htonl(0x0a010203));
}

static void each_bad_value_is_rejected_and_defaults_kept(void **state)
{
    static const char *bad[] = {
        "RDLM_LOG=loud",
        "RDLM_LOG=",
        "RDLM_CAPACITY=abc",
        "RDLM_CAPACITY=-5",
        "RDLM_CAPACITY=15",
        "RDLM_CAPACITY=99999999999",
        "RDLM_CAPACITY=12x",
        "RDLM_SPIN= 5",
        "RDLM_STATS=yes",
        "RDLM_JOB=a/b",
        "RDLM_JOB=../etc",
        "RDLM_MAX_PROCS=1",
        "RDLM_JOB=0123456789012345678901234567890123456789",
        "RDLM_PROGRESS=threads",
        "RDLM_PROGRESS=",
        "RDLM_PROGRESS=POLL",
        "RDLM_VERBS_CONNECT=rdmacm",
        "RDLM_VERBS_CONNECT=",
        "RDLM_VERBS_ADDR=10.0.0.1:7000",
        "RDLM_VERBS_ADDR=10.0.0.256",
        "RDLM_VERBS_ADDR=10.0.0",
        "RDLM_VERBS_ADDR=010.0.0.1",
        "RDLM_VERBS_ADDR=fe80::1",
        "RDLM_OVERSUBSCRIBED=yes",
        "RDLM_VIRTUAL_NODES=0",
        "RDLM_COHORT_BOUND=-1",
        "RDLM_RENDEZVOUS=10.0.0.1",
        "RDLM_RENDEZVOUS=10.0.0.1:0",
        "RDLM_RENDEZVOUS=10.0.0.1:65536",
        "RDLM_RENDEZVOUS=:0",
        "RDLM_RENDEZVOUS=:x",
        "RDLM_AUTHORITY=:7000",
        "RDLM_RENDEZVOUS=-node01:7000",
        "RDLM_RENDEZVOUS=node/01:7000",
        "RDLM_RENDEZVOUS=node 01:7000",
        "RDLM_RENDEZVOUS=node01",
        "RDLM_RENDEZVOUS=a123456789012345678901234567890123456789012345678901234567:1",
        "RDLM_AUTHORITY=node01:7000,node_02",
        "RDLM_RENDEZVOUS=10.0.0.256:7000",
        "RDLM_TRANSPORT=u c x",
        "RDLM_AUTHORITY=10.0.0.1:7000,",
        "RDLM_AUTHORITY=,10.0.0.1:7000",
        "RDLM_AUTHORITY=10.0.0.1:7000,,10.0.0.2:7000",
        "RDLM_AUTHORITY=10.0.0.1:7000;10.0.0.2:7000",
        "RDLM_AUTHORITY=1.1.1.1:1,1.1.1.1:2,1.1.1.1:3,1.1.1.1:4,1.1.1.1:5,1.1.1.1:6,"
        "1.1.1.1:7,1.1.1.1:8",
        "RDLM_LEASE_TTL_MS=99",
        "RDLM_LOCK_DELAY_MS=600001",
        "RDLM_LOCK_DELAY_MS=-1",
        "RDLM_JOB_AUTHORITY=2",
        "RDLM_JOB_AUTHORITY_NET=10.0.0.0/33",
        "RDLM_JOB_AUTHORITY_NET=10.0.0.0/",
        "RDLM_JOB_AUTHORITY_NET=10.0.0.0/8x",
        "RDLM_JOB_AUTHORITY_NET=10.0.0/8",
        "RDLM_JOB_AUTHORITY_NET=10.0.0.1:7000",
        "RDLM_JOB_AUTHORITY_NET=255.255.255.255/32/1",
        "RDLM_LOG_FILE=/tmp/rdlm.%q.log",
        "RDLM_LOG_FILE=/tmp/rdlm.log%",
    };
    const char *none[] = {NULL};
    rdlm_config_t cfg, defaults;

    (void)state;
    assert_int_equal(rdlm_config_parse(none, &defaults), RDLM_OK);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        const char *env[] = {bad[i], NULL};

        memset(&cfg, 0xab, sizeof(cfg));
        assert_int_equal(rdlm_config_parse(env, &cfg), RDLM_ERR_BAD_CONFIG);
        /* the bad value's default in its place, every other field too */
        assert_memory_equal(&cfg, &defaults, sizeof(cfg));
    }
}

/* A bad value does not stop the parse: the good ones around it apply, each bad one
 * keeps its default (a process still reaches its rendezvous to tell the others). */
static void bad_values_keep_defaults_and_the_rest_applies(void **state)
{
    const char *env[] = {"RDLM_SPIN=lots", "RDLM_RENDEZVOUS=10.0.0.1:7000", "RDLM_YIELD=7",
                         "RDLM_VIRTUAL_NODES=0", NULL};
    const char *none[] = {NULL};
    rdlm_config_t cfg, defaults;

    (void)state;
    assert_int_equal(rdlm_config_parse(none, &defaults), RDLM_OK);
    assert_int_equal(rdlm_config_parse(env, &cfg), RDLM_ERR_BAD_CONFIG);
    assert_string_equal(cfg.rendezvous, "10.0.0.1:7000");
    assert_int_equal(cfg.yield, 7);
    assert_int_equal(cfg.spin, defaults.spin);
    assert_int_equal(cfg.virtual_nodes, defaults.virtual_nodes);
}

/* RDLM_LOG_FILE_MAX bytes are a pattern, one more is not. */
static void log_file_pattern_length_is_bounded(void **state)
{
    char entry[sizeof("RDLM_LOG_FILE=") + RDLM_LOG_FILE_MAX + 1];
    const char *env[] = {entry, NULL};
    size_t prefix = strlen("RDLM_LOG_FILE=");
    rdlm_config_t cfg;

    (void)state;
    memcpy(entry, "RDLM_LOG_FILE=", prefix);
    memset(entry + prefix, 'a', RDLM_LOG_FILE_MAX);
    entry[prefix + RDLM_LOG_FILE_MAX] = '\0';
    assert_int_equal(rdlm_config_parse(env, &cfg), RDLM_OK);
    assert_int_equal(strlen(cfg.log_file), RDLM_LOG_FILE_MAX);
    entry[prefix + RDLM_LOG_FILE_MAX] = 'a';
    entry[prefix + RDLM_LOG_FILE_MAX + 1] = '\0';
    assert_int_equal(rdlm_config_parse(env, &cfg), RDLM_ERR_BAD_CONFIG);
}

static void unknown_rdlm_variable_is_only_a_warning(void **state)
{
    const char *env[] = {"RDLM_NO_SUCH_THING=1", NULL};
    rdlm_config_t cfg;

    (void)state;
    assert_int_equal(rdlm_config_parse(env, &cfg), RDLM_OK);
}

static void progress_names_round_trip(void **state)
{
    (void)state;
    assert_string_equal(rdlm_config_progress_name(RDLM_PROGRESS_AUTO), "auto");
    assert_string_equal(rdlm_config_progress_name(RDLM_PROGRESS_POLL), "poll");
    assert_string_equal(rdlm_config_progress_name(RDLM_PROGRESS_THREAD), "thread");
    assert_null(rdlm_config_progress_name(RDLM_PROGRESS_MODE_COUNT));
    assert_string_equal(rdlm_config_verbs_connect_name(RDLM_VERBS_CONNECT_CM), "cm");
    assert_string_equal(rdlm_config_verbs_connect_name(RDLM_VERBS_CONNECT_EXCHANGE),
                        "exchange");
    assert_null(rdlm_config_verbs_connect_name(RDLM_VERBS_CONNECT_COUNT));
}

static void authority_address_lists(void **state)
{
    const char *env[] = {"RDLM_AUTHORITY=255.255.255.255:65535,255.255.255.255:65534,"
                         "255.255.255.255:65533,255.255.255.255:65532,255.255.255.255:1,"
                         "255.255.255.255:2,255.255.255.255:3",
                         NULL};
    char addrs[RDLM_ADDRS_COUNT][RDLM_ADDR_MAX + 1];
    rdlm_config_t cfg;
    unsigned n = 0;

    (void)state;
    assert_int_equal(rdlm_config_parse(env, &cfg), RDLM_OK);
    assert_true(rdlm_config_addrs_parse(cfg.authority, addrs, RDLM_ADDRS_COUNT, &n));
    assert_int_equal(n, 7);
    assert_string_equal(addrs[0], "255.255.255.255:65535");
    assert_string_equal(addrs[6], "255.255.255.255:3");
    assert_false(rdlm_config_addrs_parse("10.0.0.1:1,10.0.0.2:2", addrs, 1, &n));
    assert_false(rdlm_config_addrs_parse("", addrs, 2, &n));
    assert_true(rdlm_config_addrs_parse("10.0.0.1:1", addrs, 1, &n));
    assert_int_equal(n, 1);
}

static void host_names_are_addresses(void **state)
{
    const char *env[] = {"RDLM_RENDEZVOUS=node-01.cluster_a:7000",
                         "RDLM_AUTHORITY=auth1:7001,10.0.0.2:7002,"
                         "a12345678901234567890123456789012345678901234567890123456:65535",
                         NULL};
    char addrs[RDLM_ADDRS_COUNT][RDLM_ADDR_MAX + 1], host[RDLM_HOST_MAX + 1];
    rdlm_config_t cfg;
    uint16_t port = 0;
    unsigned n = 0;

    (void)state;
    assert_int_equal(rdlm_config_parse(env, &cfg), RDLM_OK);
    assert_string_equal(cfg.rendezvous, "node-01.cluster_a:7000");
    assert_true(rdlm_config_hostport_parse(cfg.rendezvous, host, &port));
    assert_string_equal(host, "node-01.cluster_a");
    assert_int_equal(port, 7000);
    assert_true(rdlm_config_addrs_parse(cfg.authority, addrs, RDLM_ADDRS_COUNT, &n));
    assert_int_equal(n, 3);
    assert_string_equal(addrs[0], "auth1:7001");
    assert_true(rdlm_config_hostport_parse("10.0.0.2:7002", host, &port));
    assert_string_equal(host, "10.0.0.2");
    /* All digits and dots is an address or nothing; rdlm_config_addr_parse (raft's
     * addresses) takes no names. */
    assert_false(rdlm_config_hostport_parse("10.0.0.256:1", NULL, NULL));
    assert_false(rdlm_config_hostport_parse("10.0.0:1", NULL, NULL));
    assert_false(rdlm_config_addr_parse("localhost:7000", NULL, NULL));
    assert_true(rdlm_config_hostport_parse("localhost:7000", NULL, NULL));
    assert_false(rdlm_config_hostport_parse(":7000", NULL, NULL));
}

static void rendezvous_port_alone_is_valid(void **state)
{
    const char *env[] = {"RDLM_RENDEZVOUS=:7000", NULL};
    rdlm_config_t cfg;

    (void)state;
    assert_int_equal(rdlm_config_parse(env, &cfg), RDLM_OK);
    assert_string_equal(cfg.rendezvous, ":7000"); /* the host is srun's (launch.h) */
}

static void rendezvous_launcher_is_valid(void **state)
{
    const char *env[] = {"RDLM_RENDEZVOUS=launcher", NULL};
    const char *bad[] = {"RDLM_RENDEZVOUS=launchers", NULL};
    rdlm_config_t cfg;

    (void)state;
    assert_int_equal(rdlm_config_parse(env, &cfg), RDLM_OK);
    assert_string_equal(cfg.rendezvous, "launcher"); /* PMIx's or srun's (launch.h) */
    assert_int_equal(rdlm_config_parse(bad, &cfg), RDLM_ERR_BAD_CONFIG);
}

static void job_authority_networks(void **state)
{
    const char *env[] = {"RDLM_JOB_AUTHORITY=1",
                         "RDLM_JOB_AUTHORITY_NET=255.255.255.255/32", NULL};
    rdlm_config_t cfg;
    uint32_t ip = 0;
    unsigned len = 99;

    (void)state;
    assert_int_equal(rdlm_config_parse(env, &cfg), RDLM_OK);
    assert_int_equal(cfg.job_authority, 1);
    assert_string_equal(cfg.job_authority_net, "255.255.255.255/32");
    assert_true(rdlm_config_net_parse("10.1.0.0/16", &ip, &len));
    assert_int_equal(ip, htonl(0x0a010000));
    assert_int_equal(len, 16);
    assert_true(rdlm_config_net_parse("127.0.0.1", &ip, &len));
    assert_int_equal(len, 32);
    assert_true(rdlm_config_net_parse("0.0.0.0/0", &ip, &len));
    assert_int_equal(len, 0);
    assert_false(rdlm_config_net_parse("", &ip, &len));
}

static void job_names(void **state)
{
    (void)state;
    assert_true(rdlm_config_job_valid("a"));
    assert_true(rdlm_config_job_valid("12345678901234567890123456789012"));
    assert_false(rdlm_config_job_valid("123456789012345678901234567890123"));
    assert_false(rdlm_config_job_valid(""));
    assert_false(rdlm_config_job_valid("a b"));
    assert_false(rdlm_config_job_valid("a/b"));
}

/* RDLM_JOB, else the first valid launcher job id, else "default"; the source named. */
static void effective_job_order(void **state)
{
    const char *env[] = {"RDLM_JOB=mine", NULL};
    char job[RDLM_JOB_MAX + 1];
    rdlm_config_t cfg;

    (void)state;
    unsetenv("SLURM_JOB_ID");
    unsetenv("OMPI_MCA_ess_base_jobid");
    unsetenv("PMIX_NAMESPACE");
    assert_int_equal(rdlm_config_parse(env, &cfg), RDLM_OK);
    setenv("PMIX_NAMESPACE", "pmix-ns", 1);
    setenv("SLURM_JOB_ID", "not valid", 1); /* skipped */
    assert_string_equal(rdlm_config_job_effective(&cfg, job), "RDLM_JOB");
    assert_string_equal(job, "mine");
    cfg.job[0] = '\0';
    assert_string_equal(rdlm_config_job_effective(&cfg, job), "PMIX_NAMESPACE");
    assert_string_equal(job, "pmix-ns");
    setenv("SLURM_JOB_ID", "4242", 1);
    assert_string_equal(rdlm_config_job_effective(&cfg, job), "SLURM_JOB_ID");
    assert_string_equal(job, "4242");
    unsetenv("SLURM_JOB_ID");
    unsetenv("PMIX_NAMESPACE");
    assert_null(rdlm_config_job_effective(&cfg, job));
    assert_string_equal(job, "default");
}

/* Every entry of the table is there, in order, with its value as text. */
static void entries_and_values_as_text(void **state)
{
    const char *env[] = {"RDLM_SPIN=7", "RDLM_PROGRESS=poll", NULL};
    char value[RDLM_ADDRS_MAX];
    rdlm_config_t cfg;

    (void)state;
    assert_int_equal(rdlm_config_parse(env, &cfg), RDLM_OK);
    assert_string_equal(rdlm_config_entry(RDLM_CONFIG_INDEX_log_level)->var, "RDLM_LOG");
    assert_string_equal(rdlm_config_entry(RDLM_CONFIG_INDEX_spin)->def, "4000");
    assert_string_equal(rdlm_config_entry(RDLM_CONFIG_INDEX_max_procs)->allowed, "2..4095");
    assert_null(rdlm_config_entry(RDLM_CONFIG_COUNT));
    rdlm_config_value(&cfg, RDLM_CONFIG_INDEX_spin, value, sizeof(value));
    assert_string_equal(value, "7");
    rdlm_config_value(&cfg, RDLM_CONFIG_INDEX_progress, value, sizeof(value));
    assert_string_equal(value, "poll");
    rdlm_config_value(&cfg, RDLM_CONFIG_INDEX_log_level, value, 3); /* cut to fit */
    assert_string_equal(value, "wa");
    for (unsigned i = 0; i < RDLM_CONFIG_COUNT; i++) {
        const rdlm_config_entry_t *e = rdlm_config_entry((rdlm_config_index_t)i);

        rdlm_config_value(&cfg, (rdlm_config_index_t)i, value, sizeof(value));
        assert_true(strncmp(e->var, "RDLM_", 5) == 0);
        assert_non_null(e->allowed);
        assert_true(strcmp(value, e->def) == 0 || i == RDLM_CONFIG_INDEX_spin ||
                    i == RDLM_CONFIG_INDEX_progress);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(defaults_without_environment),
        cmocka_unit_test(valid_values_override_defaults),
        cmocka_unit_test(distributed_variables),
        cmocka_unit_test(each_bad_value_is_rejected_and_defaults_kept),
        cmocka_unit_test(bad_values_keep_defaults_and_the_rest_applies),
        cmocka_unit_test(log_file_pattern_length_is_bounded),
        cmocka_unit_test(unknown_rdlm_variable_is_only_a_warning),
        cmocka_unit_test(progress_names_round_trip),
        cmocka_unit_test(authority_address_lists),
        cmocka_unit_test(host_names_are_addresses),
        cmocka_unit_test(rendezvous_port_alone_is_valid),
        cmocka_unit_test(rendezvous_launcher_is_valid),
        cmocka_unit_test(job_authority_networks),
        cmocka_unit_test(job_names),
        cmocka_unit_test(effective_job_order),
        cmocka_unit_test(entries_and_values_as_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
