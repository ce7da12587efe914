"""The crossing plan: one typed record per crossing between devices that
transfer-insertion stages, and how a crossing value is described (tensor
type, bytes) for the plan, the report and the placement graph.
"""

from __future__ import annotations

import dataclasses

from iree.compiler import ir

from ..infra.diagnostics import MdcError, format_location
from .memory_model import LinkPolicy, MemoryModel
from .sizes import TensorSize, measure


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
    # The value's size with its dimensions identified across the module
    # (sizes.py), for reports that name them once.
    size: TensorSize | None = None


def describe(value: ir.Value, size: ir.Value | None = None) -> tuple[str | None, str]:
    """(encoding, bytes) of a crossing value; bytes are symbolic (d0, d1...
    for dynamic dimensions, named in this value alone) where the shape is
    dynamic. ``measure`` (sizes.py) says what each dimension is."""
    measured = measure(value, size)
    return measured.encoding, measured.bytes_text()


def policy_at(model: MemoryModel, src: str, dst: str, op: ir.Operation) -> LinkPolicy:
    """The memory model's policy for ``src`` -> ``dst``; an impossible pair
    is an error at ``op``'s location."""
    try:
        return model.policy(src, dst)
    except MdcError as e:
        raise MdcError(e.message, location=format_location(op.location), notes=e.notes) from None
