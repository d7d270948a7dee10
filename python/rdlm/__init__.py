"""rdlm for Python: locks, reader-writer locks, counters, semaphores and barriers
shared by the processes of a node or, in a distributed context (an mpi4py
communicator, or a TCP rendezvous), of a whole job, with fencing tokens.

    import rdlm
    from mpi4py import MPI

    with rdlm.Context.from_comm(MPI.COMM_WORLD) as ctx:     # collective
        with ctx.lock("journal") as token:
            ...                                              # token: a fencing token

A ctypes binding of librdlm.so (and librdlm_mpi.so for from_comm), loaded on first
use: from rdlm.load(path) if called first, else $RDLM_LIBRARY, else the library of the
prefix this package is installed in, else by soname through the dynamic loader.
docs/python.md.
"""

from . import _api, _library
from .barrier import Barrier
from .context import Context
from .counter import Counter
from .errors import *  # noqa: F401,F403 (the exception classes, listed in errors.__all__)
from .errors import __all__ as _errors_all
from .fence import Fence
from .lock import Lock, LockOrder, Token
from .rwlock import RWLock
from .semaphore import Semaphore

__version__ = "0.1.0"
NAME_MAX = _api.NAME_MAX
LibraryNotFoundError = _library.LibraryNotFoundError


def load(library=None, mpi_library=None):
    """Load librdlm.so from library (a path) and, if mpi_library is given,
    librdlm_mpi.so from there, before any other use; without arguments load as the
    module docstring says. LibraryNotFoundError names every place tried; ValueError
    if a library is already loaded from another path."""
    _api.core(library)
    if mpi_library is not None:
        _library.load("mpi", mpi_library)


def library_version():
    """The loaded librdlm.so's version ("major.minor.patch")."""
    return _api.core().rdlm_get_version().decode()


def library_path():
    """Where librdlm.so was loaded from (a path, or the soname the loader found)."""
    _api.core()
    return _library.loaded_path("core")


__all__ = ["Barrier", "Context", "Counter", "Fence", "Lock", "LockOrder", "RWLock",
           "Semaphore", "Token", "LibraryNotFoundError", "NAME_MAX", "load",
           "library_version", "library_path"] + _errors_all
