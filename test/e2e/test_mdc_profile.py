"""mdc-profile end to end: it measures local-task (and, where the Vulkan
tests run, lavapipe beside it) with --quick, writes a profile that
load_profile reads, with numbers a real device gives; usage mistakes and a
device that cannot be opened are one line, exit 2 and 1, and no file."""

from __future__ import annotations

import math
import sys
import time

import pytest

from mdc.contract.machine_profile import BYTE_CLASSES, MATMUL_DTYPES, load_profile
from mdc.passes.assignment.cost_model import CostModel
from mdc.passes.assignment.work_graph import Unit

PROFILE = [sys.executable, "-m", "mdc.profiler"]


def _profile(run_tool, tmp_path, *devices, timeout=180):
    out = tmp_path / "machine.json"
    start = time.monotonic()
    r = run_tool([*PROFILE, *(f"--device={d}" for d in devices), "--quick", "-o", out], timeout=timeout)
    elapsed = time.monotonic() - start
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stderr == "", r.stderr
    assert f"wrote {out}" in r.stdout
    return load_profile(str(out)), r.stdout, elapsed


def _check_device(profile, kind):
    d = profile.devices[kind]
    for dtype in MATMUL_DTYPES:
        rate = d.matmul_flops_per_s[dtype]
        assert math.isfinite(rate) and rate > 0, (kind, dtype, rate)
    for op_class in BYTE_CLASSES:
        rate = d.bytes_per_s[op_class]
        # Slower than 10 MB/s, or faster than 100 TB/s, is a broken measurement.
        assert 1e7 < rate < 1e14, (kind, op_class, rate)
    # A call or a dispatch costs something, and well under a tenth of a second.
    assert 0 < d.seconds_per_call < 0.1 and 0 < d.seconds_per_dispatch < 0.1, d
    for pair in (("local", kind), (kind, "local")):
        c = profile.crossings[pair]
        assert 0 < c.latency_s < 0.1 and 1e7 < c.bytes_per_s < 1e13, (pair, c)


def test_local_task_quick(run_tool, tmp_path):
    profile, table, elapsed = _profile(run_tool, tmp_path, "local-task")
    assert set(profile.devices) == {"local"} and set(profile.crossings) == {("local", "local")}
    _check_device(profile, "local")
    local = profile.devices["local"]
    # A naive scalar triple loop runs at about 1 GFLOP/s; IREE's CPU matmul
    # (vectorized, on every core) must beat it, and no CPU reaches 10 TFLOP/s.
    assert 1e9 < local.matmul_flops_per_s["f32"] < 1e13, local
    assert local.matmul_flops_per_s["other"] == min(local.matmul_flops_per_s["f32"], local.matmul_flops_per_s["f16"])
    assert "local-task" in profile.source.machine and "--quick" in profile.source.tool
    assert table.splitlines()[0].split()[0] == "device" and table.splitlines()[1].split()[0] == "local"
    assert elapsed < 60, f"--quick took {elapsed:.1f} s"
    # The profile drives the cost model: a 256^3 matmul takes the time its rate says.
    model = CostModel.of(profile, {"cpu": "local"})
    unit = Unit(0, "matmul", "matmul", "f32", flops=2 * 256 ** 3, bytes_moved=3 * 256 * 256 * 4)
    assert model.unit_seconds(unit, "cpu") >= 2 * 256 ** 3 / local.matmul_flops_per_s["f32"]


@pytest.mark.vulkan
def test_local_task_and_lavapipe_quick(run_tool, tmp_path):
    profile, table, _ = _profile(run_tool, tmp_path, "local-task", "vulkan", timeout=300)
    assert set(profile.devices) == {"local", "vulkan"}
    assert set(profile.crossings) == {("local", "local"), ("local", "vulkan"), ("vulkan", "local")}
    _check_device(profile, "vulkan")
    # IREE's default Vulkan target has no f16 matmul: its f16 rate is its f32 rate.
    vulkan = profile.devices["vulkan"].matmul_flops_per_s
    assert vulkan["f16"] == vulkan["f32"] and vulkan["f32"] > 1e7
    assert any(line.split()[0] == "vulkan" for line in table.splitlines())


@pytest.mark.parametrize("argv, message", [
    ([], "give at least one --device=URI"),
    (["--device=local-task"], "-o FILE is required"),
    (["--device=tpu", "-o", "{out}"], "--device=tpu: unknown driver"),
    (["--device=local-task", "--device=local-sync", "-o", "{out}"],
     "--device=local-sync: local-task is already a local device"),
    (["--device=local-task", "-o", "{tmp}/no/such/folder/machine.json"], "cannot write"),
    (["--device=local-task", "-o", "{out}", "--bogus"], "unrecognized arguments: --bogus"),
])
def test_usage_errors_are_one_line_and_status_2(run_tool, tmp_path, argv, message):
    out = tmp_path / "machine.json"
    r = run_tool([*PROFILE, *(a.format(out=out, tmp=tmp_path) for a in argv)])
    assert r.returncode == 2, r.stdout + r.stderr
    assert r.stderr.startswith("mdc-profile: error: ") and message in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not out.exists()


def test_a_device_that_cannot_be_opened_is_status_1_and_no_file(run_tool, tmp_path):
    out = tmp_path / "machine.json"
    r = run_tool([*PROFILE, "--device=local-task://7", "-o", out])
    assert r.returncode == 1, r.stdout + r.stderr
    assert r.stderr.startswith("mdc-profile: error: cannot create device 'local-task://7'"), r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
    assert not out.exists()


def test_help_and_version_exit_0(run_tool):
    r = run_tool([*PROFILE, "--help"])
    assert r.returncode == 0 and "--device" in r.stdout and "--quick" in r.stdout, r.stdout + r.stderr
    r = run_tool([*PROFILE, "--version"])
    assert r.returncode == 0 and r.stdout.startswith("mdc-profile (mdc) "), r.stdout + r.stderr


@pytest.mark.parametrize("kind", ["cuda", "hip"])
def test_the_gpu_probes_compile(kind):
    """No GPU here: the cuda and hip probe modules, at least, compile with
    the flags mdc-profile passes (a wrong flag or a probe a backend cannot
    compile fails here, not first on a GPU machine)."""
    from mdc.profiler import probes
    from mdc.profiler.measure import compile_probes

    assert probes.kind_of_uri(f"{kind}://0") == kind
    vmfb = compile_probes(kind, probes.sizes_for(kind, quick=True))
    assert b"IREE" in vmfb[:256], vmfb[:256]  # the VM module's flatbuffer identifier
    for function in ("identity", "chain", "matmul_f32", "matvec_f32", "elementwise", "reduction", "gather", "copy"):
        assert function.encode() in vmfb, function
    assert (b"matmul_f16" in vmfb) == (kind not in probes.NO_F16_MATMUL)
