"""One mover per device of a loaded module, chosen once at load: how the
shim itself moves a value between numpy and that device (an array given
for an input, a result brought back, ``DeviceValue.to_host``; a program's
own crossings are the program's), and which memory of the module's pool
(result_storage.py) the device lends. Nothing else decides whether a
device's values go through pinned host memory or not.

* ``SharedMover``: a CPU device (``local-task``, ``local-sync``), which
  shares the host's memory. An array is placed by importing its own pages
  (zero-copy) or with one memcpy (``values.place_shared``).
* ``StagedMover``: a device with memory of its own (cuda, hip, vulkan),
  or a CPU device under ``load(staged_transfers=True)``. An array is
  copied into a slab of the pool and the device copies the slab on its
  queue (``staging.place``; into memory from the device's queue where its
  buffers go back through the queue, cuda_free.py); where the pool lends
  no slab or the device refuses that copy, through a new pinned buffer of
  the device's allocator (``values.place_through_pinned``).

Both read a value back alike: a buffer the host can map is mapped and
copied out (``values.read_mapped``); one it cannot (a GPU's own memory)
is copied by the device into a slab (``staging.read_back``), or where
none is lent into a new pinned buffer (``values.read_through_pinned``). A
staged CPU device (``StagedMover.stages_every_read``) reads every value
that second way, as a GPU would.

``lend`` gives the pool's memory imported into the device: as a result's
storage (stored_results.py) only where the device shares host memory
(the CPU device writes it there); as memory registered with the device as
its pinned memory (``pinned``: a twin's storage argument that
mdc-compile --pinned-arguments pins) on any device.

A mover holds its device until the module closes it, before its session
releases the devices (session.py).
"""

from __future__ import annotations

from typing import Optional, Sequence

import numpy as np
import iree.runtime as rt

from . import devices as dev
from . import staging, values
from .result_storage import ResultPool, Slab


class Mover:
    """Moves between numpy and device ``index`` of a module (``device``),
    through ``pool`` (the module's) where it goes through pinned host
    memory, each wait bounded by ``timeout_s`` (None: none)."""

    stages_every_read = False

    def __init__(self, index: int, device: rt.HalDevice, pool: ResultPool, timeout_s: Optional[float],
                 *, shares_host_memory: bool):
        self.index = index
        self.device: Optional[rt.HalDevice] = device
        self.pool = pool
        self.timeout_s = timeout_s
        self.shares_host_memory = shares_host_memory

    def place(self, array: np.ndarray, kind: int, borrow: bool = True) -> rt.HalBufferView:
        """``array`` (of HAL element type ``kind``) on the device. Where
        ``borrow``, the view may borrow ``array``'s memory: keep ``array``
        while it lives and until the work that reads it has run; else the
        device gets a copy of its own."""
        raise NotImplementedError

    def place_pinned(self, array: np.ndarray, kind: int, register: Optional[bool]) -> rt.HalBufferView:
        """``array`` in the device's pinned host memory (``values.to_pinned``):
        how an argument of an mdc-compile --pinned-arguments function is given."""
        return values.to_pinned(self.device, array, kind, register=register)

    def read(self, view: rt.HalBufferView) -> np.ndarray:
        """``view``, a value on the device, as a numpy array: a new one, or
        one over a slab of the pool, which goes back when the array is gone
        (staging.read_back)."""
        if self.stages_every_read or not values.is_mappable(view.get_buffer()):
            held = staging.read_back(self.pool, self.index, self.device, view, self.timeout_s)
            if held is not None:
                return held
            return values.read_through_pinned(self.device, view, self.timeout_s)
        return values.read_mapped(view)

    def lend(self, nbytes: int, pinned: bool = False) -> Optional[Slab]:
        """A slab of at least ``nbytes`` imported into the device (registered
        with it as its pinned memory when ``pinned``), or None: the device
        lends no result storage (it has memory of its own), or the pool
        lends nothing."""
        if not (pinned or self.shares_host_memory):
            return None
        return staging.lend(self.pool, self.index, self.device, nbytes, pinned)

    def close(self) -> None:
        """The module is closing: the device is no longer held here."""
        self.device = None

    def __repr__(self) -> str:
        return f"<{type(self).__name__} of device {self.index}>"


class SharedMover(Mover):
    """A CPU device, which shares the host's memory."""

    def place(self, array: np.ndarray, kind: int, borrow: bool = True) -> rt.HalBufferView:
        return values.place_shared(self.device, array, kind, borrow)


class StagedMover(Mover):
    """A device with memory of its own, or a CPU device staged as one
    (``stages_every_read``). ``stream_ordered``: the device's buffers go
    back through its queue (cuda_free.py), so a placement takes its memory
    from the queue too."""

    def __init__(self, index: int, device: rt.HalDevice, pool: ResultPool, timeout_s: Optional[float],
                 *, shares_host_memory: bool, stream_ordered: bool, stages_every_read: bool):
        super().__init__(index, device, pool, timeout_s, shares_host_memory=shares_host_memory)
        self.stream_ordered = stream_ordered
        self.stages_every_read = stages_every_read

    def place(self, array: np.ndarray, kind: int, borrow: bool = True) -> rt.HalBufferView:
        # Always a copy in the device's own memory: nothing to borrow.
        view = staging.place(self.pool, self.index, self.device, array, kind, self.timeout_s,
                             stream_ordered=self.stream_ordered)
        if view is not None:
            return view
        return values.place_through_pinned(self.device, array, kind, self.timeout_s)


def choose(index: int, uri: str, device: rt.HalDevice, pool: ResultPool, *, timeout_s: Optional[float],
           staged_transfers: bool = False, stream_ordered: bool = False) -> Mover:
    """The mover of device ``index`` (``device``, opened for ``uri``): by the
    device's kind, and ``staged_transfers`` (load's: a CPU device moves as a
    GPU does)."""
    shares = dev.is_local(uri)
    if shares and not staged_transfers:
        return SharedMover(index, device, pool, timeout_s, shares_host_memory=True)
    return StagedMover(index, device, pool, timeout_s, shares_host_memory=shares,
                       stream_ordered=stream_ordered, stages_every_read=staged_transfers)


def for_devices(uris: Sequence[str], devices: Sequence[rt.HalDevice], pool: ResultPool, *,
                timeout_s: Optional[float], staged_transfers: bool,
                stream_ordered: Sequence[int] = ()) -> tuple[Mover, ...]:
    """One mover per device, in the order of ``uris``; ``stream_ordered``:
    the indices of devices whose buffers go back through their queue."""
    return tuple(choose(i, uri, device, pool, timeout_s=timeout_s, staged_transfers=staged_transfers,
                        stream_ordered=i in stream_ordered)
                 for i, (uri, device) in enumerate(zip(uris, devices)))
