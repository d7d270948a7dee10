/*
 * core/lease/conn.c: authority address lists, frames over socketpairs (the header is
 * checked before any payload byte is read), deadlines, and connects over loopback.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "byteorder.h"
#include "clock.h"
#include "conn.h"

#define MS 1000000ull

static void address_lists_parse(void **state)
{
    rdlm_lease_addrs_t a;

    (void)state;
    assert_int_equal(rdlm_lease_addrs_parse("127.0.0.1:7000", &a), RDLM_OK);
    assert_int_equal(a.count, 1);
    assert_string_equal(a.addr[0], "127.0.0.1:7000");
    assert_int_equal(rdlm_lease_addrs_parse("10.0.0.1:1,10.0.0.2:65535", &a), RDLM_OK);
    assert_int_equal(a.count, 2);
    assert_string_equal(a.addr[1], "10.0.0.2:65535");
    assert_int_equal(rdlm_lease_addrs_parse("1.1.1.1:1,1.1.1.2:2,1.1.1.3:3,1.1.1.4:4,"
                                            "1.1.1.5:5,1.1.1.6:6,1.1.1.7:7",
                                            &a),
                     RDLM_OK);
    assert_int_equal(a.count, RDLM_LEASE_ADDRS_MAX);
    assert_string_equal(a.addr[6], "1.1.1.7:7");
}

static void malformed_address_lists_are_invalid(void **state)
{
    const char *bad[] = {"",
                         "127.0.0.1",
                         "127.0.0.1:0",
                         "127.0.0.1:65536",
                         "local host:80",
                         "-node01:80",
                         "1.2.3.4:5,",
                         ",1.2.3.4:5",
                         "1.2.3.4:5,,1.2.3.4:6",
                         "1.1.1.1:1,1.1.1.2:2,1.1.1.3:3,1.1.1.4:4,1.1.1.5:5,1.1.1.6:6,"
                         "1.1.1.7:7,1.1.1.8:8"};
    rdlm_lease_addrs_t a;

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_int_equal(rdlm_lease_addrs_parse(bad[i], &a), RDLM_ERR_INVALID_ARG);
    assert_int_equal(rdlm_lease_addrs_parse(NULL, &a), RDLM_ERR_INVALID_ARG);
}

static void pair(int sv[2])
{
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
}

static void frames_round_trip(void **state)
{
    uint8_t out[RDLM_WIRE_MAX_PAYLOAD], in[RDLM_WIRE_MAX_PAYLOAD];
    uint32_t sizes[] = {0, 1, 54, RDLM_WIRE_MAX_PAYLOAD}, len;
    int sv[2];

    (void)state;
    pair(sv);
    for (size_t i = 0; i < sizeof(out); i++)
        out[i] = (uint8_t)(i * 7 + 3);
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        uint64_t deadline = rdlm_clock_deadline(1000 * MS);

        assert_int_equal(
            rdlm_lease_conn_send(sv[0], RDLM_WIRE_REQUEST, out, sizes[i], deadline),
            RDLM_OK);
        assert_int_equal(rdlm_lease_conn_recv(sv[1], RDLM_WIRE_REQUEST, in, &len, deadline),
                         RDLM_OK);
        assert_int_equal(len, sizes[i]);
        if (len > 0)
            assert_memory_equal(in, out, len);
    }
    assert_int_equal(rdlm_lease_conn_send(sv[1], RDLM_WIRE_REPLY, out, 80,
                                          rdlm_clock_deadline(1000 * MS)),
                     RDLM_OK);
    assert_int_equal(rdlm_lease_conn_recv(sv[0], RDLM_WIRE_REPLY, in, &len,
                                          rdlm_clock_deadline(1000 * MS)),
                     RDLM_OK);
    assert_int_equal(len, 80);
    close(sv[0]);
    close(sv[1]);
}

/* Writes a 12-byte header, then 4 payload bytes "PAYL"; expects the receiver to
 * refuse the header and leave the 4 bytes unread. */
static void expect_header_refused(uint32_t magic, uint8_t version, uint8_t kind,
                                  uint16_t zero, uint32_t len)
{
    uint8_t frame[RDLM_WIRE_HEADER + 4], buf[RDLM_WIRE_MAX_PAYLOAD], *p = frame;
    uint32_t got;
    int sv[2];

    pair(sv);
    p = rdlm_le_put32(p, magic);
    p = rdlm_le_put8(p, version);
    p = rdlm_le_put8(p, kind);
    p = rdlm_le_put16(p, zero);
    p = rdlm_le_put32(p, len);
    memcpy(p, "PAYL", 4);
    assert_int_equal(write(sv[0], frame, sizeof(frame)), (ssize_t)sizeof(frame));
    assert_int_equal(rdlm_lease_conn_recv(sv[1], RDLM_WIRE_REQUEST, buf, &got,
                                          rdlm_clock_deadline(1000 * MS)),
                     RDLM_ERR_PROTOCOL);
    assert_int_equal(read(sv[1], buf, sizeof(buf)), 4);
    assert_memory_equal(buf, "PAYL", 4);
    close(sv[0]);
    close(sv[1]);
}

static void bad_headers_are_refused_before_the_payload_is_read(void **state)
{
    (void)state;
    expect_header_refused(RDLM_WIRE_MAGIC ^ 1, RDLM_WIRE_VERSION, RDLM_WIRE_REQUEST, 0, 4);
    expect_header_refused(RDLM_WIRE_MAGIC, RDLM_WIRE_VERSION + 1, RDLM_WIRE_REQUEST, 0, 4);
    expect_header_refused(RDLM_WIRE_MAGIC, RDLM_WIRE_VERSION, RDLM_WIRE_REPLY, 0, 4);
    expect_header_refused(RDLM_WIRE_MAGIC, RDLM_WIRE_VERSION, RDLM_WIRE_REQUEST, 1, 4);
    expect_header_refused(RDLM_WIRE_MAGIC, RDLM_WIRE_VERSION, RDLM_WIRE_REQUEST, 0,
                          RDLM_WIRE_MAX_PAYLOAD + 1);
    expect_header_refused(RDLM_WIRE_MAGIC, RDLM_WIRE_VERSION, RDLM_WIRE_REQUEST, 0,
                          UINT32_MAX);
}

static void oversized_payload_is_not_sent(void **state)
{
    static uint8_t big[RDLM_WIRE_MAX_PAYLOAD + 1];
    uint8_t b;
    int sv[2];

    (void)state;
    pair(sv);
    assert_int_equal(rdlm_lease_conn_send(sv[0], RDLM_WIRE_REQUEST, big, sizeof(big),
                                          rdlm_clock_deadline(1000 * MS)),
                     RDLM_ERR_INVALID_ARG);
    assert_int_equal(read(sv[1], &b, 1), -1); /* nothing was written */
    close(sv[0]);
    close(sv[1]);
}

static void silent_peer_times_out_at_the_deadline(void **state)
{
    uint8_t buf[RDLM_WIRE_MAX_PAYLOAD];
    uint64_t t0;
    uint32_t len;
    int sv[2];

    (void)state;
    pair(sv);
    t0 = rdlm_clock_now_ns();
    assert_int_equal(rdlm_lease_conn_wait(sv[1], t0 + 50 * MS), RDLM_ERR_TIMEOUT);
    assert_int_equal(rdlm_lease_conn_recv(sv[1], RDLM_WIRE_REPLY, buf, &len, t0 + 100 * MS),
                     RDLM_ERR_TIMEOUT);
    assert_true(rdlm_clock_now_ns() - t0 >= 100 * MS);
    assert_true(rdlm_clock_now_ns() - t0 < 2000 * MS);
    assert_int_equal(rdlm_lease_conn_send(sv[0], RDLM_WIRE_REPLY, buf, 0,
                                          rdlm_clock_deadline(1000 * MS)),
                     RDLM_OK);
    assert_int_equal(rdlm_lease_conn_wait(sv[1], rdlm_clock_deadline(1000 * MS)), RDLM_OK);
    close(sv[0]);
    close(sv[1]);
}

static void peer_closing_mid_frame_is_unavailable(void **state)
{
    uint8_t hdr[RDLM_WIRE_HEADER], buf[RDLM_WIRE_MAX_PAYLOAD];
    uint32_t len;
    int sv[2];

    (void)state;
    pair(sv);
    rdlm_wire_header_encode(hdr, RDLM_WIRE_REPLY, 100);
    assert_int_equal(write(sv[0], hdr, sizeof(hdr)), (ssize_t)sizeof(hdr));
    assert_int_equal(write(sv[0], "abc", 3), 3);
    close(sv[0]);
    assert_int_equal(rdlm_lease_conn_recv(sv[1], RDLM_WIRE_REPLY, buf, &len,
                                          rdlm_clock_deadline(1000 * MS)),
                     RDLM_ERR_UNAVAILABLE);
    close(sv[1]);
    pair(sv);
    close(sv[1]);
    assert_int_equal(rdlm_lease_conn_send(sv[0], RDLM_WIRE_REQUEST, buf, 10,
                                          rdlm_clock_deadline(1000 * MS)),
                     RDLM_ERR_UNAVAILABLE);
    close(sv[0]);
}

/* A loopback socket bound to a free port; listening if listen_too. */
static int bound_socket(int listen_too, char addr[32])
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(0x7f000001)};
    socklen_t sl = sizeof(sa);
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    assert_true(fd >= 0);
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &sl), 0);
    if (listen_too)
        assert_int_equal(listen(fd, 4), 0);
    snprintf(addr, 32, "127.0.0.1:%u", (unsigned)ntohs(sa.sin_port));
    return fd;
}

static void connect_and_exchange_over_loopback(void **state)
{
    uint8_t buf[RDLM_WIRE_MAX_PAYLOAD];
    char addr[32];
    int lfd = bound_socket(1, addr), fd = -1, peer;
    uint32_t len;

    (void)state;
    assert_int_equal(rdlm_lease_conn_open(addr, rdlm_clock_deadline(1000 * MS), &fd),
                     RDLM_OK);
    peer = accept(lfd, NULL, NULL);
    assert_true(peer >= 0);
    assert_int_equal(rdlm_lease_conn_send(fd, RDLM_WIRE_REQUEST, (const uint8_t *)"hi", 2,
                                          rdlm_clock_deadline(1000 * MS)),
                     RDLM_OK);
    assert_int_equal(rdlm_lease_conn_recv(peer, RDLM_WIRE_REQUEST, buf, &len,
                                          rdlm_clock_deadline(1000 * MS)),
                     RDLM_OK);
    assert_int_equal(len, 2);
    assert_memory_equal(buf, "hi", 2);
    rdlm_lease_conn_close(fd);
    close(peer);
    close(lfd);
}

static void connect_to_a_closed_port_is_unavailable(void **state)
{
    char addr[32];
    int sfd = bound_socket(0, addr), fd = -1; /* bound, not listening: refused */

    (void)state;
    assert_int_equal(rdlm_lease_conn_open(addr, rdlm_clock_deadline(1000 * MS), &fd),
                     RDLM_ERR_UNAVAILABLE);
    assert_int_equal(fd, -1);
    close(sfd);
    assert_int_equal(rdlm_lease_conn_open("127.0.0.1", rdlm_clock_deadline(1000 * MS), &fd),
                     RDLM_ERR_INVALID_ARG);
}

/* A listener whose backlog is full does not complete the handshake: the connect
 * must end at its deadline. */
static void connect_ends_at_its_deadline(void **state)
{
    char addr[32];
    int lfd = bound_socket(0, addr), fds[8], n = 0, fd = -1;
    uint64_t t0;
    rdlm_status_t st = RDLM_OK;

    (void)state;
    assert_int_equal(listen(lfd, 0), 0);
    /* Fill the backlog; once full, further handshakes stall. */
    for (; n < 8; n++) {
        st = rdlm_lease_conn_open(addr, rdlm_clock_deadline(100 * MS), &fds[n]);
        if (st != RDLM_OK)
            break;
    }
    t0 = rdlm_clock_now_ns();
    if (st == RDLM_OK)
        st = rdlm_lease_conn_open(addr, t0 + 200 * MS, &fd);
    assert_true(st == RDLM_ERR_TIMEOUT || st == RDLM_OK);
    if (st == RDLM_OK) {
        rdlm_lease_conn_close(fd);
        print_message("note: the kernel accepted every connect; deadline not exercised\n");
    }
    assert_true(rdlm_clock_now_ns() - t0 < 2000 * MS);
    for (int i = 0; i < n; i++)
        rdlm_lease_conn_close(fds[i]);
    close(lfd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(address_lists_parse),
        cmocka_unit_test(malformed_address_lists_are_invalid),
        cmocka_unit_test(frames_round_trip),
        cmocka_unit_test(bad_headers_are_refused_before_the_payload_is_read),
        cmocka_unit_test(oversized_payload_is_not_sent),
        cmocka_unit_test(silent_peer_times_out_at_the_deadline),
        cmocka_unit_test(peer_closing_mid_frame_is_unavailable),
        cmocka_unit_test(connect_and_exchange_over_loopback),
        cmocka_unit_test(connect_to_a_closed_port_is_unavailable),
        cmocka_unit_test(connect_ends_at_its_deadline),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
