"""Results in the shim's own memory: a call through a function's
result-storage twin (``@F$into``, the manifest's ``"result_storage"``),
given one slab of the module's pool (result_storage.py) per stored result,
which the GPU writes with one DMA and which is returned as an array with
no copy. A function with dynamic result shapes remembers, per input
shapes, the shapes its stored results had.
"""

from __future__ import annotations

import math
import threading
from typing import Optional, Sequence

import numpy as np
import iree.runtime as rt

from . import result_storage, values
from .errors import ShimError
from .handles import input_shape
from .movers import Mover

# How many input shapes a function remembers its results' shapes for.
_SHAPE_MEMO = 256
# What the staging helper says when storage is smaller than the value.
_STORAGE_TOO_SMALL = "less than expected minimum"


class GivenStorage:
    """A view of pool memory given to a twin as a result's storage."""

    __slots__ = ("view",)

    def __init__(self, view: rt.HalBufferView):
        self.view = view

    @property
    def _hal_view(self) -> rt.HalBufferView:
        return self.view


def storage_twin(function) -> Optional[tuple]:
    """(the twin, the results it stores) of ``function``'s result-storage
    twin, or None; ShimError if the twin does not take the function's
    arguments and then one storage per stored result."""
    m = function.module
    found = m.manifest.storage_twin(function.name) if m.manifest is not None else None
    if found is None:
        return None
    name, stored = found
    sig = function.signature
    twin = m.signatures.get(name)
    expected = [*(str(v.type) for v in sig.args), *(str(sig.results[i].type) if i < len(sig.results) else "?"
                                                   for i in stored)]
    if (twin is None or [str(v.type) for v in twin.args] != expected
            or [str(v.type) for v in twin.results] != [str(v.type) for v in sig.results]
            or not all(sig.results[i].is_tensor for i in stored)):
        raise ShimError(f"the manifest names @{name} as the result-storage twin of @{function.name}, "
                        f"but it is {twin.text if twin else 'not in the module'}")
    return m.function(name), stored


class StoredResults:
    """How ``function`` (a Function) is called through its ``twin`` (a
    Function), which stores the results ``stored`` (their indices) in
    memory it is given. ``shapes``: input shapes (and scalar values) ->
    the shapes of the stored results a call on them returned."""

    def __init__(self, function, twin, stored: tuple[int, ...]):
        self.function, self.twin, self.stored = function, twin, stored
        self.shapes: dict[tuple, tuple] = {}
        self._shapes_lock = threading.Lock()  # calls in a map's lanes share it

    def call(self, inputs: list, pool: result_storage.ResultPool,
             movers: Sequence[Mover]) -> list[tuple[object, object]]:
        """A Python call on ``inputs`` (Function.prepare's): through the
        twin where the stored results' shapes are known (static, or seen
        for these input shapes), each such result an array over ``pool``
        memory that ``movers`` (the module's, one per device) lend; else
        the function itself."""
        f = self.function
        key = shape_key(inputs)
        lent = self._lend(key, pool, movers)
        if lent is None:
            outputs = f._invoke(inputs)
            with self._shapes_lock:
                if key not in self.shapes and len(self.shapes) >= _SHAPE_MEMO:
                    del self.shapes[next(iter(self.shapes))]  # forget the oldest
                self.shapes[key] = tuple(np.shape(outputs[i][0]) for i in self.stored)
            return outputs
        storage = [(GivenStorage(slab.view(shape, kind)), None) for slab, shape, kind in lent.values()]
        try:
            result_list = self.twin._run(inputs + storage)
        except BaseException as e:
            del storage
            if not isinstance(e, Exception) or _STORAGE_TOO_SMALL not in str(e):
                # The call may still write the storage (a timeout): its
                # memory is kept, never freed nor lent again.
                pool.quarantine([slab for slab, _, _ in lent.values()])
                raise
            # The shapes seen for these inputs were not the shapes this call
            # makes (a result whose size depends on the values): run the
            # function itself once more, and forget them.
            for slab, _, _ in lent.values():
                pool.give_back(slab)
            with self._shapes_lock:
                self.shapes.pop(key, None)
            return f._invoke(inputs)
        del storage
        return f._outputs(result_list, inputs, {i: slab for i, (slab, _, _) in lent.items()})

    def _lend(self, key, pool: result_storage.ResultPool, movers: Sequence[Mover]) -> Optional[dict]:
        """result index -> (slab, shape, HAL element type) for every stored
        result, or None (shapes not known, or a device lent no memory:
        Mover.lend)."""
        f, twin = self.function, self.twin
        results = f.signature.results
        shapes = [results[i].type.shape for i in self.stored]
        if any(None in shape for shape in shapes):
            shapes = self.shapes.get(key)
            if shapes is None:
                return None
        pinned_arguments = twin.pinned_arguments
        lent = {}
        for j, (i, shape) in enumerate(zip(self.stored, shapes)):
            kind = values.element_type(results[i].type.element)
            nbytes = math.prod(shape) * values.numpy_dtype(kind).itemsize
            position = len(f.signature.args) + j
            pinned = position in pinned_arguments
            index = pinned_arguments[position] if pinned else f._result_devices[i]
            slab = movers[index].lend(nbytes, pinned)
            if slab is None:
                for given, _, _ in lent.values():
                    pool.give_back(given)
                return None
            lent[i] = (slab, list(shape), kind)
        return lent


def lent_array(pool: result_storage.ResultPool, view: rt.HalBufferView,
               slab: result_storage.Slab) -> Optional[np.ndarray]:
    """The result ``view`` as an array over ``slab``, the storage it was
    written into; None (the slab given back) if it is not there."""
    found = values.host_bytes(view)
    if found is not None:
        address, nbytes, dtype, shape = found
        if address == slab.address and nbytes <= slab.capacity:
            return pool.array(slab, nbytes, dtype, shape)
    pool.give_back(slab)
    return None


def shape_key(inputs: list) -> tuple:
    """What a call's result shapes may depend on, short of the values of
    its tensors: each input's shape, each scalar's value."""
    # A scalar by its repr: a NaN is equal to itself so.
    return tuple((kind, repr(arg)) if isinstance(kind, str) else input_shape(arg) for arg, kind in inputs)
