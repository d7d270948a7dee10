"""ctypes declarations of the C API (include/rdlm.h, include/rdlm/mpi.h).

Every function the package calls is declared here with its argument and result types,
so that no pointer or 64-bit value passes through ctypes' default int. The structures
mirror the header's field for field; the python tests read fields at both ends of
each one (stats' first and last, dist_info's rank, size, nodes and transport).
"""

import ctypes
from ctypes import POINTER, c_char_p, c_int, c_int32, c_int64, c_uint32, c_uint64, c_void_p

from . import _library

STATUS = c_int  # rdlm_status_t, an enum
HANDLE = c_void_p  # every rdlm_*_h
TIMEOUT_INFINITE = 2**64 - 1  # RDLM_TIMEOUT_INFINITE
NAME_MAX = 47  # RDLM_NAME_MAX

CTX_FIELD_JOB = 1 << 0
CTX_FIELD_CAPACITY = 1 << 1
CTX_FIELD_PEERS = 1 << 2
LOCK_FIELD_ORDER = 1 << 0


class CtxParams(ctypes.Structure):
    """rdlm_ctx_params_t"""
    _fields_ = [("field_mask", c_uint64), ("job", c_char_p), ("capacity", c_uint32),
                ("rank", c_uint32), ("size", c_uint32), ("rendezvous", c_char_p)]


class LockParams(ctypes.Structure):
    """rdlm_lock_params_t"""
    _fields_ = [("field_mask", c_uint64), ("order", c_int)]


class Stats(ctypes.Structure):
    """rdlm_stats_t"""
    _fields_ = [(name, c_uint64) for name in (
        "acquires", "contended", "parks", "wakes", "timeouts", "recoveries", "skips",
        "global_acquires", "local_handoffs", "home_ops", "peer_ops", "home_ops_posted",
        "combined", "barriers", "barrier_msgs", "authority_requests",
        "authority_renewals", "reservations")]


class DistInfo(ctypes.Structure):
    """rdlm_ctx_dist_info_t"""
    _fields_ = [("distributed", c_int)] + [(name, c_uint32) for name in (
        "rank", "size", "node", "nodes", "local_rank", "local_size", "cohort_bound",
        "token_epoch")] + [("transport", c_char_p), ("progress_thread", c_int),
                           ("lock_protocol", c_char_p)]


_H = POINTER(HANDLE)
_U64 = POINTER(c_uint64)
_I64 = POINTER(c_int64)
_PROTOTYPES = {
    "rdlm_get_version": (c_char_p, []),
    "rdlm_status_str": (c_char_p, [STATUS]),
    "rdlm_status_name": (c_char_p, [STATUS]),
    "rdlm_ctx_create": (STATUS, [POINTER(CtxParams), _H]),
    "rdlm_ctx_destroy": (None, [HANDLE]),
    "rdlm_ctx_barrier": (STATUS, [HANDLE]),
    "rdlm_ctx_barrier_arrive": (STATUS, [HANDLE]),
    "rdlm_ctx_barrier_wait": (STATUS, [HANDLE]),
    "rdlm_ctx_stats": (STATUS, [HANDLE, POINTER(Stats)]),
    "rdlm_ctx_dist_info": (STATUS, [HANDLE, POINTER(DistInfo)]),
    "rdlm_lock_open_params": (STATUS, [HANDLE, c_char_p, POINTER(LockParams), _H]),
    "rdlm_lock_acquire": (STATUS, [HANDLE, c_uint64, _U64]),
    "rdlm_lock_release": (STATUS, [HANDLE]),
    "rdlm_lock_close": (STATUS, [HANDLE]),
    "rdlm_rwlock_open": (STATUS, [HANDLE, c_char_p, _H]),
    "rdlm_rwlock_read_acquire": (STATUS, [HANDLE, c_uint64]),
    "rdlm_rwlock_read_release": (STATUS, [HANDLE]),
    "rdlm_rwlock_write_acquire": (STATUS, [HANDLE, c_uint64, _U64]),
    "rdlm_rwlock_write_release": (STATUS, [HANDLE]),
    "rdlm_rwlock_close": (STATUS, [HANDLE]),
    "rdlm_counter_open": (STATUS, [HANDLE, c_char_p, _H]),
    "rdlm_counter_open_sharded": (STATUS, [HANDLE, c_char_p, _H]),
    "rdlm_counter_fetch_add": (STATUS, [HANDLE, c_int64, _I64]),
    "rdlm_counter_read": (STATUS, [HANDLE, _I64]),
    "rdlm_counter_close": (STATUS, [HANDLE]),
    "rdlm_sem_open": (STATUS, [HANDLE, c_char_p, c_uint32, _H]),
    "rdlm_sem_acquire": (STATUS, [HANDLE, c_uint32, c_uint64]),
    "rdlm_sem_release": (STATUS, [HANDLE, c_uint32]),
    "rdlm_sem_available": (STATUS, [HANDLE, POINTER(c_uint32)]),
    "rdlm_sem_close": (STATUS, [HANDLE]),
    "rdlm_barrier_open": (STATUS, [HANDLE, c_char_p, c_uint32, _H]),
    "rdlm_barrier_wait": (STATUS, [HANDLE, c_uint64]),
    "rdlm_barrier_close": (STATUS, [HANDLE]),
    "rdlm_fence_check": (STATUS, [_U64, c_uint64]),
}

# An MPI_Comm passed by value: Open MPI's is a pointer, MPICH's an int.
_COMM_TYPES = {ctypes.sizeof(c_void_p): c_void_p, ctypes.sizeof(c_int32): c_int32}


def _declare(lib, prototypes):
    for name, (restype, argtypes) in prototypes.items():
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = restype, argtypes


def core(path=None):
    """librdlm.so with every prototype declared (loaded on first call)."""
    lib = _library.load("core", path)
    if not hasattr(lib, "_rdlm_declared"):
        _declare(lib, _PROTOTYPES)
        lib._rdlm_declared = True
    return lib


def comm_type(handle_size):
    """The ctypes type of an MPI_Comm of handle_size bytes; ValueError for a size no
    MPI implementation known to the package uses."""
    if handle_size not in _COMM_TYPES:
        raise ValueError(f"rdlm: an MPI_Comm of {handle_size} bytes is not supported "
                         "(known: a pointer, as Open MPI's, or an int, as MPICH's)")
    return _COMM_TYPES[handle_size]


def mpi(comm_ctype, path=None):
    """librdlm_mpi.so with rdlm_mpi_ctx_create declared for an MPI_Comm of type
    comm_ctype; loads librdlm.so first, so both share one copy of it."""
    core()
    lib = _library.load("mpi", path)
    _declare(lib, {"rdlm_mpi_ctx_create":
                   (STATUS, [comm_ctype, POINTER(CtxParams), _H])})
    return lib
