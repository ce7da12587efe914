"""returned-argument-moves: a result made of one device's arguments is moved explicitly.

A public function that returns one of its arguments unchanged, as a result
declared on another device, has a crossing in its signature and none in its
body. IREE 3.13's ABI conversion wraps the function in ``hal.tensor.import``
/ ``hal.tensor.export`` and folds ``export(import(%arg))`` to ``%arg``
whatever the two affinities say: the function returns the caller's buffer as
is, and device_b's memory comes back to the caller as device_a's result. The
same happens to anything IREE folds to the argument on the way (reshapes
that cancel out or change no bytes, two transposes, a call of a function
that returns its argument). No stream-level pass can see it: the body is
``util.return %arg0`` by then, and the argument's device may be gone from the
module altogether. On a discrete GPU the caller then cannot read the
result ("PERMISSION_DENIED ... requires HOST_VISIBLE").

This pass runs on the program as written, before any of IREE's phases. A
result declared on device R whose data all comes from arguments on one
other device S (through any ops of the function, calls included, but no
explicit move, global or branch) gets that crossing as a move IREE keeps: a
``flow.tensor.transfer`` of the returned value to R right before the return.
Whatever IREE then folds, transfer-insertion stages the move like any other.
IREE computes such a value on S and moves the result anyway (it places work
with its operands), so a result that IREE does not fold keeps its lowering.
Only crossings of a staged pair of the memory model are rewritten: where S
and R share memory, returning the caller's buffer is right, and IREE's
output stands unchanged. An argument declared without an affinity is on
IREE's default device (module_facts.iree_default_device; the caller places
it there); a result declared without one has no device to be moved to.
"""

from __future__ import annotations

from iree.compiler import ir
from iree.compiler.dialects import arith, flow, tensor

from ..ir import ir_adapter as irx
from ..infra.diagnostics import MdcError
from ..ir.ir_util import top_level_ops, walk
from ..analysis.memory_model import MemoryModel
from ..ir.module_facts import declared_affinities, iree_default_device, module_default_device, single_device
from ..infra.pass_base import DeviceOptions, Fact, ModulePass

_FUNCTIONS = (irx.FUNC_FUNC, irx.UTIL_FUNC)
_RETURNS = (irx.FUNC_RETURN, irx.UTIL_RETURN)
_CALLS = (irx.FUNC_CALL, irx.UTIL_CALL)
# Tensors whose device is their own: an explicit move (the program says
# where the value goes), a global, anything already lowered.
_ELSEWHERE = (irx.FLOW_TENSOR_TRANSFER, irx.UTIL_GLOBAL_LOAD, irx.UTIL_GLOBAL_LOAD_INDIRECT)
_LOWERED = ("hal.", "stream.")


def _is_tensor(value: ir.Value) -> bool:
    return irx.is_tensor_type(value.type)


def _inside(op, ancestor: ir.Operation) -> bool:
    while op is not None:
        op = op.operation
        if op == ancestor:
            return True
        op = op.parent
    return False


def _data_operands(op: ir.Operation) -> list:
    """The tensors ``op`` reads: its tensor operands and those its regions
    use from above (a linalg body, a loop's)."""
    values = [v for v in op.operands if _is_tensor(v)]
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                for nested in [inner.operation, *walk(inner.operation)]:
                    for v in nested.operands:
                        owner = v.owner
                        where = owner.owner if isinstance(owner, ir.Block) else owner.operation
                        if _is_tensor(v) and not _inside(where, op):
                            values.append(v)
    return values


def source_devices(value: ir.Value, entry: ir.Block, homes: list, functions: dict) -> frozenset | None:
    """The devices whose arguments the data of tensor ``value`` comes from,
    within its function (``homes``: each argument's device); None when some
    of it comes from elsewhere: an explicit move, a global, a block argument
    of a branch or a loop, a function whose body does such a thing."""
    memo: dict = {}
    stack = [value]
    while stack:
        v = stack[-1]
        if v in memo:
            stack.pop()
            continue
        owner = v.owner
        if isinstance(owner, ir.Block):
            index = ir.BlockArgument(v).arg_number
            memo[v] = frozenset({homes[index]}) if owner == entry and index < len(homes) and homes[index] \
                else None
            stack.pop()
            continue
        op = owner.operation
        if op.name in _ELSEWHERE or op.name.startswith(_LOWERED) or \
                (op.name in _CALLS and not _self_contained(functions.get(
                    ir.FlatSymbolRefAttr(op.attributes["callee"]).value), functions)):
            memo[v] = None
            stack.pop()
            continue
        inputs = _data_operands(op)
        pending = [u for u in inputs if u not in memo]
        if pending:
            stack.extend(pending)
            continue
        found: frozenset | None = frozenset()
        for u in inputs:
            if memo[u] is None:
                found = None
                break
            found |= memo[u]
        memo[v] = found
        stack.pop()
    return memo[value]


def _self_contained(function, functions: dict, seen: frozenset = frozenset()) -> bool:
    """Whether ``function`` (a function op of the module, or None) makes its
    results of its arguments alone, so a call's results come from its
    operands: none of its ops is a move, a global, a lowered op, or a call
    of a function that is not (recursion ends at a function already seen)."""
    if function is None or not function.regions[0].blocks:
        return False
    name = ir.StringAttr(function.attributes["sym_name"]).value
    if name in seen:
        return True
    for op in walk(function):
        if op.name in _ELSEWHERE or op.name.startswith(_LOWERED):
            return False
        if op.name in _CALLS and not _self_contained(
                functions.get(ir.FlatSymbolRefAttr(op.attributes["callee"]).value), functions, seen | {name}):
            return False
    return True


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
    or ``util.func``) that returns, as a result declared on a device R, a
    value made of arguments on one device S that must stage to R: the value
    is moved to R right before the return. Returns (function, result index,
    S, R) for each move made."""
    moves = []
    functions = {ir.StringAttr(op.attributes["sym_name"]).value: op
                 for op in top_level_ops(module) if op.name in _FUNCTIONS}
    for function in top_level_ops(module):
        if function.name not in _FUNCTIONS or not function.regions[0].blocks:
            continue
        if not irx.is_public(function):
            continue
        arguments, results = declared_affinities(function, "arg_attrs"), declared_affinities(function, "res_attrs")
        if not any(results):
            continue
        entry = function.regions[0].blocks[0]
        homes = [(single_device(arguments[i]) if i < len(arguments) else None) or default
                 if _is_tensor(a) else None for i, a in enumerate(entry.arguments)]
        name = ir.StringAttr(function.attributes["sym_name"]).value
        for block in function.regions[0].blocks:
            terminator = block.operations[len(block.operations) - 1].operation
            if terminator.name not in _RETURNS:
                continue
            for index, value in enumerate(list(terminator.operands)):
                target = results[index] if index < len(results) else None
                dst = single_device(target)
                if dst is None or not isinstance(value.type, ir.RankedTensorType):
                    continue
                sources = source_devices(value, entry, homes, functions)
                if sources is None or len(sources) != 1:
                    continue
                (src,) = sources
                if src == dst or not _staged(model, src, dst):
                    continue
                with ir.InsertionPoint(terminator), terminator.location:
                    terminator.operands[index] = _moved(value, target)
                moves.append((name, index, src, dst))
    return moves


class ReturnedArgumentMoves(ModulePass):
    """Moves a result made of another device's arguments there, before IREE can fold the move away."""

    name = "returned-argument-moves"
    level = "input"
    summary = "move a result made of another device's arguments to its device before IREE folds the move away"

    Options = DeviceOptions

    # Before IREE's phases the program names its devices only in
    # affinities: the command line says what they are (mdc-opt, on a module
    # that defines them as globals, reads those; pass_manager.devices_seen).
    requires = (MemoryModel,)
    # It reads the module's default device; it follows calls, so a cycle
    # must have been refused; and it moves the results of the twins too.
    needs = (Fact.DEFAULT_DEVICE, Fact.ACYCLIC_CALLS, Fact.HOST_TWINS, Fact.STORAGE_TWINS)

    def apply(self, module, options: DeviceOptions, model: MemoryModel) -> None:
        default = module_default_device(module) or options.default or iree_default_device(model.devices)
        move_returned_arguments(module, model, default)
