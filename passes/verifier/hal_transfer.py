"""What each HAL op says about the owner of the value it makes.

One small function per op: from the facts of its operands (``get``), the
value it gives facts to and those facts, or None when it adds nothing.
``index`` is the op's program order and ``locate()`` its printed location,
recorded in the buffers and fences it creates. Ops that move facts between
blocks, functions and globals are the analysis's own (ownership.py).
"""

from __future__ import annotations

from typing import Callable

from iree.compiler.dialects import hal as _hal  # noqa: F401  (registers op views)

from .facts import Allocator, Buffer, CommandBuffer, Device, Fence, of_kind
from .hal_bits import has_host_visible_attr, host_visible
from ..ir import ir_adapter as irx


def _result(op):
    """Result 0, the value most ops give their facts to (None: no result)."""
    return op.results[0] if len(op.results) else None


def _device_allocator(op, get, index, locate):
    return _result(op), frozenset(Allocator.of(d.name) for d in of_kind(get(op.operands[0]), Device))


def _command_buffer_create(op, get, index, locate):
    return _result(op), frozenset(CommandBuffer.of(d.name) for d in of_kind(get(op.opview.device), Device))


def _command_buffer_device(op, get, index, locate):
    return _result(op), frozenset(Device.of(c.device) for c in of_kind(get(op.operands[0]), CommandBuffer))


def _allocator_select(op, get, index, locate):
    # The selected device is any of the candidates.
    return _result(op), frozenset(f for v in op.opview.devices for f in of_kind(get(v), Device))


def _queue_alloca(op, get, index, locate):
    view = op.opview
    hv = host_visible(view.memory_types)
    loc = locate()
    return _result(op), frozenset(Buffer.of(d.name, hv, loc, index) for d in of_kind(get(view.device), Device))


def _allocator_allocate(op, get, index, locate):
    """hal.allocator.allocate, and hal.allocator.import (whose results are
    (did_import, buffer))."""
    view = op.opview
    hv = host_visible(view.memory_types)
    loc = locate()
    facts = frozenset(Buffer.of(a.device, hv, loc, index) for a in of_kind(get(view.allocator), Allocator))
    return op.results[len(op.results) - 1], facts


def _same_as_operand(op, get, index, locate):
    """A buffer view's buffer, a new view of a buffer, a subspan: the same memory."""
    return _result(op), get(op.operands[0])


def _buffer_assert(op, get, index, locate):
    """An imported argument belongs to the allocator its assert names,
    unless something already says whose memory it is."""
    buf = op.operands[0]
    if get(buf):
        return None
    loc = locate()
    hv = None if has_host_visible_attr(op) else False
    return buf, frozenset(Buffer.of(a.device, hv, loc, index) for a in of_kind(get(op.opview.allocator), Allocator))


def _fence_create(op, get, index, locate):
    loc = locate()
    return _result(op), frozenset(Fence.of(d.name, loc, index) for d in of_kind(get(op.opview.device), Device))


def _fence_join(op, get, index, locate):
    return _result(op), frozenset(f for v in op.operands for f in get(v))


def _arith_select(op, get, index, locate):
    return _result(op), get(op.operands[1]) | get(op.operands[2])


Transfer = Callable  # (op, get, index, locate) -> (value or None, facts) | None

TRANSFERS: dict[str, Transfer] = {
    irx.HAL_DEVICE_ALLOCATOR: _device_allocator,
    irx.HAL_COMMAND_BUFFER_CREATE: _command_buffer_create,
    irx.HAL_COMMAND_BUFFER_DEVICE: _command_buffer_device,
    irx.HAL_ALLOCATOR_SELECT: _allocator_select,
    irx.HAL_DEVICE_QUEUE_ALLOCA: _queue_alloca,
    irx.HAL_ALLOCATOR_ALLOCATE: _allocator_allocate,
    irx.HAL_ALLOCATOR_IMPORT: _allocator_allocate,
    irx.HAL_BUFFER_VIEW_BUFFER: _same_as_operand,
    irx.HAL_BUFFER_VIEW_CREATE: _same_as_operand,
    irx.HAL_BUFFER_SUBSPAN: _same_as_operand,
    irx.UTIL_OPTIMIZATION_BARRIER: _same_as_operand,
    irx.HAL_BUFFER_ASSERT: _buffer_assert,
    irx.HAL_FENCE_CREATE: _fence_create,
    irx.HAL_FENCE_JOIN: _fence_join,
    irx.ARITH_SELECT: _arith_select,
}
