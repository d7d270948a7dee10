#!/usr/bin/env python3
"""Hostile input for a running rdlmd's client port (run by hostile.sh).

usage: hostile_client.py ADDR MODE [--pid PID] [--frames N] [--conns N] [--seed S]
                          [--log FILE] [--frame-timeout-ms N] [--idle-timeout-ms N]
                          [--max-connections-per-peer N] [--munge-socket PATH]

ADDR is the client address "a.b.c.d:port" of a 1-replica authority.
MODE hostile_client: malformed, truncated, oversized and out-of-protocol frames,
  requests the authority must refuse (renewal of an unknown or expired session,
  release of a lock never acquired, double release, EXPIRE from a client), random
  frames and many simultaneous connections.
MODE auth_open (rdlmd --auth munge): HOMES without a session or in another's ->
  RDLM_ERR_AUTH; OPEN without, with a forged, with a flipped and with a replayed
  credential -> RDLM_ERR_AUTH; a credential must bind this OPEN (core/lease/include/auth.h):
  one made for another authority or another nonce, an empty one (munge -n) and a
  bare job (an older client's) -> RDLM_ERR_AUTH; with a bound one -> OK, and HOMES
  in that session is answered; re-attaching to a session (OPEN with its nonce) needs
  a credential of its own uid and job; lock names are per job whatever namespace the
  client sends; a client without a credential cannot act in another's session by
  naming its id (the real-credential part needs munged and is skipped without it).
MODE limits (rdlmd started with the --frame-timeout-ms, --idle-timeout-ms and
  --max-connections-per-peer given here, its log in --log): a burst of bad frames
  logs at most RDLM_LEASE_WARNS_PER_S warn lines a second and the rest is reported
  as a count; the connection after the per-peer cap closes the oldest idle one of
  its address (or, with none idle, is closed at once), and STATUS
  works again once the others closed; a half-sent header, a header without its
  payload and a frame sent one byte every 100 ms are closed within the frame
  timeout; an idle connection (new, or after a reply) within the idle timeout; a
  parked ACQUIRE is not idle and gets its RDLM_ERR_TIMEOUT.
MODE auth_stall (rdlmd --auth munge whose munged socket is --munge-socket, served
  here by a munged that hangs): while OPENs wait for it, STATUS on other
  connections is answered within 200 ms and fewer than 4 verifications (libuv's
  thread pool) are at munged at once; OPENs whose client left meanwhile are dropped,
  the others refused with RDLM_ERR_AUTH once munged fails.
After each case the daemon must still answer STATUS on a new connection, and its
commit index must not have moved because of a refused request (a refused request is
never logged). With --pid, the daemon's virtual memory peak must not grow by an
oversized length header and the process must be alive at the end.

Frames are encoded exactly as core/lease/include/wire.h and cmd.h say (little-endian).
A refusal is an error reply (status < 0) or the daemon closing the connection.
Exit: 0 all checks passed, 1 a check failed, 2 usage or setup error.
"""
import argparse
import os
import random
import shutil
import socket
import struct
import select
import subprocess
import sys
import threading
import time

MAGIC, VERSION, HEADER = 0x4D4C4452, 1, 12
REQUEST, REPLY, BLOB = 1, 2, 3  # BLOB: the answer to HOMES (core/lease/include/wire.h)
MAX_PAYLOAD, REPLY_FIXED, ADDR_MAX = 2048, 80, 63
OP_OPEN, OP_RENEW, OP_CLOSE, OP_ACQUIRE, OP_RELEASE = 1, 2, 3, 4, 5
OP_CANCEL, OP_EPOCH, OP_STATUS, OP_EXPIRE, OP_HOMES = 6, 7, 8, 9, 11
LOGGED_OPS = {OP_OPEN, OP_CLOSE, OP_ACQUIRE, OP_RELEASE, OP_CANCEL, OP_EPOCH, OP_EXPIRE}
# op flags name_len ttl_ms timeout_ms uid gid session seq nonce token cred_len
CMD_FMT = "<BBHIIIIQQQQH"
REPLY_FMT = "<iBBHQQQQQQQQII"
assert struct.calcsize(CMD_FMT) == 54 and struct.calcsize(REPLY_FMT) == REPLY_FIXED

ERR_BUSY, ERR_TIMEOUT, ERR_NOT_OWNER = -100, -101, -102
ERR_LEASE_EXPIRED, ERR_AUTH = -107, -109
ERR_UNSUPPORTED, ERR_UNAVAILABLE = -7, -203
ACQ_TRY = 0x01
EPOCH_MAX = (1 << 24) - 1  # RDLM_LEASE_EPOCH_MAX: the largest floor a command may carry
TTL_LONG = 600000  # the test's own sessions never expire during a run
TIMEOUT = 5.0      # seconds for any one reply or close
WARNS_PER_S = 10   # RDLM_LEASE_WARNS_PER_S in core/lease/authority/server.c
STALL_STATUS_S = 0.2  # slowest STATUS allowed while munged hangs


class Failure(Exception):
    pass


def header(length, kind=REQUEST, magic=MAGIC, version=VERSION, zero=0):
    return struct.pack("<IBBHI", magic, version, kind, zero, length)


def cmd(op, flags=0, ttl=0, timeout=0, uid=0, gid=0, session=0, seq=0, nonce=0, token=0,
        name=b"", cred=b""):
    return struct.pack(CMD_FMT, op, flags, len(name), ttl, timeout, uid, gid, session, seq,
                       nonce, token, len(cred)) + name + cred


def frame(payload):
    return header(len(payload)) + payload


def parse_reply(payload):
    if len(payload) < REPLY_FIXED:
        raise Failure("reply payload of %d bytes" % len(payload))
    f = struct.unpack_from(REPLY_FMT, payload)
    keys = ("status broken is_leader addr_len term session token epoch seq leader_id "
            "sessions commit ttl_ms locks").split()
    r = dict(zip(keys, f))
    if len(payload) != REPLY_FIXED + r["addr_len"] or r["addr_len"] > ADDR_MAX:
        raise Failure("reply of %d bytes with addr_len %d" % (len(payload), r["addr_len"]))
    r["leader_addr"] = payload[REPLY_FIXED:].decode("ascii", "replace")
    return r


def free_port():
    """A loopback port the kernel just gave out (released again for the caller)."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Conn:
    def __init__(self, addr):
        host, port = addr.rsplit(":", 1)
        self.s = socket.create_connection((host, int(port)), timeout=TIMEOUT)
        self.s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def send(self, data):
        self.s.sendall(data)

    def recv_exact(self, n):
        """n bytes, or None if the daemon closed (or reset) the connection first."""
        buf = b""
        while len(buf) < n:
            try:
                chunk = self.s.recv(n - len(buf))
            except ConnectionResetError:
                return None
            except socket.timeout:
                raise Failure("no reply and no close within %.0f s" % TIMEOUT)
            if not chunk:
                return None
            buf += chunk
        return buf

    def reply(self):
        """The next reply, or None if the connection was closed. A BLOB frame (the
        answer to HOMES, which a mutated STATUS frame can become: op 8 -> 11) is an
        ok reply whose payload this client does not parse."""
        hdr = self.recv_exact(HEADER)
        if hdr is None:
            return None
        magic, version, kind, zero, length = struct.unpack("<IBBHI", hdr)
        if ((magic, version, zero) != (MAGIC, VERSION, 0) or kind not in (REPLY, BLOB) or
                length > MAX_PAYLOAD):
            raise Failure("bad reply header %s" % hdr.hex())
        payload = self.recv_exact(length)
        if payload is None:
            raise Failure("reply cut short by a close")
        if kind == BLOB:
            return {"status": 0, "blob": payload}
        return parse_reply(payload)

    def call(self, payload):
        self.send(frame(payload))
        r = self.reply()
        if r is None:
            raise Failure("connection closed instead of a reply")
        return r

    def close(self):
        self.s.close()


class Daemon:
    def __init__(self, args):
        self.addr, self.pid = args.addr, args.pid
        self.seq = 0

    def status(self):
        c = Conn(self.addr)
        try:
            r = c.call(cmd(OP_STATUS))
        finally:
            c.close()
        if r["status"] != 0:
            raise Failure("STATUS answered %d" % r["status"])
        return r

    def wait_leader(self, limit=15.0):
        end = time.monotonic() + limit
        while time.monotonic() < end:
            try:
                r = self.status()
                if r["is_leader"]:
                    return r
            except (OSError, Failure):
                pass
            time.sleep(0.1)
        raise Failure("no leader after %.0f s" % limit)

    def settled_commit(self):
        """The commit index once it stopped moving (entries of our own legitimate
        requests, or the leader's EXPIREs, may still be applying)."""
        last = self.status()["commit"]
        for _ in range(50):
            time.sleep(0.05)
            now = self.status()["commit"]
            if now == last:
                return now
            last = now
        raise Failure("commit index keeps moving: %d" % last)

    def vm_peak_kb(self):
        if not self.pid:
            return None
        with open("/proc/%d/status" % self.pid) as f:
            for line in f:
                if line.startswith("VmPeak:"):
                    return int(line.split()[1])
        return None

    def alive(self):
        """The daemon process exists and is not a zombie (hostile.sh reaps it only
        after this program ends)."""
        if not self.pid:
            return
        try:
            with open("/proc/%d/stat" % self.pid) as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            state = "gone"
        if state in ("Z", "X", "gone"):
            raise Failure("rdlmd (pid %d) died" % self.pid)

    def next_seq(self):
        self.seq += 1
        return self.seq


class Session:
    """A session opened by this program (its OPEN is logged: open it outside a case).
    Its requests carry the OPEN's nonce too, so that a daemon which binds a session to
    its nonce accepts them."""

    def __init__(self, d, cred=b"", name=b"", ttl=TTL_LONG, job=None):
        """job: open with a credential bound to this OPEN (munge_cred), else cred."""
        self.d = d
        self.nonce = random.getrandbits(64)
        if job is not None:
            cred = munge_cred(d, job, self.nonce)
        self.conn = Conn(d.addr)
        r = self.conn.call(cmd(OP_OPEN, ttl=ttl, nonce=self.nonce, name=name, cred=cred))
        if r["status"] != 0 or r["session"] == 0:
            self.conn.close()
            raise Failure("OPEN answered %d" % r["status"])
        self.id = r["session"]

    def call(self, op, **kw):
        return self.conn.call(cmd(op, session=self.id, seq=self.d.next_seq(),
                                  nonce=self.nonce, **kw))

    def reconnect(self):
        """A new connection for the session (the daemon closed the old one idle)."""
        self.conn.close()
        self.conn = Conn(self.d.addr)

    def close(self):
        r = self.call(OP_CLOSE)
        self.conn.close()
        if r["status"] != 0:
            raise Failure("CLOSE of session %d answered %d" % (self.id, r["status"]))


def expect_status(r, status):
    if r["status"] != status:
        raise Failure("status %d, expected %d" % (r["status"], status))
    return "status %d" % status


def send_and_half_close(conn, data):
    """Send data and shut down the sending side; a daemon that already refused and
    closed is no error (what it sent is still read)."""
    try:
        conn.send(data)
        conn.s.shutdown(socket.SHUT_WR)
    except OSError:
        pass


def expect_refused(conn, status=None):
    """The daemon refuses: error reply (exactly status if given) or close."""
    r = conn.reply()
    if r is None:
        if status is not None:
            raise Failure("connection closed, expected status %d" % status)
        return "closed"
    if status is not None and r["status"] != status:
        raise Failure("status %d, expected %d" % (r["status"], status))
    if r["status"] >= 0:
        raise Failure("accepted (status %d)" % r["status"])
    return "status %d" % r["status"]


class Checks:
    def __init__(self, daemon):
        self.d = daemon
        self.passed = 0

    def case(self, name, fn, *args):
        """Run one case; then the daemon answers STATUS and its commit has not moved."""
        before = self.d.settled_commit()
        try:
            outcome = fn(*args)
            self.d.alive()
            after = self.d.settled_commit()
        except (Failure, OSError) as e:
            raise Failure("%s: %s" % (name, e))
        if after != before:
            raise Failure("%s: commit moved %d -> %d for refused requests" %
                          (name, before, after))
        self.ok(name, outcome or "")

    def ok(self, name, outcome=""):
        """A step that is not a refusal (logged, so not measured) went as expected."""
        self.passed += 1
        print("ok   %-48s %s" % (name, outcome), flush=True)

    def expect_status(self, name, r, status):
        try:
            self.ok(name, expect_status(r, status))
        except Failure as e:
            raise Failure("%s: %s" % (name, e))

    # --- framing ---------------------------------------------------------------------

    def raw_then_close(self, data):
        """Send data, half-close, and expect a refusal or a plain close."""
        c = Conn(self.d.addr)
        try:
            send_and_half_close(c, data)
            return expect_refused(c)
        finally:
            c.close()

    def raw_open(self, data):
        """Send data and keep the connection open: the daemon must refuse it without
        waiting for more bytes."""
        c = Conn(self.d.addr)
        try:
            c.send(data)
            return expect_refused(c)
        finally:
            c.close()

    def oversized(self, length):
        peak = self.d.vm_peak_kb()
        outcome = self.raw_open(header(length))
        grew = None if peak is None else self.d.vm_peak_kb() - peak
        if grew is not None and grew > 64 * 1024:
            raise Failure("rdlmd's VmPeak grew by %d kB" % grew)
        return outcome + ("" if grew is None else ", VmPeak +%d kB" % grew)

    def half_header_while_others_work(self):
        """A connection stuck in the middle of a header does not block the others."""
        c = Conn(self.d.addr)
        try:
            c.send(header(54)[:5])
            self.d.status()
            c.send(header(54)[5:] + cmd(OP_STATUS)[:20])
            self.d.status()
        finally:
            c.close()
        return "STATUS answered meanwhile"

    def valid_then_garbage(self):
        c = Conn(self.d.addr)
        try:
            r = c.call(cmd(OP_STATUS))
            if r["status"] != 0:
                raise Failure("STATUS before garbage: %d" % r["status"])
            c.send(b"\xff" * 40)
            return expect_refused(c)
        finally:
            c.close()

    # --- protocol --------------------------------------------------------------------

    def refused_command(self, payload, status=None):
        c = Conn(self.d.addr)
        try:
            c.send(frame(payload))
            return expect_refused(c, status)
        finally:
            c.close()

    def expire_a_session(self):
        """Open a session with the shortest TTL and wait until the leader expired it
        (a logged EXPIRE: call this outside a case). Returns its id."""
        before = self.d.status()["sessions"]
        short = Session(self.d, ttl=100)
        short.conn.close()
        end = time.monotonic() + 10
        while self.d.status()["sessions"] > before:
            if time.monotonic() > end:
                raise Failure("session with ttl 100 ms not expired after 10 s")
            time.sleep(0.05)
        return short.id

    def renew(self, session, expect):
        return self.refused_command(cmd(OP_RENEW, session=session, seq=1), expect)

    def release_never_acquired(self, session):
        r = session.call(OP_RELEASE, name=b"never", token=1)
        return expect_status(r, ERR_NOT_OWNER)

    def double_release(self, session, token):
        r = session.call(OP_RELEASE, name=b"twice", token=token)
        return expect_status(r, ERR_NOT_OWNER)

    def client_expire(self, session):
        """EXPIRE is the leader timer's op: refused from a client (on a connection of
        its own, which the daemon may close), and the session stays alive."""
        outcome = self.refused_command(cmd(OP_EXPIRE, session=session.id,
                                           seq=self.d.next_seq(), nonce=session.nonce))
        r = session.call(OP_RENEW)
        if r["status"] != 0:
            raise Failure("session gone after a refused EXPIRE: RENEW %d" % r["status"])
        return outcome + ", session still renews"

    # --- volume ----------------------------------------------------------------------

    def epoch_floor_attack(self, session):
        """An EPOCH asking for the largest floor moves the epoch one step (or to the
        leader's clock epoch), never to the floor: later EPOCHs still succeed, each one
        step, and tokens stay far from the end of the epoch space. (It once set the
        epoch to 2^24-1, after which every EPOCH failed with RDLM_ERR_QUOTA.)"""
        before = session.call(OP_EPOCH)
        self.expect_status("EPOCH", before, 0)
        attack = session.call(OP_EPOCH, token=EPOCH_MAX)
        self.expect_status("EPOCH with floor 2^24-1", attack, 0)
        clock = (int(time.time()) - 1704067200) // 60 + 1
        if attack["epoch"] > max(before["epoch"] + 1, clock + 1):
            raise Failure("EPOCH with floor 2^24-1 moved the epoch %d -> %d (clock epoch %d)"
                          % (before["epoch"], attack["epoch"], clock))
        last = attack["epoch"]
        for i in range(3):
            r = session.call(OP_EPOCH, token=EPOCH_MAX)
            self.expect_status("EPOCH after the attack", r, 0)
            if r["epoch"] != last + 1:
                raise Failure("EPOCH %d after the attack: epoch %d, expected %d"
                              % (i, r["epoch"], last + 1))
            last = r["epoch"]
        self.ok("epochs after a floor of 2^24-1", "%d -> %d -> %d" %
                (before["epoch"], attack["epoch"], last))

    def random_frames(self, n, rng):
        base = [frame(cmd(OP_STATUS)), frame(cmd(OP_RENEW, session=0xDEAD0000BEEF, seq=1))]
        kinds = {"no reply": 0, "error": 0, "ok": 0}
        for i in range(n):
            k = rng.randrange(4)
            if k == 0:    # random bytes, header included
                data = rng.randbytes(rng.randrange(1, 80))
            elif k == 1:  # valid header, random payload of the declared length
                data = frame(rng.randbytes(rng.randrange(0, MAX_PAYLOAD + 1)))
            elif k == 2:  # a valid request with 1-3 random bytes changed
                data = bytearray(rng.choice(base))
                for _ in range(rng.randrange(1, 4)):
                    data[rng.randrange(len(data))] = rng.randrange(256)
                data = bytes(data)
            else:         # a header announcing more than is sent
                payload = rng.randbytes(rng.randrange(1, 200))
                data = header(len(payload) + rng.randrange(1, 100)) + payload
            outcome = "no reply"
            c = Conn(self.d.addr)
            try:
                # Send, half-close, read replies until the daemon closes.
                send_and_half_close(c, data)
                while True:
                    r = c.reply()
                    if r is None:
                        break
                    if r["status"] < 0:
                        outcome = "error"
                        continue
                    outcome = "ok"
                    op = data[HEADER] if len(data) > HEADER else 0
                    if op in LOGGED_OPS:
                        raise Failure("accepted as op %d" % op)
            except Failure as e:
                raise Failure("random frame %d (%s): %s" % (i, data[:80].hex(), e))
            finally:
                c.close()
            kinds[outcome] += 1
            if i % 100 == 99:
                self.d.status()
        return "%d frames: %d no reply, %d error replies, %d STATUS/RENEW/HOMES ok" % (
            n, kinds["no reply"], kinds["error"], kinds["ok"])

    def many_connections(self, n):
        conns = []
        try:
            for _ in range(n):
                conns.append(Conn(self.d.addr))
            for c in conns:
                c.send(frame(cmd(OP_STATUS)))
            for c in conns:
                r = c.reply()
                if r is None or r["status"] != 0:
                    raise Failure("STATUS on one of %d connections: %s" % (n, r))
            # and a STATUS from yet another connection while all n stay open and idle
            self.d.status()
        finally:
            for c in conns:
                c.close()
        return "%d connections answered" % n

    def many_half_frames(self, n):
        conns = []
        try:
            for i in range(n):
                c = Conn(self.d.addr)
                c.send(frame(cmd(OP_STATUS))[: 1 + i % (HEADER + 53)])
                conns.append(c)
            self.d.status()
        finally:
            for c in conns:
                c.close()
        self.d.status()
        return "%d stalled connections, STATUS answered" % n


def run_hostile(d, args):
    t = Checks(d)
    rng = random.Random(args.seed)
    print("seed %d" % args.seed)
    status = cmd(OP_STATUS)

    t.case("truncated header then close", t.raw_then_close, header(54)[:7])
    t.case("wrong magic", t.raw_open, header(54, magic=0x4D4C4453) + status)
    t.case("wrong version", t.raw_open, header(54, version=2) + status)
    t.case("reply kind sent as a request", t.raw_open, header(54, kind=REPLY) + status)
    t.case("unknown kind", t.raw_open, header(54, kind=7) + status)
    t.case("nonzero reserved field", t.raw_open, header(54, zero=1) + status)
    t.case("length cap + 1, no payload sent", t.oversized, MAX_PAYLOAD + 1)
    t.case("length 0xffffffff, no payload sent", t.oversized, 0xFFFFFFFF)
    t.case("length 0x7fffffff, no payload sent", t.oversized, 0x7FFFFFFF)
    t.case("empty payload", t.raw_open, header(0))
    t.case("valid header, garbage payload", t.raw_open, frame(b"\xa5" * 100))
    t.case("valid header, cap-sized garbage", t.raw_open, frame(rng.randbytes(MAX_PAYLOAD)))
    t.case("truncated payload then close", t.raw_then_close, header(54) + status[:30])
    t.case("garbage after a valid frame", t.valid_then_garbage)
    t.case("half header while others work", t.half_header_while_others_work)

    bad_cmds = [
        ("op 0", cmd(0)),
        ("op 10", cmd(10)),
        ("op 255", cmd(255)),
        ("STATUS with a trailing byte", cmd(OP_STATUS) + b"x"),
        ("STATUS with a name", cmd(OP_STATUS, name=b"x")),
        ("name_len beyond the payload", status[:2] + b"\x10\x00" + status[4:]),
        ("cred_len beyond the payload", status[:-2] + b"\xff\x03"),
        ("OPEN with ttl 0", cmd(OP_OPEN, nonce=1)),
        ("OPEN with ttl 99", cmd(OP_OPEN, ttl=99, nonce=1)),
        ("OPEN with ttl 600001", cmd(OP_OPEN, ttl=600001, nonce=1)),
        ("OPEN with a space in the namespace",
         cmd(OP_OPEN, ttl=1000, nonce=1, name=b"a b")),
        ("ACQUIRE with an empty name", cmd(OP_ACQUIRE, session=1, seq=1)),
        ("ACQUIRE with a 128-byte name",
         cmd(OP_ACQUIRE, session=1, seq=1, name=b"n" * 128)),
        ("ACQUIRE with unknown flags", cmd(OP_ACQUIRE, flags=0x80, session=1, seq=1,
                                           name=b"x")),
        ("ACQUIRE with a NUL in the name", cmd(OP_ACQUIRE, session=1, seq=1, name=b"a\0b")),
        ("RELEASE with session 0", cmd(OP_RELEASE, seq=1, name=b"x", token=1)),
        ("RENEW with session 0", cmd(OP_RENEW, seq=1)),
        ("RENEW with a credential", cmd(OP_RENEW, session=1, seq=1, cred=b"MUNGE:x:")),
        ("EPOCH of an unknown session", cmd(OP_EPOCH, session=0xABCDEF, seq=1)),
        ("CLOSE of an unknown session", cmd(OP_CLOSE, session=0xABCDEF, seq=1)),
        ("ACQUIRE by an unknown session", cmd(OP_ACQUIRE, session=0xABCDEF, seq=1,
                                              name=b"x")),
        ("EXPIRE of an unknown session", cmd(OP_EXPIRE, session=0xABCDEF)),
    ]
    for what, payload in bad_cmds:
        t.case(what, t.refused_command, payload)

    t.case("RENEW of an unknown session", t.renew, 0x5EE5105, ERR_LEASE_EXPIRED)
    expired = t.expire_a_session()
    t.case("RENEW of an expired session", t.renew, expired, ERR_LEASE_EXPIRED)

    session = Session(d)
    t.case("RELEASE of a lock never acquired", t.release_never_acquired, session)
    r = session.call(OP_ACQUIRE, name=b"twice")
    t.expect_status("ACQUIRE", r, 0)
    t.expect_status("first RELEASE", session.call(OP_RELEASE, name=b"twice",
                                                  token=r["token"]), 0)
    t.case("double RELEASE", t.double_release, session, r["token"])
    t.case("EXPIRE sent by a client", t.client_expire, session)
    t.epoch_floor_attack(session)
    session.close()

    t.case("%d random frames" % args.frames, t.random_frames, args.frames, rng)
    t.case("%d connections at once" % args.conns, t.many_connections, args.conns)
    t.case("%d connections stalled mid-frame" % args.conns, t.many_half_frames, args.conns)
    return t.passed


class Limits(Checks):
    """Timeouts, the per-peer cap and the warn limit (mode limits)."""

    def __init__(self, daemon, args):
        super().__init__(daemon)
        self.frame_s = args.frame_timeout_ms / 1000.0
        self.idle_s = args.idle_timeout_ms / 1000.0
        self.per_peer = args.max_connections_per_peer
        self.log = args.log
        self.flood_end = None

    def closed_between(self, c, t0, lo, hi):
        """The daemon closes c between lo and hi seconds after t0, sending nothing."""
        c.s.settimeout(max(t0 + hi - time.monotonic(), 0.01))
        try:
            data = c.s.recv(1)
        except ConnectionResetError:
            data = b""
        except socket.timeout:
            raise Failure("still open %.2f s later" % hi)
        took = time.monotonic() - t0
        if data:
            raise Failure("bytes instead of a close")
        if took < lo:
            raise Failure("closed after %.2f s, expected %.2f s at least" % (took, lo))
        return "closed after %.2f s" % took

    def warn_flood(self, n):
        """n bad headers, each on a connection of its own: the daemon closes each, and
        logs at most WARNS_PER_S warn lines a second about them."""
        with open(self.log, "rb") as f:
            f.seek(0, os.SEEK_END)
            start = f.tell()
        t0 = time.monotonic()
        for _ in range(n):
            c = Conn(self.d.addr)
            try:
                c.send(header(54, magic=0))
                expect_refused(c)
            finally:
                c.close()
        took = time.monotonic() - t0
        self.flood_end = time.monotonic()
        time.sleep(0.2)
        with open(self.log, "rb") as f:
            f.seek(start)
            lines = f.read().decode("ascii", "replace").splitlines()
        warns = [x for x in lines if " warn " in x and "lease: client" in x]
        allowed = WARNS_PER_S * (int(took) + 2)  # the one-second windows it touched
        if not warns or len(warns) > allowed:
            raise Failure("%d warn lines for %d bad frames in %.2f s (1..%d allowed)" %
                          (len(warns), n, took, allowed))
        return "%d bad frames in %.2f s: %d warn lines" % (n, took, len(warns))

    def warn_report(self):
        """The warn lines the flood did not get are reported as a count at warn, about
        10 s after the first of them (RDLM_LEASE_WARN_REPORT_MS)."""
        end = self.flood_end + 13.0
        while True:
            with open(self.log, "rb") as f:
                if b"warnings about clients went to debug" in f.read():
                    return "reported %.1f s after the flood" % (
                        time.monotonic() - self.flood_end)
            if time.monotonic() > end:
                raise Failure("no report of suppressed warnings 13 s after the flood")
            time.sleep(0.2)

    def per_peer_cap(self):
        """At the per-peer cap, a new connection from that address closes the oldest
        idle one there; with none idle (each has a frame begun) it is closed at once."""
        time.sleep(0.3)  # the daemon has seen the earlier STATUS connections close
        conns = []
        try:
            for _ in range(self.per_peer):
                conns.append(Conn(self.d.addr))
                expect_status(conns[-1].call(cmd(OP_STATUS)), 0)
            extra = Conn(self.d.addr)
            conns.append(extra)
            expect_status(extra.call(cmd(OP_STATUS)), 0)
            evicted = self.closed_between(conns[0], time.monotonic(), 0.0, 1.0)
            for c in conns[1:]:
                c.send(b"RD")  # busy now: a frame begun
            refused = Conn(self.d.addr)
            try:
                outcome = self.closed_between(refused, time.monotonic(), 0.0,
                                              min(self.frame_s, self.idle_s) / 2)
            finally:
                refused.close()
        finally:
            for c in conns:
                c.close()
        time.sleep(0.3)
        self.d.status()
        return ("%d admitted, the next admitted and the oldest idle %s; with none idle "
                "the next %s; STATUS once they closed" % (self.per_peer, evicted, outcome))

    def partial_frame(self, data):
        """data, a frame begun and not finished, is closed within the frame timeout."""
        c = Conn(self.d.addr)
        try:
            t0 = time.monotonic()
            c.send(data)
            return self.closed_between(c, t0, self.frame_s * 0.9, self.frame_s + 1.5)
        finally:
            c.close()

    def trickle(self, gap):
        """A frame sent one byte every gap seconds is closed within the frame timeout
        of its first byte, however long each byte keeps the connection busy."""
        data = frame(cmd(OP_STATUS))
        c = Conn(self.d.addr)
        try:
            t0 = time.monotonic()
            for i in range(len(data)):
                try:
                    c.send(data[i:i + 1])
                except OSError:
                    break  # closed meanwhile
                if select.select([c.s], [], [], gap)[0]:
                    break
            else:
                raise Failure("a %d-byte frame trickled in %.1f s without a close" %
                              (len(data), time.monotonic() - t0))
            return self.closed_between(c, t0, self.frame_s * 0.9, self.frame_s + 1.5)
        finally:
            c.close()

    def idle(self, after_status):
        t0 = time.monotonic()
        c = Conn(self.d.addr)
        try:
            if after_status:
                expect_status(c.call(cmd(OP_STATUS)), 0)
                t0 = time.monotonic()
            return self.closed_between(c, t0, self.idle_s * 0.9, self.idle_s + 1.5)
        finally:
            c.close()

    def parked_not_idle(self):
        """An ACQUIRE parked longer than both timeouts gets its RDLM_ERR_TIMEOUT on its
        connection (logged entries: not a case)."""
        wait_ms = int((self.idle_s + self.frame_s) * 1000) + 1000
        holder, waiter = Session(self.d), Session(self.d)
        r = holder.call(OP_ACQUIRE, name=b"limits")
        self.expect_status("ACQUIRE by the holder", r, 0)
        t0 = time.monotonic()
        w = waiter.call(OP_ACQUIRE, name=b"limits", timeout=wait_ms)
        took = time.monotonic() - t0
        if took < wait_ms / 1000.0 * 0.9:
            raise Failure("parked ACQUIRE answered after %.2f s of %d ms" % (took, wait_ms))
        self.expect_status("ACQUIRE parked %d ms > idle timeout" % wait_ms, w, ERR_TIMEOUT)
        holder.reconnect()  # idle meanwhile
        self.expect_status("RELEASE by the holder",
                           holder.call(OP_RELEASE, name=b"limits", token=r["token"]), 0)
        waiter.close()
        holder.close()


def run_limits(d, args):
    t = Limits(d, args)
    status = frame(cmd(OP_STATUS))
    t.case("200 bad frames at once", t.warn_flood, 200)
    t.case("connection %d from one address" % (args.max_connections_per_peer + 1),
           t.per_peer_cap)
    t.case("half a header ('RD')", t.partial_frame, status[:2])
    t.case("a header without its payload", t.partial_frame, status[:HEADER])
    t.case("a frame sent a byte every 100 ms", t.trickle, 0.1)
    t.case("a new connection that sends nothing", t.idle, False)
    t.case("a connection idle after a reply", t.idle, True)
    t.parked_not_idle()
    t.ok("suppressed warn lines reported", t.warn_report())
    return t.passed


class HungMunged(threading.Thread):
    """A munged that hangs: it accepts connections and never answers, until release();
    from then on it closes every connection at once (munged failing fast)."""

    def __init__(self, path):
        super().__init__(daemon=True)
        self.srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.srv.bind(path)
        os.chmod(path, 0o777)
        self.srv.listen(64)
        self.srv.settimeout(0.1)
        self.lock = threading.Lock()
        self.held, self.hanging = [], True

    def run(self):
        while True:
            try:
                c, _ = self.srv.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            with self.lock:
                if self.hanging:
                    c.setblocking(False)
                    self.held.append(c)
                    continue
            c.close()

    def waiting(self):
        """Connections whose client still waits (libmunge gives up on one after a
        while and retries on a new one)."""
        with self.lock:
            for c in list(self.held):
                try:
                    while c.recv(4096):
                        pass
                except BlockingIOError:
                    continue
                except OSError:
                    pass
                self.held.remove(c)  # the client closed it
                c.close()
            return len(self.held)

    def release(self):
        with self.lock:
            self.hanging = False
            for c in self.held:
                c.close()


def run_auth_stall(d, args):
    t = Checks(d)
    munged = HungMunged(args.munge_socket)
    munged.start()
    forged = b"MUNGE:AwQFAAD" + b"A" * 120 + b":"

    def stall():
        opens = []
        for _ in range(4):
            c = Conn(d.addr)
            c.send(frame(cmd(OP_OPEN, ttl=TTL_LONG, nonce=random.getrandbits(64),
                             cred=forged)))
            opens.append(c)
        end = time.monotonic() + TIMEOUT
        while munged.waiting() == 0:
            if time.monotonic() > end:
                raise Failure("no OPEN reached munged within %.0f s" % TIMEOUT)
            time.sleep(0.01)
        worst, n = 0.0, 0
        end = time.monotonic() + 2.0
        while time.monotonic() < end:
            t0 = time.monotonic()
            d.status()
            worst = max(worst, time.monotonic() - t0)
            n += 1
            time.sleep(0.05)
        if worst > STALL_STATUS_S:
            raise Failure("a STATUS took %.0f ms while munged hung" % (worst * 1000))
        at_munged = munged.waiting()
        if at_munged >= 4:
            raise Failure("%d verifications at munged at once" % at_munged)
        opens[0].close()   # running: its result is dropped
        opens[-1].close()  # waiting for a turn: dropped before it runs
        munged.release()
        for c in opens[1:-1]:
            expect_refused(c, ERR_AUTH)
            c.close()
        return ("%d STATUS, slowest %.1f ms; %d of 4 OPENs at munged; 2 refused, "
                "2 dropped" % (n, worst * 1000, at_munged))

    t.case("OPENs while munged hangs", stall)
    return t.passed


def munge_raw(payload, user=None):
    """A real credential from the munge CLI carrying payload (bytes; b"": munge -n),
    made by user (None: this process; else via setpriv), or None without munged."""
    if shutil.which("munge") is None:
        return None
    argv = ["munge", "-n"] if payload == b"" else ["munge", "-s", payload.decode()]
    if user is not None:
        argv = ["setpriv", "--reuid", str(user), "--regid", str(user), "--clear-groups"] + argv
    p = subprocess.run(argv, capture_output=True, timeout=10)
    return p.stdout.strip() if p.returncode == 0 else None


def binding(authority, nonce, job):
    """The payload that binds a credential to one OPEN (core/lease/include/auth.h)."""
    return b"rdlm-open v1 authority=%016x nonce=%016x job=%s" % (authority, nonce, job)


def munge_cred(d, job, nonce, authority=None, user=None):
    """A credential bound to the OPEN of nonce at d's authority (or authority)."""
    a = d.status()["token"] if authority is None else authority
    return munge_raw(binding(a, nonce, job.encode() if isinstance(job, str) else job), user)


def homes(d, session=0, nonce=0):
    c = Conn(d.addr)
    try:
        return c.call(cmd(OP_HOMES, session=session, nonce=nonce))
    finally:
        c.close()


def run_auth_open(d, args):
    t = Checks(d)

    def open_refused(cred, nonce=None):
        c = Conn(d.addr)
        try:
            c.send(frame(cmd(OP_OPEN, ttl=TTL_LONG,
                             nonce=random.getrandbits(64) if nonce is None else nonce,
                             cred=cred)))
            return expect_refused(c, ERR_AUTH)
        finally:
            c.close()

    def homes_refused(session=0, nonce=0):
        return expect_status(homes(d, session, nonce), ERR_AUTH)

    t.case("HOMES without a session", homes_refused)
    t.case("OPEN without a credential", open_refused, b"")
    t.case("OPEN with a forged credential", open_refused,
           b"MUNGE:AwQFAAD" + b"A" * 120 + b":")
    t.case("OPEN with random bytes as credential", open_refused,
           bytes(random.Random(args.seed).randrange(1, 256) for _ in range(200)))

    authority = d.status()["token"]
    if authority == 0:
        raise Failure("STATUS names no authority id")
    if munge_raw(b"probe") is None:
        print("SKIP real-credential checks: needs munged: bash scripts/munged.sh start")
        return t.passed

    nonce = random.getrandbits(64)
    flipped = bytearray(munge_cred(d, "4711", nonce))
    mid = len(flipped) // 2
    flipped[mid] = ord("B") if flipped[mid] == ord("A") else ord("A")
    t.case("OPEN with a credential with one byte flipped", open_refused, bytes(flipped),
           nonce)
    t.case("OPEN with a credential whose job has a '/'", open_refused,
           munge_cred(d, "47/11", nonce), nonce)
    t.case("OPEN with an empty credential payload (munge -n)", open_refused,
           munge_raw(b""), nonce)
    t.case("OPEN with a credential carrying a bare job (bound to nothing)", open_refused,
           munge_raw(b"4711"), nonce)
    t.case("OPEN with a credential made for another authority", open_refused,
           munge_cred(d, "4711", nonce, authority=authority ^ 1), nonce)
    t.case("OPEN with a credential made for another nonce", open_refused,
           munge_cred(d, "4711", nonce ^ 1), nonce)

    owner = Session(d, job="4711")
    t.ok("OPEN with a bound credential", "session %d" % owner.id)
    t.expect_status("ACQUIRE in the authenticated session",
                    owner.call(OP_ACQUIRE, name=b"x"), 0)
    replay = munge_cred(d, "4711", owner.nonce)
    again = Conn(d.addr)
    try:
        r = again.call(cmd(OP_OPEN, ttl=TTL_LONG, nonce=owner.nonce, cred=replay))
    finally:
        again.close()
    t.expect_status("re-attach: OPEN with the session's nonce and a fresh credential",
                    r, 0)
    if r["session"] != owner.id:
        raise Failure("re-attach gave session %d, not %d" % (r["session"], owner.id))
    t.case("OPEN replaying that credential (same nonce)", open_refused, replay, owner.nonce)
    t.case("re-attach with a credential of another job", open_refused,
           munge_cred(d, "4712", owner.nonce), owner.nonce)
    if os.geteuid() == 0 and shutil.which("setpriv"):
        t.case("re-attach with a credential of another uid", open_refused,
               munge_cred(d, "4711", owner.nonce, user=65534), owner.nonce)
    t.case("HOMES in another's session (its id, another nonce)", homes_refused, owner.id,
           owner.nonce ^ 1)
    r = homes(d, owner.id, owner.nonce)
    if r["status"] not in (0, ERR_UNSUPPORTED, ERR_UNAVAILABLE):
        raise Failure("HOMES in an own session answered %d" % r["status"])
    t.ok("HOMES in an own session", "blob" if "blob" in r else "status %d" % r["status"])

    # Lock names are per job: the server prefixes "uid/job/", whatever namespace the
    # client sent with its OPEN.
    other_job = Session(d, job="4712")
    same_job = Session(d, job="4711")
    claims_ns = Session(d, job="4713", name=b"%d/4711" % os.geteuid())
    t.expect_status("another job takes the same name",
                    other_job.call(OP_ACQUIRE, flags=ACQ_TRY, name=b"x"), 0)
    t.expect_status("another session of the same job finds it busy",
                    same_job.call(OP_ACQUIRE, flags=ACQ_TRY, name=b"x"), ERR_BUSY)
    t.expect_status("a namespace sent with OPEN is ignored",
                    claims_ns.call(OP_ACQUIRE, flags=ACQ_TRY, name=b"x"), 0)

    # The session is bound to the credential that opened it: a client without one
    # cannot act in it by naming its (small, sequential) id.
    t.case("ACQUIRE in another's session, no credential", t.refused_command,
           cmd(OP_ACQUIRE, session=owner.id, seq=d.next_seq(), name=b"y"))
    t.case("CLOSE of another's session, no credential", t.refused_command,
           cmd(OP_CLOSE, session=owner.id, seq=d.next_seq()))
    for session in (owner, other_job, same_job, claims_ns):
        session.close()
    return t.passed


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("addr")
    ap.add_argument("mode", choices=["hostile_client", "auth_open", "limits", "auth_stall"])
    ap.add_argument("--pid", type=int, default=0)
    ap.add_argument("--frames", type=int,
                    default=int(os.environ.get("RDLMTEST_HOSTILE_FRAMES", 1000)))
    ap.add_argument("--conns", type=int,
                    default=int(os.environ.get("RDLMTEST_HOSTILE_CONNS", 200)))
    ap.add_argument("--seed", type=int, default=int(time.time()))
    ap.add_argument("--log", help="rdlmd's log (limits)")
    ap.add_argument("--frame-timeout-ms", type=int, default=5000)
    ap.add_argument("--idle-timeout-ms", type=int, default=60000)
    ap.add_argument("--max-connections-per-peer", type=int, default=256)
    ap.add_argument("--munge-socket", help="where rdlmd's munged listens (auth_stall)")
    args = ap.parse_args()
    if (args.mode == "limits" and not args.log or
            args.mode == "auth_stall" and not args.munge_socket):
        ap.error("limits needs --log, auth_stall --munge-socket")
    modes = {"hostile_client": run_hostile, "auth_open": run_auth_open,
             "limits": run_limits, "auth_stall": run_auth_stall}

    d = Daemon(args)
    try:
        d.wait_leader()
        n = modes[args.mode](d, args)
        d.alive()
        d.status()
    except (Failure, OSError) as e:
        print("FAIL %s" % e, flush=True)
        return 1
    print("hostile_client: %s: %d checks passed" % (args.mode, n))
    return 0


if __name__ == "__main__":
    sys.exit(main())
