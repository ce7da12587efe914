"""Values: element types, checking arguments against their declaration, and moving
numpy arrays to and from devices.

Measured with iree-base-runtime 3.13 on local-task/local-sync:

* `HalAllocator.import_host_allocation` of a numpy array is zero-copy (a
  write to the array is visible through the buffer). The HalBuffer object it
  returns keeps the array alive; a HalBufferView made from that buffer does
  not. So a view from `place_shared` or `to_pinned` may borrow `array`'s memory,
  and whoever keeps the view must keep the array (Function.call keeps its
  inputs for the call, a Placed keeps its own). A call may return before
  its stores into mutable globals have run, and they may read an input
  then (docs/DESIGN.md section 8): such a call's inputs are copies
  (``place_shared(borrow=False)``), never borrowed.
* Compiled CPU dispatches assume 64-byte aligned bindings: importing an array
  whose data is not 64-byte aligned segfaults the dispatch (offsets 4, 16 and
  32 all crashed; numpy itself only guarantees 16). So only 64-byte aligned,
  C-contiguous, writeable arrays are imported; anything else is copied once
  into a buffer of the device's allocator. `aligned_array` makes an array
  that qualifies; mdc-run builds its inputs that way.
* Read-only arrays cannot be imported (the binding asks for a writable view).

For devices that do not share host memory (cuda, hip, ...) a value moves in
two steps that only ever use that device's own allocator and queue: numpy ->
a pinned (host-local, device-visible) buffer, then a queue copy into
device-local memory; results come back the reverse way
(``place_through_pinned``, ``read_through_pinned``: a new pinned buffer per
move; staging.py's moves keep theirs). Which way a device's values go is
chosen once per device, at load, by its mover (movers.py). A GPU queue is never
handed a buffer from another driver's allocator (undefined behaviour on CUDA,
see docs/DESIGN.md section 2).
"""

from __future__ import annotations

import math
from typing import Optional

import numpy as np
import iree.runtime as rt

from .errors import ShimError

ET = rt.HalElementType
MT = rt.MemoryType
BU = rt.BufferUsage
ALIGNMENT = 64

# MLIR element type (as in iree.abi.declaration) -> HAL element type.
MLIR_TYPES = {
    "i1": ET.BOOL_8, "f16": ET.FLOAT_16, "f32": ET.FLOAT_32, "f64": ET.FLOAT_64,
    "bf16": ET.BFLOAT_16, "complex<f32>": ET.COMPLEX_64, "complex<f64>": ET.COMPLEX_128,
    "f8E4M3FN": ET.FLOAT_8_E4M3_FN, "f8E5M2": ET.FLOAT_8_E5M2,
    "f8E4M3FNUZ": ET.FLOAT_8_E4M3_FNUZ, "f8E5M2FNUZ": ET.FLOAT_8_E5M2_FNUZ,
    "f8E8M0FNU": ET.FLOAT_8_E8M0_FNU,
}
for _bits in (8, 16, 32, 64):
    MLIR_TYPES[f"i{_bits}"] = getattr(ET, f"INT_{_bits}")
    MLIR_TYPES[f"si{_bits}"] = getattr(ET, f"SINT_{_bits}")
    MLIR_TYPES[f"ui{_bits}"] = getattr(ET, f"UINT_{_bits}")

_F8_NAMES = {int(ET.FLOAT_8_E4M3_FN): "f8E4M3FN", int(ET.FLOAT_8_E5M2): "f8E5M2",
             int(ET.FLOAT_8_E4M3_FNUZ): "f8E4M3FNUZ", int(ET.FLOAT_8_E5M2_FNUZ): "f8E5M2FNUZ",
             int(ET.FLOAT_8_E8M0_FNU): "f8E8M0FNU"}
_PREFIX = {0x10: "i", 0x11: "si", 0x12: "ui", 0x21: "f", 0x22: "bf", 0x23: "cf"}


def element_type(mlir_name: str) -> int:
    """HAL element type of a declared MLIR element type."""
    try:
        return int(MLIR_TYPES[mlir_name])
    except KeyError:
        raise ShimError(f"unsupported element type {mlir_name}") from None


def numpy_dtype(hal_type: int) -> np.dtype:
    dtype = _NUMPY_DTYPES.get(hal_type)
    if dtype is None:
        try:
            dtype = np.dtype(ET.map_to_dtype(ET(hal_type)))
        except (RuntimeError, ValueError, TypeError):
            raise ShimError(f"element type {type_name(hal_type)} has no numpy equivalent") from None
        _NUMPY_DTYPES[hal_type] = dtype
    return dtype


_NUMPY_DTYPES: dict[int, np.dtype] = {}  # numpy_dtype's answers (asked on every call's results)


def type_name(hal_type: int) -> str:
    """How iree-run-module spells a HAL element type: f32, i1, si8, cf64 ..."""
    hal_type = int(hal_type)
    if hal_type in _F8_NAMES:
        return _F8_NAMES[hal_type]
    numerical, bits = (hal_type >> 24) & 0xFF, hal_type & 0xFF
    if numerical == 0x13:  # boolean: stored in 8 bits, spelled i1
        return "i1"
    return f"{_PREFIX.get(numerical, '*')}{bits}"


def hal_type_for_dtype(dtype: np.dtype) -> int:
    """HAL element type for an array with no declared type."""
    dtype = np.dtype(dtype)
    for name in ("i1", "f16", "f32", "f64", "bf16", "complex<f32>", "complex<f64>",
                 "i8", "i16", "i32", "i64", "ui8", "ui16", "ui32", "ui64"):
        if numpy_dtype(element_type(name)) == dtype:
            return element_type(name)
    raise ShimError(f"unsupported numpy dtype {dtype}")


def checked_tensor(arg, value, where: str) -> tuple[np.ndarray, int]:
    """(array, HAL element type) for a tensor argument declared as `value`
    (a manifest.Value): an ndarray of the declared dtype and a shape the
    declaration accepts; anything else array-like is converted to that
    dtype. ShimError names `where` otherwise."""
    hal_type = element_type(value.type.element)
    dtype = numpy_dtype(hal_type)
    if isinstance(arg, np.ndarray):
        array = arg
    else:
        try:
            array = np.asarray(arg, dtype=dtype)
        except (TypeError, ValueError) as e:
            raise ShimError(f"{where}: cannot convert {type(arg).__name__} to {dtype}: {e}") from None
    if array.dtype != dtype:
        raise ShimError(f"{where}: dtype mismatch, expected {dtype} ({value.type.element}), got {array.dtype}")
    if not value.type.accepts_shape(array.shape):
        raise shape_mismatch(where, value, array.shape)
    return array, hal_type


def check_tied_dims(signature, groups, shapes: list) -> None:
    """ShimError unless each group of tied (argument, dimension) of
    ``signature`` (Manifest.tied) has one size in ``shapes``, each
    argument's shape (anything for a scalar)."""
    for group in groups:
        (k0, i0), *rest = group
        for k, i in rest:
            if shapes[k][i] != shapes[k0][i0]:
                first, other = signature.args[k0], signature.args[k]
                raise ShimError(f"@{signature.name}: dimension {i0} of input {k0} (%{first.name}) is "
                                f"{shapes[k0][i0]} but dimension {i} of input {k} (%{other.name}) is "
                                f"{shapes[k][i]}; the program requires them equal (one dynamic size)")


def check_bounds(signature, bounds, shapes: list) -> None:
    """ShimError unless each bounded (argument, dimension, bound) of
    ``signature`` (Manifest.bounds) is at most its bound in ``shapes``,
    each argument's shape: the placement was made for sizes up to it."""
    for k, i, bound in bounds:
        size = shapes[k][i]
        if size > bound:
            value = signature.args[k]
            raise ShimError(f"@{signature.name} input {k} (%{value.name}: {value.type}): dimension {i} is {size}, "
                            f"above the bound {bound} the module was placed for (mdc-compile "
                            f"--max-dim=arg{k}.d{i}={bound}); compile it again with a larger --max-dim")


def shape_mismatch(where: str, value, shape: tuple[int, ...], given: str = "") -> ShimError:
    """The error for a tensor of ``shape`` (``given``: what it is) where
    `value` (a manifest.Value) is declared: both shapes, ? for a dynamic
    dimension."""
    def text(dims) -> str:
        return "x".join("?" if d is None else str(d) for d in dims) or "a scalar"

    return ShimError(f"{where}: shape mismatch, expected {text(value.type.shape)}, "
                     f"got {given if shape else ''}{text(shape)}")


# ---------------------------------------------------------------------------
# Scalars (VM i32/i64/f32/f64 values; `index` is i64, i1/i8/i16 travel as i32)

SCALAR_TYPES = {"i1": np.int32, "i8": np.int32, "i16": np.int32, "i32": np.int32, "i64": np.int64,
                "index": np.int64, "f32": np.float32, "f64": np.float64}
_SCALAR_BITS = {"i1": 1, "i8": 8, "i16": 16, "i32": 32}


def check_scalar(value, type_: str, where: str):
    """A Python number for a scalar argument of MLIR type `type_`."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value.item()
    if isinstance(value, np.generic):
        value = value.item()
    if type_.startswith("f"):
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
    elif isinstance(value, int) and (type_ == "i1" or not isinstance(value, bool)):
        value = int(value)
        bits = _SCALAR_BITS.get(type_, 64)
        if -(1 << (bits - 1)) <= value < (1 << bits):
            return value
    raise ShimError(f"{where}: expected a {type_} scalar, got {value!r}")


# ---------------------------------------------------------------------------
# numpy <-> device


def aligned_array(array: np.ndarray) -> np.ndarray:
    """A C-contiguous, writeable copy of `array` whose data is 64-byte aligned
    (or `array` itself if it already is one), so it can be used zero-copy."""
    if can_import(array):
        return array
    raw = np.empty(array.nbytes + ALIGNMENT, np.uint8)
    start = (-raw.ctypes.data) % ALIGNMENT
    out = raw[start:start + array.nbytes].view(array.dtype).reshape(array.shape)
    out[...] = array
    return out


def can_import(array: np.ndarray) -> bool:
    return (array.flags.c_contiguous and array.flags.writeable and array.nbytes > 0
            and array.ctypes.data % ALIGNMENT == 0)


def to_device(device: rt.HalDevice, shares_host_memory: bool, array: np.ndarray,
              hal_type: int, staged: bool, timeout_s: Optional[float]) -> rt.HalBufferView:
    """A buffer view of `array` that `device` can use, for a caller that
    decides per move (the shim's own moves decide once per device:
    movers.py): ``place_shared`` where `device` shares host memory (a CPU,
    `local`) and not `staged`, else ``place_through_pinned``."""
    if shares_host_memory and not staged:
        return place_shared(device, array, hal_type)
    return place_through_pinned(device, array, hal_type, timeout_s)


def place_shared(device: rt.HalDevice, array: np.ndarray, hal_type: int,
                 borrow: bool = True) -> rt.HalBufferView:
    """`array` on `device`, which shares host memory (a CPU, `local`): its
    own pages imported (zero-copy) where ``borrow`` and ``can_import``,
    else one memcpy into a buffer of the device's own; an empty array as
    ``place_through_pinned`` places it. The view may borrow `array`'s
    memory: keep `array` while the view lives, and until the work that
    reads it has run."""
    allocator = device.allocator
    if borrow and can_import(array):  # zero-copy
        buffer = allocator.import_host_allocation(
            array, memory_type=int(MT.HOST_LOCAL | MT.DEVICE_VISIBLE),
            allowed_usage=int(BU.DEFAULT))
        return rt.HalBufferView(buffer, list(array.shape), hal_type)
    if array.nbytes > 0:  # one memcpy into the device's own memory
        buffer = allocator.allocate_buffer_copy(
            memory_type=int(MT.DEVICE_LOCAL), allowed_usage=int(BU.DEFAULT),
            device=device, buffer=np.require(array, requirements="C"))
        return rt.HalBufferView(buffer, list(array.shape), hal_type)
    return place_through_pinned(device, array, hal_type, None)


def place_through_pinned(device: rt.HalDevice, array: np.ndarray, hal_type: int,
                         timeout_s: Optional[float]) -> rt.HalBufferView:
    """A copy of `array` in a new buffer of `device`'s own memory, by way
    of a new pinned buffer of its allocator and a copy on its queue,
    waited for (an empty array: a one-byte buffer, nothing copied)."""
    allocator = device.allocator
    target = allocator.allocate_buffer(memory_type=int(MT.DEVICE_LOCAL),
                                       allowed_usage=int(BU.DEFAULT),
                                       allocation_size=max(array.nbytes, 1))
    if array.nbytes > 0:
        pinned = allocator.allocate_buffer(memory_type=int(MT.HOST_LOCAL | MT.DEVICE_VISIBLE),
                                           allowed_usage=int(BU.TRANSFER | BU.MAPPING),
                                           allocation_size=array.nbytes)
        _write_mapped(pinned, array)
        queue_copy(device, pinned, target, timeout_s)
    return rt.HalBufferView(target, list(array.shape), hal_type)


# How to_pinned places an aligned, writeable array by default: register its
# own pages with the device (cuMemHostRegister for cuda) rather than copy it
# into a new pinned buffer. On the H200 at 256 MiB a call placing its
# argument so ran at 15.3 GB/s against 1.65 for the copy, whose pinned
# allocation (cuMemHostAlloc) dominates (docs/PERFORMANCE.md, run 31).
REGISTER_PINNED = True

# Usage of a pinned argument: the program's own import asserts
# Transfer|DispatchStorage, and a local device maps the buffer persistently
# to bind it to a dispatch (a CUDA allocation's default usage has neither
# mapping bit).
PINNED_USAGE = int(BU.DEFAULT) | int(BU.MAPPING) | int(BU.MAPPING_PERSISTENT)


def to_pinned(device: rt.HalDevice, array: np.ndarray, hal_type: int,
              register: Optional[bool] = None) -> rt.HalBufferView:
    """A buffer view of `array` in `device`'s pinned host memory
    (HostLocal|DeviceVisible, from its allocator): how an argument of an
    mdc-compile --pinned-arguments function must be given. `register`
    (default REGISTER_PINNED): import an aligned, writeable array's own
    pages, falling back to a copy if the device refuses them; the view then
    borrows `array`'s memory: keep `array` while the view lives."""
    allocator = device.allocator
    pinned_type = int(MT.HOST_LOCAL | MT.DEVICE_VISIBLE)
    if (REGISTER_PINNED if register is None else register) and can_import(array):
        # None: refused, e.g. pages registered already (the same array twice).
        buffer = import_host_memory(device, array, pinned=True)
        if buffer is not None:
            return rt.HalBufferView(buffer, list(array.shape), hal_type)
    buffer = allocator.allocate_buffer(memory_type=pinned_type, allowed_usage=PINNED_USAGE,
                                       allocation_size=max(array.nbytes, 1))
    if array.nbytes > 0:
        _write_mapped(buffer, array)
    return rt.HalBufferView(buffer, list(array.shape), hal_type)


def host_bytes(view: rt.HalBufferView) -> Optional[tuple[int, int, np.dtype, list[int]]]:
    """(host address, byte count, dtype, shape) of the result ``view`` when
    its buffer is host memory the host can map and it holds any bytes; else
    None. What a caller compares with memory it gave to learn whether the
    result was written there."""
    buffer = view.get_buffer()
    if not is_mappable(buffer):
        return None
    dtype, shape, nbytes = extent(view)
    if nbytes == 0:
        return None
    mapped = buffer.map()
    address = mapped.asarray([nbytes], np.dtype(np.uint8)).ctypes.data
    del mapped
    return address, nbytes, dtype, shape


def import_host_memory(device: rt.HalDevice, memory: np.ndarray, pinned: bool) -> Optional[rt.HalBuffer]:
    """``memory``'s own pages imported into ``device`` (registered with a
    GPU: ``pinned``, as its pinned memory), or None if the device refuses
    them. The buffer does not keep ``memory`` alive: the caller must."""
    try:
        return device.allocator.import_host_allocation(
            memory, memory_type=int(MT.HOST_LOCAL | MT.DEVICE_VISIBLE),
            allowed_usage=PINNED_USAGE if pinned else int(BU.DEFAULT))
    except RuntimeError:
        return None


def _write_mapped(buffer: rt.HalBuffer, array: np.ndarray) -> None:
    """The bytes of `array` into the start of host-mappable `buffer`."""
    mapped = buffer.map()
    mapped.asarray([array.nbytes], np.dtype(np.uint8))[...] = (
        np.ascontiguousarray(array).reshape(-1).view(np.uint8))
    del mapped


def is_mappable(buffer: rt.HalBuffer) -> bool:
    """The host can map `buffer` (host-visible memory that allows it)."""
    return bool(buffer.memory_type() & int(MT.HOST_VISIBLE) and buffer.allowed_usage() & int(BU.MAPPING_SCOPED))


def to_host(device: rt.HalDevice, view: rt.HalBufferView, staged: bool,
            timeout_s: Optional[float]) -> np.ndarray:
    """A fresh numpy array with the contents of `view`, which lives on
    `device`, for a caller that decides per move (movers.py decides once
    per device): ``read_mapped`` where the host can map its buffer and not
    `staged`, else ``read_through_pinned``."""
    if staged or not is_mappable(view.get_buffer()):
        return read_through_pinned(device, view, timeout_s)
    return read_mapped(view)


def extent(view: rt.HalBufferView) -> tuple[np.dtype, list[int], int]:
    """(numpy dtype, shape, byte count) of the value `view` holds."""
    dtype = numpy_dtype(int(view.element_type))
    shape = list(view.shape)
    return dtype, shape, math.prod(shape) * dtype.itemsize


def read_mapped(view: rt.HalBufferView) -> np.ndarray:
    """A fresh numpy array with the contents of `view`, whose buffer the
    host can map (``is_mappable``)."""
    return _copied_out(view.get_buffer(), *extent(view))


def read_through_pinned(device: rt.HalDevice, view: rt.HalBufferView,
                        timeout_s: Optional[float]) -> np.ndarray:
    """A fresh numpy array with the contents of `view`, which lives on
    `device` (device-local memory, a GPU result): copied on the device's
    own queue into a new pinned buffer of its own allocator, then mapped."""
    dtype, shape, nbytes = extent(view)
    if nbytes == 0:
        return np.zeros(shape, dtype)
    buffer = view.get_buffer()
    pinned = device.allocator.allocate_buffer(
        memory_type=int(MT.HOST_LOCAL | MT.DEVICE_VISIBLE),
        allowed_usage=int(BU.TRANSFER | BU.MAPPING), allocation_size=buffer.byte_length())
    queue_copy(device, buffer, pinned, timeout_s)
    return _copied_out(pinned, dtype, shape, nbytes)


def _copied_out(buffer: rt.HalBuffer, dtype: np.dtype, shape: list[int], nbytes: int) -> np.ndarray:
    if nbytes == 0:
        return np.zeros(shape, dtype)
    mapped = buffer.map()
    out = np.array(mapped.asarray([nbytes], np.dtype(np.uint8)), copy=True)
    del mapped
    return out.view(dtype).reshape(shape)


def queue_copy(device: rt.HalDevice, source: rt.HalBuffer, target: rt.HalBuffer,
               timeout_s: Optional[float]) -> None:
    """Copy on `device`'s queue, with a semaphore of that same device, and
    wait for it on the host."""
    wait(submit_copy(device, source, target), timeout_s, "a transfer")


def submit_copy(device: rt.HalDevice, source: rt.HalBuffer, target: rt.HalBuffer) -> rt.HalFence:
    """Queue a copy on `device`'s queue; -> the fence it signals, on a
    semaphore of that same device."""
    sem = device.create_semaphore(0)
    device.queue_copy(source, target, wait_semaphores=rt.HalFence.create_at(sem, 0),
                      signal_semaphores=rt.HalFence.create_at(sem, 1))
    return rt.HalFence.create_at(sem, 1)


def submit_alloca_copy(device: rt.HalDevice, source: rt.HalBuffer, nbytes: int) -> tuple[rt.HalBuffer, rt.HalFence]:
    """A buffer of ``nbytes`` from ``device``'s queue (on cuda, its
    stream-ordered pool, whose buffers a queue dealloca gives back:
    cuda_free.py) and a copy of ``source`` into it, queued after it; ->
    (the buffer, the fence the copy signals), on a semaphore of ``device``."""
    sem = device.create_semaphore(0)
    target = device.queue_alloca(nbytes, rt.HalFence.create_at(sem, 0), rt.HalFence.create_at(sem, 1))
    device.queue_copy(source, target, wait_semaphores=rt.HalFence.create_at(sem, 1),
                      signal_semaphores=rt.HalFence.create_at(sem, 2))
    return target, rt.HalFence.create_at(sem, 2)


def wait(fence: rt.HalFence, timeout_s: Optional[float], what: str) -> None:
    if timeout_s is None:
        fence.wait()
    elif fence.wait(timeout=int(timeout_s * 1e9)) is False:
        raise TimeoutError(f"timed out after {timeout_s:g} s waiting for {what}")
