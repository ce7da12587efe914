"""A GPU result the caller gives up goes back through the device's queue.

IREE 3.13's cuda driver allocates a program's results
(``hal.device.queue.alloca``) from a CUDA memory pool of its own. The
program frees its transients with a queue dealloca (``cuMemFreeAsync``,
ordered on the device's stream); a result it returns is the caller's, and
when the caller's last reference goes IREE frees it with ``cuMemFree``.
Measured on an H200 with iree.runtime alone (``python -m bench sizes``, its
first line, is the stock reproduction): a 1 MiB queue alloca whose buffer
is then dropped costs 80 to 120 us a round, against 3 to 5 us when the
buffer is given back with a queue dealloca; and every mdc call that leaves
a result on the GPU, or whose GPU result the shim reads back, paid it (a
4 KiB CPU->GPU call: 154 us with its result dropped, 57 us with it held).
A pool's release threshold, CUDA's own knob for keeping freed memory,
cannot be reached: IREE does not expose its pools, and a pool buffer
cannot be exported (DLPack: "CUDA buffer type is not supported for
export"), so its address, which would name the pool, is out of reach.

So the shim gives a result's memory back itself, with a queue dealloca on
the result's device, when its Python owner goes (a released or collected
DeviceValue, or a GPU result once read back into numpy), and only where it
is sure to be that memory's one holder (the module's ``BufferLedger``,
ledger.py, whose rules these are); any doubt leaves the buffer to IREE:

* the device is cuda;
* the buffer is a whole allocation (``is_whole_allocation``): IREE packs
  several results of a call into one allocation and hands out parts of it
  (subspans), which are no allocations of their own, and IREE's cuda
  dealloca reads a subspan as a cuda buffer. As a part can span its whole
  allocation (a sibling of size zero), the result must also be its call's
  one tensor result on that device;
* no live result or placed input of the module, and no input of the call
  it came from, is the same buffer (IREE hands an argument back as a
  result, and returns one buffer twice for a value returned twice);
* the caller never took the ``view`` of the value or of a value sharing
  its buffer (the view may outlive the value), and no call running on
  another thread reads it as an input;
* no other thread is deciding at the same moment (the module's lock, taken
  without waiting: a collection on the thread that holds it gives up).

The shim's own placements on a cuda device (``staging.place``: an input
given as numpy for a call, or ``Function.place``) come from the same pool,
through a queue alloca, and go back the same way: a call's input once the
call is done, a ``Placed`` input when it is released or collected
(``BufferLedger.give_back_inputs``, ``.give_back_placed``), under the
same doubts and one more: no result of the call and no live value of the
module on that device may share its memory (``may_share_memory``: the
same buffer, or one in an allocation of the same size, since a result can
be a part of an input). No call may be reading a ``Placed`` input then.
Before, each was an allocator buffer that cuda freed with a synchronous
``cuMemFree``, as results once were.

A dealloca is ordered after the work already queued on the device's one
stream, so nothing queued reads freed memory. IREE ignores a dealloca of a
buffer not from its pool (an allocator buffer the shim placed a value in
when the queue refused it, a program's constants); a program's globals never hand their buffers out as results
(IREE copies a global into a new buffer to return it; ``results_left_on_gpu``
in gpu_kit checks held results stay right while others are given back).
"""

from __future__ import annotations

import re
import threading

import iree.runtime as rt

# How iree.runtime's HalBuffer repr places a buffer in its allocation.
_PLACE = re.compile(r"\(at offset (\d+) into (\d+)\)")


def is_whole_allocation(buffer: rt.HalBuffer) -> bool:
    """``buffer`` starts its allocation and spans all of it, as far as
    iree.runtime tells (its repr; an unknown form answers False)."""
    found = _PLACE.search(repr(buffer))
    return bool(found) and int(found.group(1)) == 0 and int(found.group(2)) == buffer.byte_length()


def may_share_memory(buffer: rt.HalBuffer, other: rt.HalBuffer) -> bool:
    """``other`` may be ``buffer``'s memory or a part of it, for a
    ``buffer`` that is a whole allocation: the same buffer, or any buffer in
    an allocation of the same size (iree.runtime names no allocation, and a
    program may return a part of an input, a subspan, as a result; an
    unknown form answers True). A give-back of an input the shim placed
    asks this of every buffer still held (BufferLedger.give_back_placed)."""
    if buffer == other:
        return True
    mine, theirs = _PLACE.search(repr(buffer)), _PLACE.search(repr(other))
    return mine is None or theirs is None or mine.group(2) == theirs.group(2)


class QueueFree:
    """Gives buffers of one device back with queue deallocas, each
    signalling the next value of a semaphore of that device (nothing waits
    on it: the device's own stream orders the free)."""

    def __init__(self, device: rt.HalDevice):
        self.device = device
        self._semaphore = device.create_semaphore(0)
        self._value = 0
        self._lock = threading.Lock()

    def give_back(self, buffer: rt.HalBuffer) -> bool:
        """Queue the dealloca of ``buffer``; False where it was not asked
        (another give-back under way on this thread or another: the buffer
        is then freed as IREE frees it) or the runtime refused it."""
        if not self._lock.acquire(blocking=False):
            return False
        try:  # the semaphore's values are signalled in order
            self._value += 1
            self.device.queue_dealloca(buffer, rt.HalFence(0), rt.HalFence.create_at(self._semaphore, self._value))
        except (RuntimeError, ValueError):
            return False
        finally:
            self._lock.release()
        return True
