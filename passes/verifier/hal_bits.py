"""Bits of IREE's HAL enums read off ops: memory types and dealloca flags.

An attribute is an integer, or an enum the bindings do not expose as one,
whose names the adapter reads (ir_adapter.enum_names_any); both are read
here.
"""

from __future__ import annotations

from iree.compiler import ir
from ..ir import ir_adapter as irx

HOST_VISIBLE = 1 << 1  # IREE_HAL_MEMORY_TYPE_HOST_VISIBLE
PREFER_ORIGIN = 1  # IREE_HAL_DEALLOCA_FLAG_PREFER_ORIGIN


def has_bit(op, name: str, bit: int, *words: str) -> bool:
    """Whether integer attribute ``name`` of ``op`` has ``bit`` set (or, for
    a printed enum, names one of ``words``)."""
    if name not in op.attributes:
        return False
    try:
        return bool(ir.IntegerAttr(op.attributes[name]).value & bit)
    except (ValueError, TypeError):
        return irx.enum_names_any(op.attributes[name], *words)


def prefers_origin(op) -> bool:
    """Whether a ``hal.device.queue.dealloca`` has flags(PreferOrigin)."""
    return has_bit(op, "flags", PREFER_ORIGIN, "PreferOrigin")


def has_host_visible_attr(op) -> bool:
    """Whether ``op``'s ``memory_types`` attribute includes HostVisible."""
    return has_bit(op, "memory_types", HOST_VISIBLE)


def host_visible(value) -> bool | None:
    """Whether a memory type operand includes HostVisible (None: unknown)."""
    owner = value.owner
    if isinstance(owner, ir.Block):
        return None
    owner = owner.operation
    attr = None
    if owner.name == irx.HAL_MEMORY_TYPE and "type" in owner.attributes:
        attr = owner.attributes["type"]
    elif owner.name == irx.ARITH_CONSTANT:
        attr = owner.attributes["value"]
    if attr is None:
        return None
    try:
        bits = ir.IntegerAttr(attr).value
    except (ValueError, TypeError):
        return irx.enum_names_any(attr, "HostVisible", "HostLocal") or None
    return bool(bits & HOST_VISIBLE)
