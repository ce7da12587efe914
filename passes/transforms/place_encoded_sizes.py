"""place-encoded-sizes: the size of a tensor in a data-tiled layout is
computed on the device whose op uses it.

With data tiling, a tensor's size depends on the device that holds it (a
CPU's packed tiles are padded; a GPU's layout is plain), and stream's
specialize-encodings, which runs after mdc's stream-level passes, resolves
a ``stream.tensor.sizeof`` of an encoded type by its affinity. IREE 3.13
leaves a dispatch it could not place (its operands come from moves with no
target) without an affinity, and the sizeofs of its encoded operands and
results with none either; place-unplaced-ops places the dispatch, but a
sizeof is not a resource op, and IREE then fails ("'stream.tensor.sizeof'
op illegal for this phase of lowering"). That is how the TinyLlama export
placed across a CPU and a GPU lost data tiling once its packed crossings
were made plain.

This pass gives each such sizeof (an ``#iree_encoding`` type, no
affinity) the device of the placed ops that read it: an op's own
``affinity``, or for a move, the device it moves from. Read on several
devices, it is cloned for each. A sizeof of a plain type, or with an
affinity, stays as it is: IREE needs no device for it.
"""

from __future__ import annotations

from iree.compiler import ir
from iree.compiler.dialects import stream

from ..infra.pass_base import Fact, ModulePass, NoOptions
from ..ir import ir_adapter as irx
from ..ir import ir_util as iru


def _reader_device(op: ir.Operation) -> str | None:
    if op.name == irx.STREAM_ASYNC_TRANSFER:
        return irx.affinity_of(op, "source_affinity").single
    return irx.affinity_of(op).single if "affinity" in op.attributes else None


def _unplaced_encoded_sizes(module) -> list:
    return [op for op in irx.walk(module)
            if op.name == irx.STREAM_TENSOR_SIZEOF and "affinity" not in op.attributes
            and irx.is_data_tiled_type(ir.TypeAttr(op.attributes["encoding"]).value)]


def place_encoded_sizes(module) -> int:
    """Places every unplaced sizeof of an encoded type (the module doc);
    returns how many it placed."""
    placed = 0
    for sizeof in _unplaced_encoded_sizes(module):
        by_device: dict[str, list] = {}
        for use in sizeof.results[0].uses:
            owner = iru.user_op(use)
            device = _reader_device(owner)
            if device is not None:
                by_device.setdefault(device, []).append((owner, use.operand_number))
        if not by_device:
            continue
        first, *others = by_device
        sizeof.attributes["affinity"] = irx.affinity_attr(first)
        for device in others:
            with ir.InsertionPoint(sizeof), sizeof.location:
                clone = stream.TensorSizeOfOp(sizeof.attributes["encoding"], [],
                                              affinity=irx.affinity_attr(device)).result
            for user, index in by_device[device]:
                user.operands[index] = clone
        placed += 1
    return placed


class PlaceEncodedSizes(ModulePass):
    name = "place-encoded-sizes"
    level = "stream"
    summary = "give an encoded tensor's sizeof without an affinity the device of the placed ops that read it"

    needs = (Fact.PLACED_OPS,)
    provides = (Fact.ENCODED_SIZES_PLACED,)

    def apply(self, module, options: NoOptions) -> None:
        place_encoded_sizes(module)
