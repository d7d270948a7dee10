"""Reader-writer locks: many readers or one writer (with a fencing token)."""

import contextlib
import ctypes

from . import _api
from ._object import Object
from ._args import timeout_ns
from .errors import BusyError
from .lock import Token


class RWLock(Object):
    """A reader-writer lock; writers are not starved by readers. Open with
    ctx.rwlock(name).

        with rw.read():
            ...
        with rw.write() as token:
            ...
    """

    _kind = "rwlock"
    _close_fn = "rdlm_rwlock_close"

    def read_acquire(self, timeout=None):
        """Acquire shared, waiting up to timeout seconds (None: no limit; 0: try
        once). Returns True if a writer that held it died (RDLM_OWNER_DEAD, also an
        OwnerDeadWarning), else False. Raises BusyError, TimeoutError, ClosedError,
        NoResourceError (this context holds too many shared locks)."""
        return self._acquire("read_acquire", _api.core().rdlm_rwlock_read_acquire,
                             self.read_release, timeout_ns(timeout, self._where("read_acquire")))

    def try_read_acquire(self):
        """Acquire shared without waiting: True if acquired, False if a writer holds
        it or waits."""
        try:
            self.read_acquire(0)
            return True
        except BusyError:
            return False

    def read_release(self):
        """Release shared. NotOwnerError if this context holds no shared lock on it."""
        self._call("read_release", _api.core().rdlm_rwlock_read_release)

    def write_acquire(self, timeout=None):
        """Acquire exclusive: returns the Token, as Lock.acquire."""
        token = ctypes.c_uint64()
        owner_dead = self._acquire("write_acquire", _api.core().rdlm_rwlock_write_acquire,
                                   self.write_release,
                                   timeout_ns(timeout, self._where("write_acquire")),
                                   ctypes.byref(token))
        return Token(token.value, owner_dead)

    def try_write_acquire(self):
        """Acquire exclusive without waiting: the Token, or None if held."""
        try:
            return self.write_acquire(0)
        except BusyError:
            return None

    def write_release(self):
        """Release exclusive. Errors as Lock.release."""
        self._call("write_release", _api.core().rdlm_rwlock_write_release)

    @contextlib.contextmanager
    def read(self, timeout=None):
        """Context manager: shared for the body (yields the owner-dead flag)."""
        owner_dead = self.read_acquire(timeout)
        try:
            yield owner_dead
        finally:
            self.read_release()

    @contextlib.contextmanager
    def write(self, timeout=None):
        """Context manager: exclusive for the body (yields the Token)."""
        token = self.write_acquire(timeout)
        try:
            yield token
        finally:
            self.write_release()
