"""Counting semaphores."""

import contextlib
import ctypes

from . import _api
from ._object import Object
from ._args import integer, timeout_ns
from .errors import BusyError


class Semaphore(Object):
    """A counting semaphore of `permits` permits, fixed by the first open job-wide.
    Open with ctx.semaphore(name, permits). `with sem:` holds one permit."""

    _kind = "sem"
    _close_fn = "rdlm_sem_close"

    @property
    def permits(self):
        """The permits the object was opened with."""
        return self._key[2]

    def acquire(self, k=1, timeout=None):
        """Take k permits (1..permits) at once, waiting up to timeout seconds (None:
        no limit; 0: try once). A timeout takes nothing. Raises InvalidArgError (k),
        BusyError, TimeoutError, ClosedError."""
        where = self._where("acquire")
        self._call("acquire", _api.core().rdlm_sem_acquire,
                   integer(k, 1, self.permits, where, "k"), timeout_ns(timeout, where))

    def try_acquire(self, k=1):
        """Take k permits if free now: True if taken, False otherwise."""
        try:
            self.acquire(k, 0)
            return True
        except BusyError:
            return False

    def release(self, k=1):
        """Give back k permits this handle holds. InvalidArgError (k 0 or above the
        size), NotOwnerError (it holds fewer; nothing changes then)."""
        self._call("release", _api.core().rdlm_sem_release,
                   integer(k, 1, self.permits, self._where("release"), "k"))

    def available(self):
        """Permits free at this instant (a snapshot within 0..permits)."""
        free = ctypes.c_uint32()
        self._call("available", _api.core().rdlm_sem_available, ctypes.byref(free))
        return free.value

    @contextlib.contextmanager
    def hold(self, k=1, timeout=None):
        """Context manager: acquire(k, timeout) on entry, release(k) on exit."""
        self.acquire(k, timeout)
        try:
            yield self
        finally:
            self.release(k)

    def __enter__(self):
        self.acquire()
        return self

    def __exit__(self, *exc):
        self.release()
