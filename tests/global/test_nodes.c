/* Node discovery (core/global/nodes.c): hosts, virtual nodes, leaders. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "nodes.h"

#define MAX_RANKS 16

/* rdlm_nodes_compute for rank of size ranks with vnodes virtual nodes per host, the
 * host key of rank r being "h<host_of[r]>"; asserts success. */
static void compute(const int *host_of, uint32_t size, uint32_t rank, uint32_t vnodes,
                    rdlm_nodes_t *n)
{
    char keys[MAX_RANKS * RDLM_HOSTKEY_LEN];

    assert_true(size <= MAX_RANKS);
    memset(keys, 0, (size_t)size * RDLM_HOSTKEY_LEN);
    for (uint32_t r = 0; r < size; r++) {
        keys[(size_t)r * RDLM_HOSTKEY_LEN] = 'h';
        keys[(size_t)r * RDLM_HOSTKEY_LEN + 1] = (char)('0' + host_of[r]);
    }
    assert_int_equal(rdlm_nodes_compute(keys, size, rank, vnodes, n), RDLM_OK);
}

static void one_host_is_one_node(void **state)
{
    const int hosts[4] = {0, 0, 0, 0};
    rdlm_nodes_t n;

    (void)state;
    compute(hosts, 4, 2, 1, &n);
    assert_int_equal(n.nodes, 1);
    assert_int_equal(n.node, 0);
    assert_int_equal(n.local_rank, 2);
    assert_int_equal(n.local_size, 4);
    assert_int_equal(n.leader_of[0], 0);
    rdlm_nodes_fini(&n);
}

static void virtual_nodes_split_consecutive_local_ranks(void **state)
{
    /* Two hosts, interleaved ranks: host 0 = {0,2,4,6,8}, host 1 = {1,3,5,7}. */
    const int hosts[9] = {0, 1, 0, 1, 0, 1, 0, 1, 0};
    /* Host 0's local ranks 0..4 split as floor(l * 2 / 5): {0, 2, 4} and {6, 8};
     * host 1's as floor(l * 2 / 4): {1, 3} and {5, 7}. Numbered by lowest rank. */
    const uint32_t want_node[9] = {0, 1, 0, 1, 0, 2, 3, 2, 3};
    rdlm_nodes_t n;

    (void)state;
    compute(hosts, 9, 8, 2, &n);
    assert_int_equal(n.nodes, 4);
    for (uint32_t r = 0; r < 9; r++) {
        assert_int_equal(n.node_of[r], want_node[r]);
    }
    assert_int_equal(n.leader_of[0], 0);
    assert_int_equal(n.leader_of[1], 1);
    assert_int_equal(n.leader_of[2], 5);
    assert_int_equal(n.leader_of[3], 6);
    assert_int_equal(n.node, 3);
    assert_int_equal(n.local_rank, 1);
    assert_int_equal(n.local_size, 2);
    rdlm_nodes_fini(&n);
}

static void more_virtual_nodes_than_processes(void **state)
{
    const int hosts[3] = {0, 0, 0};
    rdlm_nodes_t n;

    (void)state;
    compute(hosts, 3, 1, 8, &n);
    assert_int_equal(n.nodes, 3);
    assert_int_equal(n.node, 1);
    assert_int_equal(n.local_size, 1);
    rdlm_nodes_fini(&n);
}

static void bad_arguments(void **state)
{
    char keys[RDLM_HOSTKEY_LEN] = "h0";
    rdlm_nodes_t n;

    (void)state;
    assert_int_equal(rdlm_nodes_compute(keys, 1, 1, 1, &n), RDLM_ERR_INVALID_ARG);
    assert_int_equal(rdlm_nodes_compute(keys, 1, 0, 0, &n), RDLM_ERR_INVALID_ARG);
    assert_int_equal(rdlm_nodes_compute(NULL, 1, 0, 1, &n), RDLM_ERR_INVALID_ARG);
}

static void hostkey_is_stable(void **state)
{
    char a[RDLM_HOSTKEY_LEN], b[RDLM_HOSTKEY_LEN];

    (void)state;
    rdlm_nodes_hostkey(a);
    rdlm_nodes_hostkey(b);
    assert_memory_equal(a, b, RDLM_HOSTKEY_LEN);
    assert_true(a[0] != '\0');
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(one_host_is_one_node),
        cmocka_unit_test(virtual_nodes_split_consecutive_local_ranks),
        cmocka_unit_test(more_virtual_nodes_than_processes),
        cmocka_unit_test(bad_arguments),
        cmocka_unit_test(hostkey_is_stable),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
