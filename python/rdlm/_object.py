"""What every object handle (lock, reader-writer lock, counter, semaphore, barrier)
shares: its C handle, its context, and closing."""

from . import _api
from .errors import check, error

CLOSED = -4  # RDLM_ERR_CLOSED


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

    def _h(self, verb):
        """The live C handle; ClosedError if closed."""
        if self._handle is None:
            raise error(CLOSED, self._where(verb))
        return self._handle

    def _where(self, verb):
        return f"{self._kind} '{self.name}' {verb}"

    def _call(self, verb, fn, *args):
        """Call rdlm_<kind>_<verb>-like fn on the live handle; the check's result."""
        return check(fn(self._h(verb), *args), self._where(verb))

    def _forget(self):
        """The context's close: the handle is closed by rdlm_ctx_destroy."""
        self._handle = None

    @property
    def closed(self):
        return self._handle is None

    def close(self):
        """Close the handle: what this context holds on the object is given back
        (a held lock is released). The object itself lives on. ClosedError if closed
        already."""
        handle = self._h("close")
        self._ctx._drop(self._key)
        self._handle = None
        status = getattr(_api.core(), self._close_fn)(handle)
        if status < 0:
            raise error(status, self._where("close"))

    def __repr__(self):
        state = "closed" if self.closed else "open"
        return f"<rdlm.{type(self).__name__} '{self.name}' {state}>"
