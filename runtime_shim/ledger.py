"""The buffer ledger of a loaded module: which of its buffers the caller
holds (placed inputs and results left on a device), and when one goes back
through its device's queue as its owner goes (cuda_free.py says why).

A buffer goes back only where the ledger is sure to be its one holder;
any doubt leaves it to IREE, which frees it itself. The rules:

1. Only on a device that gives memory back through its queue (one in
   ``queue_free``: a cuda device), and only a whole allocation
   (``cuda_free.is_whole_allocation``).
2. A result left on a device (a DeviceValue) goes back when it is released
   or collected, if it was its call's one tensor result on that device,
   the caller never took a ``view`` of it or of a value sharing its
   buffer, no call is reading it, and no other live value or placed input
   of the module is the same buffer.
3. A result read back into numpy goes back at once, under rule 2's last
   condition, and if no input of its call is the same buffer (IREE hands
   an argument back as a result).
4. An input the shim placed for one call goes back once the call is done,
   unless a result of the call or a live value on that device may share
   its memory (``cuda_free.may_share_memory``: a result can be a part of
   an input), or a placed input is the same buffer.
5. A placed input (a Placed) goes back when released or collected, under
   rule 4's doubts, if no call is reading it and the caller never took its
   ``view``. A program's globals never hold it: IREE copies an argument it
   stores (a copy that may run after the call: rule 7).
6. A call counts its use of every held input from the moment the input's
   buffer is handed to the VM until the call is done (``start_uses``).
7. An input or a result of a call whose work may outlive it (a call of a
   function that stores into a mutable global:
   Manifest.work_outlives_call) never goes back, nor does a value sharing
   its buffer: that work may read it after the call is done.
8. Every decision is taken under the ledger's lock, and only if that lock
   is free at once: a give-back never waits (it may run in a finalizer,
   on any thread); a set changing under another thread, or teardown,
   leaves the buffer to IREE.

The ledger reads the give-back state each held value keeps
(``_uses``, ``_view_given``, ``_sole``, ``device_index``: handles.py),
counts ``_uses`` under its lock and marks a taken view with
``mark_view_given``.
"""

from __future__ import annotations

import threading
import weakref
from typing import Callable, Iterable

import iree.runtime as rt

from . import cuda_free


class BufferLedger:
    """Placed inputs and resident results of one module, and the give-back
    rules above. ``queue_free``: device index -> its cuda_free.QueueFree,
    for the devices whose memory goes back through their queue."""

    def __init__(self, queue_free: dict):
        self.queue_free = queue_free
        self.lock = threading.Lock()  # give-back decisions against calls' uses of their inputs
        self.placed: "weakref.WeakSet" = weakref.WeakSet()
        self.resident: "weakref.WeakSet" = weakref.WeakSet()

    def gives_back(self, device_index) -> bool:
        """Whether memory on ``device_index`` goes back through its queue (rule 1)."""
        return device_index in self.queue_free

    def start_uses(self, inputs: list) -> None:
        """A call hands ``inputs``, held values, to the VM (rule 6); ``end_uses`` when it is done."""
        with self.lock:
            for a in inputs:
                a._uses += 1

    def read_after_call(self, values: list) -> None:
        """Rule 7: ``values``, held values, were given to (or made by) a
        call whose work may outlive it: neither they nor any value sharing
        their buffers goes back (as for a view the caller took)."""
        for value in values:
            self.view_given(value)

    def end_uses(self, inputs: list) -> None:
        with self.lock:
            for a in inputs:
                a._uses -= 1

    # -- what holds a buffer ---------------------------------------------------

    def held_buffers(self, device_index: int, leaving=None) -> list:
        """The buffers the module's live results on ``device_index`` and its
        placed inputs there or in a GPU's pinned memory hold, but
        ``leaving``'s."""
        return self._resident_buffers(device_index, leaving) + self._placed_buffers(device_index, leaving)

    def _resident_buffers(self, device_index: int, leaving=None) -> list:
        return [v._hal_view.get_buffer() for v in list(self.resident)
                if v is not leaving and v.device_index == device_index and not v.released]

    def _placed_buffers(self, device_index: int, leaving=None) -> list:
        """Placed inputs on ``device_index`` or in a GPU's pinned memory (device_index None)."""
        return [p._hal_view.get_buffer() for p in list(self.placed)
                if p is not leaving and p.device_index in (device_index, None) and not p.released]

    def _holds_placement(self, device_index: int, results: Callable[[], list] = list, leaving=None):
        """-> whether memory the shim placed on ``device_index`` is still
        held (rules 4 and 5): by a result (``results()``: the call's own, as
        (buffer, on that device); and the live values there), which may
        share memory with it if on that device and else only if the same
        buffer, or by a placed input that is the same buffer (``leaving``
        is not asked)."""
        def held(buffer: rt.HalBuffer) -> bool:
            resident = [(other, True) for other in self._resident_buffers(device_index)]
            if any(cuda_free.may_share_memory(buffer, other) if near else buffer == other
                   for other, near in [*results(), *resident]):
                return True
            return any(buffer == other for other in self._placed_buffers(device_index, leaving))
        return held

    # -- giving back -----------------------------------------------------------

    def give_back_placed(self, placed, view: rt.HalBufferView) -> None:
        """``placed`` was released (``view``: what it held): rule 5."""
        device_index = placed.device_index
        if placed._view_given or placed._uses or not self.gives_back(device_index):
            return
        self._try_give_back(device_index, view.get_buffer, self._holds_placement(device_index, leaving=placed),
                            ready=lambda: not placed._uses)

    def give_back_inputs(self, temporaries: list, results: Callable[[int], list]) -> None:
        """A call's inputs placed for it alone (``temporaries``: (device
        index, view)), once it is done (rule 4); ``results(device index)``:
        its results as (buffer, on that device)."""
        for device_index, view in temporaries:
            if self.gives_back(device_index):
                self._try_give_back(device_index, view.get_buffer,
                                    self._holds_placement(device_index, lambda: results(device_index)))

    def give_back_resident(self, value, view: rt.HalBufferView) -> None:
        """``value`` is being released (``view``: what it held): rule 2."""
        if value._view_given or not value._sole or value._uses or not self.gives_back(value.device_index):
            return
        self._try_give_back(value.device_index, view.get_buffer,
                            is_one_of(lambda: self.held_buffers(value.device_index, leaving=value)),
                            ready=lambda: not value._uses)

    def give_back_read(self, device_index: int, view: rt.HalBufferView, inputs: Iterable) -> None:
        """A result on ``device_index``, just read back into numpy: rule 3
        (``inputs``: its call's inputs held on a device)."""
        self._try_give_back(device_index, view.get_buffer, is_one_of(lambda: (
            [a._hal_view.get_buffer() for a in inputs] + self.held_buffers(device_index))))

    def _try_give_back(self, device_index: int, buffer: Callable[[], rt.HalBuffer],
                       held: Callable[[rt.HalBuffer], bool], ready: Callable[[], bool] = lambda: True) -> None:
        """``buffer()`` back through the queue unless ``held`` says something
        still holds it: under the lock, only if it is free now and
        ``ready()`` holds under it (rule 8)."""
        if not self.lock.acquire(blocking=False):
            return
        try:
            if ready():
                free = self.queue_free.get(device_index)
                if free is not None:
                    target = buffer()
                    if cuda_free.is_whole_allocation(target) and not held(target):
                        free.give_back(target)
        except Exception:  # noqa: BLE001  (leave it to IREE)
            return
        finally:
            self.lock.release()

    def view_given(self, value) -> None:
        """The caller took ``value.view``: neither it nor any live value or
        placed input sharing its buffer goes back through the queue."""
        value.mark_view_given()
        try:
            buffer = value._hal_view.get_buffer()
            for other in [*list(self.resident), *list(self.placed)]:
                if not other.released and other.device_index == value.device_index \
                        and other._hal_view.get_buffer() == buffer:
                    other.mark_view_given()
        except Exception:  # noqa: BLE001  (a set changing under another thread)
            pass

    def release_all(self) -> None:
        """Release every placed input and resident result (its module closes)."""
        for placed in list(self.placed):
            placed.release()
        for value in list(self.resident):
            value.release()

    def close(self) -> None:
        """Give nothing back any more: teardown leaves the rest to IREE."""
        self.queue_free = {}


def is_one_of(buffers: Callable[[], list]) -> Callable[[rt.HalBuffer], bool]:
    """-> whether a buffer is one of ``buffers()`` (asked when it is used)."""
    return lambda buffer: any(buffer == other for other in buffers())
