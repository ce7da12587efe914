"""plain-encoded-crossings: a value in a data-tiled layout crosses between
devices of different executable targets as plain data, and is packed
again on the device that reads it.

With data tiling, IREE gives a matmul's operands an encoding
(``#iree_encoding.encoding``) that each device's target resolves to its
own layout: a CPU's packed tiles, a GPU's plain one. IREE 3.13 hoists the
packing of a constant (a causal mask folded into a matmul's accumulator,
say) into an initializer on the device that holds the constant, and moves
the packed bytes with a ``stream.async.transfer`` to the device whose
matmul reads them, which reads them in its own layout: wrong numbers, or
(mdc's check, crossings.check_packed_crossings) a module compiled without
data tiling at all, its CPU code 1.5x to 2.2x slower.

This pass runs on IREE's stream IR before mdc stages any crossing (level
``stream``). For each ``stream.async.transfer`` from device A to device B
of different targets whose value comes from a ``stream.tensor.encode`` of
a static shape (directly or through clones), it

* unpacks the value on A (``stream.tensor.encode`` to the plain tensor
  type),
* moves the plain bytes from A to B,
* packs them on B (``stream.tensor.encode`` to the same encoding, sized on
  B), cloned to the transfer's own lifetime where that is not ``*``,

and the transfer's users read that. A value of a dynamic shape, or whose
encoding is not made by an encode op this pass can see, is left as it is:
the check still refuses it, and mdc-compile compiles without data tiling
as before. Devices of one target pack alike, and their transfers stay.
"""

from __future__ import annotations

from iree.compiler import ir
from iree.compiler.dialects import stream

from ..analysis.residence import Residence
from ..infra.pass_base import Fact, Handle, ModulePass, NoOptions
from ..infra.pass_manager import AnalysisHandle
from ..ir import ir_adapter as irx
from ..ir.module_facts import device_targets

_ANY_LIFETIME = "!stream.resource<*>"


def _encode_behind(value: ir.Value):
    """The ``stream.tensor.encode`` that packs ``value`` (through clones),
    or None."""
    while not isinstance(value.owner, ir.Block):
        op = value.owner.operation
        if op.name == irx.STREAM_TENSOR_ENCODE:
            return op
        if op.name != irx.STREAM_ASYNC_CLONE:
            return None
        value = op.operands[0]
    return None


def _is_packed(encode) -> bool:
    result = ir.TypeAttr(encode.attributes["result_encoding"]).value
    return irx.is_data_tiled_type(result) and ir.RankedTensorType(result).has_static_shape


def _encode(affinity, value, size, source_type, result_type) -> tuple[ir.Value, ir.Value]:
    """``value`` (``source_type`` in ``size`` bytes) encoded as
    ``result_type`` on ``affinity``, and its size there."""
    result_size = stream.TensorSizeOfOp(result_type, [], affinity=affinity).result
    encoded = stream.TensorEncodeOp(ir.Type.parse(_ANY_LIFETIME), value, source_type, [], size, result_type, [],
                                    result_size, affinity=affinity).result
    return encoded, result_size


def _plain_crossing(transfer, encode, source_device: str, target_device: str) -> None:
    """Rewrites ``transfer`` (of ``encode``'s packed value, from
    ``source_device`` to ``target_device``) as unpack on the source, a
    plain transfer, and pack on the target (the module doc)."""
    source, target = irx.affinity_attr(source_device), irx.affinity_attr(target_device)
    packed_type = ir.TypeAttr(encode.attributes["result_encoding"]).value
    plain_type = ir.RankedTensorType.get(ir.RankedTensorType(packed_type).shape,
                                         ir.RankedTensorType(packed_type).element_type)
    with ir.InsertionPoint(transfer), transfer.location:
        plain, plain_size = _encode(source, transfer.operands[0], transfer.operands[1], packed_type, plain_type)
        moved = stream.AsyncTransferOp(ir.Type.parse(_ANY_LIFETIME), plain, plain_size, plain_size,
                                       source_affinity=source, target_affinity=target).result
        packed, packed_size = _encode(target, moved, plain_size, plain_type, packed_type)
        result_type = transfer.results[0].type
        if str(result_type) != _ANY_LIFETIME:
            packed = stream.AsyncCloneOp(result_type, packed, packed_size, packed_size, affinity=target).result
    transfer.results[0].replace_all_uses_with(packed)
    transfer.erase()


def _packed_transfers(module) -> list:
    """``(transfer, encode)`` for each move of a value a static-shape
    encode packed (through clones), whatever its devices."""
    found = []
    for op in irx.walk(module):
        if op.name == irx.STREAM_ASYNC_TRANSFER:
            encode = _encode_behind(op.operands[0])
            if encode is not None and _is_packed(encode):
                found.append((op, encode))
    return found


def packed_crossings(module, residence: Residence, transfers: list) -> list:
    """``(transfer, encode, source, target)`` for each of ``transfers``
    (_packed_transfers) between devices of different targets: its devices
    as the residence analysis finds them (IREE leaves the target of a
    hoisted constant's move unnamed, for its readers to decide)."""
    targets = device_targets(module)
    found = []
    for op, encode in transfers:
        a, b = residence.transfer_source(op), residence.transfer_target(op)
        if a is None or b is None or a == b or targets.get(a) == targets.get(b):
            continue
        found.append((op, encode, a, b))
    return found


def plain_encoded_crossings(module, residence: AnalysisHandle) -> int:
    """Every packed crossing between devices of different targets made
    plain (the module doc); returns how many. The residence analysis is
    asked for only where a packed value moves at all."""
    transfers = _packed_transfers(module)
    if not transfers:
        return 0
    found = packed_crossings(module, residence.get(), transfers)
    for transfer, encode, a, b in found:
        _plain_crossing(transfer, encode, a, b)
    return len(found)


class PlainEncodedCrossings(ModulePass):
    name = "plain-encoded-crossings"
    level = "stream"
    summary = "move a data-tiled value between devices of different targets as plain data, packed again where it is read"

    requires = (Handle(Residence),)
    needs = (Fact.PLACED_OPS,)
    provides = (Fact.PLAIN_CROSSINGS,)

    def apply(self, module, options: NoOptions, residence: AnalysisHandle) -> None:
        if plain_encoded_crossings(module, residence):
            residence.rewrote()
