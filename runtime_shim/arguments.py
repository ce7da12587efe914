"""A function's inputs checked against its declaration before anything is
uploaded: arrays (shape and dtype), scalars, Placed inputs placed for that
very input, and results of earlier calls left on the input's device.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from . import values
from .errors import ShimError, ShimTypeError
from .handles import DeviceValue, Placed, input_shape
from .manifest import Signature


class ArgumentCheck:
    """The checks for the inputs of ``signature`` in ``module``:
    ``devices``, the device index each input is read on; ``pinned``, input
    index -> the device in whose pinned memory it is read; ``tied``, the
    groups of dimensions that must be equal (Manifest.tied); ``bounds``,
    the dimensions a call must not exceed (Manifest.bounds)."""

    def __init__(self, module, signature: Signature, devices: list[int], pinned: dict[int, int], tied, bounds=()):
        self.module, self.signature = module, signature
        self.devices, self.pinned, self.tied, self.bounds = devices, pinned, tied, bounds

    def prepare(self, args: Sequence) -> list[tuple[object, object]]:
        """Positional inputs -> (array, HAL element type as an int,
        iree.runtime.HalElementType's value) per tensor, (number, MLIR type
        name) per scalar, (Placed, None) per placed input, (DeviceValue,
        None) per result of an earlier call given as an input."""
        sig = self.signature
        if len(args) != len(sig.args):
            raise ShimTypeError(f"@{sig.name} takes {len(sig.args)} input(s), {len(args)} given")
        inputs = [self.checked(i, arg) for i, arg in enumerate(args)]
        if self.tied or self.bounds:
            shapes = [input_shape(arg) for arg, _ in inputs]
            values.check_tied_dims(sig, self.tied, shapes)
            values.check_bounds(sig, self.bounds, shapes)
        return inputs

    def checked(self, i: int, arg) -> tuple[object, object]:
        """Input ``i`` as ``prepare`` gives it."""
        sig = self.signature
        value = sig.args[i]
        if isinstance(arg, Placed) and (arg.function, arg.index) == (sig.name, i):
            arg._hal_view  # noqa: B018  (raises if released)
            return arg, None
        where = f"@{sig.name} input {i} (%{value.name}: {value.type})"
        if isinstance(arg, Placed):
            raise ShimError(f"{where}: given input {arg.index} of @{arg.function}, placed for that one")
        if isinstance(arg, DeviceValue):
            return self._device_value(i, arg, where), None
        if value.is_tensor:
            return values.checked_tensor(arg, value, where)
        if value.type == "!hal.buffer_view":
            array = np.asarray(arg)
            return array, values.hal_type_for_dtype(array.dtype)
        if value.type in values.SCALAR_TYPES:
            return values.check_scalar(arg, value.type, where), value.type
        raise ShimError(f"{where}: unsupported argument type")

    def _device_value(self, i: int, arg: DeviceValue, where: str) -> DeviceValue:
        """A result of an earlier call given as input ``i``: it must be of
        this module, alive, of the declared type, and on the device the
        input is read from (a result is never in a pinned argument's
        memory)."""
        value = self.signature.args[i]
        if arg.module is not self.module:
            raise ShimError(f"{where}: given a result of another module ({arg.module.path})")
        arg._hal_view  # noqa: B018  (raises if released)
        if not value.is_tensor:
            raise ShimError(f"{where}: given a result on a device, for an input that is not a tensor")
        if i in self.pinned:
            raise ShimError(f"{where}: given a result on {arg.device}, but this input is read from pinned "
                            "memory (--pinned-arguments): pass an array or a Placed input")
        if arg.device_index != self.devices[i]:
            raise ShimError(f"{where}: given a result on runtime device {arg.device}, but this input is read "
                            f"on {self.module.uris[self.devices[i]]}: bring it to the host first (to_host())")
        if arg.element_type != values.element_type(value.type.element):
            raise ShimError(f"{where}: dtype mismatch, expected {value.type.element}, got a result of "
                            f"{values.type_name(arg.element_type)}")
        if not value.type.accepts_shape(arg.shape):
            raise values.shape_mismatch(where, value, arg.shape, given="a result of shape ")
        return arg
