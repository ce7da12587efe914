"""Moves between numpy and a device's own memory through memory the shim keeps.

A value the shim moves itself, outside a program's crossings (a numpy
array given for an input declared on a GPU, a GPU result read back into
numpy, ``DeviceValue.to_host``), goes through host memory the GPU can
reach and one queue copy of the GPU's. ``values.place_through_pinned``
and ``values.read_through_pinned`` take that memory from the device's
allocator anew on every move: for cuda, a ``cuMemHostAlloc`` and, once the move is done, its
free, which cost more than the copy at most sizes. These two take it from
the module's ``result_storage.ResultPool`` instead: page-aligned numpy
memory imported once into the device (registered with a GPU), lent per
size class and kept between moves.

* ``read_back``: the device copies the value into a slab. Above
  ``COPY_OUT_BYTES`` the caller gets a numpy array over that slab, with no
  second copy, and the slab goes back to the pool when the array (and
  every view of it) is gone, as a result in result-storage memory does:
  memory the caller keeps stays registered with the GPU while it is kept.
  A smaller value is copied out into an array of its own and the slab goes
  back at once, so small results a caller keeps hold no registered memory.
* ``place``: the array is copied into a slab, the device copies the slab
  into a new buffer of its own, and the slab goes back to the pool once
  that copy is waited for. numpy copies on one thread; a copy of
  ``PARALLEL_COPY_BYTES`` or more is split over up to ``COPY_THREADS``
  threads (numpy lets go of the GIL while it copies), as the CPU side of a
  program's crossing is split over local-task's workers.

Both return None where the pool lends nothing (the device would not import
host memory, or the module is closing) or the device refuses the queue
copy: the caller (a device's mover, movers.py, which decides when a move
goes this way) then takes the allocator's path. A move whose wait fails
leaves its slab quarantined (the device may still write it: a timeout),
never lent again.
"""

from __future__ import annotations

import concurrent.futures
import os
import threading
from typing import Callable, Optional

import numpy as np
import iree.runtime as rt

from . import values
from .result_storage import ResultPool, Slab

MT = rt.MemoryType
BU = rt.BufferUsage


# A host copy of at least this many bytes is split over threads, in parts
# of at least COPY_PART bytes, on at most COPY_THREADS threads.
PARALLEL_COPY_BYTES = 16 << 20
COPY_PART = 4 << 20
COPY_THREADS = 8

# A value read back of at most this many bytes is copied out of its slab
# into an array of its own, and the slab goes back at once; a larger one is
# returned over its slab.
COPY_OUT_BYTES = 256 << 10

_copy_pool: Optional[concurrent.futures.ThreadPoolExecutor] = None
_copy_pool_lock = threading.Lock()


def _usable_cpus() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def _copy_threads() -> concurrent.futures.ThreadPoolExecutor:
    global _copy_pool
    with _copy_pool_lock:
        if _copy_pool is None:
            _copy_pool = concurrent.futures.ThreadPoolExecutor(min(COPY_THREADS, _usable_cpus()),
                                                               thread_name_prefix="mdc-copy")
        return _copy_pool


def copy_bytes(target: np.ndarray, source: np.ndarray) -> None:
    """The bytes of ``source`` (1-D uint8) into the start of ``target`` (1-D
    uint8, at least as long), on several threads when it is large (on one
    while the interpreter shuts down and takes no new threads)."""
    n = source.nbytes
    parts = min(COPY_THREADS, _usable_cpus(), n // COPY_PART)
    if n < PARALLEL_COPY_BYTES or parts < 2:
        target[:n] = source
        return
    step = -(-n // parts)
    futures = []
    try:
        pool = _copy_threads()
        for i in range(0, n, step):
            futures.append(pool.submit(np.copyto, target[i:min(i + step, n)], source[i:min(i + step, n)]))
    except RuntimeError:  # "cannot schedule new futures after (interpreter) shutdown"
        concurrent.futures.wait(futures)
        target[:n] = source
        return
    concurrent.futures.wait(futures)
    for future in futures:
        future.result()  # raises a part's error


def _forget_copy_threads() -> None:
    """In a forked child: the parent's threads are not there."""
    global _copy_pool
    _copy_pool = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_copy_threads)


def pool_key(device_index: int, pinned: bool = True) -> tuple:
    """The pool's key for slabs imported into device ``device_index``
    (``pinned``: registered with it as its pinned memory)."""
    return (device_index, pinned)


def lend(pool: ResultPool, device_index: int, device: rt.HalDevice, nbytes: int,
         pinned: bool = True) -> Optional[Slab]:
    """A slab of at least ``nbytes`` imported into ``device`` (registered
    with it when ``pinned``), or None: how these moves and a result's
    storage (``Function``) borrow the same slabs."""
    return pool.lend(pool_key(device_index, pinned), nbytes,
                     lambda memory: values.import_host_memory(device, memory, pinned))


def _copy_waited(pool: ResultPool, slab: Slab, submit: Callable[[], rt.HalFence],
                 timeout_s: Optional[float]) -> bool:
    """One queue copy, queued by ``submit`` (-> the fence it signals),
    waited for. False (the slab given back) if the device would not take
    it: nothing is in flight, and the caller takes the allocator's path. A
    failed or timed-out wait raises, with the slab quarantined: the device
    may still write it."""
    try:
        done = submit()
    except Exception:  # noqa: BLE001  (refused at submission: nothing in flight)
        pool.give_back(slab)
        return False
    except BaseException:
        pool.give_back(slab)
        raise
    try:
        values.wait(done, timeout_s, "a transfer")
    except BaseException:
        pool.quarantine([slab])
        raise
    return True


def read_back(pool: ResultPool, device_index: int, device: rt.HalDevice, view: rt.HalBufferView,
              timeout_s: Optional[float]) -> Optional[np.ndarray]:
    """The value of ``view`` (in ``device``'s own memory) as a numpy array,
    or None if the pool lends no slab. Of at most ``COPY_OUT_BYTES``: a new
    array copied out of the slab, which goes back at once (a small result
    the caller keeps holds no registered memory); larger: an array over
    the slab, which goes back when the array is gone."""
    dtype, shape, nbytes = values.extent(view)
    if nbytes == 0:
        return np.zeros(shape, dtype)
    buffer = view.get_buffer()
    length = buffer.byte_length()  # the queue copies the whole buffer, which may be longer than the view
    if nbytes > length:
        return None  # not a view this path knows how to read
    slab = lend(pool, device_index, device, length)
    if slab is None or not _copy_waited(pool, slab, lambda: values.submit_copy(device, buffer, slab.buffer),
                                        timeout_s):
        return None
    if nbytes <= COPY_OUT_BYTES:
        out = slab.memory[:nbytes].copy()
        pool.give_back(slab)
        return out.view(dtype).reshape(shape)
    return pool.array(slab, nbytes, dtype, shape)


def place(pool: ResultPool, device_index: int, device: rt.HalDevice, array: np.ndarray, hal_type: int,
          timeout_s: Optional[float], stream_ordered: bool = False) -> Optional[rt.HalBufferView]:
    """A buffer view of a copy of ``array`` in ``device``'s own memory, or
    None if the pool lends no slab, the device refuses the copy, or
    ``array`` holds no bytes. ``stream_ordered``: the buffer comes from the
    device's queue (a queue alloca, ordered before the copy), which a queue
    dealloca gives back (cuda_free.py), not from its allocator, whose
    buffers cuda frees with a synchronous cuMemFree."""
    if array.nbytes == 0:
        return None
    slab = lend(pool, device_index, device, array.nbytes)
    if slab is None:
        return None
    # The queue copies the whole slab: the target is as long (whole pages),
    # the view as long as the array.
    try:
        copy_bytes(slab.memory, np.ascontiguousarray(array).reshape(-1).view(np.uint8))
        target = None if stream_ordered else device.allocator.allocate_buffer(
            memory_type=int(MT.DEVICE_LOCAL), allowed_usage=int(BU.DEFAULT), allocation_size=slab.capacity)
    except BaseException:
        pool.give_back(slab)
        raise

    def submit() -> rt.HalFence:
        nonlocal target
        if target is not None:
            return values.submit_copy(device, slab.buffer, target)
        target, done = values.submit_alloca_copy(device, slab.buffer, slab.capacity)
        return done

    if not _copy_waited(pool, slab, submit, timeout_s):
        return None
    pool.give_back(slab)
    return rt.HalBufferView(target, list(array.shape), hal_type)
