"""The work graph of an input program (passes/assignment/extract.py): its
units with their class and cost, its weights and edges, the bounds of
dynamic dimensions, and the ops it refuses."""

from __future__ import annotations

from pathlib import Path

import pytest

from mdc.passes.ir import ir_adapter as irx
from mdc.passes.assignment.bounds import UnboundedDimension
from mdc.passes.assignment.extract import CannotModel, work_graph_of
from mdc.passes.assignment.work_graph import Edge
from mdc.pipeline.ireec import Compiler

INPUTS = Path(__file__).resolve().parents[1] / "lit" / "assign" / "Inputs"


def _graph(text: str, max_dims=None):
    compiler = Compiler([])
    module = compiler.parse_text(text, "test.mlir")
    with compiler.context, module.location:
        (function,) = [op for op in irx.top_level_ops(module) if irx.is_function(op) and irx.is_public(op)]
        return work_graph_of(function, "cpu", "gpu", max_dims or {})


def test_units_weights_and_edges_of_a_gather_and_a_matmul():
    g = _graph((INPUTS / "chain.mlir").read_text())
    assert [(u.op_class, u.dtype) for u in g.units] == [
        ("gather", "f32"), ("matmul", "f32"), ("elementwise", "f32"), ("view", "f32"), ("view", "f32"),
        ("elementwise", "f32")]
    gather, matmul, add, collapse, _, exp = g.units
    # The gather reads its 2 ids (i64) and the 2x3 rows it makes, not the 4x3 table.
    assert (gather.flops, gather.bytes_moved, gather.weights) == (6, 16 + 24 + 24, ("table",))
    # 2x2 results of 3 multiply-adds; it reads 2x3 and 3x2 f32 and writes 2x2 (the fill is storage).
    assert (matmul.flops, matmul.bytes_moved, matmul.weights) == (24, 24 + 24 + 16, ("w1",))
    assert (add.flops, add.bytes_moved) == (4, 48)
    assert (collapse.flops, collapse.bytes_moved) == (0, 0)
    assert exp.flops == 4
    assert [(w.name, w.bytes, w.kind, w.users, w.pinned) for w in g.weights] == [
        ("table", 48, "constant", (0,), None), ("w1", 24, "constant", (1,), None)]
    assert g.edges == (Edge(("argument", 0), 0, 16), Edge(0, 1, 24), Edge(1, 2, 16), Edge(("argument", 1), 2, 16),
                       Edge(2, 3, 16), Edge(3, 4, 16), Edge(4, 5, 16), Edge(5, ("result", 0), 16))
    assert (g.argument_devices, g.result_devices) == (("cpu", "cpu"), ("cpu",))


def test_annotations_pin_units_weights_arguments_and_results():
    g = _graph("""
      util.global private @w {stream.affinity = #hal.device.promise<@gpu>} = dense<1.0> : tensor<4xf32>
      util.func public @main(%x: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@gpu>})
          -> (tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@gpu>}) {
        %w = util.global.load @w : tensor<4xf32>
        %c = flow.tensor.transfer %x : tensor<4xf32> to #hal.device.promise<@cpu>
        %s = arith.addf %c, %w : tensor<4xf32>
        util.return %s : tensor<4xf32>
      }""")
    assert [(u.op_class, u.pinned) for u in g.units] == [("copy", "cpu"), ("elementwise", None)]
    assert g.weights[0].pinned == "gpu"
    assert (g.argument_devices, g.result_devices) == (("gpu",), ("gpu",))


DYNAMIC = """
  util.func public @main(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
    %c0 = arith.constant 0 : index
    %n = tensor.dim %x, %c0 : tensor<?x8xf32>
    %e = tensor.empty(%n) : tensor<?x8xf32>
    %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
        iterator_types = ["parallel", "parallel"]} ins(%x : tensor<?x8xf32>) outs(%e : tensor<?x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %m = arith.mulf %in, %in : f32
      linalg.yield %m : f32
    } -> tensor<?x8xf32>
    util.return %r : tensor<?x8xf32>
  }"""


def test_a_dynamic_dimension_is_bounded_by_its_max_dim_through_the_ops_that_carry_it():
    g = _graph(DYNAMIC, {"arg0.d0": 5})
    assert [e.bytes for e in g.edges] == [5 * 8 * 4, 5 * 8 * 4]
    assert g.units[0].flops == 5 * 8


def test_a_dynamic_dimension_without_a_bound_names_its_flag():
    with pytest.raises(UnboundedDimension, match=r"give --max-dim=arg0\.d0=N"):
        _graph(DYNAMIC)


def test_a_call_is_refused_with_its_location():
    with pytest.raises(CannotModel, match="cannot model 'util.call'") as e:
        _graph("""
          util.func private @f(%x: tensor<4xf32>) -> tensor<4xf32>
          util.func public @main(%x: tensor<4xf32>) -> tensor<4xf32> {
            %y = util.call @f(%x) : (tensor<4xf32>) -> tensor<4xf32>
            util.return %y : tensor<4xf32>
          }""")
    assert e.value.location == "test.mlir:4:18"


def test_program_state_is_a_weight_of_kind_state_and_a_store_a_unit_that_reads_it():
    g = _graph("""
          util.global private mutable @s = dense<1.0> : tensor<4xf32>
          util.func public @main(%x: tensor<4xf32>) -> tensor<4xf32> {
            %s = util.global.load @s : tensor<4xf32>
            %y = arith.addf %x, %s : tensor<4xf32>
            util.global.store %y, @s : tensor<4xf32>
            util.return %y : tensor<4xf32>
          }""")
    add, store = g.units
    assert (store.label, store.op_class, store.flops, store.bytes_moved) == ("store @s 4 f32", "view", 0, 0)
    assert add.weights == store.weights == ("s",)
    (state,) = g.weights
    assert (state.name, state.kind, state.bytes, state.users) == ("s", "state", 16, (0, 1))
    assert Edge(0, 1, 16) in g.edges


def test_a_slice_of_a_cache_is_bounded_by_the_cache():
    g = _graph("""
          util.global private mutable @k = dense<0.0> : tensor<1x8x4xf32>
          util.func public @main(%n: tensor<1xi64>) -> tensor<1x?x4xf32> {
            %c0 = arith.constant 0 : index
            %i = tensor.extract %n[%c0] : tensor<1xi64>
            %len = arith.index_cast %i : i64 to index
            %k = util.global.load @k : tensor<1x8x4xf32>
            %e = tensor.empty() : tensor<1x8x4xf32>
            %c = linalg.copy ins(%k : tensor<1x8x4xf32>) outs(%e : tensor<1x8x4xf32>) -> tensor<1x8x4xf32>
            %seen = tensor.extract_slice %c[0, 0, 0] [1, %len, 4] [1, 1, 1] : tensor<1x8x4xf32> to tensor<1x?x4xf32>
            util.return %seen : tensor<1x?x4xf32>
          }""")
    assert [e.bytes for e in g.edges if e.target == ("result", 0)] == [128]


def test_an_op_with_a_region_that_is_no_control_flow_is_a_unit():
    g = _graph("""
      util.func public @main(%x: tensor<4xf32>) -> tensor<6xf32> {
        %z = arith.constant 0.0 : f32
        %p = tensor.pad %x low[1] high[1] {
        ^bb0(%i: index):
          tensor.yield %z : f32
        } : tensor<4xf32> to tensor<6xf32>
        util.return %p : tensor<6xf32>
      }""")
    assert [(u.op_class, u.bytes_moved) for u in g.units] == [("copy", 16 + 24)]


def test_a_named_parameter_is_a_weight_of_kind_parameter():
    g = _graph("""
      util.global private @p = #flow.parameter.named<"model"::"p"> : tensor<8xf16>
      util.func public @main(%x: tensor<8xf16>) -> tensor<8xf16> {
        %p = util.global.load @p : tensor<8xf16>
        %y = arith.addf %x, %p : tensor<8xf16>
        util.return %y : tensor<8xf16>
      }""")
    assert [(w.name, w.bytes, w.kind) for w in g.weights] == [("p", 16, "parameter")]
    assert g.units[0].dtype == "f16"
