"""64-bit signed counters."""

import ctypes

from . import _api
from ._args import i64
from ._object import Object


class Counter(Object):
    """A 64-bit signed counter, starting at 0, wrapping. Open with ctx.counter(name)
    or, for per-node shards summed on read, ctx.counter(name, sharded=True)."""

    _kind = "counter"
    _close_fn = "rdlm_counter_close"

    def fetch_add(self, delta=1):
        """Atomically add delta (a signed 64-bit int); returns the previous value
        (of the shard, for a sharded counter). Sequentially consistent. In a
        distributed context one remote fetch-add (blocking for its round trip)."""
        old = ctypes.c_int64()
        self._call("fetch_add", _api.core().rdlm_counter_fetch_add,
                   i64(delta, self._where("fetch_add"), "delta"), ctypes.byref(old))
        return old.value

    def read(self):
        """The current value (a sharded counter: the sum of the shards, not a
        snapshot while others add)."""
        value = ctypes.c_int64()
        self._call("read", _api.core().rdlm_counter_read, ctypes.byref(value))
        return value.value
