"""The pass manager (passes/infra/pass_manager.py) and the pass order
(passes/infra/pipeline_order.py): analyses computed once, by the manager
alone, and dropped when a pass may have made them untrue, one memory model
per compile, and the order the passes' declarations give."""

from __future__ import annotations

import itertools
import random
from pathlib import Path

import pytest

from mdc.passes.analysis import memory_model
from mdc.passes.infra import pipeline_order
from mdc.passes.infra import registry
from mdc.passes.ir.module_facts import declared_devices
from mdc.passes.infra.pass_base import ANALYSES, CompileSettings, Fact, Handle, ModulePass
from mdc.passes.infra.pass_manager import AnalysisManager, run_passes
from mdc.passes.analysis.residence import Residence
from mdc.pipeline.ireec import Compiler

REPO = Path(__file__).resolve().parents[2]

# The order mdc-compile runs its passes in; the vmfbs are built with it.
EXPECTED = [
    "assign-devices", "declared-devices-default", "generate-entry-point", "host-entry-points", "result-storage-twins", "refuse-recursive-calls",
    "returned-argument-moves", "state-initial-values",
    "place-unplaced-ops", "place-encoded-sizes", "plain-encoded-crossings", "forward-plain-encodings", "stub-host-entry-points", "transfer-insertion", "executable-per-target",
    "cuda-matmul-configs", "loop-init-isolation", "host-fences", "partition-fence", "warn-cuda-maxsi-reduction", "strip-mdc-marks",
    "dealloca-affinity", "cross-driver-waits",
    "device-isolation-verifier", "memoized-selects-in-order",
]


def test_the_declarations_give_the_pipeline_order():
    assert [p.name for p in registry.pipeline()] == EXPECTED


def test_the_order_does_not_depend_on_the_list_order():
    rng = random.Random(33)
    for _ in range(20):
        passes = list(pipeline_order.PASSES)
        rng.shuffle(passes)
        assert [p.name for p in pipeline_order.schedule(passes)] == EXPECTED


def _pass(name: str, level: str = "stream", **declared) -> type[ModulePass]:
    return type(name, (ModulePass,), {"name": name, "level": level, "summary": name, **declared})


def test_a_fact_no_pass_provides_is_an_error():
    with pytest.raises(pipeline_order.OrderError, match="needs"):
        pipeline_order.schedule([_pass("a", needs=(Fact.HOST_FENCES,))])


def test_a_fact_of_an_earlier_level_is_available():
    early = _pass("z", level="input", provides=(Fact.HOST_TWINS,))
    late = _pass("a", needs=(Fact.HOST_TWINS,))
    assert pipeline_order.schedule([late, early]) == [early, late]


def test_passes_waiting_on_each_other_are_an_error():
    a = _pass("a", needs=(Fact.HOST_FENCES,), provides=(Fact.PLACED_OPS,))
    b = _pass("b", needs=(Fact.PLACED_OPS,), provides=(Fact.HOST_FENCES,))
    with pytest.raises(pipeline_order.OrderError, match="wait on each other"):
        pipeline_order.schedule([a, b])


def test_needs_beat_names_and_a_remover_runs_last():
    remover = _pass("a-remover", removes=(Fact.MDC_MARKS,))
    reader = _pass("b-reader", needs=(Fact.MDC_MARKS,))
    maker = _pass("c-maker", provides=(Fact.MDC_MARKS,))
    free = _pass("d-free")
    for passes in itertools.permutations([remover, reader, maker, free]):
        assert [p.name for p in pipeline_order.schedule(passes)] == ["c-maker", "b-reader", "d-free", "a-remover"]


_STAGED_MODULE = """
module attributes {stream.affinity.default = #hal.device.affinity<@a>} {
  util.global private @a = #hal.device.target<"local", {ordinal = 0 : index}> : !hal.device
  util.global private @b = #hal.device.target<"cuda", {ordinal = 0 : index}> : !hal.device
  util.func public @f(%v: f32) -> !stream.resource<*> {
    %s = stream.tensor.sizeof on(#hal.device.affinity<@a>) tensor<4xf32> : index
    %x = stream.tensor.splat on(#hal.device.affinity<@a>) %v : f32 -> tensor<4xf32> in !stream.resource<*>{%s}
    util.return %x : !stream.resource<*>
  }
}
"""


def _recorder(requires=(), preserves=()):
    seen = []

    class Record(ModulePass):
        name, level, summary = "record", "stream", "records what it is given"

        def apply(self, module, options, *analyses):
            seen.append(analyses)

    Record.requires, Record.preserves = requires, preserves
    return Record, seen


def test_analyses_are_cached_until_a_pass_does_not_preserve_them():
    compiler = Compiler([])
    module = compiler.parse_text(_STAGED_MODULE, "staged.mlir")
    keeps, seen_keeps = _recorder((memory_model.MemoryModel, Residence), preserves=ANALYSES)
    drops, seen_drops = _recorder((memory_model.MemoryModel, Residence))
    with compiler.context, module.location:
        run_passes([keeps, keeps, drops, keeps], module, CompileSettings(), registry.Report())
    (m1, p1), (m2, p2), (m4, p4) = seen_keeps
    (m3, p3), = seen_drops
    assert m1 is m2 is m3 is m4
    assert m1.anything_staged
    assert p1 is p2 is p3  # kept by the first two passes
    assert p4 is not p3  # dropped by the third


def test_the_memory_model_is_the_settings_one_where_the_devices_are_the_command_lines():
    compiler = Compiler([])
    module = compiler.parse_text(_STAGED_MODULE, "staged.mlir")
    with compiler.context, module.location:
        settings = CompileSettings(devices=declared_devices(module))
        analyses = AnalysisManager(module, settings)
        for level in ("input", "stream", "scheduled", "hal"):
            assert analyses.memory_model(level) is settings.memory_model
        other = AnalysisManager(module, CompileSettings())
        assert other.memory_model("stream") is other.memory_model("stream")
        assert other.memory_model("stream") is not settings.memory_model


# (the --device flags, the device list of each memory model the compile builds, in order)
_MODELS_BUILT = [
    # Every level sees the command line's devices: one model.
    (["a=cuda[0]", "b=local[0]"], [["device_a", "device_b"]]),
    # IREE drops z, a local device the program never names, before mdc's
    # stream-level passes: the stream and scheduled levels share one model
    # of the devices left; the HAL level sees the command line's again.
    (["a=cuda[0]", "b=local[0]", "z=local[1]"], [["device_a", "device_b", "z"], ["device_a", "device_b"]]),
    # And IREE declares the devices by name: the HAL level's list is the
    # command line's devices in IREE's order, a third model.
    (["b=local[0]", "a=cuda[0]", "z=local[1]"],
     [["device_b", "device_a", "z"], ["device_a", "device_b"], ["device_a", "device_b", "z"]]),
]


@pytest.mark.parametrize("devices, lists", _MODELS_BUILT)
def test_one_memory_model_per_compile_and_device_list(monkeypatch, tmp_path, devices, lists):
    """mdc-compile in process (no fork) builds the memory model of the
    command line's devices once, and one model per other device list a
    level sees (pass_manager.py says why), shared by the levels."""
    from mdc.pipeline import cli

    built = []
    init = memory_model.MemoryModel.__init__

    def counting(self, devices, *args, **kwargs):
        built.append(list(devices))
        init(self, devices, *args, **kwargs)

    monkeypatch.setattr(memory_model.MemoryModel, "__init__", counting)
    monkeypatch.setenv("MDC_NO_FORK", "1")
    out = tmp_path / "out.vmfb"
    code = cli.compile_main([str(REPO / "examples" / "multi_device_mul.mlir"),
                             *(f"--device={d}" for d in devices), "-o", str(out)])
    assert code == 0 and out.exists()
    assert built == lists


def _analysis_builders() -> dict[str, set[str]]:
    """Where in passes/ and pipeline/ a MemoryModel or Residence is built,
    or an analysis run: {what: {file}}."""
    import ast

    found: dict[str, set[str]] = {}
    for root in ("passes", "pipeline"):
        for path in sorted((REPO / root).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text())):
                if not isinstance(node, ast.Call):
                    continue
                f = node.func
                name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
                if name in ("MemoryModel", "Residence", "analyze"):
                    found.setdefault(name, set()).add(str(path.relative_to(REPO)))
    return found


def test_only_the_manager_builds_an_analysis():
    """A pass gets its analyses through the manager (requires, or a Handle
    for one that rewrites between uses); the compile's MemoryModels is the
    one place a memory model is built."""
    assert _analysis_builders() == {
        "MemoryModel": {"passes/infra/pass_base.py"},
        "Residence": {"passes/infra/pass_manager.py"},
        "analyze": {"passes/infra/pass_manager.py"},
    }


def test_a_handle_gives_the_managers_analysis_and_a_fresh_one_after_a_rewrite():
    compiler = Compiler([])
    module = compiler.parse_text(_STAGED_MODULE, "staged.mlir")
    got = []

    class Rewrites(ModulePass):
        name, level, summary = "rewrites", "stream", "rewrites between uses of the residence"
        requires = (Handle(Residence),)

        def apply(self, module, options, residence):
            got.extend([residence.get(), residence.get()])
            residence.rewrote()
            got.append(residence.get())

    keeps, seen = _recorder((Residence,), preserves=ANALYSES)
    with compiler.context, module.location:
        manager = run_passes([keeps, Rewrites, keeps], module, CompileSettings(), registry.Report())
    first, again, fresh = got
    assert seen[0][0] is first is again  # the manager's, kept by the first pass
    assert fresh is not first
    assert seen[1][0] is not fresh  # Rewrites preserves nothing: analyzed anew
    assert manager.computed[Residence] == 3
    with pytest.raises(TypeError, match="no analysis"):
        manager.handle(int, "stream")


def test_managers_of_one_compile_share_every_memory_model():
    """Every level's manager asks the compile's MemoryModels
    (CompileSettings.models): a device list other than the command line's
    is built once however many managers see it."""
    compiler = Compiler([])
    module = compiler.parse_text(_STAGED_MODULE, "staged.mlir")
    with compiler.context, module.location:
        settings = CompileSettings()
        one, two = AnalysisManager(module, settings), AnalysisManager(module, settings)
        assert one.memory_model("stream") is two.memory_model("stream")
        assert settings.models.built == [one.memory_model("stream")]
        assert settings.memory_model is settings.models.of(settings.devices)


def _compile_counting_residences(monkeypatch, program: str, devices):
    """mdc-compile of ``program`` in process: the file that ran each
    residence analysis, in order, and the result."""
    import inspect

    from mdc.pipeline import driver

    callers = []
    analyze = Residence.analyze

    def counting(self):
        callers.append(Path(inspect.stack()[1].filename).relative_to(REPO).as_posix())
        analyze(self)

    monkeypatch.setattr(Residence, "analyze", counting)
    return callers, driver.compile(str(REPO / program), devices)


@pytest.mark.parametrize("program, devices, count", [
    # place-unplaced-ops places one op: an analysis before and one after;
    # transfer-insertion places nothing more: one; loop-init-isolation:
    # one. (Each placing pass analyzed twice itself before: 5.)
    ("test/e2e/programs/cond_br_merge.mlir", ["a=local[0]", "b=cuda[0]"], 4),
    # Nothing to place: one analysis per pass that asks (5 before).
    ("examples/multi_device_mul.mlir", ["a=cuda[0]", "b=local[0]"], 3),
    # No staged pair: nothing is placed (3 before too).
    ("examples/multi_device_mul.mlir", ["a=local[0]", "b=local[1]"], 3),
])
def test_residence_is_analyzed_by_the_manager_alone(monkeypatch, program, devices, count):
    callers, result = _compile_counting_residences(monkeypatch, program, devices)
    assert callers == ["passes/infra/pass_manager.py"] * count
    assert len(result.report.placed_ops) == (count == 4)


def test_the_stages_record_is_not_the_passes_report(monkeypatch):
    """Passes return a Report; what the stages read from the module beside
    them (the program's state and types, IREE's default device) is their
    own record, which the report writer reads beside it."""
    import dataclasses
    import json

    from mdc.pipeline.module_record import ModuleRecord

    passes = {f.name for f in dataclasses.fields(registry.Report)}
    stages = {f.name for f in dataclasses.fields(ModuleRecord)}
    assert passes.isdisjoint(stages)
    _, result = _compile_counting_residences(monkeypatch, "examples/multi_device_mul.mlir", ["a=cuda[0]", "b=local[0]"])
    assert result.record.default_device == "device_a"
    assert json.loads(result.render_report("report.json"))["default_device"] == "device_a"
