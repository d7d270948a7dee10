"""Under mpirun (python3 -m mpi4py, so that an exception on one rank aborts the job):
every object of a distributed context over MPI.COMM_WORLD, as a user's program uses
it. Proves:
  - lock: ITERS increments per rank of a plain file, inside `with ctx.lock(...)`, lose
    none; every token is above the one the previous holder wrote (fencing order), and
    each rank's tokens strictly increase;
  - rwlock: a reader sees no writer inside; writers' increments of the file lose none;
  - semaphore of 2 permits: never more than 2 holders (a shared counter of holders);
  - counter: fetch_adds return distinct old values 0..N-1, read gives N;
  - ctx.barrier() and a named barrier: what a rank wrote before is seen after;
  - dist_info says 2 nodes, this rank and size, and its lock protocol as a str;
  - from_comm refuses what is not a communicator (TypeError) and MPI.COMM_NULL
    (InvalidArgError);
  - a context left open is closed by MPI.Finalize(): it and its objects say closed,
    and their calls raise ClosedError (never reaching the destroyed C handles).
With --broken the lock is released before the increment (a planted bug): the check must
fail with "AssertionError: rank R: lock".
usage: mpi_objects.py COUNT_FILE [ITERS] [--broken]
"""

import contextlib
import os
import struct
import sys
import time

from mpi4py import MPI

import rdlm

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
broken = "--broken" in sys.argv
args = [a for a in sys.argv[1:] if a != "--broken"]
path = args[0]
iters = int(args[1]) if len(args) > 1 else 50
TIMEOUT = 20.0  # seconds: a lost wake-up fails the test instead of hanging it


def fail(what):
    raise AssertionError(f"rank {rank}: {what}")


def read_file():
    with open(path, "rb") as f:
        return struct.unpack("<QQ", f.read(16))


def write_file(value, token):
    with open(path, "r+b") as f:
        f.write(struct.pack("<QQ", value, token))


def check_increments(acquire, label):
    """ITERS increments of (value, last token) in the file under acquire()."""
    mine = []
    for _ in range(iters):
        with acquire() as token:
            value, last = read_file()
            time.sleep(0.0002)  # widens the window a missing exclusion leaves open
            if token <= last:
                fail(f"{label}: token {token:#x} not above the last holder's {last:#x}")
            write_file(value + 1, token)
            mine.append(token)
    if any(b <= a for a, b in zip(mine, mine[1:])):
        fail(f"{label}: this rank's tokens do not strictly increase")


def reset_file(ctx):
    if rank == 0:
        with open(path, "wb") as f:
            f.write(struct.pack("<QQ", 0, 0))
    ctx.barrier()


def check_total(ctx, label):
    ctx.barrier()
    value, _ = read_file()
    if value != iters * size:
        fail(f"{label}: file holds {value}, expected {iters * size} (a lost update)")
    ctx.barrier()  # every rank read before the file is reset


@contextlib.contextmanager
def released_early(lock):
    """The planted bug: a genuine token, but the lock is not held any more."""
    with lock.hold(TIMEOUT) as token:
        pass
    yield token


try:
    rdlm.Context.from_comm("MPI_COMM_WORLD")
    fail("from_comm took a string")
except TypeError:
    pass
try:
    rdlm.Context.from_comm(MPI.COMM_NULL)
    fail("from_comm took MPI.COMM_NULL")
except rdlm.InvalidArgError:
    pass

with rdlm.Context.from_comm(comm) as ctx:
    info = ctx.dist_info()
    if (info["distributed"], info["rank"], info["size"], info["nodes"], info["transport"]) != \
            (1, rank, size, 2, "ucx"):
        fail(f"dist_info {info}: expected rank {rank} of {size} on 2 nodes over ucx")
    if info["lock_protocol"] not in ("atomic", "am"):
        fail(f"dist_info lock_protocol {info['lock_protocol']!r}: not 'atomic' or 'am'")

    reset_file(ctx)
    lock = ctx.lock("py-lock")
    check_increments(lambda: released_early(lock) if broken else lock.hold(TIMEOUT), "lock")
    check_total(ctx, "lock")

    reset_file(ctx)
    rw = ctx.rwlock("py-rw")
    check_increments(lambda: rw.write(TIMEOUT), "rwlock write")
    for _ in range(iters):
        with rw.read(TIMEOUT):
            if rw.try_write_acquire() is not None:
                fail("rwlock: a writer got in while this rank reads")
    check_total(ctx, "rwlock")

    sem, holders = ctx.semaphore("py-sem", 2), ctx.counter("py-sem-holders")
    for _ in range(iters):
        with sem.hold(1, TIMEOUT):
            if holders.fetch_add(1) >= 2:
                fail("semaphore: a third holder of 2 permits")
            holders.fetch_add(-1)

    counter = ctx.counter("py-counter")
    olds = [counter.fetch_add(1) for _ in range(iters)]
    everyone = sorted(o for part in comm.allgather(olds) for o in part)
    ctx.barrier()
    if everyone != list(range(iters * size)) or counter.read() != iters * size:
        fail(f"counter: old values not exactly 0..{iters * size - 1} or wrong total")

    named = ctx.named_barrier("py-barrier", size)
    seen = ctx.counter("py-barrier-seen")
    for round_ in range(1, 6):
        seen.fetch_add(1)
        named.wait(TIMEOUT)
        if seen.read() < round_ * size:
            fail(f"named barrier: left round {round_} before every rank arrived")
        named.wait(TIMEOUT)
    if ctx.stats()["barriers"] < 6:
        fail(f"stats: {ctx.stats()['barriers']} collective barriers counted, expected >= 6")

comm.Barrier()
left = rdlm.Context.from_comm(comm)
left_lock, left_counter = left.lock("py-left-lock"), left.counter("py-left-counter")
MPI.Finalize()
if not (left.closed and left_lock.closed and left_counter.closed):
    fail("a context left open at MPI.Finalize() still says open")
for call in (left_lock.try_acquire, lambda: left_counter.fetch_add(1)):
    try:
        call()
        fail("a call on a context MPI.Finalize() destroyed reached C")
    except rdlm.ClosedError:
        pass
if rank == 0:
    os.unlink(path)
    print(f"python mpi objects: ok ({size} ranks, {iters} iterations)")
