"""What a caller holds of a loaded module's memory: an input placed once
(Placed) and a result left on its device (DeviceValue). Each gives its
buffer back through its module's BufferLedger (ledger.py) as it goes.
"""

from __future__ import annotations

import weakref
from typing import Callable, Optional

import numpy as np
import iree.runtime as rt

from . import values
from .errors import ShimError
from .ledger import BufferLedger


class _ViewGiven:
    """What Placed and DeviceValue share: whether the caller holds a view of
    the buffer, set once by the ledger and read by the rest (each
    ``__init__`` sets ``_view_given``)."""

    @property
    def view_given(self) -> bool:
        """Whether the caller took its ``view`` (or one of a value sharing
        its buffer): its memory then never goes back through the queue."""
        return self._view_given

    def mark_view_given(self) -> None:
        """The caller holds a view of its buffer (BufferLedger.view_given)."""
        self._view_given = True


class Placed(_ViewGiven):
    """Input ``index`` of function ``function``, placed where that function
    reads it (Function.place): pass it to calls instead of an array, as often
    as wanted. ``array`` is a writeable numpy view of its memory when that
    is host memory (a pinned argument, or a CPU device's buffer); writing
    into it changes what the next call reads. Released with its module."""

    def __init__(self, function: str, index: int, view: rt.HalBufferView, source: np.ndarray,
                 before_free: Callable[[], None] = lambda: None, ledger: Optional[BufferLedger] = None,
                 device_index: Optional[int] = None):
        self.function, self.index = function, index
        self.device_index = device_index  # where it lies (Module.devices); None: a GPU's pinned host memory
        self._view = view
        self._before_free = before_free  # binds the module's CUDA context (cuda_thread.py)
        # Its module's buffer ledger, weakly (a Placed does not keep it),
        # which gives its GPU memory back to the device's queue as it goes
        # (ledger.py, rule 5): not while a call reads it, nor once the
        # caller took its ``view``, which may outlive it.
        self._ledger = weakref.ref(ledger) if ledger is not None else (lambda: None)
        self._uses = 0  # calls running with it as an input
        self._view_given = False
        # On a CPU device `view` is `source`'s own memory (imported, zero
        # copy), and with IREE 3.13 a view does not keep the imported array
        # alive: only the HalBuffer object the import returned does. So the
        # Placed holds it (until the memory is shown to be a copy), or the
        # program would write into freed memory.
        self._source: Optional[np.ndarray] = source
        self._mapping = None
        self._array: Optional[np.ndarray] = None
        buffer = view.get_buffer()
        if source.nbytes and values.is_mappable(buffer):
            mapping = buffer.map()
            mapped = mapping.asarray([source.nbytes], np.dtype(np.uint8))
            if mapped.ctypes.data == source.ctypes.data:
                self._array = source  # the array's own memory: no mapping to hold
            else:  # a copy in the device's memory: the caller's array is not needed
                self._source, self._mapping = None, mapping
                self._array = mapped.view(source.dtype).reshape(source.shape)

    @property
    def released(self) -> bool:
        """Whether it was released (``release()``, or its module closed)."""
        return self._view is None

    @property
    def array(self) -> Optional[np.ndarray]:
        """A writeable numpy view of the placed memory, or None when that is
        not host memory (a GPU's own). ShimError once released."""
        self.view  # noqa: B018  (raises if released)
        return self._array

    @property
    def view(self) -> rt.HalBufferView:
        """Its iree.runtime HalBufferView; once taken, its memory is left to
        IREE when it goes (the view may outlive it)."""
        view = self._hal_view
        ledger = self._ledger()
        if ledger is not None:
            ledger.view_given(self)
        self._view_given = True
        return view

    @property
    def _hal_view(self) -> rt.HalBufferView:
        """``view`` for the shim's own use (the caller does not get it)."""
        if self._view is None:
            raise ShimError(f"input {self.index} of @{self.function} was released, or placed by a module now closed")
        return self._view

    def release(self) -> None:
        # Released before its memory is offered back: a call on another
        # thread that counts its use from now on finds it released.
        view, self._view = self._view, None
        try:
            if view is not None:
                self._before_free()
                self._offer_back(view)
        finally:
            self._array = None
            self._mapping = None
            self._source = None

    def _offer_back(self, view: rt.HalBufferView) -> None:
        ledger = self._ledger()
        if ledger is not None:
            ledger.give_back_placed(self, view)

    def __del__(self):
        view = getattr(self, "_view", None)
        if view is not None:
            self._before_free()  # the memory is freed as this object goes
            self._offer_back(view)

    def __repr__(self) -> str:
        state = "released" if self._view is None else f"shape {list(self._view.shape)}"
        return f"<mdc.runtime_shim.Placed input {self.index} of @{self.function}, {state}>"


class DeviceValue(_ViewGiven):
    """A tensor result left on the device it ended on, unconverted
    (Function.call_on_devices): pass it to a call of the same module as an
    input declared on that device, or bring it to the host with
    ``to_host()``. ``shape``, ``dtype`` (numpy), ``device`` (its runtime
    device URI) and ``device_index`` (its index in Module.uris and
    Module.devices) describe it; ``view`` is its iree.runtime
    HalBufferView. Released with its module, or with ``release()``."""

    def __init__(self, module, ref: rt.VmRef, device_index: int, borrowed=(), *,
                 ledger: BufferLedger, read_back: Callable[[int, rt.HalBufferView], np.ndarray],
                 before_free: Callable[[], None] = lambda: None, sole: bool = False, view_given: bool = False):
        self.module, self.device_index = module, device_index
        self._read_back = read_back  # (device index, view) -> a numpy copy, as the module reads a result
        self._ledger = ledger  # its module's (ledger.py, rule 2)
        self._before_free = before_free  # binds the module's CUDA context (cuda_thread.py)
        # The VM's reference, not a HalBufferView: with IREE 3.13 making and
        # dropping the Python view of a fresh result costs several
        # microseconds a call, which a call timed alone must not pay. The
        # view is made when first asked for.
        self._ref: Optional[rt.VmRef] = ref
        self._view: Optional[rt.HalBufferView] = None
        # Whether its memory may go back through the queue when it goes
        # (ledger.py, rule 2): not once the caller took ``view``
        # of it or of a value sharing its buffer; not while a call reads it.
        self._view_given = view_given
        self._sole = sole  # its call's one tensor result on its device
        self._uses = 0  # calls running with it as an input
        # A result may be the memory of an array the call imported (an
        # output argument given as an array); a view does not keep that
        # array alive (Placed says why), so the result keeps the call's
        # inputs.
        self._borrowed = borrowed

    @property
    def released(self) -> bool:
        return self._ref is None

    @property
    def view(self) -> rt.HalBufferView:
        view = self._hal_view
        self._ledger.view_given(self)
        return view

    @property
    def _hal_view(self) -> rt.HalBufferView:
        """``view`` for the shim's own use (the caller does not get it)."""
        if self._ref is None:
            raise ShimError(f"a result on {self.device} was used after its module was closed or it was released")
        if self._view is None:
            self._view = self._ref.deref(rt.HalBufferView)
        return self._view

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(int(d) for d in self._hal_view.shape)

    @property
    def element_type(self) -> int:
        """Its HAL element type (iree.runtime.HalElementType's value)."""
        return int(self._hal_view.element_type)

    @property
    def dtype(self) -> np.dtype:
        return values.numpy_dtype(self.element_type)

    @property
    def device(self) -> str:
        return self.module.uris[self.device_index]

    def to_host(self) -> np.ndarray:
        """A new numpy array with its contents (a copy, wherever it lives)."""
        view = self._hal_view
        return self._read_back(self.device_index, view)

    def release(self) -> None:
        """Drop its device memory now (also done when its module closes)."""
        # Released before its memory is offered back: a call on another
        # thread that counts its use from now on finds it released.
        ref, view = self._ref, self._view
        self._view, self._ref = None, None
        try:
            if ref is not None:
                self._before_free()
                self._ledger.give_back_resident(self, view if view is not None else ref.deref(rt.HalBufferView))
        finally:
            self._borrowed = ()

    def __del__(self):
        if getattr(self, "_ref", None) is not None:
            self._before_free()  # the memory is freed as this object goes
            self._ledger.give_back_resident(self, self._hal_view)

    def __repr__(self) -> str:
        if self._ref is None:
            return f"<mdc.runtime_shim.DeviceValue on {self.device}, released>"
        shape = "".join(f"{d}x" for d in self.shape)
        return f"<mdc.runtime_shim.DeviceValue {shape}{values.type_name(self.element_type)} on {self.device}>"


def input_shape(arg) -> tuple[int, ...]:
    """The shape of an input as Function.prepare gives it: an array, a
    Placed input or a DeviceValue (a scalar's is ())."""
    if isinstance(arg, (Placed, DeviceValue)):
        return tuple(arg._hal_view.shape)
    return np.shape(arg)
