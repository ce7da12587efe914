"""One function of a loaded Module: its inputs checked (arguments.py) and
placed on the devices they are read on, the call made in the module's VM
context (or a lane's), and its results fetched, left on their devices, or
returned in the shim's own memory (stored_results.py).
"""

from __future__ import annotations

from typing import Callable, NamedTuple, Optional, Sequence

import numpy as np
import iree.runtime as rt

from . import values
from .arguments import ArgumentCheck
from .errors import ShimError
from .handles import DeviceValue, Placed
from .ledger import BufferLedger
from .lanes import Lanes
from .manifest import Signature, Value
from .movers import Mover
from .module_api import FunctionAPI
from .result_storage import ResultPool
from .session import Session
from .stored_results import GivenStorage, StoredResults, lent_array, storage_twin


class ModuleParts(NamedTuple):
    """What a Module hands each of its Functions, so that none reaches into
    it: its session, buffer ledger, lanes, result pool and movers."""
    session: Session
    ledger: BufferLedger
    lanes: Lanes
    pool: ResultPool
    movers: Sequence[Mover]  # one per device, in the order of Module.uris (movers.py)
    enter: Callable[[], None]  # ShimError once closed; binds the CUDA context
    where: Callable[[Value, Signature], str]  # where a value lives, in words
    read_back: Callable[[int, rt.HalBufferView], np.ndarray]  # a DeviceValue's to_host


class Function(FunctionAPI):
    """One function of a Module: ``f(x, y)`` or ``f(x=..., y=...)`` with
    numpy arrays (or Placed inputs, or DeviceValues), numpy out. ``inspect.signature(f)``
    and ``help(f)`` show its arguments, shapes, dtypes and devices."""

    def __init__(self, module, signature: Signature, parts: ModuleParts):
        self.module = module
        self.signature = signature
        self.name = signature.name
        self._parts = parts
        parts.session.vm_function(signature.name)  # ShimError if the program has none
        manifest = module.manifest
        device_index = parts.session.program.device_index
        self._arg_devices = [device_index(v, signature) for v in signature.args]
        self._result_devices = [device_index(v, signature) for v in signature.results]
        # Arguments the program reads straight out of a device's pinned
        # memory (mdc-compile --pinned-arguments): index -> that device.
        pinned = manifest.pinned(self.name) if manifest is not None else {}
        for index in pinned:
            if not 0 <= index < len(signature.args) or not signature.args[index].is_tensor:
                raise ShimError(f"@{self.name}: the manifest pins argument {index}, which is not a tensor "
                                f"argument of {signature.text}")
        self._pinned = {i: module.binding[d] for i, d in pinned.items()}
        # Whether a call may return (and signal its fence) before all its
        # work has run, so that work may read an input after the call:
        # then every array input is copied for the call, never borrowed
        # (Manifest.work_outlives_call).
        self._work_outlives_call = (manifest is None or bool(module.dependencies)
                                    or manifest.work_outlives_call(self.name))
        tied = manifest.tied(signature) if manifest is not None else ()
        bounds = manifest.bounds(signature) if manifest is not None else ()
        self._arguments = ArgumentCheck(module, signature, self._arg_devices, self._pinned, tied, bounds)
        for v in signature.results:
            if not (v.is_tensor or v.type == "!hal.buffer_view" or v.type in values.SCALAR_TYPES):
                raise ShimError(f"@{self.name}: result %{v.name} has unsupported type {v.type}")
        # Per result, its numpy scalar type, or None for a buffer view.
        self._scalar_results = tuple(values.SCALAR_TYPES.get(v.type) for v in signature.results)
        # Per result, whether it is the function's one tensor result on its
        # device: IREE may pack several results of a call into one
        # allocation, whose parts are not allocations of their own, so only
        # such a result goes back through the queue (cuda_free.py).
        tensors_on = [d for d, scalar in zip(self._result_devices, self._scalar_results) if scalar is None]
        self._sole_results = tuple(scalar is None and tensors_on.count(d) == 1
                                   for d, scalar in zip(self._result_devices, self._scalar_results))
        twin = storage_twin(self)
        self._storage: Optional[StoredResults] = StoredResults(self, *twin) if twin is not None else None
        self._init_api(self._where)

    @property
    def pinned_arguments(self) -> dict[int, int]:
        """{argument index: device index} of the arguments the caller gives
        in a GPU's pinned memory (mdc-compile --pinned-arguments), the
        device index into Module.uris and Module.devices. ``place`` puts
        such an argument there; a call given an array copies it there (or
        registers its pages) every time. Empty for other functions."""
        return dict(self._pinned)

    def _acquire_lanes(self, depth: int) -> list:
        """Holds ``depth`` lanes for one map (lanes.py)."""
        self._parts.enter()  # a lane's context runs the initialisers on the devices
        return self._parts.lanes.acquire(depth)

    def _lane_call(self, *args):
        return self._parts.lanes.call(self, args)

    def _release_lanes(self) -> None:
        self._parts.lanes.release()

    def _where(self, value: Value, signature: Signature) -> str:
        where = self._parts.where(value, signature)
        if value in signature.args and signature.args.index(value) in self._pinned:
            index = signature.args.index(value)
            where += f", in the pinned memory of runtime device {self.module.uris[self._pinned[index]]}"
        return where

    def prepare(self, args: Sequence) -> list[tuple[object, object]]:
        """Check positional inputs against the declaration before anything
        is uploaded.

        -> (array, HAL element type as an int, iree.runtime.HalElementType's
        value) per tensor, (number, MLIR type name) per scalar, (Placed,
        None) per placed input, (DeviceValue, None) per result of an
        earlier call given as an input.
        """
        return self._arguments.prepare(args)

    def _placed_view(self, position: int, array: np.ndarray, kind: int, register: Optional[bool]):
        movers = self._parts.movers
        borrow = not self._work_outlives_call
        if position in self._pinned:
            return movers[self._pinned[position]].place_pinned(array, kind, register if borrow else False)
        return movers[self._arg_devices[position]].place(array, kind, borrow)

    def place(self, index: int, arg) -> Placed:
        """Input ``index`` placed once where this function reads it: in its
        GPU's pinned memory for an --pinned-arguments argument (a new
        buffer, not the array's own pages), else as a call places it. Pass
        the result to calls in place of the array."""
        parts = self._parts
        parts.enter()
        if not 0 <= index < len(self.signature.args):
            raise ShimError(f"@{self.name} has no input {index}")
        array, kind = self._arguments.checked(index, arg)
        if isinstance(array, Placed) or not isinstance(kind, int) or not self.signature.args[index].is_tensor:
            raise ShimError(f"@{self.name} input {index}: only a tensor input given as an array can be placed")
        array = np.ascontiguousarray(array)
        placed = Placed(self.name, index, self._placed_view(index, array, kind, register=False), array,
                        before_free=parts.session.free_binder(), ledger=parts.ledger,
                        device_index=None if index in self._pinned else self._arg_devices[index])
        parts.ledger.placed.add(placed)
        return placed

    def call_on_devices(self, *args, **kwargs) -> tuple:
        """Call, leaving every tensor result on the device it ends on,
        unconverted: a tuple with a DeviceValue per tensor result and a
        numpy scalar per scalar result. Inputs are given as for a call
        (arrays, Placed inputs, or DeviceValues of earlier calls on the
        input's device). Returns once the call's results are ready, so with
        inputs placed beforehand it times the program's own work alone
        (but for stores into mutable globals, which IREE may still run
        after the call returns: the next reader of the global waits)."""
        inputs = self.prepare(self.bind_arguments(args, kwargs))
        result_list = self._run(inputs)
        parts = self._parts
        ledger, before_free = parts.ledger, parts.session.free_binder()
        # A sole result may be an input handed back, whose view the caller holds.
        viewed = any(a.view_given for a, _ in inputs if isinstance(a, (DeviceValue, Placed)))
        out = []
        for i, (scalar, index) in enumerate(zip(self._scalar_results, self._result_devices)):
            if scalar is not None:
                out.append(scalar(result_list.get_variant(i)))
                continue
            sole = self._sole_results[i]
            resident = DeviceValue(self.module, result_list.get_as_ref(i), index, inputs, ledger=ledger,
                                   read_back=parts.read_back, before_free=before_free,
                                   sole=sole, view_given=sole and (viewed or self._work_outlives_call))
            ledger.resident.add(resident)
            out.append(resident)
        return tuple(out)

    def _run(self, inputs: list) -> rt.VmVariantList:
        """Invoke on inputs from ``prepare`` (and GivenStorage); -> the
        VM's result list, once the call's results are ready (stores into
        mutable globals may still run: ``_work_outlives_call``)."""
        ledger = self._parts.ledger
        self._parts.enter()
        # No input goes back through the queue (cuda_free.py) from the
        # moment its buffer is handed to the VM until the call is done.
        in_use = [a for a, _ in inputs if isinstance(a, (DeviceValue, Placed))]
        if in_use:
            ledger.start_uses(in_use)
            if self._work_outlives_call:
                ledger.read_after_call(in_use)
        try:
            return self._run_counted(inputs)
        finally:
            if in_use:
                ledger.end_uses(in_use)

    def _run_counted(self, inputs: list) -> rt.VmVariantList:
        parts = self._parts
        session = parts.session
        arg_list = rt.VmVariantList(len(inputs) + 2)
        temporaries = []  # (device index, view) of the inputs placed in a device's own memory for this call
        for position, (arg, kind) in enumerate(inputs):
            if isinstance(arg, (Placed, DeviceValue, GivenStorage)):
                arg_list.push_ref(arg._hal_view.ref)
                continue
            if isinstance(kind, str):  # a scalar
                (arg_list.push_float if kind.startswith("f") else arg_list.push_int)(arg)
                continue
            view = self._placed_view(position, arg, kind, register=None)
            arg_list.push_ref(view.ref)
            if position not in self._pinned:
                temporaries.append((self._arg_devices[position], view))
        signal = None
        if self.signature.is_async:
            # Wait fence: the inputs are already resident (uploads above
            # were waited for), so there is nothing to wait on. An empty
            # fence is satisfied for every queue and holds no semaphore of
            # any driver, so no GPU queue is ever asked to wait on a
            # foreign one.
            semaphore = session.fence_device(self.signature).create_semaphore(0)
            signal = rt.HalFence.create_at(semaphore, 1)
            arg_list.push_ref(rt.HalFence(0).ref)
            arg_list.push_ref(signal.ref)
        result_list = rt.VmVariantList(len(self.signature.results))
        parts.lanes.context(session.context).invoke(session.vm_function(self.name), arg_list, result_list)
        del arg_list
        if signal is not None:
            values.wait(signal, self.module.timeout_s, f"@{self.name} to finish")
        # Work that outlives the call may still read its inputs: they go
        # when IREE lets them go, not back through the queue now.
        if temporaries and not self._work_outlives_call:
            parts.ledger.give_back_inputs(temporaries, lambda index: self._result_buffers(result_list, index))
        return result_list

    def _result_buffers(self, result_list: rt.VmVariantList, device_index: int) -> list:
        """(buffer, declared on device ``device_index``) of a call's tensor
        results."""
        return [(result_list.get_as_object(i, rt.HalBufferView).get_buffer(), index == device_index)
                for i, (value, index) in enumerate(zip(self.signature.results, self._result_devices))
                if value.type not in values.SCALAR_TYPES]

    def _invoke(self, inputs: list) -> list[tuple[object, object]]:
        """Call on inputs from ``prepare``.

        -> (array, HAL element type as an int) per tensor result, (number,
        MLIR type name) per scalar result.
        """
        return self._outputs(self._run(inputs), inputs, {})

    def _invoke_for_caller(self, inputs: list) -> list[tuple[object, object]]:
        """A Python call: through the result-storage twin where there is
        one (stored_results.py), else ``_invoke``."""
        if self._storage is None:
            return self._invoke(inputs)
        self._parts.enter()  # before the pool registers memory with a device
        return self._storage.call(inputs, self._parts.pool, self._parts.movers)

    def _outputs(self, result_list: rt.VmVariantList, inputs: list, lent: dict) -> list[tuple[object, object]]:
        """The results of a call as ``_invoke`` gives them; ``lent``: result
        index -> the result_storage.Slab given as its storage, each of which
        becomes the result's array or goes back to the pool."""
        parts = self._parts
        outputs = []
        for i, (value, index) in enumerate(zip(self.signature.results, self._result_devices)):
            if value.type in values.SCALAR_TYPES:
                scalar = values.SCALAR_TYPES[value.type](result_list.get_variant(i))
                outputs.append((scalar, value.type))
                continue
            view = result_list.get_as_object(i, rt.HalBufferView)
            held = lent_array(parts.pool, view, lent[i]) if i in lent else None
            if held is None:
                held = _placed_array_holding(view, [a for a, _ in inputs if isinstance(a, Placed)])
            if held is None:
                held = parts.movers[index].read(view)
                if parts.ledger.gives_back(index) and self._sole_results[i] and not self._work_outlives_call:
                    parts.ledger.give_back_read(index, view, [a for a, _ in inputs if isinstance(a, (Placed, DeviceValue))])
            outputs.append((held, int(view.element_type)))
            del view
        del result_list  # no HAL object may outlive the call (see Module.close)
        return outputs


def _placed_array_holding(view: rt.HalBufferView, placed: list) -> Optional[np.ndarray]:
    """The memory of a Placed input that a result ``view`` is (an output
    argument, iree.abi.output, whose storage the result is written into),
    as an array of the result's shape, or None: such a result is returned
    without a copy."""
    candidates = [p for p in placed if p._array is not None]
    found = values.host_bytes(view) if candidates else None
    if found is None:
        return None
    address, nbytes, dtype, shape = found
    for p in candidates:
        if p._array.ctypes.data == address and p._array.nbytes >= nbytes:
            return p._array.reshape(-1).view(np.uint8)[:nbytes].view(dtype).reshape(shape)
    return None
