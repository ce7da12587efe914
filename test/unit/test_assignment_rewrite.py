"""rewrite.apply_assignment (passes/assignment/rewrite.py) reaches each
unit's op through the parts its work graph was read from, by the unit's
id, not by reading the function again and counting positions."""

from __future__ import annotations

from pathlib import Path

import pytest
from iree.compiler import ir

from mdc.passes.assignment.extract import read_function
from mdc.passes.assignment.rewrite import apply_assignment
from mdc.passes.assignment.search import assignment_of
from mdc.passes.ir import ir_adapter as irx
from mdc.pipeline.ireec import Compiler

INPUTS = Path(__file__).resolve().parents[1] / "lit" / "assign" / "Inputs"


def _transferred(op) -> bool:
    """Whether ``op`` reads a value a flow.tensor.transfer made."""
    return any(not isinstance(v.owner, ir.Block) and v.owner.name == irx.FLOW_TENSOR_TRANSFER for v in op.operands)


def test_an_op_added_after_reading_does_not_shift_the_devices():
    """chain.mlir's units: 0 gather, 1 matmul, 2 add, 3 collapse_shape,
    4 expand_shape, 5 exp. An add of an argument put first in the body
    after the graph was read is a unit a second reading would count at
    position 0, moving every unit one op on: the exp's device would land
    on the expand_shape. Read by id, the exp alone reads a transfer."""
    compiler = Compiler([])
    module = compiler.parse_text((INPUTS / "chain.mlir").read_text(), "chain.mlir")
    with compiler.context, module.location:
        (function,) = [op for op in irx.top_level_ops(module) if irx.is_function(op) and irx.is_public(op)]
        read = read_function(function, "cpu", "gpu", {})
        graph, parts = read.graph, read.parts
        assert [u.id for u in graph.units] == list(range(6)) and parts.units[5].name == "math.exp"
        block = function.regions[0].blocks[0]
        y = block.arguments[1]
        with ir.InsertionPoint.at_block_begin(block):
            added = ir.Operation.create("arith.addf", results=[y.type], operands=[y, y])
        assignment = assignment_of(graph, {u.id: "gpu" if u.id == 5 else "cpu" for u in graph.units})
        apply_assignment(module, parts, graph, assignment)
        assert _transferred(parts.units[5])
        assert [uid for uid, op in parts.units.items() if _transferred(op)] == [5]
        assert not _transferred(added)


def test_parts_of_another_graph_are_refused():
    compiler = Compiler([])
    module = compiler.parse_text((INPUTS / "chain.mlir").read_text(), "chain.mlir")
    with compiler.context, module.location:
        (function,) = [op for op in irx.top_level_ops(module) if irx.is_function(op) and irx.is_public(op)]
        read = read_function(function, "cpu", "gpu", {})
        fewer = {uid: op for uid, op in read.parts.units.items() if uid != 5}
        parts = type(read.parts)(**{**read.parts.__dict__, "units": fewer})
        on_host = assignment_of(read.graph, {u.id: "cpu" for u in read.graph.units})
        with pytest.raises(ValueError, match="units"):
            apply_assignment(module, parts, read.graph, on_host)
