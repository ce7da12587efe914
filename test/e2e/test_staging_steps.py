"""The steps of transfer-insertion as plain functions, without the pipeline:
place() says what it placed and why, plan_transfer() describes a crossing
and changes no IR, and the lowerings are tried in their stated order."""

from __future__ import annotations

from pathlib import Path

from mdc.passes import lowering
from mdc.passes.ir.ir_util import walk
from mdc.passes.analysis.residence import Residence
from mdc.passes.infra.pass_base import CompileSettings
from mdc.passes.infra.pass_manager import AnalysisManager
from mdc.passes.transforms.place_unplaced_ops import place
from mdc.passes.transforms.stage_crossings import plan_transfer
from mdc.pipeline.ireec import Compiler, module_text

LIT = Path(__file__).resolve().parents[1] / "lit" / "passes"


def _first_module(path: Path) -> str:
    return path.read_text().split("// -----")[0]


def _place(module):
    """place() as place-unplaced-ops runs it: the model and the residence
    from a pass manager of the module's own devices; and the model."""
    analyses = AnalysisManager(module, CompileSettings())
    model = analyses.memory_model("stream")
    return place(module, model, analyses.handle(Residence, "stream")), model


def test_place_keeps_why():
    compiler = Compiler([])
    module = compiler.parse_text(_first_module(LIT / "place_unplaced_ops.mlir"), "placed.mlir")
    with compiler.context, module.location:
        (_, graph, placed), _ = _place(module)
    assert [(p.op, p.device, p.why) for p in placed] == [
        ("stream.tensor.dispatch", "device_a", "operand bytes tie; module default device")]
    assert graph.nodes


def test_plan_transfer_changes_nothing():
    compiler = Compiler([])
    module = compiler.parse_text(_first_module(LIT / "stage_crossings.mlir"), "plan.mlir")
    with compiler.context, module.location:
        (placement, _, _), model = _place(module)
        before = module_text(module)
        transfer = next(op for op in walk(module) if op.name == "stream.async.transfer")
        planned = plan_transfer(transfer, placement, model)
        assert module_text(module) == before
    assert (planned.source, planned.target, planned.shape, planned.bytes) == ("device_a", "device_b", "transfer", "16")
    assert planned.caller_buffer is None


def test_lowering_order():
    compiler = Compiler([])
    module = compiler.parse_text(_first_module(LIT / "stage_crossings.mlir"), "order.mlir")
    with compiler.context, module.location:
        model = AnalysisManager(module, CompileSettings()).memory_model("stream")
        chosen = lowering.Lowerings(module, model, lowering.StagingOptions())
    assert [type(x).__name__ for x in chosen.order] == ["PinnedArguments", "SmallInPlace", "Emplace", "HostHopCopy"]
