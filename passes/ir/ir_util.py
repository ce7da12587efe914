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


def branch_targets(op: ir.Operation) -> list[tuple[ir.Block, list[ir.Value]]]:
    """(successor, the values passed to its arguments) of a cf branch."""
    if op.name == irx.CF_BR:
        return [(op.successors[0], list(op.operands))]
    if op.name == irx.CF_COND_BR:
        sizes = list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))
        operands = list(op.operands)
        true_start = sizes[0]
        false_start = true_start + sizes[1]
        return [(op.successors[0], operands[true_start:false_start]),
                (op.successors[1], operands[false_start:false_start + sizes[2]])]
    return []


def incoming_values(function: ir.Operation) -> dict[tuple, list[ir.Value]]:
    """(block, argument number) -> the values branches of ``function``
    pass to that block argument."""
    incoming: dict[tuple, list[ir.Value]] = {}
    for op in walk(function):
        for block, values in branch_targets(op):
            for i, value in enumerate(values):
                incoming.setdefault((block, i), []).append(value)
    return incoming


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

