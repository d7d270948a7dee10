"""A node-only context from plain Python (no MPI), two contexts of one process
standing for two processes. Proves: locks exclude and their tokens strictly increase;
reader-writer locks, counters, semaphores, named barriers and fences behave as
include/rdlm.h says through the package; a blocking call lets other threads run; the
structures read back right (stats, dist_info)."""

import threading
import time
import unittest

import rdlm


class Standalone(unittest.TestCase):
    def setUp(self):
        self.a = rdlm.Context()
        self.b = rdlm.Context()

    def tearDown(self):
        self.a.close()
        self.b.close()

    def test_lock_excludes_and_tokens_increase(self):
        tokens = []
        for _ in range(20):
            with self.a.lock("lk") as token:
                self.assertIsNone(self.b.lock("lk").try_acquire())
                tokens.append(token)
            with self.b.lock("lk").hold(timeout=1) as token:
                tokens.append(token)
        self.assertEqual(tokens, sorted(set(tokens)))
        self.assertIs(self.a.lock("lk"), self.a.lock("lk"))  # one handle per name
        self.assertFalse(tokens[0].owner_dead)
        self.assertGreater(tokens[0], 2**32)  # the epoch's upper bits pass through

    def test_lock_timeout(self):
        held = self.a.lock("lk-t").acquire()
        with self.assertRaises(rdlm.TimeoutError) as caught:
            self.b.lock("lk-t").acquire(timeout=0.01)
        self.assertIsInstance(caught.exception, TimeoutError)  # the built-in too
        self.assertEqual(caught.exception.status, -101)
        with self.assertRaises(rdlm.BusyError):
            self.b.lock("lk-t").acquire(timeout=0)
        self.a.lock("lk-t").release()
        self.assertGreater(self.b.lock("lk-t").acquire(timeout=0), held)

    def test_blocking_acquire_lets_other_threads_run(self):
        got = []
        self.a.lock("gil").acquire()
        waiter = threading.Thread(target=lambda: got.append(self.b.lock("gil").acquire(5)))
        waiter.start()
        time.sleep(0.05)  # the waiter blocks in C meanwhile, without the GIL
        self.a.lock("gil").release()
        waiter.join()
        self.assertEqual(len(got), 1)  # else its acquire raised TimeoutError
        self.b.lock("gil").release()

    def test_fifo_order_is_accepted(self):
        lock = self.a.lock("lk-fifo", order=rdlm.LockOrder.FIFO)
        with lock:
            pass
        with self.assertRaises(rdlm.KindMismatchError):
            self.b.lock("lk-fifo", order=rdlm.LockOrder.BOUNDED)

    def test_rwlock(self):
        rw_a, rw_b = self.a.rwlock("rw"), self.b.rwlock("rw")
        with rw_a.read() as owner_dead:
            self.assertFalse(owner_dead)
            self.assertTrue(rw_b.try_read_acquire())  # readers share
            rw_b.read_release()
            self.assertIsNone(rw_b.try_write_acquire())
        with rw_a.write() as first:
            self.assertFalse(rw_b.try_read_acquire())
        with rw_b.write(timeout=1) as second:
            self.assertGreater(second, first)

    def test_counter(self):
        c = self.a.counter("cnt")
        self.assertEqual([c.fetch_add(1) for _ in range(3)], [0, 1, 2])
        self.assertEqual(self.b.counter("cnt").fetch_add(-10), 3)
        self.assertEqual(c.read(), -7)
        big = self.a.counter("cnt-big")
        big.fetch_add(2**62)
        big.fetch_add(2**62)  # wraps as a signed 64-bit value
        self.assertEqual(big.read(), -2**63)
        self.assertEqual(self.a.counter("cnt-sh", sharded=True).fetch_add(5), 0)

    def test_semaphore(self):
        sa, sb = self.a.semaphore("sem", 2), self.b.semaphore("sem", 2)
        self.assertEqual(sa.permits, 2)
        with sa:
            self.assertEqual(sb.available(), 1)
            with sb.hold(1, timeout=1):
                self.assertFalse(sb.try_acquire())
                with self.assertRaises(rdlm.TimeoutError):
                    sa.acquire(1, timeout=0.01)
        self.assertEqual(sa.available(), 2)
        with self.assertRaises(rdlm.MismatchError):
            self.b.semaphore("sem", 3)

    def test_named_barrier(self):
        barrier = self.a.named_barrier("bar", 1)
        for _ in range(3):
            barrier.wait(timeout=1)
        with self.assertRaises(rdlm.TimeoutError):
            self.a.named_barrier("bar2", 2).wait(timeout=0.01)

    def test_fence(self):
        fence = rdlm.Fence()
        with self.a.lock("fenced") as old:
            pass
        with self.a.lock("fenced") as new:
            fence.check(new)
            fence.check(new)  # equal tokens pass
        with self.assertRaises(rdlm.StaleTokenError):
            fence.check(old)
        self.assertEqual(fence.highest, new)
        shared = bytearray(16)
        with self.assertRaises(rdlm.InvalidArgError):
            rdlm.Fence(shared, 4)
        rdlm.Fence(shared, 8).check(new)
        self.assertEqual(int.from_bytes(shared[8:], "little"), new)

    def test_stats_and_dist_info(self):
        for _ in range(5):
            with self.a.lock("counted"):
                pass
        stats = self.a.stats()
        self.assertEqual(stats["acquires"], 5)
        self.assertEqual(stats["reservations"], 0)  # the last field reads back
        info = self.a.dist_info()
        self.assertEqual((info["distributed"], info["transport"], info["lock_protocol"]),
                         (0, "", ""))
        with self.assertRaises(rdlm.UnsupportedError):
            self.a.barrier()  # no collective barrier without a distributed context

    def test_context_manager_closes(self):
        with rdlm.Context() as ctx:
            lock = ctx.lock("cm")
            lock.acquire()
        self.assertTrue(ctx.closed and lock.closed)
        self.assertIsNotNone(self.a.lock("cm").try_acquire())  # released by the close
        with self.assertRaises(KeyError):
            with rdlm.Context() as ctx:
                ctx.lock("cm-raise").acquire()
                raise KeyError("the body fails")
        self.assertTrue(ctx.closed)  # a node-only context is closed all the same
        self.assertIsNotNone(self.a.lock("cm-raise").try_acquire())


if __name__ == "__main__":
    unittest.main()
