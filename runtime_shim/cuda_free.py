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
is that memory's one holder (``Module._give_back`` checks): no live result
of the module shares the buffer (a result can be an input handed back, or
two results one buffer), the caller never took the value's ``view`` (it
could hold the buffer past the value), and the device is cuda. A dealloca
is ordered after all work already queued on the device, so nothing queued
reads freed memory. IREE's dealloca ignores a buffer not from its pool
(memory placed by the shim, a program's constants); a program's globals
never hand their buffers out as results (IREE copies a global into a new
buffer to return it; ``results_left_on_gpu`` in gpu_kit checks held
results stay right while others are given back).
"""

from __future__ import annotations

import threading

import iree.runtime as rt


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
        """Queue the dealloca of ``buffer``; False (the buffer is then freed
        as IREE frees it) where the runtime refuses."""
        with self._lock:  # the semaphore's values are signalled in order
            self._value += 1
            try:
                self.device.queue_dealloca(buffer, rt.HalFence(0),
                                           rt.HalFence.create_at(self._semaphore, self._value))
            except (RuntimeError, ValueError):
                return False
        return True
