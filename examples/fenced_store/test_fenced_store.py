#!/usr/bin/env python3
"""fenced_store's protocol against a running store on loopback (ctest example.fenced_store).

usage: test_fenced_store.py PATH/TO/fenced_store

Proves: a write with a token smaller than the key's highest accepted one is refused
(STALE <max>) and an equal one accepted; keys are fenced separately; malformed,
overlong, binary and random input gets ERR and never stops the store; a client that
never reads its replies does not block the others; connections beyond the limit are
refused; every decision is in the history file as one JSON line.
"""
import json
import os
import random
import socket
import subprocess
import sys
import tempfile
import time
import unittest

STORE = None  # path, from argv


class Store:
    """A fenced_store process listening on 127.0.0.1 (ephemeral port)."""

    def __init__(self, tmpdir):
        self.history = os.path.join(tmpdir, "history.jsonl")
        self.proc = subprocess.Popen(
            [STORE, "--listen", "127.0.0.1:0", "--history", self.history],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()  # "fenced_store: listening on A:P"
        if "listening on" not in line:
            self.proc.kill()
            raise RuntimeError("fenced_store did not start: %r %s" %
                               (line, self.proc.stderr.read()))
        host, port = line.split()[-1].rsplit(":", 1)
        self.addr = (host, int(port))

    def connect(self):
        s = socket.create_connection(self.addr, timeout=5)
        return Conn(s)

    def stop(self):
        self.proc.terminate()
        out, err = self.proc.communicate(timeout=10)
        return self.proc.returncode, out, err

    def records(self):
        with open(self.history) as f:
            return [json.loads(line) for line in f]


class Conn:
    def __init__(self, sock):
        self.sock = sock
        self.buf = b""

    def send(self, data):
        self.sock.sendall(data)

    def reply(self):
        while b"\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError("store closed the connection")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return line.decode()

    def ask(self, line):
        self.send(line if isinstance(line, bytes) else line.encode() + b"\n")
        return self.reply()

    def close(self):
        self.sock.close()


class FencedStoreTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.store = Store(self.tmp.name)

    def tearDown(self):
        if self.store.proc.poll() is None:
            self.store.stop()
        self.tmp.cleanup()

    def assert_alive(self):
        c = self.store.connect()
        self.assertEqual(c.ask("READ alive-check"), "NONE")
        c.close()
        self.assertIsNone(self.store.proc.poll(), "fenced_store exited")

    def test_fencing_per_key(self):
        c = self.store.connect()
        self.assertEqual(c.ask("HELLO w1"), "OK")
        self.assertEqual(c.ask("WRITE k 5 v1"), "OK")
        self.assertEqual(c.ask("WRITE k 5 v2"), "OK")  # equal token: same holder
        self.assertEqual(c.ask("WRITE k 4 old"), "STALE 5")
        self.assertEqual(c.ask("READ k"), "VALUE 5 v2")  # the stale write changed nothing
        self.assertEqual(c.ask("WRITE k 1099511627777 hello world"), "OK")
        self.assertEqual(c.ask("READ k"), "VALUE 1099511627777 hello world")
        self.assertEqual(c.ask("WRITE other 1 a"), "OK")  # keys are fenced separately
        self.assertEqual(c.ask("WRITE k 18446744073709551615 max"), "OK")
        self.assertEqual(c.ask("WRITE k 18446744073709551614 x"), "STALE 18446744073709551615")
        self.assertEqual(c.ask("READ nokey"), "NONE")
        c.close()
        recs = self.store.records()
        self.assertEqual([r["result"] for r in recs],
                         ["ok", "ok", "stale", "ok", "ok", "ok", "stale"])
        for r in recs:
            self.assertEqual(r["op"], "write")
            self.assertEqual(r["client"], "w1")
            self.assertIsInstance(r["t_ns"], int)
        self.assertEqual(recs[2], dict(recs[2], key="k", token=4, max=5))
        self.assertTrue(all(a["t_ns"] <= b["t_ns"] for a, b in zip(recs, recs[1:])))
        rc, out, _ = self.store.stop()
        self.assertEqual(rc, 0)
        self.assertIn("5 writes accepted, 2 stale writes rejected", out)

    def test_default_client_name_is_peer_address(self):
        c = self.store.connect()
        self.assertEqual(c.ask("WRITE k 1 v"), "OK")
        port = c.sock.getsockname()[1]
        c.close()
        self.assertEqual(self.store.records()[0]["client"], "127.0.0.1:%d" % port)

    def test_bad_input(self):
        c = self.store.connect()
        cases = {
            b"": "ERR missing arguments",
            b"WRITE": "ERR missing arguments",
            b"WRITE k": "ERR missing token",
            b"WRITE k 1": "ERR missing value",
            b"WRITE k 1 ": "ERR bad value",
            b"WRITE k abc v": "ERR bad token",
            b"WRITE k -1 v": "ERR bad token",
            b"WRITE k +1 v": "ERR bad token",
            b"WRITE k 18446744073709551616 v": "ERR bad token",
            b"WRITE k 99999999999999999999999 v": "ERR bad token",
            b"WRITE  1 v": "ERR bad key",
            b"WRITE k\x00 1 v": "ERR bad key",
            b"WRITE k\xff 1 v": "ERR bad key",
            b"WRITE " + b"k" * 65 + b" 1 v": "ERR bad key",
            b"WRITE k 1 a\x01b": "ERR bad value",
            b"WRITE k 1 " + b"v" * 901: "ERR bad value",
            b"READ ": "ERR bad key",
            b"READ a b": "ERR bad key",
            b"HELLO bad name": "ERR bad client name",
            b"HELLO " + b"c" * 65: "ERR bad client name",
            b"write k 1 v": "ERR unknown command",
            b"\x00\x01\x02 x": "ERR unknown command",
        }
        for line, want in cases.items():
            self.assertEqual(c.ask(line + b"\n"), want, line)
        self.assertEqual(c.ask("WRITE k 1 " + "v" * 900), "OK")  # longest value
        self.assertEqual(c.ask(b"READ k\r\n"), "VALUE 1 " + "v" * 900)
        c.close()
        self.assertEqual(len(self.store.records()), 1)  # only the valid write decided
        self.assert_alive()

    def test_overlong_line_then_more_requests(self):
        c = self.store.connect()
        c.send(b"WRITE k 1 " + b"x" * 5000 + b"\nWRITE k 2 after\n")
        self.assertEqual(c.reply(), "ERR line too long")
        self.assertEqual(c.reply(), "OK")
        # A line of exactly FSTORE_LINE_MAX (1024) bytes fits; 1025 does not.
        self.assertEqual(c.ask("HELLO " + "c" * 64 + " " * 954), "ERR bad client name")
        self.assertEqual(c.ask("HELLO " + "c" * 64 + " " * 955), "ERR line too long")
        self.assertEqual(c.ask("READ k"), "VALUE 2 after")
        c.close()

    def test_pipelined_and_split_requests(self):
        c = self.store.connect()
        c.send(b"".join(b"WRITE k %d v%d\n" % (i, i) for i in range(1, 201)))
        self.assertEqual([c.reply() for _ in range(200)], ["OK"] * 200)
        for b in b"READ k\n":  # one byte per send
            c.send(bytes([b]))
            time.sleep(0.001)
        self.assertEqual(c.reply(), "VALUE 200 v200")
        c.close()

    def test_client_that_never_reads_does_not_block_others(self):
        flood = self.store.connect()
        flood.sock.setblocking(False)
        sent = 0
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and sent < 64 << 20:
            try:
                sent += flood.sock.send(b"READ k\n" * 8192)
            except BlockingIOError:
                break  # both socket buffers full: the store stopped reading it
        other = self.store.connect()
        self.assertEqual(other.ask("WRITE k 3 v"), "OK")
        other.close()
        flood.close()
        self.assert_alive()

    def test_connection_limit(self):
        conns = [self.store.connect() for _ in range(64)]
        for c in conns[:3]:
            self.assertEqual(c.ask("READ k"), "NONE")
        extra = self.store.connect()
        self.assertEqual(extra.reply(), "ERR too many connections")
        extra.close()
        conns.pop().close()
        time.sleep(0.1)
        self.assert_alive()
        for c in conns:
            c.close()

    def test_random_garbage(self):
        rng = random.Random(6)
        c = self.store.connect()
        for _ in range(2000):
            n = rng.randrange(0, 1200)
            line = bytes(rng.randrange(256) for _ in range(n)).replace(b"\n", b" ")
            reply = c.ask(line + b"\n")
            self.assertTrue(reply.startswith("ERR"), (line[:40], reply))
        c.close()
        self.assert_alive()

    def test_abrupt_disconnects(self):
        for i in range(20):
            c = self.store.connect()
            c.send(b"WRITE k %d half" % (i + 1))  # no newline, then gone
            c.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\0\0\0\0\0\0\0")
            c.close()  # RST
        self.assert_alive()
        self.assertEqual(self.store.records(), [])


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    STORE = sys.argv.pop(1)
    unittest.main(verbosity=2)
