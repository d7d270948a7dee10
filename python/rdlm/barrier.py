"""Named counting barriers (any subset of the context's processes)."""

from . import _api
from ._object import Object
from ._args import timeout_ns


class Barrier(Object):
    """A reusable barrier of nprocs participants; every participant opens it with the
    same nprocs (else MismatchError). Open with ctx.named_barrier(name, nprocs). For
    all processes of a distributed context use ctx.barrier()."""

    _kind = "barrier"
    _close_fn = "rdlm_barrier_close"

    @property
    def nprocs(self):
        """The nprocs the object was opened with."""
        return self._key[2]

    def wait(self, timeout=None):
        """Arrive and wait until nprocs participants arrived in this generation.
        Writes before it in any participant are visible after it in all. On
        TimeoutError the arrival is withdrawn."""
        self._call("wait", _api.core().rdlm_barrier_wait,
                   timeout_ns(timeout, self._where("wait")))
