"""Small helpers over IREE IR from Python: walking, attributes, types.

IREE attributes have no Python classes, so affinities are built by parsing
their printed form (``#hal.device.affinity<@device_a>``); reading what a
module says about its devices is module_facts.py's job.
"""

from __future__ import annotations

import re

from typing import Iterator

from iree.compiler import ir

def walk(op) -> Iterator[ir.Operation]:
    """Every operation nested in ``op``, in program (pre-)order."""
    for region in op.regions:
        for block in region.blocks:
            for child in block.operations:
                child = child.operation
                yield child
                yield from walk(child)


def branch_targets(op: ir.Operation) -> list[tuple[ir.Block, list[ir.Value]]]:
    """(successor, the values passed to its arguments) of a cf branch."""
    if op.name == "cf.br":
        return [(op.successors[0], list(op.operands))]
    if op.name == "cf.cond_br":
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


def top_level_ops(module) -> list[ir.Operation]:
    return [op.operation for op in module.regions[0].blocks[0].operations]


def get_attr(op: ir.Operation, name: str):
    attrs = op.attributes
    return attrs[name] if name in attrs else None


def affinity_attr(device: str) -> ir.Attribute:
    return ir.Attribute.parse(f"#hal.device.affinity<@{device}>")


def is_resource(value: ir.Value) -> bool:
    return str(value.type).startswith("!stream.resource<")


def unique_symbol(module, base: str) -> str:
    taken = {
        op.attributes["sym_name"].value
        for op in top_level_ops(module)
        if "sym_name" in op.attributes
    }
    name, n = base, 0
    while name in taken:
        n += 1
        name = f"{base}_{n}"
    return name


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
        if parent.name in ("stream.executable", "hal.executable", "flow.executable"):
            return True
        parent = parent.parent
    return False


_BARE_SYMBOL = re.compile(r"[A-Za-z_][A-Za-z0-9_$.]*")


def symbol_ref(name: str) -> str:
    """``@name`` as MLIR text: bare where MLIR's syntax allows it (a letter
    or ``_``, then letters, digits, ``_``, ``$``, ``.``), else quoted."""
    if _BARE_SYMBOL.fullmatch(name):
        return f"@{name}"
    return '@"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'
