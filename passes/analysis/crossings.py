"""The crossing plan: one typed record per crossing between devices that
transfer-insertion stages, and how a crossing value is described (tensor
type, bytes) for the plan, the report and the placement graph.
"""

from __future__ import annotations

import dataclasses

from iree.compiler import ir

from ..infra.diagnostics import MdcError, format_location
from .memory_model import LinkPolicy, MemoryModel
from ..ir import ir_adapter as irx
from ..ir.ir_util import walk
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


class PackedCrossing(MdcError):
    """A value in a data-tiled layout (an ``#iree_encoding`` tensor) crosses
    between devices of different executable targets (check_packed_crossings)."""

    def __init__(self, crossing: Crossing):
        self.crossing = crossing
        # What data tiling would do, for the error and for the driver's warning when it compiles without.
        self.why = (f"would move this value from {crossing.source} to {crossing.target} in {crossing.source}'s "
                    f"packed layout, and {crossing.target}'s code reads another one (IREE 3.13 packs a constant "
                    f"on the device that holds it, not on the one that reads it)")
        super().__init__(f"data tiling {self.why}: compile without it (--iree-opt-data-tiling=false)",
                         location=crossing.location)


def check_packed_crossings(module, crossings: list[Crossing], targets: dict[str, str]) -> None:
    """Raises PackedCrossing for the first crossing whose value is in a
    data-tiled layout and whose two devices have different executable
    targets (``targets``: module_facts.device_targets): one of ``crossings``
    (those mdc staged) or a ``stream.async.transfer`` left in ``module``
    (between devices whose memory IREE shares). Data tiling gives a
    matmul's operands an encoding that stream's specialize-encodings
    resolves per device: a CPU's packed tiles, a GPU's plain layout. IREE
    3.13 hoists the packing of a constant into an initializer on the
    constant's own device and moves the packed bytes to the device whose
    matmul reads them, which reads them in its own layout: wrong numbers
    from mdc's staging, a failed compile from stock
    (regress/iree_data_tiling_packed_crossing.test). Devices of one target
    (two local CPUs compiled alike) resolve alike, and moving is right."""
    for crossing in [*crossings, *_transfers(module)]:
        if crossing.encoding and "#iree_encoding" in crossing.encoding \
                and targets.get(crossing.source) != targets.get(crossing.target):
            raise PackedCrossing(crossing)


def _transfers(module):
    """Each ``stream.async.transfer`` in ``module`` between two devices, as a
    Crossing (its policy and bytes unknown)."""
    for op in walk(module):
        if op.name != irx.STREAM_ASYNC_TRANSFER:
            continue
        src, dst = irx.affinity_of(op, "source_affinity").single, irx.affinity_of(op, "target_affinity").single
        if src and dst and src != dst:
            yield Crossing(format_location(op.location), src, dst, None, "transfer", measure(op.operands[0]).encoding, "?")
