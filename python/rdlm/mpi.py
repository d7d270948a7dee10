"""A distributed context over an mpi4py communicator (rdlm_mpi_ctx_create)."""

import ctypes

from . import _api
from .errors import check


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
