"""What every object handle (lock, reader-writer lock, counter, semaphore, barrier)
shares: its C handle, its context, and closing."""

import threading

from . import _api
from .errors import OwnerDeadWarning, check, error

CLOSED = -4  # RDLM_ERR_CLOSED
BUSY = -100  # RDLM_ERR_BUSY


class Object:
    """One open handle of a named object in a context. Once closed (by close() or
    by closing its context) every call raises ClosedError without calling the
    library, so a stale handle never reaches C."""

    _kind = "object"  # rdlm_<kind>_* in the C API
    _close_fn = None  # the C function that closes the handle

    def __init__(self, ctx, name, handle, key):
        self._ctx = ctx
        self._handle = handle
        self._key = key
        self.name = name
        self._calls = 0  # calls of other threads in C on this handle (close waits none)
        self._calls_lock = threading.Lock()

    def _h(self, verb):
        """The live C handle; ClosedError if closed."""
        if self._handle is None:
            raise error(CLOSED, self._where(verb))
        return self._handle

    def _where(self, verb):
        return f"{self._kind} '{self.name}' {verb}"

    def _call(self, verb, fn, *args):
        """Call rdlm_<kind>_<verb>-like fn on the live handle; the check's result.
        While it runs, close() of the handle is refused (BusyError): C forbids a
        close racing another call on the handle."""
        with self._calls_lock:
            handle = self._h(verb)
            self._calls += 1
        try:
            status = fn(handle, *args)
        finally:
            with self._calls_lock:
                self._calls -= 1
        return check(status, self._where(verb))

    def _acquire(self, verb, fn, release_fn, *args):
        """_call for an acquire that may report a dead holder. A warnings filter that
        turns OwnerDeadWarning into an exception makes the acquire raise; the lock
        (or permit) it took is then released again before the exception propagates,
        so that `with` and hold(), whose exit never runs, leave nothing held."""
        try:
            return self._call(verb, fn, *args)
        except OwnerDeadWarning:
            release_fn()
            raise

    def _forget(self):
        """The context's close: the handle is closed by rdlm_ctx_destroy."""
        self._handle = None

    @property
    def closed(self):
        return self._handle is None

    def close(self):
        """Close the handle: what this context holds on the object is given back
        (a held lock is released). The object itself lives on. ClosedError if closed
        already; BusyError, closing nothing, while another thread is in a call on it
        (a wait included: close the context instead, which ends every wait)."""
        with self._calls_lock:
            handle = self._h("close")
            if self._calls:
                raise error(BUSY, self._where("close") + ": another thread is in a call "
                            "on this handle")
            self._handle = None
        self._ctx._drop(self._key)
        status = getattr(_api.core(), self._close_fn)(handle)
        if status < 0:
            raise error(status, self._where("close"))

    def __repr__(self):
        state = "closed" if self.closed else "open"
        return f"<rdlm.{type(self).__name__} '{self.name}' {state}>"
