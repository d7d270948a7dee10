"""Exclusive locks with fencing tokens."""

import contextlib
import ctypes
import enum

from . import _api
from ._object import Object
from .errors import BusyError
from ._args import timeout_ns


class LockOrder(enum.IntEnum):
    """rdlm_lock_order_t: the order in which a lock serves its waiters."""
    DEFAULT = 0  # bounded bypass on a node-only context, FIFO otherwise
    BOUNDED = 1  # node-only contexts only
    FIFO = 2


class Token(int):
    """A fencing token: strictly greater than every token issued before for the lock.
    owner_dead is True when this acquire recovered the lock from a dead holder."""

    def __new__(cls, value, owner_dead=False):
        token = super().__new__(cls, value)
        token.owner_dead = owner_dead
        return token


class Lock(Object):
    """A job-wide (in a distributed context) or node-wide exclusive lock, owned by the
    context: any thread of it may release it; not recursive. Open with ctx.lock(name).

        with ctx.lock("journal") as token:      # waits without limit
            write(token, ...)
    """

    _kind = "lock"
    _close_fn = "rdlm_lock_close"

    def acquire(self, timeout=None):
        """Acquire, waiting up to timeout seconds (None: no limit; 0: try once).
        Acquire ordering. Returns the Token (token.owner_dead: recovered from a dead
        holder, also an OwnerDeadWarning). Raises BusyError (timeout 0, held),
        TimeoutError, ClosedError, NoResourceError, and in distributed contexts
        PeerDeadError, LeaseExpiredError (rdlm_lock_acquire in rdlm.h)."""
        token = ctypes.c_uint64()
        owner_dead = self._acquire("acquire", _api.core().rdlm_lock_acquire, self.release,
                                   timeout_ns(timeout, self._where("acquire")),
                                   ctypes.byref(token))
        return Token(token.value, owner_dead)

    def try_acquire(self):
        """Acquire if free, without waiting: the Token, or None if held (by any
        context, this one included). Other errors raise as acquire()."""
        try:
            return self.acquire(0)
        except BusyError:
            return None

    def release(self):
        """Release; release ordering; wakes one waiter. NotOwnerError if this context
        does not hold it (a second release included): nothing changes then.
        LeaseExpiredError, PeerDeadError as rdlm_lock_release."""
        self._call("release", _api.core().rdlm_lock_release)

    @contextlib.contextmanager
    def hold(self, timeout=None):
        """Context manager: acquire(timeout) on entry (yielding the Token), release
        on exit, also when the body raises."""
        token = self.acquire(timeout)
        try:
            yield token
        finally:
            self.release()

    def __enter__(self):
        return self.acquire()

    def __exit__(self, *exc):
        self.release()
