"""Loading librdlm.so and librdlm_mpi.so (one copy of each per process)."""

import ctypes
import os
import threading

from . import _prefix

CORE_SONAME = "librdlm.so.0"
MPI_SONAME = "librdlm_mpi.so.0"


class LibraryNotFoundError(OSError):
    """librdlm.so or librdlm_mpi.so could not be loaded; the message lists every
    place tried and the loader's reason for each."""


_lock = threading.Lock()
_loaded = {}  # "core" / "mpi" -> (path asked for, ctypes.CDLL)


def _prefix_candidate(soname):
    if _prefix.LIBDIR is None:
        return None
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.normpath(os.path.join(here, _prefix.LIBDIR, soname))


def _candidates(kind, soname, path, env):
    """Places to try, in order: the argument, the environment variable, for the MPI
    library the directory librdlm.so came from, the installed prefix, the soname."""
    if path is not None:
        return [("argument", path)]
    if os.environ.get(env):
        return [(env, os.environ[env])]
    tried = []
    core = _loaded.get("core", ("", None))[0]
    if kind == "mpi" and os.path.sep in core:
        tried.append(("beside librdlm.so", os.path.join(os.path.dirname(core), soname)))
    tried.append(("installed prefix", _prefix_candidate(soname)))
    tried = [(origin, p) for origin, p in tried if p is not None and os.path.exists(p)]
    return tried + [("loader search path", soname)]


# A symbol every library of the kind exports: a file without it is another library.
_SYMBOL = {"core": "rdlm_get_version", "mpi": "rdlm_mpi_ctx_create"}


def _open(kind, soname, path, env):
    errors = []
    for origin, candidate in _candidates(kind, soname, path, env):
        try:
            lib = ctypes.CDLL(candidate)
        except OSError as e:
            errors.append(f"{candidate} ({origin}): {e}")
            continue
        if hasattr(lib, _SYMBOL[kind]):
            return candidate, lib
        errors.append(f"{candidate} ({origin}): not {soname} (no {_SYMBOL[kind]})")
    raise LibraryNotFoundError(
        f"rdlm: cannot load {soname}; tried " + "; ".join(errors) +
        f". Set {env} to the library's path or add its directory to LD_LIBRARY_PATH")


def load(kind, path=None):
    """The loaded library of `kind` ("core" or "mpi"), loading it on first use from
    path, else as _candidates says. Thread-safe. Load the core library before the MPI
    one, so that the MPI library binds to that same librdlm.so. Raises
    LibraryNotFoundError, or ValueError if path names another file than the one
    already loaded."""
    soname, env = {"core": (CORE_SONAME, "RDLM_LIBRARY"),
                   "mpi": (MPI_SONAME, "RDLM_MPI_LIBRARY")}[kind]
    with _lock:
        if kind in _loaded:
            first, lib = _loaded[kind]
            if path is not None and os.path.realpath(path) != os.path.realpath(first):
                raise ValueError(f"rdlm: {soname} is already loaded from {first}, "
                                 f"not {path} (one copy per process)")
            return lib
        _loaded[kind] = _open(kind, soname, path, env)
        return _loaded[kind][1]


def loaded_path(kind):
    """The path (or soname) the library of `kind` was loaded from, None if not yet."""
    entry = _loaded.get(kind)
    return entry[0] if entry else None
