"""rdlm statuses as exceptions.

Every error status of include/rdlm/status.h is one exception class, under the group of
its blast radius (the status ranges of status.h):

    RdlmError
      ArgumentError   -1 .. -99    the caller's argument or handle is wrong
      StateError    -100 .. -199   the object's state refuses the request
      PeerError     -200 .. -299   a peer, process or link failed
      FatalError    -300 .. -399   the context cannot continue

Each carries .status (the C value), .name ("RDLM_ERR_TIMEOUT") and .text (the
library's rdlm_status_str). Some are also built-in exceptions: InvalidArgError and
NameTooLongError are ValueErrors, TimeoutError a built-in TimeoutError, NoMemoryError a
MemoryError, PermissionError a built-in PermissionError. RDLM_OWNER_DEAD is not an
error (the lock is held): acquires report it with a flag and an OwnerDeadWarning.
"""

import builtins
import warnings

from . import _api

OK = 0
OWNER_DEAD = 2


class RdlmError(Exception):
    """An rdlm call failed: where it failed, and the library's status and text."""

    def __init__(self, status, where):
        lib = _api.core()
        self.status = status
        self.name = lib.rdlm_status_name(status).decode()
        self.text = lib.rdlm_status_str(status).decode()
        super().__init__(f"{where}: {self.text} ({self.name})")


class ArgumentError(RdlmError):
    """-1 .. -99: the caller's argument or handle is wrong."""


class StateError(RdlmError):
    """-100 .. -199: the object is in a state that refuses the request."""


class PeerError(RdlmError):
    """-200 .. -299: a peer, process or link failed."""


class FatalError(RdlmError):
    """-300 .. -399: the context cannot continue."""


class OwnerDeadWarning(UserWarning):
    """An acquire recovered the object from a holder that died (RDLM_OWNER_DEAD):
    the caller holds it now, but what the dead holder protected may be half-written."""


# status -> (class name, extra built-in base). The names are the status names in
# CamelCase (tests/test_errors.py checks them against status.h).
_ERRORS = {
    -1: ("InvalidArgError", ValueError),
    -2: ("NameTooLongError", ValueError),
    -3: ("BadHandleError", None),
    -4: ("ClosedError", None),
    -5: ("KindMismatchError", None),
    -6: ("BadConfigError", None),
    -7: ("UnsupportedError", None),
    -8: ("NotFoundError", None),
    -100: ("BusyError", None),
    -101: ("TimeoutError", builtins.TimeoutError),
    -102: ("NotOwnerError", None),
    -103: ("TableFullError", None),
    -104: ("NoResourceError", None),
    -105: ("MismatchError", None),
    -106: ("StaleTokenError", None),
    -107: ("LeaseExpiredError", None),
    -108: ("QuotaError", None),
    -109: ("AuthError", None),
    -200: ("PeerDeadError", None),
    -201: ("IoError", None),
    -202: ("NotLeaderError", None),
    -203: ("UnavailableError", None),
    -204: ("ProtocolError", None),
    -205: ("NoSpaceError", None),
    -300: ("NoMemoryError", MemoryError),
    -301: ("PermissionError", builtins.PermissionError),
    -302: ("CorruptError", None),
}


def _group(status):
    for bound, cls in ((-100, ArgumentError), (-200, StateError), (-300, PeerError)):
        if status > bound:
            return cls
    return FatalError


_CLASSES = {}
for _status, (_name, _extra) in _ERRORS.items():
    _bases = (_group(_status),) + ((_extra,) if _extra else ())
    _CLASSES[_status] = globals()[_name] = type(_name, _bases, {
        "__doc__": f"Status {_status} (see rdlm_status_str).", "__module__": __name__})
__all__ = ["RdlmError", "ArgumentError", "StateError", "PeerError", "FatalError",
           "OwnerDeadWarning"] + [name for name, _ in _ERRORS.values()]


def error(status, where):
    """The exception for an error status (its group's class for an unknown one)."""
    return _CLASSES.get(status, _group(status))(status, where)


def check(status, where):
    """Return True for RDLM_OWNER_DEAD (issuing an OwnerDeadWarning), False for
    RDLM_OK and other non-negative statuses; raise the status's exception otherwise."""
    if status < 0:
        raise error(status, where)
    if status == OWNER_DEAD:
        warnings.warn(f"{where}: {_api.core().rdlm_status_str(status).decode()}",
                      OwnerDeadWarning, stacklevel=3)
        return True
    return False
