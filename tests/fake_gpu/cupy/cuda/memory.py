"""The stand-in's memory pools: a count of the live "device" arrays, rounded as CuPy's pool
rounds (512-byte blocks), so that `get_default_memory_pool().used_bytes()` moves as on a GPU."""

import weakref as _weakref

import numpy as _np

_BLOCK = 512


class MemoryPool:
    """CuPy's default device memory pool, counted: `used_bytes()` is what live arrays hold,
    `total_bytes()` adds the blocks freed arrays left cached until `free_all_blocks()`."""

    def __init__(self, allocator=None):
        self._live = {}  # id(owning numpy array) -> weak reference to it
        self._used = 0
        self._cached = 0

    def used_bytes(self):
        return self._used

    def free_bytes(self):
        return self._cached

    def total_bytes(self):
        return self._used + self._cached

    def free_all_blocks(self, stream=None):
        self._cached = 0

    def n_free_blocks(self):
        return self._cached // _BLOCK

    # -- the stand-in's own bookkeeping (not CuPy API) --

    def _track(self, a):
        """Count the memory behind NumPy array `a` (the array owning it) until it is freed."""
        root = a
        base = root.base
        while isinstance(base, _np.ndarray):
            root = base
            base = root.base
        key = id(root)
        if key in self._live:
            return
        size = -(-root.nbytes // _BLOCK) * _BLOCK
        if not size:
            return
        self._live[key] = _weakref.ref(root, lambda ref, key=key, size=size: self._release(key, size, ref))
        self._used += size
        self._cached = max(0, self._cached - size)  # a cached block is reused first

    def _release(self, key, size, ref):
        if self._live.get(key) is ref:
            del self._live[key]
            self._used -= size
            self._cached += size


class PinnedMemoryPool:
    """CuPy's pinned (host) memory pool: the stand-in never pins host memory."""

    def __init__(self, allocator=None):
        pass

    def free_all_blocks(self):
        pass

    def n_free_blocks(self):
        return 0


_default_pool = MemoryPool()
_default_pinned_pool = PinnedMemoryPool()
