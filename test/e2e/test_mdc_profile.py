"""mdc-profile end to end: it measures local-task (and, where the Vulkan
tests run, lavapipe beside it) with --quick, writes a profile that
load_profile reads, with numbers a real device gives; usage mistakes and a
device that cannot be opened are one line, exit 2 and 1, and no file.
Probes built with --build-probes measure in a Python that cannot import
iree.compiler, and every way a probe DIR can be wrong is one line."""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import shutil
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path

import pytest

from harness.gpu_kit import cuda_available
from mdc.contract.machine_profile import BYTE_CLASSES, MATMUL_DTYPES, default_profile, load_profile
from mdc.passes.assignment.cost_model import CostModel
from mdc.passes.assignment.work_graph import Unit
from mdc.profiler.memory import host_memory

PROFILE = [sys.executable, "-m", "mdc.profiler"]
REPO = Path(__file__).resolve().parents[2]


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
    # The host's memory: its RAM, some of it free when measured; opening a
    # local device takes little (its threads' stacks) and no device block.
    assert local.memory_bytes == host_memory()[0] and 0 < local.free_bytes <= local.memory_bytes, local
    assert 0 <= local.reserved_bytes < 256 << 20, local
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
    # lavapipe's memory is the host's: its total is the host's RAM, free
    # is some of it, and opening it costs at least the 64 MiB block IREE's
    # Vulkan device allocates on creation (its allocator's statistics),
    # and well under a GiB.
    host, _ = host_memory()
    device = profile.devices["vulkan"]
    assert device.memory_bytes == host and 0 < device.free_bytes <= host, device
    assert 64 << 20 <= device.reserved_bytes < 1 << 30, device
    assert "vulkan: host memory" in profile.source.tool
    assert re.search(r"^memory vulkan: [\d.]+ MiB total, [\d.]+ MiB free, [\d.]+ MiB taken by opening it",
                     table, re.M), table


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


# --build-probes here, --probes where only the runtime is: a Python that
# cannot import iree.compiler (as on a GPU machine with the runtime wheel alone).
NO_COMPILER = [sys.executable, "-c", "import sys; sys.modules['iree.compiler'] = None; "
               "from mdc.profiler.cli import main; sys.exit(main(sys.argv[1:]))"]


@pytest.fixture(scope="module")
def local_probes(run_tool, tmp_path_factory):
    """A --quick probe DIR for local, built once for this file's tests."""
    kit = tmp_path_factory.mktemp("probes") / "kit"
    r = run_tool([*PROFILE, f"--build-probes={kit}", "--device=local-task", "--quick"], timeout=300)
    assert r.returncode == 0 and r.stderr == "", r.stdout + r.stderr
    assert r.stdout.splitlines() == [f"wrote {kit / 'local.vmfb'}", f"wrote {kit / 'probes.json'}"], r.stdout
    return kit


def test_build_probes_writes_the_modules_and_an_index(local_probes):
    index = json.loads((local_probes / "probes.json").read_text())
    assert index["format"] == "mdc-profile-probes" and index["version"] == 1 and index["quick"] is True
    assert index["target_cpu"] == "generic"
    assert index["mdc"] == metadata.version("mdc")
    [entry] = index["probes"]
    assert entry["kind"] == "local" and entry["file"] == "local.vmfb"
    assert "--iree-llvmcpu-target-cpu=generic" in entry["flags"] and not any("=host" in f for f in entry["flags"])
    vmfb = (local_probes / "local.vmfb").read_bytes()
    assert entry["vmfb_sha256"] == hashlib.sha256(vmfb).hexdigest() and b"IREE" in vmfb[:256]


def test_prebuilt_probes_measure_without_the_compiler(run_tool, tmp_path, local_probes):
    out = tmp_path / "machine.json"
    r = run_tool([*NO_COMPILER, f"--probes={local_probes}", "--device=local-task", "--quick", "-o", out], timeout=180)
    assert r.returncode == 0 and r.stderr == "", r.stdout + r.stderr
    assert f"wrote {out}" in r.stdout
    profile = load_profile(str(out))
    assert set(profile.devices) == {"local"}
    _check_device(profile, "local")
    assert f"probes from {local_probes}" in profile.source.tool and "target-cpu=generic" in profile.source.tool


def test_target_cpu_builds_local_probes_for_that_cpu(run_tool, tmp_path):
    """--target-cpu=x86-64 (the baseline every x86-64 has) replaces generic
    in the local flags and the index, and the profile says which it was."""
    kit, out = tmp_path / "kit", tmp_path / "machine.json"
    r = run_tool([*PROFILE, f"--build-probes={kit}", "--device=local-task", "--quick", "--target-cpu=x86-64"],
                 timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    index = json.loads((kit / "probes.json").read_text())
    assert index["target_cpu"] == "x86-64" and "--iree-llvmcpu-target-cpu=x86-64" in index["probes"][0]["flags"]
    r = run_tool([*NO_COMPILER, f"--probes={kit}", "--device=local-task", "--quick", "-o", out], timeout=180)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "--iree-llvmcpu-target-cpu=x86-64)" in load_profile(str(out)).source.tool


def test_a_probe_that_does_not_compile_is_status_1_and_no_dir(run_tool, tmp_path):
    kit = tmp_path / "kit"
    r = run_tool([*PROFILE, f"--build-probes={kit}", "--device=local-task", "--quick", "--target-cpu=no-such-cpu"])
    assert r.returncode == 1, r.stdout + r.stderr
    assert r.stderr.startswith("mdc-profile: error: compiling the probes failed: "), r.stderr
    assert "Unknown CPU" in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not kit.exists()


def test_build_probes_without_the_compiler_is_status_1(run_tool, tmp_path):
    """The guard above does block the compiler: building needs it, and says so."""
    r = run_tool([*NO_COMPILER, f"--build-probes={tmp_path / 'kit'}", "--device=local-task"])
    assert r.returncode == 1, r.stdout + r.stderr
    assert r.stderr.startswith("mdc-profile: error: --build-probes needs the IREE compiler"), r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and not (tmp_path / "kit").exists()


def _edit_index(kit, **fields):
    index = json.loads((kit / "probes.json").read_text())
    for key, value in fields.items():
        if key in index:
            index[key] = value
        else:
            index["probes"][0][key] = value
    (kit / "probes.json").write_text(json.dumps(index))


def _flip_a_byte(path):
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("argv, spoil, status, message", [
    (["--build-probes={kit}", "--probes={kit}"], None, 2, "--build-probes=DIR builds probes and --probes=DIR"),
    (["--build-probes={kit}", "-o", "{out}"], None, 2, "--build-probes=DIR writes probe modules, not a profile"),
    (["--probes={kit}", "--target-cpu=x86-64"], None, 2, "--target-cpu=CPU is for --build-probes=DIR"),
    (["--probes={kit}"], lambda kit: _edit_index(kit, target_cpu="x86-64"), 2,
     "with other local probes than this mdc's"),
    (["--probes={kit}"], lambda kit: _edit_index(kit, target_cpu=None), 2, 'probes.json has no "target_cpu" string'),
    (["--probes={tmp}/none"], None, 2, "--probes={tmp}/none: no such directory"),
    (["--probes={tmp}"], None, 2, "--probes={tmp}: no probes.json (build it with --build-probes={tmp})"),
    (["--probes={kit}"], lambda kit: (kit / "probes.json").write_text("{"), 2,
     "{kit}/probes.json: not a probes index"),
    (["--probes={kit}"], lambda kit: _edit_index(kit, version=2), 2, "index version 2, this mdc reads 1"),
    (["--probes={kit}"], lambda kit: _edit_index(kit, mdc="0.0.1"), 2,
     "--probes={kit} was built by mdc 0.0.1, this is mdc "),
    (["--probes={kit}"], lambda kit: _edit_index(kit, program_sha256="0" * 64), 2,
     "with other local probes than this mdc's: rebuild it with --build-probes"),
    (["--probes={kit}"], lambda kit: _edit_index(kit, flags=["--iree-llvmcpu-target-cpu=host"]), 2,
     "with other local probes than this mdc's"),
    (["--probes={kit}"], lambda kit: _edit_index(kit, probes=[{"kind": "local"}]), 2,
     "probes.json has a malformed probes list"),
    (["--probes={kit}", "--device=vulkan"], None, 2,
     "--probes={kit} has no vulkan probes (it has local)"),
    (["--probes={kit}", "--no-quick"], None, 2, "--probes={kit} was built with --quick; measure with it, not without"),
    (["--probes={kit}"], lambda kit: (kit / "local.vmfb").unlink(), 1, "cannot read local's local.vmfb"),
    (["--probes={kit}"], lambda kit: _flip_a_byte(kit / "local.vmfb"), 1,
     "--probes={kit}: local.vmfb is corrupt (its sha256 is not the one probes.json recorded)"),
])
def test_probe_dir_errors_are_one_line(run_tool, tmp_path, local_probes, argv, spoil, status, message):
    kit, out = tmp_path / "kit", tmp_path / "machine.json"
    shutil.copytree(local_probes, kit)
    if spoil:
        spoil(kit)
    quick = [] if "--no-quick" in argv else ["--quick"]
    argv = [a.format(kit=kit, tmp=tmp_path, out=out) for a in argv if a != "--no-quick"]
    if "-o" not in argv and not any(a.startswith("--build-probes") for a in argv):
        argv += ["-o", str(out)]
    r = run_tool([*NO_COMPILER, "--device=local-task", *quick, *argv])
    assert r.returncode == status, r.stdout + r.stderr
    assert r.stderr.startswith("mdc-profile: error: ") and message.format(kit=kit, tmp=tmp_path) in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr, r.stderr
    assert not out.exists()


def test_gpu_profile_script_builds_here_and_runs_on_local_task(tmp_path):
    """test/e2e/gpu_profile.py, the GPU machine's check of the default
    profile: its build step compiles local, cuda and vulkan probes here, and
    its run step measures local-task with them into $OUT and prints each
    number beside the default profile's; asked for cuda where there is none,
    it says so and exits 2."""
    script, kit, out = [sys.executable, "test/e2e/gpu_profile.py"], tmp_path / "kit", tmp_path / "out"
    out.mkdir()
    env = {**os.environ, "OUT": str(out)}

    def run(*argv, timeout=300):
        return subprocess.run([*script, *map(str, argv)], cwd=REPO, env=env, capture_output=True, text=True,
                              timeout=timeout)

    r = run("build", kit, "--quick")
    assert r.returncode == 0, r.stdout + r.stderr
    index = json.loads((kit / "probes" / "probes.json").read_text())
    assert [p["kind"] for p in index["probes"]] == ["local", "cuda", "vulkan"], index
    r = run("run", kit, "--device=local-task", "--timeout", "180")
    assert r.returncode == 0, r.stdout + r.stderr
    profile = load_profile(str(out / "machine.json"))
    f32 = profile.devices["local"].matmul_flops_per_s["f32"] / 1e9
    default = default_profile().devices["local"].matmul_flops_per_s["f32"] / 1e9
    row = next(line.split() for line in r.stdout.splitlines() if line.startswith("local ") and "f32 GF/s" in line)
    assert row[-3:] == [f"{f32:.3f}", f"{default:.3f}", f"{f32 / default:.2f}"], r.stdout
    assert not (kit / "machine.json").exists()
    if not cuda_available():
        r = run("run", kit)
        assert r.returncode == 2 and "no cuda device here" in r.stdout, r.stdout + r.stderr
