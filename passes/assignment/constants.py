"""Constants written in a function's body become weights before placement.

A tensor ``arith.constant`` that is not a splat (a table or a matrix written
inline) is data the program keeps between calls, as a global's is, but IREE
makes it on every device that reads it, so neither the budget nor the
assignment could say where it lives. ``hoist_constants`` moves each into a
private immutable ``util.global`` of the same value, read with
``util.global.load`` where the constant was: the work graph then counts it
as a weight (extract.py) and the rewrite gives it a device (rewrite.py).
A splat constant stays: IREE fills it where it is used, at no cost to move.
Only ``--place`` other than manual runs it.
"""

from __future__ import annotations

from iree.compiler import ir

from ..ir import ir_adapter as irx

PREFIX = "__placed_constant"


def _inline_tables(function) -> list:
    ops = []
    for op in function.regions[0].blocks[0].operations:
        op = op.operation
        if op.name != irx.ARITH_CONSTANT or not isinstance(op.results[0].type, ir.RankedTensorType):
            continue
        value = op.attributes["value"]
        if isinstance(value, ir.DenseElementsAttr) and value.is_splat:
            continue
        ops.append(op)
    return ops


def hoist_constants(module, function) -> list[str]:
    """Moves ``function``'s non-splat tensor constants into globals; returns
    the globals' names."""
    names = irx.SymbolNames(module)
    made = []
    for op in _inline_tables(function):
        name = names.unique(PREFIX)
        tensor_type = op.results[0].type
        with ir.InsertionPoint(function), op.location:
            ir.Operation.create(irx.UTIL_GLOBAL, attributes={
                "sym_name": ir.StringAttr.get(name), "sym_visibility": ir.StringAttr.get("private"),
                "type": ir.TypeAttr.get(tensor_type), "initial_value": op.attributes["value"]})
        with ir.InsertionPoint(op), op.location:
            load = ir.Operation.create(irx.UTIL_GLOBAL_LOAD, results=[tensor_type],
                                       attributes={"global": ir.FlatSymbolRefAttr.get(name)})
        op.results[0].replace_all_uses_with(load.results[0])
        op.erase()
        made.append(name)
    return made
