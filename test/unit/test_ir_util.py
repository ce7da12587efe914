"""The block-argument walk (passes/ir/ir_util.py) alone: what a cf branch
passes where, and the ops a value comes from through block arguments,
which dealloca-affinity and cross-driver-waits both follow."""

from __future__ import annotations

from mdc.passes.ir import ir_adapter as irx
from mdc.passes.ir.ir_util import branch_edges, branch_targets, incoming_values, sources, walk
from mdc.pipeline.ireec import Compiler

_MODULE = """
util.func public @f(%c: i1, %arg: !stream.timepoint) -> !stream.timepoint {
  %a = stream.timepoint.immediate => !stream.timepoint
  %b = stream.timepoint.join max(%a, %arg) => !stream.timepoint
  cf.cond_br %c, ^loop(%a : !stream.timepoint), ^exit(%b, %a : !stream.timepoint, !stream.timepoint)
^loop(%t: !stream.timepoint):
  %j = stream.timepoint.join max(%t, %a) => !stream.timepoint
  cf.cond_br %c, ^loop(%j : !stream.timepoint), ^exit(%t, %j : !stream.timepoint, !stream.timepoint)
^exit(%x: !stream.timepoint, %y: !stream.timepoint):
  util.return %y : !stream.timepoint
}
"""


def _function():
    compiler = Compiler([])
    module = compiler.parse_text(_MODULE, "ir_util.mlir")
    return compiler, module, next(op for op in irx.top_level_ops(module) if irx.is_function(op))


def _joins(op, result):
    return list(op.operands) if op.name == irx.STREAM_TIMEPOINT_JOIN else None


def test_branch_edges_and_targets_agree():
    compiler, _, function = _function()
    with compiler.context:
        first = next(op for op in walk(function) if op.name == irx.CF_COND_BR)
        edges = branch_edges(first)
        # The condition is operand 0; the true successor gets operand 1, the false one 2 and 3.
        assert [(operand, arg) for operand, _, arg in edges] == [(1, 0), (2, 0), (3, 1)]
        targets = branch_targets(first)
        assert [len(values) for _, values in targets] == [1, 2]
        assert all(first.operands[operand] == targets[0 if block == targets[0][0] else 1][1][arg]
                   for operand, block, arg in edges)


def test_sources_through_block_arguments():
    compiler, _, function = _function()
    with compiler.context:
        incoming = incoming_values(function)
        ret = next(op for op in walk(function) if op.name == irx.UTIL_RETURN)
        # %y: the joins of %t (around the loop) and %a: every source is %a's immediate.
        found = sources(ret.operands[0], incoming, _joins)
        assert {op.name for op in found} == {irx.STREAM_TIMEPOINT_IMMEDIATE}
        # %x may be %b, which joins a function argument: unknown.
        exit_block = ret.operation.block
        assert sources(exit_block.arguments[0], incoming, _joins) is None
        # An op that is followed through nothing contributes no source.
        assert sources(ret.operands[0], incoming, lambda op, result: []) == []
