"""Statuses as exceptions, and bad input. Proves: every error status of
include/rdlm/status.h has its class, named after it and under the group of its range,
with the library's text; closed handles, a destroyed context's handles, a second
release and out-of-range arguments raise the documented status and never reach C with
a stale handle; a lock whose holder died is taken with a flag and a warning, not an
exception, and with the warning made an exception nothing stays held; a close racing a
wait on its handle is refused; a library that is not librdlm is not loaded."""

import os
import re
import subprocess
import sys
import threading
import time
import unittest
import warnings

import rdlm

STATUS_H = os.path.join(os.path.dirname(__file__), "..", "..", "include", "rdlm", "status.h")


def camel(name):
    """RDLM_ERR_NOT_OWNER -> NotOwnerError"""
    return "".join(w.capitalize() for w in name[len("RDLM_ERR_"):].split("_")) + "Error"


class Statuses(unittest.TestCase):
    def test_every_error_status_has_its_class(self):
        with open(STATUS_H) as f:
            listed = re.findall(r"X\((RDLM_ERR_\w+), (-\d+),", f.read())
        self.assertGreater(len(listed), 20)
        for name, value in listed:
            cls = getattr(rdlm, camel(name))
            err = rdlm.errors.error(int(value), "here")
            self.assertIs(type(err), cls)
            self.assertEqual((err.status, err.name), (int(value), name))
            group = {0: rdlm.ArgumentError, 1: rdlm.StateError, 2: rdlm.PeerError,
                     3: rdlm.FatalError}[-int(value) // 100]
            self.assertTrue(issubclass(cls, group), name)
            self.assertIn(err.text, str(err))
        self.assertEqual(len(rdlm.errors._ERRORS), len(listed))

    def test_unknown_status_gets_its_group(self):
        self.assertIs(type(rdlm.errors.error(-250, "here")), rdlm.PeerError)


class BadInput(unittest.TestCase):
    def setUp(self):
        self.ctx = rdlm.Context()

    def tearDown(self):
        self.ctx.close()

    def test_closed_lock_raises_closed(self):
        lock = self.ctx.lock("closed")
        lock.close()
        for call in (lock.acquire, lock.release, lock.try_acquire, lock.close):
            with self.assertRaises(rdlm.ClosedError) as caught:
                call()
            self.assertEqual(caught.exception.status, -4)
        self.assertIsNot(self.ctx.lock("closed"), lock)  # a fresh handle

    def test_double_release_raises_not_owner(self):
        lock = self.ctx.lock("twice")
        lock.acquire()
        lock.release()
        with self.assertRaises(rdlm.NotOwnerError) as caught:
            lock.release()
        self.assertEqual(caught.exception.status, -102)
        self.assertIn("lock 'twice' release", str(caught.exception))
        with self.assertRaises(rdlm.NotOwnerError):
            self.ctx.semaphore("sem-twice", 1).release()
        with self.assertRaises(rdlm.NotOwnerError):
            self.ctx.rwlock("rw-twice").write_release()

    def test_destroyed_context(self):
        ctx = rdlm.Context()
        objects = [ctx.lock("d1"), ctx.rwlock("d2"), ctx.counter("d3"),
                   ctx.semaphore("d4", 1), ctx.named_barrier("d5", 1)]
        ctx.close()
        ctx.close()  # a second close does nothing
        for obj in objects:
            with self.assertRaises(rdlm.ClosedError):
                obj.close()
        with self.assertRaises(rdlm.ClosedError):
            objects[0].acquire()
        with self.assertRaises(rdlm.BadHandleError):
            ctx.lock("d6")
        with self.assertRaises(rdlm.BadHandleError):
            ctx.stats()

    def test_timeouts_at_the_edges(self):
        lock = self.ctx.lock("edges")
        for endless in (float("inf"), 1e300, 2**70):  # beyond 584 years: no limit
            lock.acquire(timeout=endless)
            lock.release()
        lock.acquire()
        try:
            # a positive timeout below 1 ns is a wait (of 1 ns), not a try
            with self.assertRaises(rdlm.TimeoutError):
                lock.acquire(timeout=1e-10)
            with self.assertRaises(rdlm.BusyError):
                lock.acquire(timeout=0)
        finally:
            lock.release()

    def test_bad_arguments(self):
        with self.assertRaises(rdlm.NameTooLongError):
            self.ctx.lock("x" * (rdlm.NAME_MAX + 1))
        with self.assertRaises(rdlm.NameTooLongError):
            self.ctx.lock("")
        for bad in ("a\0b", b"bytes", 7):
            with self.assertRaises(rdlm.InvalidArgError):
                self.ctx.lock(bad)
        self.ctx.counter("kind")
        with self.assertRaises(rdlm.KindMismatchError):
            self.ctx.lock("kind")
        lock = self.ctx.lock("args")
        for bad in (-1, "1", True, float("nan"), -float("inf")):
            with self.assertRaises(rdlm.InvalidArgError):
                lock.acquire(timeout=bad)
        sem = self.ctx.semaphore("sem-args", 2)
        for k in (0, 3, -1, 2**32 + 1):  # 2**32 + 1 would wrap to 1 in a uint32_t
            with self.assertRaises(rdlm.InvalidArgError):
                sem.acquire(k, timeout=0)
        with self.assertRaises(rdlm.InvalidArgError):
            self.ctx.counter("cnt-args").fetch_add(2**63)
        with self.assertRaises(rdlm.InvalidArgError):
            self.ctx.semaphore("sem-zero", 0)
        with self.assertRaises(rdlm.InvalidArgError):
            rdlm.Context(rank=0)  # rank without size and rendezvous

    def test_owner_dead_is_a_flag_and_a_warning(self):
        child = ("import os, rdlm\n"
                 "rdlm.Context().lock('dies').acquire()\n"
                 "os._exit(0)\n")
        subprocess.run([sys.executable, "-c", child], check=True, timeout=30)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            token = self.ctx.lock("dies").acquire(timeout=10)
        self.assertTrue(token.owner_dead)
        self.assertEqual([w.category for w in caught], [rdlm.OwnerDeadWarning])
        self.ctx.lock("dies").release()
        self.assertFalse(self.ctx.lock("dies").acquire(timeout=1).owner_dead)
        self.ctx.lock("dies").release()

    def test_owner_dead_as_an_exception_leaves_nothing_held(self):
        # The filter docs/python.md suggests: `with` must not leave the lock held when
        # its __enter__ raises (it did: a second context could never take it).
        child = ("import os, rdlm\n"
                 "rdlm.Context().lock('dies-raised').acquire()\n"
                 "os._exit(0)\n")
        subprocess.run([sys.executable, "-c", child], check=True, timeout=30)
        lock = self.ctx.lock("dies-raised")
        with warnings.catch_warnings():
            warnings.simplefilter("error", rdlm.OwnerDeadWarning)
            with self.assertRaises(rdlm.OwnerDeadWarning):
                with lock:
                    self.fail("the body ran")
        with rdlm.Context() as other:
            self.assertIsNotNone(other.lock("dies-raised").try_acquire())

    def test_close_while_another_thread_waits_is_refused(self):
        # C forbids a close racing a call on the handle; the close used to go through,
        # and the waiter then took the lock through the closed handle for good.
        lock = self.ctx.lock("close-wait")
        with rdlm.Context() as other:
            held = other.lock("close-wait")
            held.acquire()
            waiter = threading.Thread(target=lambda: lock.acquire(timeout=5))
            waiter.start()
            deadline = time.monotonic() + 5
            while lock._calls == 0 and time.monotonic() < deadline:
                time.sleep(0.01)
            with self.assertRaises(rdlm.BusyError):
                lock.close()
            self.assertFalse(lock.closed)
            held.release()
            waiter.join(10)
            self.assertFalse(waiter.is_alive())
        lock.release()
        lock.close()
        self.assertTrue(lock.closed)

    def test_loading_another_library_is_library_not_found(self):
        code = ("import rdlm, sys\n"
                "try:\n"
                "    rdlm.load('libc.so.6')\n"
                "except rdlm.LibraryNotFoundError as e:\n"
                "    sys.exit(0 if 'rdlm_get_version' in str(e) else 2)\n"
                "sys.exit(1)\n")
        self.assertEqual(subprocess.run([sys.executable, "-c", code], timeout=30,
                                        env=os.environ).returncode, 0)


if __name__ == "__main__":
    unittest.main()
