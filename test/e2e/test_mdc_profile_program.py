"""mdc-profile --program end to end: a small program's units compiled here
(--build-program), timed in a Python that cannot import iree.compiler
(--program-kit, as on a GPU machine with the runtime wheel alone), on a
CPU pair and on local + lavapipe; the costs file is the one mdc-compile
--place-costs reads, and it places the program. Mistakes are one line."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest

import iree.runtime as rt

from mdc.contract.place_costs import load_costs
from mdc.profiler.program import ACCELERATOR_COPIES, copies_symbol

PROFILE = [sys.executable, "-m", "mdc.profiler"]
NO_COMPILER = [sys.executable, "-c", "import sys; sys.modules['iree.compiler'] = None; "
               "from mdc.profiler.cli import main; sys.exit(main(sys.argv[1:]))"]
REPO = Path(__file__).resolve().parents[2]
CHAIN = REPO / "test/lit/assign/Inputs/chain.mlir"
DYNAMIC = REPO / "test/lit/assign/Inputs/dynamic.mlir"
# chain.mlir's units that are work (3 and 4 are views, which cost nothing).
CHAIN_WORK = {0: "generic 2x3 f32", 1: "matmul 2x2 f32", 2: "addf 2x2 f32", 5: "exp 2x2 f32"}


def _build_and_time(run_tool, tmp_path, program, devices, *more):
    kit, out = tmp_path / "kit", tmp_path / "costs.json"
    r = run_tool([*PROFILE, f"--program={program}", *(f"--device={d}" for d in devices),
                  f"--build-program={kit}", *more], timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert (kit / "program.json").exists()
    r = run_tool([*NO_COMPILER, f"--program-kit={kit}", "--quick", "-o", out], timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"wrote {out}" in r.stdout
    return load_costs(str(out)), out


def _check_measured(costs, names):
    assert set(costs.devices) == set(names)
    assert {u.id: u.label for u in costs.units} == CHAIN_WORK
    for unit in costs.units:
        assert set(unit.seconds) == set(names)
        for s in unit.seconds.values():
            assert math.isfinite(s) and 0 < s < 1, unit
    directions = {(c.source, c.target) for c in costs.crossings}
    assert directions == {(names[0], names[1]), (names[1], names[0])}
    # Every size a value or weight of chain.mlir has: 16 B (ids, the 2x2
    # values), 24 B (the 2x3 rows and w1), 48 B (the table).
    assert sorted({c.bytes for c in costs.crossings}) == [16, 24, 48]


def _check_copies(run_tool, kit):
    """The accelerator's module runs each unit alone and as ACCELERATOR_COPIES
    copies in one call, one dispatch after another; the host's, alone."""
    index = json.loads((kit / "program.json").read_text())
    assert {n: d["copies"] for n, d in index["devices"].items()} == {"cpu": 1, "gpu": ACCELERATOR_COPIES}
    symbols = {u["symbol"] for u in index["units"]}
    exported = {name: set(rt.VmModule.copy_buffer(rt.VmInstance(), (kit / f"{name}.vmfb").read_bytes()).function_names)
                for name in ("cpu", "gpu")}
    assert symbols <= exported["cpu"] and not {copies_symbol(s) for s in symbols} & exported["cpu"]
    assert symbols | {copies_symbol(s) for s in symbols} <= exported["gpu"]
    # The matmul's copies are not folded into one (CSE), and they run in series.
    matmul = next(u["symbol"] for u in index["units"] if u["label"].startswith("matmul"))
    r = run_tool(["mdc-compile", kit / "units_gpu.mlir", "--device=gpu=local[0]", "--compile-to=stream", "-o",
                  kit / "stream.mlir"])
    assert r.returncode == 0, r.stdout + r.stderr
    text = (kit / "stream.mlir").read_text()

    def body(symbol):
        start = text.index(f"util.func public @{symbol}(")
        return text[start:text.index("\n  }", start)]

    assert body(matmul).count("_matmul_") == 1
    assert body(copies_symbol(matmul)).count("_matmul_") == ACCELERATOR_COPIES
    # Each copy reads arguments of its own, so none reads what another left in a cache.
    assert {n: d["own_arguments"] for n, d in index["devices"].items()} == {"cpu": False, "gpu": True}
    source = (kit / "units_gpu.mlir").read_text()

    def arity(symbol):
        start = source.index(f"@{symbol}(")
        return source[start:source.index(")", start)].count("%")

    assert arity(matmul) == 2 and arity(copies_symbol(matmul)) == 2 * ACCELERATOR_COPIES
    assert 'stream.partitioning = #stream.partitioning_config<"debug">' in (kit / "units_gpu.mlir").read_text()


def _place(run_tool, devices, costs_file):
    r = run_tool(["mdc-opt", CHAIN, "--pass=assign-devices", *(f"--device={d}" for d in devices), "--place=auto",
                  f"--place-costs={costs_file}", "-o", "/dev/null"])
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stderr


def test_cpu_pair_build_here_time_without_the_compiler(run_tool, tmp_path):
    devices = ("cpu=local[0]", "gpu=local[1]")
    costs, out = _build_and_time(run_tool, tmp_path, CHAIN, devices)
    _check_measured(costs, ["cpu", "gpu"])
    assert costs.source["target_cpu"] == "generic"
    _check_copies(run_tool, tmp_path / "kit")
    summary = _place(run_tool, devices, out)
    # Every work unit measured where it runs; the two views are modelled (0 s).
    assert "; 4 of 6 units measured" in summary, summary


@pytest.mark.vulkan
def test_local_and_lavapipe(run_tool, tmp_path):
    devices = ("cpu=local[0]", "gpu=vulkan[0]")
    costs, out = _build_and_time(run_tool, tmp_path, CHAIN, devices)
    _check_measured(costs, ["cpu", "gpu"])
    assert costs.devices["gpu"].kind == "vulkan"
    assert "units measured" in _place(run_tool, devices, out)


def test_a_dynamic_shape_is_timed_at_its_bound(run_tool, tmp_path):
    costs, _ = _build_and_time(run_tool, tmp_path, DYNAMIC, ("cpu=local[0]", "gpu=local[1]"), "--max-dim=arg0.d0=8")
    assert costs.units and all(u.at_bound for u in costs.units)
    kit = json.loads((tmp_path / "kit" / "program.json").read_text())
    assert all(a[0][0] == 8 for u in kit["units"] for a in u["arguments"][:1]), kit["units"]


@pytest.mark.parametrize("argv, status, message", [
    (["--program={chain}", "--device=cpu=local[0]", "--device=gpu=local[1]"], 2,
     "-o FILE is required: where to write the costs"),
    (["--program={chain}", "--device=local-task", "-o", "{tmp}/c.json"], 2,
     "--device=local-task: with --program a device is NAME=SPEC"),
    (["--program={chain}", "--device=cpu=local[0]", "-o", "{tmp}/c.json"], 2,
     "--program needs two --device=NAME=SPEC"),
    (["--program={tmp}/none.mlir", "--device=cpu=local[0]", "--device=gpu=local[1]", "-o", "{tmp}/c.json"], 2,
     "--program={tmp}/none.mlir: no such file"),
    (["--program-kit={tmp}", "-o", "{tmp}/c.json"], 2, "is not a program kit (no program.json)"),
    (["--program-kit={tmp}", "--device=cpu=local[0]", "-o", "{tmp}/c.json"], 2,
     "--program-kit=DIR times the kit as it was built: drop --device"),
    (["--program={chain}", "--device=cpu=local[0]", "--device=gpu=local[1]", "--build-program={tmp}/k", "-o",
      "{tmp}/c.json"], 2, "--build-program=DIR writes a kit, not costs: drop -o"),
    (["--program={chain}", "--device=cpu=local[0]", "--device=gpu=local[1]", "--bogus", "-o", "{tmp}/c.json"], 2,
     "unrecognized arguments: --bogus"),
])
def test_usage_errors_are_one_line(run_tool, tmp_path, argv, status, message):
    given = [a.format(chain=CHAIN, tmp=tmp_path) for a in argv]
    r = run_tool([*PROFILE, *given])
    assert r.returncode == status, r.stdout + r.stderr
    assert r.stderr.startswith("mdc-profile: error: "), r.stderr
    assert message.format(tmp=tmp_path) in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not (tmp_path / "c.json").exists()
