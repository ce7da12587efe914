"""returned-argument-moves: an argument returned on another device is moved there.

A public function that returns one of its arguments unchanged (or through
ops that only change its shape: ``tensor.collapse_shape``, ``expand_shape``,
``reshape``, ``cast``; or through a call of a function that returns its own
argument so, which IREE inlines) as a result declared on another device has
a crossing in its signature and none in its body. IREE 3.13's ABI conversion wraps the
function in ``hal.tensor.import`` / ``hal.tensor.export`` and folds
``export(import(%arg))`` to ``%arg`` whatever the two affinities say (a
chain of reshapes that cancels out folds away first): the function returns
the caller's buffer as is, and device_b's memory comes back to the caller
as device_a's result. No stream-level pass can see it: the body is
``util.return %arg0`` by then, and the argument's device may be gone from the
module altogether. On a discrete GPU the caller then cannot read the
result ("PERMISSION_DENIED ... requires HOST_VISIBLE").

This pass runs on the program as written, before any of IREE's phases, and
makes such a crossing a move that IREE keeps: a ``flow.tensor.transfer`` of
the returned value to the result's declared device, right before the
return. transfer-insertion then stages it like any other move. Only
crossings of a staged pair of the memory model are rewritten: where the two
devices share memory, returning the caller's buffer is right, and IREE's
output stands unchanged. An argument declared without an affinity is on the
default device (the first ``--device``; the caller places it there); a
result declared without one has no device to be moved to.
"""

from __future__ import annotations

from iree.compiler import ir
from iree.compiler.dialects import arith, flow, tensor

from .diagnostics import MdcError
from .ir_util import get_attr, single_device, top_level_ops
from .memory_model import MemoryModel
from .registry import ModulePass, PassOptions, register

AFFINITY = "iree.abi.affinity"
# Ops whose result is their first operand's bytes under another shape.
METADATA_ONLY = ("tensor.cast", "tensor.collapse_shape", "tensor.expand_shape", "tensor.reshape",
                 "flow.tensor.reshape", "flow.tensor.bitcast")
_FUNCTIONS = ("func.func", "util.func")
_RETURNS = ("func.return", "util.return")
_CALLS = ("func.call", "util.call")


def _declared(function: ir.Operation, attr_name: str) -> list:
    """The ``iree.abi.affinity`` attribute of each argument (``arg_attrs``)
    or result (``res_attrs``) of ``function``, None where it has none."""
    attrs = get_attr(function, attr_name)
    if attrs is None:
        return []
    out = []
    for entry in ir.ArrayAttr(attrs):
        entry = ir.DictAttr(entry)
        out.append(entry[AFFINITY] if AFFINITY in entry else None)
    return out


def returned_argument(value: ir.Value, entry: ir.Block, functions: dict | None = None,
                      seen: frozenset = frozenset()) -> int | None:
    """The index of the entry-block argument whose bytes ``value`` is,
    through metadata-only ops and calls of ``functions`` (name -> function
    op) that return one of their own arguments so (IREE inlines them
    first); None if it is anything else."""
    while True:
        owner = value.owner
        if isinstance(owner, ir.Block):
            return ir.BlockArgument(value).arg_number if owner == entry else None
        op = owner.operation
        if op.name in _CALLS and functions:
            callee = ir.FlatSymbolRefAttr(op.attributes["callee"]).value
            inner = _forwarded(functions.get(callee), list(op.results).index(value), functions, seen | {callee}) \
                if callee not in seen else None
            if inner is None or inner >= len(op.operands):
                return None
            value = op.operands[inner]
        elif op.name in METADATA_ONLY:
            value = op.operands[0]
        else:
            return None


def _forwarded(function, result: int, functions: dict, seen: frozenset) -> int | None:
    """The argument of ``function`` (a one-block function) that its result
    ``result`` is, as returned_argument says; None if none."""
    if function is None or len(function.regions[0].blocks) != 1:
        return None
    block = function.regions[0].blocks[0]
    terminator = block.operations[len(block.operations) - 1].operation
    if terminator.name not in _RETURNS or result >= len(terminator.operands):
        return None
    return returned_argument(terminator.operands[result], block, functions, seen)


def _staged(model: MemoryModel, src: str, dst: str) -> bool:
    if src not in model.devices or dst not in model.devices:
        return False
    try:
        return model.policy(src, dst).is_staged
    except MdcError:
        return True  # GPUs of different drivers and no host: transfer-insertion says so at the move


def _moved(value: ir.Value, target: ir.Attribute) -> ir.Value:
    """``flow.tensor.transfer`` of tensor ``value`` to ``target``, at the
    current insertion point."""
    ir.Context.current.dialects["flow"]  # loads it: a program need not use flow ops itself
    shaped = ir.RankedTensorType(value.type)
    dims = []
    for i in range(shaped.rank):
        if shaped.is_dynamic_dim(i):
            index = arith.ConstantOp(ir.IndexType.get(), i).result
            dims.append(tensor.DimOp(value, index).result)
    return flow.TensorTransferOp(value, dims, target, results=[value.type]).result


def move_returned_arguments(module, model: MemoryModel, default: str | None) -> list[tuple]:
    """Rewrites every public function of ``module`` (source IR: ``func.func``
    or ``util.func``) that returns an argument, or a reshape of one, as a
    result declared on a device that must stage from the argument's device:
    the returned value is moved to the result's device first. Returns
    (function, result index, from, to) for each move made."""
    moves = []
    functions = {ir.StringAttr(op.attributes["sym_name"]).value: op
                 for op in top_level_ops(module) if op.name in _FUNCTIONS}
    for function in top_level_ops(module):
        if function.name not in _FUNCTIONS or not function.regions[0].blocks:
            continue
        visibility = get_attr(function, "sym_visibility")
        if visibility is not None and ir.StringAttr(visibility).value != "public":
            continue
        arguments, results = _declared(function, "arg_attrs"), _declared(function, "res_attrs")
        if not any(results):
            continue
        entry = function.regions[0].blocks[0]
        name = ir.StringAttr(function.attributes["sym_name"]).value
        for block in function.regions[0].blocks:
            terminator = block.operations[len(block.operations) - 1].operation
            if terminator.name not in _RETURNS:
                continue
            for index, value in enumerate(list(terminator.operands)):
                target = results[index] if index < len(results) else None
                dst = single_device(target)
                argument = returned_argument(value, entry, functions) if dst is not None else None
                if argument is None or not isinstance(value.type, ir.RankedTensorType):
                    continue
                src = single_device(arguments[argument]) if argument < len(arguments) else None
                src = src or default
                if src is None or src == dst or not _staged(model, src, dst):
                    continue
                with ir.InsertionPoint(terminator), terminator.location:
                    terminator.operands[index] = _moved(value, target)
                moves.append((name, index, src, dst))
    return moves


@register
class ReturnedArgumentMoves(ModulePass):
    """Moves an argument returned as a result on another device, before IREE folds it away."""

    name = "returned-argument-moves"
    level = "input"
    summary = "move an argument returned on another device to that device before IREE's ABI folds the move away"

    def apply(self, module, options: PassOptions) -> None:
        # Before IREE's phases the program names its devices only in
        # affinities: the command line says what they are (mdc-opt, on a
        # module that defines them as globals, reads those).
        model = MemoryModel(options.devices, options.links) if options.devices \
            else MemoryModel.of(module, options.links)
        default = single_device(get_attr(module, "stream.affinity.default")) or next(iter(model.devices), None)
        move_returned_arguments(module, model, default)
