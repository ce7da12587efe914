"""The crossing plan: one typed record per crossing between devices that
transfer-insertion stages, and how a crossing value is described (tensor
type, bytes) for the plan, the report and the placement graph.
"""

from __future__ import annotations

import dataclasses
import re

from iree.compiler import ir

from .diagnostics import MdcError, format_location
from .ir_util import get_attr
from .memory_model import LinkPolicy, MemoryModel


@dataclasses.dataclass
class Crossing:
    """One crossing between devices, as recorded for reports."""

    location: str | None
    source: str
    target: str
    policy: LinkPolicy
    shape: str  # "transfer" | "implicit"
    encoding: str | None  # e.g. "tensor<?x4xf32>", None if unknown
    bytes: str  # e.g. "64", "16*d0", "?"
    # The caller's buffer the crossing copies from or into, when it does:
    # "pinned argument", "pinned output" or "output storage".
    caller_buffer: str | None = None


_ELEMENT = re.compile(r"^tensor<((?:[0-9?]+x)*)([a-z]+)(\d+)")


def _encoding_of(value: ir.Value, size: ir.Value | None) -> str | None:
    """The tensor type a resource holds, from its size computation or its
    producer, as text; None when neither says."""
    for candidate in (size, value):
        owner = candidate.owner if candidate is not None else None
        if owner is None or isinstance(owner, ir.Block):
            continue
        op = owner.operation
        if op.name == "stream.tensor.sizeof":
            return str(get_attr(op, "encoding").value)
        if op.name in ("stream.async.cast", "stream.async.transfer", "stream.timepoint.barrier"):
            return _encoding_of(op.operands[0], None)
        for name in ("result_encodings", "result_encoding", "target_encoding"):
            attr = get_attr(op, name)
            if attr is None:
                continue
            if name == "result_encodings":
                index = list(op.results).index(candidate) if candidate in list(op.results) else 0
                return str(attr[index].value) if index < len(attr) else None
            return str(attr.value)
    return None


def describe(value: ir.Value, size: ir.Value | None = None) -> tuple[str | None, str]:
    """(encoding, bytes) of a crossing value; bytes are symbolic (d0, d1...
    for dynamic dimensions) where the shape is dynamic."""
    encoding = _encoding_of(value, size)
    if encoding is None:
        return None, "?"
    m = _ELEMENT.match(encoding)
    if not m:
        return encoding, "?"
    dims = [d for d in m.group(1).split("x") if d]
    element_bytes = max(int(m.group(3)), 8) // 8
    static, symbols = element_bytes, []
    for d in dims:
        if d == "?":
            symbols.append(f"d{len(symbols)}")
        else:
            static *= int(d)
    return encoding, "*".join([str(static), *symbols]) if symbols else str(static)


def policy_at(model: MemoryModel, src: str, dst: str, op: ir.Operation) -> LinkPolicy:
    """The memory model's policy for ``src`` -> ``dst``; an impossible pair
    is an error at ``op``'s location."""
    try:
        return model.policy(src, dst)
    except MdcError as e:
        raise MdcError(e.message, location=format_location(op.location), notes=e.notes) from None
