#!/usr/bin/env python3
"""Hostile connections to a 1-replica rdlmd's Raft port (ctest: lease.authority.raft_port).

usage: raft_port.py RDLMD [--flood-mb N]

The replica's Raft address is 127.0.0.1 (so that is the only replica host).
  1. A connection from 127.0.0.1 whose handshake preamble announces a 1 GiB address,
     followed by --flood-mb MiB (default 64): the replica closes it, its VmRSS grows
     by less than a quarter of what was sent, and it logs exactly one line about it.
  2. A connection from 127.0.0.2 (not a replica's host) with a well-formed handshake
     is closed within 2 s (one line logged, at most one a second at warn).
  3. 17 connections from 127.0.0.1 each stalled in its handshake: the oldest is
     closed for the newest (at most 16 handshakes are read at once).
  4. After a valid handshake from 127.0.0.1, Raft messages announcing a 1 GiB header,
     an AppendEntries entry of 1 GiB and an InstallSnapshot of 1 GiB, each followed
     by --flood-mb MiB: each connection is closed, VmRSS grows by less than a
     sixteenth of what was sent, and one line is logged (tcp_relay.h's caps).
  5. The replica still serves: STATUS on its client port answers.
  6. It exits 0 on SIGTERM with a handshake and a relayed message still under way
     (sanitizers included).
The handshake is raft_uv_tcp 0.15's: u64 protocol (1), u64 server id, u64 address
length, then the address; a message is u64 type, u64 header length, the header,
the payload (uv_encoding.c), all little-endian. Exit 0 passed, 1 failed, 2 setup.
"""
import argparse
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hostile_client import OP_STATUS, Conn, Failure, cmd, free_port  # noqa: E402

HANDSHAKES_MAX = 16  # RDLM_LEASE_TCP_HANDSHAKES_MAX (core/lease/authority/tcp.h)


def vm_rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise Failure("no VmRSS for pid %d" % pid)


def closed_within(s, limit):
    """1 if the peer closed (or reset) s within limit seconds, reading what it sends."""
    end = time.monotonic() + limit
    while time.monotonic() < end:
        s.settimeout(max(end - time.monotonic(), 0.01))
        try:
            if not s.recv(65536):
                return True
        except ConnectionResetError:
            return True
        except socket.timeout:
            return False
    return False


def raft_lines(log, start):
    with open(log, "rb") as f:
        f.seek(start)
        return [x for x in f.read().decode("ascii", "replace").splitlines()
                if "raft port" in x]


def log_size(log):
    return os.path.getsize(log)


def hostile(raft, pid, log, what, prefix, flood_mb, share):
    """Send prefix then flood_mb MiB on one connection from 127.0.0.1: it must be
    closed, VmRSS grow by less than flood_mb / share MiB, one line be logged."""
    start = log_size(log)
    before = vm_rss_kb(pid)
    s = socket.create_connection(raft, timeout=2.0)
    me = "%s:%d:" % s.getsockname()  # the lines about this connection name it
    sent = 0
    chunk = bytes(1 << 20)
    try:
        s.sendall(prefix)
        for _ in range(flood_mb):
            s.sendall(chunk)
            sent += len(chunk)
    except OSError:
        pass  # closed by the replica
    closed = closed_within(s, 2.0)
    grown = vm_rss_kb(pid) - before  # while open: libraft frees the buffer at a close
    s.close()
    time.sleep(0.05)
    lines = [x for x in raft_lines(log, start) if me in x]
    print("raft_port: %s, %d MiB sent: closed %s, VmRSS %+d kB, %d line(s) logged" %
          (what, sent >> 20, closed, grown, len(lines)))
    if not closed:
        raise Failure("connection announcing %s still open" % what)
    if grown * 1024 > (flood_mb << 20) // share:
        raise Failure("VmRSS grew by %d kB for %d MiB sent" % (grown, sent >> 20))
    if len(lines) != 1:
        raise Failure("%d lines about it, expected 1: %s" % (len(lines), lines))


def handshake():
    addr = b"127.0.0.1:1\0\0\0\0\0"
    return struct.pack("<QQQ", 1, 7, len(addr)) + addr


def huge_messages(raft, pid, log, flood_mb):
    gib = 1 << 30
    append = struct.pack("<QQ", 1, 48 + 16) + struct.pack(
        "<QQQQQQII Q", 2, 1, 1, 1, 1, 2, 1, gib, 0)  # one COMMAND entry of 1 GiB
    conf = struct.pack("<BQQ", 1, 1, 1) + b"127.0.0.1:1\0" + bytes([1])
    conf += bytes(-len(conf) % 8)
    snapshot = struct.pack("<QQ", 5, 56 + len(conf)) + struct.pack(
        "<QQQQQ", 2, 1, 1, 1, len(conf)) + conf + struct.pack("<QQ", gib, 0)
    for what, msg in (("a 1 GiB message header", struct.pack("<QQ", 1, gib)),
                      ("an AppendEntries entry of 1 GiB", append),
                      ("an InstallSnapshot of 1 GiB", snapshot)):
        hostile(raft, pid, log, what, handshake() + msg, flood_mb, 16)


def stranger(raft, log):
    start = log_size(log)
    time.sleep(1.0)  # past the one-second warn window of the last line
    s = socket.create_connection(raft, timeout=2.0, source_address=("127.0.0.2", 0))
    addr = b"127.0.0.2:1\0\0\0\0\0"
    s.sendall(struct.pack("<QQQ", 1, 7, len(addr)) + addr)
    closed = closed_within(s, 2.0)
    s.close()
    time.sleep(0.1)
    lines = raft_lines(log, start)
    print("raft_port: a handshake from 127.0.0.2: closed %s, %d line(s) logged" %
          (closed, len(lines)))
    if not closed:
        raise Failure("a Raft connection from a host that is no replica's stays open")
    if len(lines) != 1 or " warn " not in lines[0]:
        raise Failure("expected one warn line about it: %s" % lines)


def stalled_handshakes(raft):
    """HANDSHAKES_MAX + 1 connections each stalled in its preamble: the oldest is
    closed for the newest, which stays open."""
    socks = []
    try:
        for _ in range(HANDSHAKES_MAX + 1):
            s = socket.create_connection(raft, timeout=2.0)
            s.sendall(struct.pack("<QQ", 1, 7))
            socks.append(s)
            time.sleep(0.01)  # accepted in this order
        oldest = closed_within(socks[0], 1.0)
        newest = closed_within(socks[-1], 0.2)
    finally:
        for s in socks:
            s.close()
    print("raft_port: %d stalled handshakes: the oldest closed %s, the newest closed %s" %
          (len(socks), oldest, newest))
    if not oldest or newest:
        raise Failure("expected the oldest stalled handshake closed, the newest open")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("rdlmd")
    ap.add_argument("--flood-mb", type=int, default=64)
    args = ap.parse_args()
    if not os.access(args.rdlmd, os.X_OK):
        print("raft_port: no rdlmd at %s" % args.rdlmd)
        return 2
    d = tempfile.mkdtemp(prefix="raft_port.")
    raft = ("127.0.0.1", free_port())
    client = "127.0.0.1:%d" % free_port()
    log = os.path.join(d, "log")
    with open(log, "wb") as out:
        p = subprocess.Popen([args.rdlmd, "--id", "1", "--peers",
                              "1=%s:%d=%s" % (raft[0], raft[1], client),
                              "--data-dir", os.path.join(d, "data"), "--home-slots", "0",
                              "--log-level", "debug"], stdout=out, stderr=subprocess.STDOUT)
    failed = True
    try:
        end = time.monotonic() + 10.0
        while True:
            try:
                c = Conn(client)
                c.call(cmd(OP_STATUS))
                c.close()
                break
            except (OSError, Failure):
                if time.monotonic() > end:
                    raise Failure("rdlmd's client port does not answer")
                time.sleep(0.05)
        hostile(raft, p.pid, log, "a 1 GiB handshake address",
                struct.pack("<QQQ", 1, 7, 1 << 30), args.flood_mb, 4)
        stranger(raft, log)
        stalled_handshakes(raft)
        huge_messages(raft, p.pid, log, args.flood_mb)
        c = Conn(client)
        if c.call(cmd(OP_STATUS))["status"] != 0:
            raise Failure("STATUS after the hostile connections failed")
        c.close()
        failed = False
    except Failure as e:
        print("raft_port: FAIL: %s" % e)
    finally:
        half = socket.create_connection(raft, timeout=2.0)  # a handshake under way
        half.sendall(struct.pack("<QQ", 1, 7))
        relayed = socket.create_connection(raft, timeout=2.0)  # a message under way
        relayed.sendall(handshake() + struct.pack("<QQ", 3, 40))
        time.sleep(0.1)
        p.send_signal(signal.SIGTERM)
        try:
            rc = p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
            rc = "killed after 10 s"
        half.close()
        relayed.close()
        if rc != 0:
            print("raft_port: FAIL: rdlmd exit status %s" % rc)
            failed = True
        if failed:
            with open(log, "rb") as f:
                print(b"\n".join(f.read().splitlines()[-30:]).decode("ascii", "replace"))
        shutil.rmtree(d, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
