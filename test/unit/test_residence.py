"""The residence rule alone (passes/analysis/residence.py), on small stream modules:
where an op with no affinity goes, and where values live."""

from __future__ import annotations

import pytest

from mdc.passes.ir.ir_util import walk
from mdc.passes.analysis.residence import Residence, place_unplaced_ops
from mdc.pipeline.ireec import Compiler

_EXECUTABLE = """
  stream.executable private @ex {
    stream.executable.export public @entry workgroups() -> (index, index, index) {
      %c1 = arith.constant 1 : index
      stream.return %c1, %c1, %c1 : index, index, index
    }
    builtin.module {
      func.func @entry(%arg0: !stream.binding, %arg1: !stream.binding, %arg2: !stream.binding) {
        return
      }
    }
  }
"""


def _module(body: str, default: str = "a", devices: str = "a=local b=cuda c=local") -> str:
    globals_ = "\n".join(
        f'  util.global private @{name} = #hal.device.target<"{driver}", {{ordinal = {i} : index}}> : !hal.device'
        for i, (name, driver) in enumerate(spec.split("=") for spec in devices.split()))
    return (f"module attributes {{stream.affinity.default = #hal.device.affinity<@{default}>}} {{\n"
            f"{globals_}\n{_EXECUTABLE}\n{body}\n}}\n")


def _splat(name: str, device: str, tensor: str) -> str:
    return (f"    %s{name} = stream.tensor.sizeof on(#hal.device.affinity<@{device}>) {tensor} : index\n"
            f"    %{name} = stream.tensor.splat on(#hal.device.affinity<@{device}>) %v : f32 -> {tensor} "
            f"in !stream.resource<*>{{%s{name}}}\n")


def _dispatch(x: str, x_type: str, y: str, y_type: str) -> str:
    """A dispatch of ``%x`` and ``%y`` with no affinity, returned."""
    return ("    %so = stream.tensor.sizeof tensor<4xf32> : index\n"
            f"    %r = stream.tensor.dispatch @ex::@entry(%{x}, %{y}) : ({x_type} in !stream.resource<*>{{%s{x}}}, "
            f"{y_type} in !stream.resource<*>{{%s{y}}}) -> tensor<4xf32> in !stream.resource<*>{{%so}}\n"
            "    util.return %r : !stream.resource<*>\n")


def _function(body: str, extra_args: str = "") -> str:
    return f"  util.func public @f(%v: f32{extra_args}) -> !stream.resource<*> {{\n{body}  }}"


@pytest.fixture()
def place():
    """Parses a module and places its unplaced ops: [(op name, device, why)]."""
    compiler = Compiler([])

    def run(text: str) -> list[tuple[str, str, str]]:
        module = compiler.parse_text(text, "residence.mlir")
        with compiler.context, module.location:
            residence = Residence(module)
            residence.analyze()
            return [(op.name, device, why) for op, device, why in place_unplaced_ops(residence)]

    return run


def test_most_operand_bytes_win(place):
    body = _splat("x", "a", "tensor<4xf32>") + _splat("y", "b", "tensor<2x2xf64>") \
        + _dispatch("x", "tensor<4xf32>", "y", "tensor<2x2xf64>")
    assert place(_module(_function(body))) == [
        ("stream.tensor.dispatch", "b", "holds the most operand bytes")]


def test_a_dynamic_operand_counts_one_byte(place):
    body = ("    %sx = stream.tensor.sizeof on(#hal.device.affinity<@a>) tensor<?xf32>{%n} : index\n"
            "    %x = stream.tensor.splat on(#hal.device.affinity<@a>) %v : f32 -> tensor<?xf32>{%n} "
            "in !stream.resource<*>{%sx}\n") + _splat("y", "b", "tensor<2xi8>") \
        + _dispatch("x", "tensor<?xf32>{%n}", "y", "tensor<2xi8>")
    assert place(_module(_function(body, ", %n: index"))) == [
        ("stream.tensor.dispatch", "b", "holds the most operand bytes")]


def test_a_tie_goes_to_the_default_device(place):
    body = _splat("y", "b", "tensor<4xf32>") + _splat("x", "a", "tensor<4xf32>") \
        + _dispatch("y", "tensor<4xf32>", "x", "tensor<4xf32>")
    assert place(_module(_function(body), default="a")) == [
        ("stream.tensor.dispatch", "a", "operand bytes tie; module default device")]


@pytest.mark.parametrize("first,second", [("b", "c"), ("c", "b")])
def test_a_tie_without_the_default_goes_to_the_first_operand(place, first, second):
    body = _splat("x", first, "tensor<4xf32>") + _splat("y", second, "tensor<4xf32>") \
        + _dispatch("x", "tensor<4xf32>", "y", "tensor<4xf32>")
    assert place(_module(_function(body), default="a")) == [
        ("stream.tensor.dispatch", first, "operand bytes tie; first operand's device")]


def test_no_placed_operand_goes_to_the_first_placed_consumer(place):
    body = ("  util.func public @f(%v: f32) -> !hal.buffer_view {\n"
            "    %s = stream.tensor.sizeof tensor<4xf32> : index\n"
            "    %x = stream.tensor.splat %v : f32 -> tensor<4xf32> in !stream.resource<*>{%s}\n"
            "    %e = stream.async.cast on(#hal.device.affinity<@b>) %x : !stream.resource<*>{%s} -> "
            "!stream.resource<external>{%s}\n"
            "    %out = stream.tensor.export on(#hal.device.affinity<@b>) %e : tensor<4xf32> in "
            "!stream.resource<external>{%s} -> !hal.buffer_view\n"
            "    util.return %out : !hal.buffer_view\n  }")
    assert place(_module(body)) == [("stream.tensor.splat", "b", "no placed operand; first placed consumer")]


def test_nothing_placed_around_goes_to_the_default_device(place):
    body = ("    %s = stream.tensor.sizeof tensor<4xf32> : index\n"
            "    %x = stream.tensor.splat %v : f32 -> tensor<4xf32> in !stream.resource<*>{%s}\n"
            "    util.return %x : !stream.resource<*>\n")
    assert place(_module(_function(body), default="c")) == [
        ("stream.tensor.splat", "c", "nothing placed around it; module default device")]


def test_a_transfer_without_target_lives_where_its_consumer_runs():
    body = (_splat("x", "a", "tensor<4xf32>")
            + "    %t = stream.async.transfer %x : !stream.resource<*>{%sx} from(#hal.device.affinity<@a>) "
            "-> !stream.resource<*>{%sx}\n"
            "    %e = stream.async.cast on(#hal.device.affinity<@b>) %t : !stream.resource<*>{%sx} -> "
            "!stream.resource<external>{%sx}\n"
            "    util.return %x : !stream.resource<*>\n")
    compiler = Compiler([])
    module = compiler.parse_text(_module(_function(body)), "homes.mlir")
    with compiler.context, module.location:
        residence = Residence(module)
        residence.analyze()
        transfer = next(op for op in walk(module) if op.name == "stream.async.transfer")
        assert residence.transfer_source(transfer) == "a"
        assert residence.home(transfer.results[0]) == "b"
        assert residence.home(transfer.operands[0]) == "a"
