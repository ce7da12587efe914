"""Result storage the shim owns: results returned without a copy.

A function compiled with a result-storage twin (``@F$into``, the manifest's
``"result_storage"``) writes each result declared on a CPU device into an
output argument. ``Function.__call__`` gives that argument out of this
pool: page-aligned memory that numpy allocated, imported once into the
device that writes it (registered with the GPU when the manifest pins the
argument in that GPU's memory, so the GPU's DMA lands in it; else imported
by the CPU device). The caller gets a numpy array over that memory, and
the memory goes back to the pool when the last array over it is garbage
collected. Nothing the VM or the HAL holds outlives a call: the memory is
numpy's, and the pool's imports are released when the module closes (a
result array the caller still holds then stays valid; its memory is just
no longer registered).

The memory is lent per size class (a page multiple): a steady loop of
calls alternates between two slabs of each size, the one the caller still
holds and the one the call writes.
"""

from __future__ import annotations

import atexit
import threading
import weakref
from typing import Callable, Optional

import numpy as np
import iree.runtime as rt

PAGE = 4096
# Idle slabs kept per (device, size class), and idle bytes kept in all;
# more are released.
IDLE_PER_SIZE = 2
IDLE_BYTES = 1 << 30

# Slabs a failed call may still be writing (a timeout): never freed.
_QUARANTINED: list = []

MT = rt.MemoryType
BU = rt.BufferUsage


def size_class(nbytes: int) -> int:
    """The slab size serving ``nbytes``: whole pages (a GPU registers pages,
    and two registrations may not share one)."""
    return max(PAGE, -(-nbytes // PAGE) * PAGE)


class Slab:
    """``capacity`` bytes of page-aligned numpy memory (``memory``) and its
    import into one device (``buffer``; None once released), lent under
    ``key``."""

    def __init__(self, key, memory: np.ndarray, buffer: rt.HalBuffer):
        self.key = key
        self.memory = memory
        self.buffer: Optional[rt.HalBuffer] = buffer
        self.address = memory.ctypes.data

    @property
    def capacity(self) -> int:
        return self.memory.nbytes

    def view(self, shape: list[int], element_type: int) -> rt.HalBufferView:
        """A buffer view of the slab's start with ``shape`` and ``element_type``."""
        return rt.HalBufferView(self.buffer, list(shape), element_type)


def _page_aligned(nbytes: int) -> np.ndarray:
    raw = np.empty(nbytes + PAGE, np.uint8)
    start = (-raw.ctypes.data) % PAGE
    return raw[start:start + nbytes]


class _Lease:
    """The owner of a result array's memory: numpy keeps it (the array's
    base) while any array over the slab lives; when it goes, the slab goes
    back to the pool."""

    __slots__ = ("__array_interface__", "slab", "__weakref__")

    def __init__(self, slab: Slab, nbytes: int):
        self.slab = slab
        self.__array_interface__ = {"shape": (nbytes,), "typestr": "|u1", "version": 3,
                                    "data": (slab.address, False)}


class ResultPool:
    """Slabs per (key, size class), ``key`` naming the device and how it
    imports (Function passes (device index, pinned)). Thread-safe: a
    garbage-collected result may give its slab back on any thread.
    ``before_free`` runs before a slab's import is released, on the thread
    that releases it (the module binds its CUDA context there:
    cuda_thread.py)."""

    def __init__(self, before_free: Callable[[], None] = lambda: None):
        self._before_free = before_free
        # Reentrant: a garbage collection inside the lock may run a
        # result's finalizer, which gives its slab back on the same thread.
        self._lock = threading.RLock()
        self._idle: dict[tuple, list[Slab]] = {}
        self._idle_bytes = 0
        # Keys whose device would not import host memory the first time it
        # was asked (no device that imported once is written off for a
        # later refusal, e.g. of one registration too large), and keys that
        # imported once.
        self._refused: set = set()
        self._imported: set = set()
        self._made: "weakref.WeakSet[Slab]" = weakref.WeakSet()  # every slab alive, lent or idle
        self._closed = False
        _POOLS.add(self)

    def lend(self, key, nbytes: int, importer: Callable[[np.ndarray], Optional[rt.HalBuffer]]) -> Optional[Slab]:
        """A slab of at least ``nbytes`` for ``key``: an idle one, or new
        memory that ``importer`` imports (None if it refuses: then, if it
        never imported for this key, this key gets none again)."""
        capacity = size_class(nbytes)
        with self._lock:
            if self._closed or key in self._refused:
                return None
            idle = self._idle.get((key, capacity))
            if idle:
                self._idle_bytes -= capacity
                return idle.pop()
        memory = _page_aligned(capacity)
        buffer = importer(memory)
        if buffer is None:
            with self._lock:
                if key not in self._imported:
                    self._refused.add(key)
            return None
        slab = Slab((key, capacity), memory, buffer)
        with self._lock:
            self._imported.add(key)
            self._made.add(slab)
        return slab

    def give_back(self, slab: Slab) -> None:
        """``slab`` is free again (a call did not use it, or its last result
        array is gone)."""
        with self._lock:
            if slab.buffer is None:
                return
            if self._closed:
                self._before_free()
                slab.buffer = None
                return
            idle = self._idle.setdefault(slab.key, [])
            if len(idle) < IDLE_PER_SIZE and self._idle_bytes + slab.capacity <= IDLE_BYTES:
                idle.append(slab)
                self._idle_bytes += slab.capacity
                return
        self._before_free()
        slab.buffer = None  # released outside the lock

    def quarantine(self, slabs) -> None:
        """``slabs`` were given to a call that failed, which may still
        write them (a timeout): their memory is kept to the end of the
        process, never lent again."""
        _QUARANTINED.extend(slabs)

    def array(self, slab: Slab, nbytes: int, dtype: np.dtype, shape: list[int]) -> np.ndarray:
        """The first ``nbytes`` of ``slab`` as an array of ``shape`` and
        ``dtype``; the slab comes back to the pool when the array (and every
        view of it) is gone."""
        lease = _Lease(slab, nbytes)
        weakref.finalize(lease, self.give_back, slab).atexit = False
        return np.asarray(lease).view(dtype).reshape(shape)

    def close(self) -> None:
        """Releases every import, of idle slabs and of those a result array
        still holds (its memory stays valid); lends nothing after."""
        with self._lock:
            self._closed = True
            self._idle, self._idle_bytes = {}, 0
            made = list(self._made)
        if made:
            self._before_free()
        for slab in made:
            slab.buffer = None

    def idle_count(self, key=None) -> int:
        """Idle slabs, of every key or of ``key``."""
        with self._lock:
            return sum(len(s) for (k, _), s in self._idle.items() if key is None or k == key)


# Every pool alive: a module dropped without close() leaves its pool alive
# while a result array holds a slab, and a HAL object alive at interpreter
# teardown crashed IREE 3.13; so every pool is closed at exit.
_POOLS: "weakref.WeakSet[ResultPool]" = weakref.WeakSet()


@atexit.register
def _close_pools() -> None:
    for pool in list(_POOLS):
        pool.close()
