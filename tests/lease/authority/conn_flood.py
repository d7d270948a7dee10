#!/usr/bin/env python3
"""A flood of idle client sockets against a 3-replica rdlmd on 127.0.0.1
(ctest: lease.authority.conn_flood).

usage: conn_flood.py RDLMD [--max-connections N] [--flood N] [--sources K]
                     [--renewals N] [--fresh] [--no-kill] [--election-ms MS]

The replicas listen on 127.0.0.1 (so that is a replica's host: their leadership
confirmation connects from there); the flood comes from 127.0.0.2.. (--sources
addresses, --flood sockets to each replica's client port, each connected and then
left idle), the session holder from 127.0.0.100 and a newcomer from 127.0.0.101.
With the flood up to the cap on every replica:
  1. the holder's existing session renews (--renewals RENEWs back to back, each
     reconnecting if its idle connection was closed for the flood; --fresh: each on
     a new connection; p50/p99 printed, connects included);
  2. a new connection from another address gets in (the oldest idle one is closed
     for it) and OPENs a session;
  3. unless --no-kill: the leader is killed (-9); the holder finds the new leader,
     whose confirmation reaches the survivor through the flood, and renews: the
     session must never be answered RDLM_ERR_LEASE_EXPIRED and must renew within
     its TTL of the kill.
Defaults are the ctest's (--max-connections 32, a flood of 32 from one address).
The measurement in the issue: --max-connections 1024 --flood 1024 --sources 4
--renewals 1000 --no-kill. Every wait is bounded; exit 0 passed, 1 failed, 2 setup.
"""
import argparse
import os
import random
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hostile_client import (OP_OPEN, OP_RENEW, OP_STATUS, ERR_LEASE_EXPIRED,  # noqa: E402
                            Conn, Failure, cmd, free_port)

HOLDER_IP, NEWCOMER_IP, BUSY_IP = "127.0.0.100", "127.0.0.101", "127.0.0.102"
TTL_MS = 4000


class SrcConn(Conn):
    """A client connection from the loopback address src."""

    def __init__(self, addr, src):
        host, port = addr.rsplit(":", 1)
        self.s = socket.create_connection((host, int(port)), timeout=2.0,
                                          source_address=(src, 0))
        self.s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


class Cluster:
    def __init__(self, rdlmd, args):
        self.dir = tempfile.mkdtemp(prefix="conn_flood.")
        self.client = ["127.0.0.1:%d" % free_port() for _ in range(3)]
        raft = ["127.0.0.1:%d" % free_port() for _ in range(3)]
        peers = ",".join("%d=%s=%s" % (i + 1, raft[i], self.client[i]) for i in range(3))
        self.procs = []
        for i in range(3):
            log = open(os.path.join(self.dir, "log%d" % (i + 1)), "wb")
            self.procs.append(subprocess.Popen(
                [rdlmd, "--id", str(i + 1), "--peers", peers,
                 "--data-dir", os.path.join(self.dir, "data%d" % (i + 1)),
                 "--election-timeout-ms", str(args.election_ms),
                 "--heartbeat-ms", str(args.election_ms // 10),
                 "--max-connections", str(args.max_connections),
                 "--max-connections-per-peer", str(args.max_connections),
                 "--home-slots", "0", "--log-level", "info"],
                stdout=log, stderr=subprocess.STDOUT))

    def status(self, i, src=NEWCOMER_IP):
        c = SrcConn(self.client[i], src)
        try:
            return c.call(cmd(OP_STATUS))
        finally:
            c.close()

    def leader(self, limit):
        end = time.monotonic() + limit
        while time.monotonic() < end:
            for i, p in enumerate(self.procs):
                if p is None:
                    continue
                try:
                    if self.status(i)["is_leader"]:
                        return i
                except (OSError, Failure):
                    pass
            time.sleep(0.05)
        raise Failure("no leader within %.1f s" % limit)

    def stop(self, failed):
        """SIGTERM to the live replicas; True if one did not exit 0 within 10 s."""
        for p in self.procs:
            if p is not None:
                p.send_signal(signal.SIGTERM)
        for i, p in enumerate(self.procs):
            if p is not None:
                try:
                    rc = p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    p.kill()
                    rc = "killed after 10 s"
                if rc != 0:
                    print("conn_flood: FAIL: replica %d exit status %s" % (i + 1, rc))
                    failed = True
        if failed:
            for i in range(3):
                print("---- replica %d log (last 20 lines)" % (i + 1))
                with open(os.path.join(self.dir, "log%d" % (i + 1)), "rb") as f:
                    print(b"\n".join(f.read().splitlines()[-20:]).decode("ascii", "replace"))
        shutil.rmtree(self.dir, ignore_errors=True)
        return failed


class Holder:
    """A session renewed from HOLDER_IP, reconnecting (to the leader) as needed."""

    def __init__(self, cluster, at):
        self.cl, self.at, self.conn, self.seq = cluster, at, None, 0
        self.nonce = random.getrandbits(64)
        end = time.monotonic() + 5.0
        while True:  # an elected leader serves once it committed its first entry
            r = self.request(cmd(OP_OPEN, ttl=TTL_MS, nonce=self.nonce))
            if r["status"] == 0 or time.monotonic() > end:
                break
            time.sleep(0.05)
        if r["status"] != 0:
            raise Failure("OPEN answered %d" % r["status"])
        self.id = r["session"]

    def request(self, payload):
        """One request; a closed connection is reopened once."""
        for attempt in range(2):
            try:
                if self.conn is None:
                    self.conn = SrcConn(self.cl.client[self.at], HOLDER_IP)
                return self.conn.call(payload)
            except (OSError, Failure):
                if self.conn is not None:
                    self.conn.close()
                self.conn = None
                if attempt == 1:
                    raise

    def renew(self):
        self.seq += 1
        return self.request(cmd(OP_RENEW, session=self.id, seq=self.seq, nonce=self.nonce))


def flood(cluster, n, sources, holder=None):
    """n idle sockets to each live replica from sources addresses; the holder (if
    given) renews every 64 of them, so a long flood does not outlast its TTL."""
    socks = []
    for i in range(3):
        if cluster.procs[i] is None:
            continue
        for k in range(n):
            src = "127.0.0.%d" % (2 + k % sources)
            s = socket.create_connection(("127.0.0.1", int(cluster.client[i].rsplit(":")[1])),
                                         timeout=2.0, source_address=(src, 0))
            socks.append(s)
            if holder is not None and len(socks) % 64 == 0 and holder.renew()["status"] != 0:
                raise Failure("RENEW while the flood builds up failed")
    time.sleep(0.3)  # accepted (and, today, the excess closed)
    return socks


def percentile(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * p))]


def run(cl, args):
    leader = cl.leader(15.0)
    holder = Holder(cl, leader)
    for _ in range(5):  # the leader's confirmation connections exist before the flood
        if holder.renew()["status"] != 0:
            raise Failure("RENEW before the flood failed")
    socks = flood(cl, args.flood, args.sources, holder)
    print("conn_flood: %d idle sockets from %d address(es) to each replica (cap %d)" %
          (args.flood, args.sources, args.max_connections))
    lat = []
    for _ in range(args.renewals):
        if args.fresh and holder.conn is not None:
            holder.conn.close()
            holder.conn = None
        t0 = time.monotonic()
        try:
            r = holder.renew()
        except (OSError, Failure) as e:
            raise Failure("RENEW during the flood: %s" % e)
        lat.append((time.monotonic() - t0) * 1000.0)
        if r["status"] != 0:
            raise Failure("RENEW during the flood answered %d" % r["status"])
    print("conn_flood: %d renewals during the flood: p50 %.2f ms, p99 %.2f ms, max %.2f ms" %
          (len(lat), percentile(lat, 0.5), percentile(lat, 0.99), max(lat)))
    try:
        c = SrcConn(cl.client[leader], NEWCOMER_IP)
        r = c.call(cmd(OP_OPEN, ttl=TTL_MS, nonce=1))
        c.close()
    except (OSError, Failure) as e:
        raise Failure("a new client's OPEN during the flood: %s" % e)
    if r["status"] != 0:
        raise Failure("a new client's OPEN during the flood answered %d" % r["status"])
    print("conn_flood: a new client's OPEN got in (session %d)" % r["session"])
    busy_flood(cl, holder, leader, args.flood)
    if not args.no_kill:
        socks += kill_leader(cl, holder, leader)
    for s in socks:
        s.close()


def busy_flood(cl, holder, leader, n):
    """n sockets to each follower, each with a frame begun (not idle: nothing to close
    for a newcomer until the frame timeout): the replicas' own connections still get
    in, so renewals still confirm."""
    socks = []
    for i in range(3):
        if i != leader:
            for _ in range(n):
                s = socket.create_connection(("127.0.0.1", int(cl.client[i].rsplit(":")[1])),
                                             timeout=2.0, source_address=(BUSY_IP, 0))
                s.sendall(b"RD")
                socks.append(s)
    time.sleep(0.3)
    for _ in range(5):
        r = holder.renew()
        if r["status"] != 0:
            raise Failure("RENEW with the followers' ports full of busy sockets answered %d"
                          % r["status"])
    for i in range(3):
        if i != leader and cl.status(i, src="127.0.0.1")["status"] != 0:
            raise Failure("STATUS from a replica's host to a full replica refused")
    print("conn_flood: followers full of %d busy sockets: renewals confirmed" % n)
    for s in socks:
        s.close()
    time.sleep(0.2)  # closed there too


def kill_leader(cl, holder, leader):
    cl.procs[leader].kill()
    cl.procs[leader].wait()
    cl.procs[leader] = None
    t0 = time.monotonic()
    socks = flood(cl, 4, 1)  # the slots its connections held are taken again
    end = t0 + TTL_MS / 1000.0
    while time.monotonic() < end:
        try:
            holder.at = cl.leader(max(end - time.monotonic(), 0.05))
            r = holder.renew()
        except (OSError, Failure):
            continue
        if r["status"] == ERR_LEASE_EXPIRED:
            raise Failure("the new leader expired the live session %d" % holder.id)
        if r["status"] == 0:
            print("conn_flood: leader killed; session %d renewed at replica %d %.2f s later"
                  % (holder.id, holder.at + 1, time.monotonic() - t0))
            return socks
        time.sleep(0.05)
    raise Failure("session %d not renewed within its TTL (%d ms) of the leader's kill" %
                  (holder.id, TTL_MS))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("rdlmd")
    ap.add_argument("--max-connections", type=int, default=32)
    ap.add_argument("--flood", type=int, default=32)
    ap.add_argument("--sources", type=int, default=1)
    ap.add_argument("--renewals", type=int, default=20)
    ap.add_argument("--election-ms", type=int, default=400)
    ap.add_argument("--no-kill", action="store_true")
    ap.add_argument("--fresh", action="store_true",
                    help="each renewal on a new connection (timed with its connect)")
    args = ap.parse_args()
    if not os.access(args.rdlmd, os.X_OK):
        print("conn_flood: no rdlmd at %s" % args.rdlmd)
        return 2
    need = 3 * args.flood + 256
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < need:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(need, hard), hard))
    cl = Cluster(args.rdlmd, args)
    failed = True
    try:
        run(cl, args)
        failed = False
    except Failure as e:
        print("conn_flood: FAIL: %s" % e)
    finally:
        failed = cl.stop(failed)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
