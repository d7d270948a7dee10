"""Python arguments to the C API's types, refusing what ctypes would wrap silently."""

import math
import numbers

from . import _api
from .errors import error

INVALID_ARG = -1  # RDLM_ERR_INVALID_ARG


def _invalid(where, what, value, wanted):
    return error(INVALID_ARG, f"{where}: {what} {value!r} ({wanted})")


def timeout_ns(timeout, where):
    """None or math.inf: wait without limit (RDLM_TIMEOUT_INFINITE); 0: try once; else
    a relative timeout in seconds (a float or an int > 0), rounded up to whole
    nanoseconds (a positive timeout never becomes a try) and capped just below
    RDLM_TIMEOUT_INFINITE. InvalidArgError for anything else (NaN, < 0, not a
    number)."""
    if timeout is None:
        return _api.TIMEOUT_INFINITE
    if not isinstance(timeout, numbers.Real) or isinstance(timeout, bool) or \
            math.isnan(timeout) or timeout < 0:
        raise _invalid(where, "timeout", timeout, "seconds >= 0, or None")
    if math.isinf(timeout):
        return _api.TIMEOUT_INFINITE
    if timeout >= (_api.TIMEOUT_INFINITE - 1) / 1e9:
        return _api.TIMEOUT_INFINITE - 1  # about 584 years
    return math.ceil(timeout * 1e9)


def integer(value, lo, hi, where, what):
    """value if it is an int within lo..hi, else InvalidArgError."""
    if not isinstance(value, numbers.Integral) or isinstance(value, bool) or \
            not lo <= value <= hi:
        raise _invalid(where, what, value, f"an integer in {lo}..{hi}")
    return int(value)


def u32(value, where, what):
    return integer(value, 0, 2**32 - 1, where, what)


def i64(value, where, what):
    return integer(value, -2**63, 2**63 - 1, where, what)


def u64(value, where, what):
    return integer(value, 0, 2**64 - 1, where, what)


def name(value, where):
    """An object name as the C API takes it (UTF-8 bytes); InvalidArgError for a
    non-string or one with a NUL, which C would silently cut."""
    if not isinstance(value, str) or "\0" in value:
        raise _invalid(where, "name", value, "a string without NUL")
    return value.encode()
