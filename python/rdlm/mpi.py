"""A distributed context over an mpi4py communicator (rdlm_mpi_ctx_create)."""

import ctypes
import weakref

from . import _api
from .errors import check

# The contexts MPI_Finalize destroys (rdlm_mpi_ctx_create's hook), and the attribute
# on MPI.COMM_SELF whose deletion, in MPI_Finalize, makes them forget their handles.
_left_open = weakref.WeakSet()
_keyval = None


def comm_handle(comm):
    """The C MPI_Comm of an mpi4py communicator, as a ctypes value of the MPI
    implementation's handle type (mpi4py says its size: a pointer in Open MPI, an int
    in MPICH). TypeError for anything that is not an mpi4py communicator."""
    from mpi4py import MPI
    if not isinstance(comm, MPI.Comm):
        raise TypeError(f"rdlm: {comm!r} is not an mpi4py communicator (MPI.Comm)")
    ctype = _api.comm_type(MPI._sizeof(MPI.Comm))
    return ctype, ctype(MPI._handleof(comm))


def ctx_create(comm, params, library=None, mpi_library=None):
    """rdlm_mpi_ctx_create over comm: the new context's C handle (collective)."""
    _api.core(library)
    ctype, handle = comm_handle(comm)
    lib = _api.mpi(ctype, mpi_library)
    ctx = _api.HANDLE()
    check(lib.rdlm_mpi_ctx_create(handle, ctypes.byref(params), ctypes.byref(ctx)),
          "rdlm_mpi_ctx_create")
    return ctx


def _forget_all(comm, keyval, value):
    """MPI_Finalize deletes the attribute: every context created here and still
    open is destroyed by librdlm_mpi's own hook; forget their handles (no C call)."""
    for ctx in list(_left_open):
        ctx._detach()
    _left_open.clear()


def forget_at_finalize(ctx):
    """Make MPI_Finalize close ctx on the Python side as it destroys the C context, so
    that its and its objects' handles raise as after close() instead of reaching
    freed C memory (that a later open may reuse)."""
    global _keyval
    from mpi4py import MPI
    if _keyval is None:
        _keyval = MPI.Comm.Create_keyval(delete_fn=_forget_all)
        MPI.COMM_SELF.Set_attr(_keyval, True)
    _left_open.add(ctx)
