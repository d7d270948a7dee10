"""The resource side of fencing tokens (rdlm_fence_check)."""

import ctypes

from . import _api
from ._args import u64
from .errors import check, error

INVALID_ARG = -1  # RDLM_ERR_INVALID_ARG


class Fence:
    """The highest token a resource accepted, in an 8-byte aligned 64-bit word: this
    process's memory by default, or a word at `offset` of a writable buffer (an mmap
    of a file shared by the processes that write the resource). Needs no context.

        fence = rdlm.Fence()
        fence.check(token)     # StaleTokenError: a holder that lost the lock writes late
    """

    def __init__(self, buffer=None, offset=0):
        if buffer is None:
            self._word = ctypes.c_uint64()
        else:
            self._word = ctypes.c_uint64.from_buffer(buffer, offset)
            if ctypes.addressof(self._word) % 8:
                raise error(INVALID_ARG, f"Fence: offset {offset} is not 8-byte aligned")

    def check(self, token):
        """Atomically: if token >= highest, raise highest to token and return (the
        write guarded by token may proceed); else raise StaleTokenError, highest
        unchanged. Equal tokens pass. The check and a write that is not one atomic
        store must be serialised by the resource itself."""
        check(_api.core().rdlm_fence_check(ctypes.byref(self._word),
                                           u64(token, "Fence.check", "token")),
              f"Fence.check of token {token:#x}")

    @property
    def highest(self):
        """The highest token accepted so far (0 before the first)."""
        return self._word.value
