"""Small helpers over IREE IR from Python: branches, resources, helper
functions appended from text. The typed layer they stand on (op names,
affinities, symbol names) is ir_adapter.py; reading what a module says
about its devices is module_facts.py's job.
"""

from __future__ import annotations

from iree.compiler import ir

from . import ir_adapter as irx
# Re-exported: the passes import these from here.
from .ir_adapter import affinity_attr, get_attr, is_resource, symbol_ref, top_level_ops, walk  # noqa: F401


def user_op(use) -> ir.Operation:
    """The operation of a use of a value (``value.uses``'s owner)."""
    owner = use.owner
    return owner.operation if hasattr(owner, "operation") else owner


def global_name(op: ir.Operation) -> str:
    """The global a ``util.global.load``, ``.store`` or ``.address`` names."""
    return ir.FlatSymbolRefAttr(op.attributes["global"]).value


def in_initializer(op: ir.Operation | None) -> bool:
    """Whether ``op`` is nested in a ``util.initializer``."""
    while op is not None:
        if irx.is_initializer(op):
            return True
        op = op.parent
    return False


def _branch_segments(op: ir.Operation) -> list[tuple[ir.Block, int, int]]:
    """(successor, first operand, operand count) of each successor of a cf
    branch: the operands it passes to that successor's arguments."""
    if op.name == irx.CF_BR:
        return [(op.successors[0], 0, len(op.operands))]
    if op.name == irx.CF_COND_BR:
        sizes = list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))
        return [(op.successors[0], sizes[0], sizes[1]), (op.successors[1], sizes[0] + sizes[1], sizes[2])]
    return []


def branch_targets(op: ir.Operation) -> list[tuple[ir.Block, list[ir.Value]]]:
    """(successor, the values passed to its arguments) of a cf branch."""
    operands = list(op.operands)
    return [(block, operands[start:start + count]) for block, start, count in _branch_segments(op)]


def branch_edges(op: ir.Operation) -> list[tuple[int, ir.Block, int]]:
    """(operand index, successor, argument index) of each operand that a
    ``cf.br`` or ``cf.cond_br`` passes to a successor's block argument."""
    return [(start + i, block, i) for block, start, count in _branch_segments(op) for i in range(count)]


def incoming_values(function: ir.Operation) -> dict[tuple, list[ir.Value]]:
    """(block, argument number) -> the values branches of ``function``
    pass to that block argument."""
    incoming: dict[tuple, list[ir.Value]] = {}
    for op in walk(function):
        for block, values in branch_targets(op):
            for i, value in enumerate(values):
                incoming.setdefault((block, i), []).append(value)
    return incoming


def sources(value: ir.Value, incoming: dict, through) -> list[ir.Operation] | None:
    """The ops that make what ``value`` may be: followed back through the
    block arguments branches pass values to (``incoming``, from
    ``incoming_values``), and through each op for which ``through(op,
    result)`` gives the values its result comes from (an await's resource,
    a join's timepoints; ``[]`` for a result that comes from nothing that
    matters). An op for which it gives None is a source. Each value is
    visited once, so loops of branches end. None where a block argument
    has no branch passing it (a function's or a region's argument): where
    ``value`` comes from is then unknown."""
    found: list[ir.Operation] = []
    seen: set = set()
    work = [value]
    while work:
        value = work.pop()
        if value in seen:
            continue
        seen.add(value)
        owner = value.owner
        if isinstance(owner, ir.Block):
            passed = incoming.get((owner, ir.BlockArgument(value).arg_number))
            if not passed:
                return None
            work.extend(passed)
            continue
        op = owner.operation
        followed = through(op, value)
        if followed is None:
            found.append(op)
        else:
            work.extend(followed)
    return found


def append_functions(module, text: str) -> None:
    """Appends the top-level ops of ``text`` (helper functions) to ``module``."""
    parsed = ir.Module.parse(text)  # alive until its ops are moved out
    body = module.regions[0].blocks[0]
    for op in list(parsed.body.operations):
        body.append(op.operation)


def inside_executable(op: ir.Operation) -> bool:
    """``op`` is inside an executable (a kernel's body, not the program)."""
    parent = op.parent
    while parent is not None:
        if irx.is_executable(parent):
            return True
        parent = parent.parent
    return False

