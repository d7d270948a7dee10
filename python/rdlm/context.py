"""Contexts: a process's attachment to its job's rdlm objects."""

import ctypes
import threading

from . import _api, _args, mpi
from .barrier import Barrier
from .counter import Counter
from .errors import check, error
from .lock import Lock, LockOrder
from .rwlock import RWLock
from .semaphore import Semaphore

BAD_HANDLE = -3  # RDLM_ERR_BAD_HANDLE
INVALID_ARG = -1  # RDLM_ERR_INVALID_ARG


def _params(job, capacity, peers):
    """rdlm_ctx_params_t with the fields given (None: the RDLM_* environment)."""
    params = _api.CtxParams()
    if job is not None:
        params.field_mask |= _api.CTX_FIELD_JOB
        params.job = _args.name(job, "Context: job")
    if capacity is not None:
        params.field_mask |= _api.CTX_FIELD_CAPACITY
        params.capacity = _args.u32(capacity, "Context", "capacity")
    if peers is not None:
        rank, size, rendezvous = peers
        params.field_mask |= _api.CTX_FIELD_PEERS
        params.rank = _args.u32(rank, "Context", "rank")
        params.size = _args.u32(size, "Context", "size")
        params.rendezvous = _args.name(rendezvous, "Context: rendezvous")
    return params


class Context:
    """A context: opens the named objects of one job. Node-only by default; with
    rank, size and rendezvous (or RDLM_RENDEZVOUS) a distributed context of `size`
    processes joined through a TCP rendezvous (collective); Context.from_comm(comm)
    gives one over an mpi4py communicator (self.distributed says which). Use it as a
    context manager, or call close(); its objects' handles raise ClosedError after
    that.

        with rdlm.Context(job="demo") as ctx:
            with ctx.lock("journal") as token:
                ...

    Opening the same (kind, name, parameters) twice returns the same handle object.
    Thread-safe, except that close() must not race with other calls on it.
    Errors of rdlm_ctx_create: InvalidArgError, BadConfigError, PermissionError,
    CorruptError, NoResourceError, IoError, and TimeoutError for a rendezvous whose
    ranks did not all join within 30 s.
    """

    def __init__(self, job=None, capacity=None, rank=None, size=None, rendezvous=None,
                 library=None):
        lib = _api.core(library)
        peers = (rank, size, rendezvous)
        if any(p is not None for p in peers) and any(p is None for p in peers):
            raise error(INVALID_ARG, "Context: rank, size and rendezvous go together")
        params = _params(job, capacity, None if rank is None else peers)
        handle = _api.HANDLE()
        check(lib.rdlm_ctx_create(ctypes.byref(params), ctypes.byref(handle)),
              "rdlm_ctx_create")
        self._adopt(handle)

    @classmethod
    def from_comm(cls, comm, job=None, capacity=None, library=None, mpi_library=None):
        """A distributed context over every rank of the mpi4py intracommunicator comm
        (collective, after MPI_Init). Loads librdlm_mpi.so (RDLM_MPI_LIBRARY, else
        beside librdlm.so, else by soname). Errors of rdlm_mpi_ctx_create:
        InvalidArgError (MPI.COMM_NULL, an intercommunicator, MPI finalized),
        TimeoutError, UnsupportedError (no usable transport); on any rank's error
        every rank raises."""
        ctx = cls.__new__(cls)
        ctx._adopt(mpi.ctx_create(comm, _params(job, capacity, None), library,
                                  mpi_library))
        mpi.forget_at_finalize(ctx)
        return ctx

    def _adopt(self, handle):
        self._handle = handle
        self._objects = {}
        self._mutex = threading.Lock()
        self.distributed = bool(self.dist_info()["distributed"])

    def _h(self, verb):
        if self._handle is None:
            raise error(BAD_HANDLE, f"{verb} on a closed context")
        return self._handle

    def _open(self, cls, name, param, opener, *args):
        """The open handle of (cls, name, param), opening it on first use with
        opener(ctx, name, *args, &handle)."""
        where = f"{cls._kind} '{name}' open"
        key = (cls, name, param)
        with self._mutex:
            obj = self._objects.get(key)
            if obj is None:
                handle = _api.HANDLE()
                check(opener(self._h(where), _args.name(name, where), *args,
                             ctypes.byref(handle)), where)
                obj = self._objects[key] = cls(self, name, handle, key)
            return obj

    def _drop(self, key):
        with self._mutex:
            self._objects.pop(key, None)

    def lock(self, name, order=LockOrder.DEFAULT):
        """The exclusive Lock named name (created if needed). order: a LockOrder
        (BOUNDED only in a node-only context, else UnsupportedError; an order other
        than the first open's: KindMismatchError). Errors of every open:
        NameTooLongError (empty or above 47 bytes), KindMismatchError (the name is
        another kind of object), TableFullError, NoMemoryError."""
        order = LockOrder(order)
        params = _api.LockParams(_api.LOCK_FIELD_ORDER, order)
        return self._open(Lock, name, order, _api.core().rdlm_lock_open_params,
                          ctypes.byref(params))

    def rwlock(self, name):
        """The reader-writer lock named name (errors as lock())."""
        return self._open(RWLock, name, None, _api.core().rdlm_rwlock_open)

    def counter(self, name, sharded=False):
        """The 64-bit counter named name; sharded: one shard per node, summed on read
        (MismatchError if the name exists as the other sort)."""
        lib = _api.core()
        opener = lib.rdlm_counter_open_sharded if sharded else lib.rdlm_counter_open
        return self._open(Counter, name, bool(sharded), opener)

    def semaphore(self, name, permits):
        """The semaphore named name with `permits` permits (1..2**31-1), fixed by its
        first open job-wide (another value: MismatchError)."""
        permits = _args.integer(permits, 1, 2**31 - 1, f"sem '{name}' open", "permits")
        return self._open(Semaphore, name, permits, _api.core().rdlm_sem_open, permits)

    def named_barrier(self, name, nprocs):
        """The barrier named name of nprocs (>= 1) participants; every participant
        passes the same nprocs (else MismatchError)."""
        nprocs = _args.u32(nprocs, f"barrier '{name}' open", "nprocs")
        return self._open(Barrier, name, nprocs, _api.core().rdlm_barrier_open, nprocs)

    def barrier(self):
        """Barrier over every process of a distributed context (collective; blocks
        without a time limit; one thread per process at a time). Writes before it in
        any process are visible after it in all. UnsupportedError in a node-only
        context (use named_barrier)."""
        check(_api.core().rdlm_ctx_barrier(self._h("barrier")), "context barrier")

    def barrier_arrive(self):
        """Split-phase barrier: announce this process, without blocking. MismatchError
        for two arrives without a wait."""
        check(_api.core().rdlm_ctx_barrier_arrive(self._h("barrier_arrive")),
              "context barrier_arrive")

    def barrier_wait(self):
        """Split-phase barrier: wait until every process arrived. MismatchError
        without an arrive."""
        check(_api.core().rdlm_ctx_barrier_wait(self._h("barrier_wait")),
              "context barrier_wait")

    def stats(self):
        """This context's statistics since its creation (rdlm_stats_t) as a dict:
        acquires, contended, ..., barriers; approximate under concurrent use."""
        stats = _api.Stats()
        check(_api.core().rdlm_ctx_stats(self._h("stats"), ctypes.byref(stats)),
              "context stats")
        return {name: getattr(stats, name) for name, _ in stats._fields_}

    def dist_info(self):
        """Where this context runs (rdlm_ctx_dist_info_t) as a dict: distributed (0
        for a node-only context, the rest 0 then), rank, size, node, nodes,
        local_rank, local_size, cohort_bound, token_epoch, transport ("ucx", ...),
        progress_thread, lock_protocol ("atomic" or "am"); the two strings are ""
        in a node-only context."""
        info = _api.DistInfo()
        check(_api.core().rdlm_ctx_dist_info(self._h("dist_info"), ctypes.byref(info)),
              "context dist_info")
        fields = {name: getattr(info, name) for name, _ in info._fields_}
        for name in ("transport", "lock_protocol"):
            fields[name] = (fields[name] or b"").decode()
        return fields

    @property
    def closed(self):
        return self._handle is None

    def _detach(self):
        """Forget the C handle and every object's; the handle, or None if closed."""
        with self._mutex:
            handle, self._handle = self._handle, None
            objects, self._objects = self._objects, {}
        for obj in objects.values():
            obj._forget()
        return handle

    def close(self):
        """Destroy the context: releases every lock it holds, closes every handle
        (their later calls raise ClosedError; the context's raise BadHandleError).
        Collective for a distributed context: returns once every process closed its
        own (bounded, docs/distributed-locks.md). A second close does nothing."""
        handle = self._detach()
        if handle is not None:
            _api.core().rdlm_ctx_destroy(handle)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        """close(), except when an exception leaves the block of a distributed
        context: the other processes may never reach their close, so the context is
        only forgotten here (its handles raise as after close) and the exception goes
        on at once, to abort the job (python -m mpi4py) or to MPI_Finalize, which
        destroys the context."""
        if exc_type is not None and self.distributed:
            self._detach()
        else:
            self.close()

    def __repr__(self):
        return f"<rdlm.Context {'closed' if self.closed else 'open'}>"
