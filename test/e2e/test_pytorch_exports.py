"""PyTorch programs end to end: the iree-turbine exports committed in
examples/pytorch/exported (no torch needed here), compiled by mdc-compile
and run through mdc-run and mdc.runtime_shim.load, compared with torch's
own outputs committed beside them.

Three shapes (examples/pytorch/README.md): the MLP split over the devices,
the embedding with int64 ids on the CPU and the head on the second device,
and the dynamic batch with an argument on the second device, at the
exported batch and at the other batches the export wrote torch's outputs
for (1, 7, 64).

On two CPU devices the pair is forced to be staged (``--link=0:1=staged``:
every crossing takes the GPU path), and the modules are also run through
the fenced ``@main$async`` and through stock iree-run-module on the host
twin ``@main$host``. On local + Vulkan (lavapipe), where the Python
runtime cannot open the pair, mdc-run and ``load`` run the twin in the
wheel's iree-run-module.

Tolerance: float32 results within ``rtol=1e-5, atol=1e-6`` of torch's (one
torch thread; IREE sums in its own order and uses its own tanh, exp).
"""

from __future__ import annotations

import inspect
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from mdc.runtime_shim import NativeModule, ShimError, ShimTypeError, load
from mdc.runtime_shim.native import iree_run_module

REPO = Path(__file__).resolve().parents[2]
EXPORTED = REPO / "examples" / "pytorch" / "exported"
INDEX = json.loads((EXPORTED / "index.json").read_text())
RTOL, ATOL = 1e-5, 1e-6

CPU_PAIR = ("0=local[0]", "1=local[1]")
STAGED = ("0:1=staged",)
VULKAN_PAIR = ("0=local[0]", "1=vulkan[0]")


def _cases():
    """(id, model, input files, output files): each model at its exported
    shapes, and the dynamic batch at its other sizes."""
    out = []
    for name, entry in INDEX.items():
        files = ([i["file"] for i in entry["inputs"]], [o["file"] for o in entry["outputs"]])
        out.append((name, name, *files))
        for sized in entry.get("other_sizes", []):
            out.append((f"{name}-size{sized['size']}", name, [i["file"] for i in sized["inputs"]],
                        [o["file"] for o in sized["outputs"]]))
    return out


CASES = _cases()
IDS = [c[0] for c in CASES]


def _load_arrays(files):
    return [np.load(EXPORTED / f) for f in files]


def assert_matches_torch(got, want_files, where):
    for k, (g, w) in enumerate(zip(got, _load_arrays(want_files))):
        assert g.dtype == w.dtype and g.shape == w.shape, (where, k, g.dtype, g.shape, w.dtype, w.shape)
        np.testing.assert_allclose(g, w, rtol=RTOL, atol=ATOL, err_msg=f"{where}: result {k}")


@pytest.fixture(scope="module")
def cpu_vmfb(build_vmfb):
    """The model compiled for two CPU devices, staged between them."""
    return lambda name: build_vmfb(f"torch_{name}", (EXPORTED / f"{name}.mlir").read_text(), CPU_PAIR,
                                   links=STAGED)


@pytest.fixture(scope="module")
def vulkan_vmfb(build_vmfb):
    return lambda name: build_vmfb(f"torch_{name}_vulkan", (EXPORTED / f"{name}.mlir").read_text(),
                                   VULKAN_PAIR)


def _mdc_run(mdc_run, vmfb, function, devices, inputs, tmp_path, n_out):
    outs = [tmp_path / f"{function.replace('$', '_')}.out{k}.npy" for k in range(n_out)]
    proc = mdc_run(f"--module={vmfb}", f"--function={function}", *(f"--device={d}" for d in devices),
                   *(f"--input=@{EXPORTED / f}" for f in inputs), *(f"--output=@{o}" for o in outs),
                   timeout=300)
    assert proc.returncode == 0, (proc.returncode, proc.stdout, proc.stderr)
    return [np.load(o) for o in outs]


# -- two CPU devices, staged ---------------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_cpu_pair_mdc_run(case, cpu_vmfb, mdc_run, tmp_path):
    _, name, inputs, outputs = case
    got = _mdc_run(mdc_run, cpu_vmfb(name), "main", ["local-task", "local-task"], inputs, tmp_path,
                   len(outputs))
    assert_matches_torch(got, outputs, "mdc-run @main")


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_cpu_pair_python_api(case, cpu_vmfb):
    """@main and the fenced @main$async, with arguments placed as on a GPU
    (staged_transfers) and as on a CPU."""
    _, name, inputs, outputs = case
    args = _load_arrays(inputs)
    for staged in (False, True):
        with load(cpu_vmfb(name), ["local-task", "local-task"], staged_transfers=staged) as m:
            assert m.function_names == ["main$async", "main"]
            assert_matches_torch([m.main(*args)], outputs, f"load(staged_transfers={staged}).main")
            assert_matches_torch(m["main$async"].call(*args), outputs, "main$async")


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_cpu_pair_stock_run_module_on_host_twin(case, cpu_vmfb, tmp_path):
    """Stock iree-run-module, which allocates every argument on its first
    device and reads every result through it, calls @main$host."""
    _, name, inputs, outputs = case
    outs = [tmp_path / f"out{k}.npy" for k in range(len(outputs))]
    r = subprocess.run([iree_run_module(), f"--module={cpu_vmfb(name)}", "--function=main$host",
                        "--device=local-task", "--device=local-task",
                        *(f"--input=@{EXPORTED / f}" for f in inputs), *(f"--output=@{o}" for o in outs)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert_matches_torch([np.load(o) for o in outs], outputs, "iree-run-module @main$host")


def test_signatures_come_from_the_manifest(cpu_vmfb):
    with load(cpu_vmfb("dynamic_batch"), ["local-task", "local-task"]) as m:
        sig = m.main.signature
        assert (sig.is_async, sig.declared_by) == (False, "mdc")
        assert m["main$async"].signature.is_async
        assert [(str(v.type), v.affinity) for v in sig.args] == [
            ("tensor<?x8xf32>", "__device_1"), ("tensor<?x8xf32>", "__device_0")]
        assert [(str(v.type), v.affinity) for v in sig.results] == [("tensor<?x8xf32>", "__device_1")]
        assert list(inspect.signature(m.main).parameters) == ["input0", "input1"]
        assert "from mdc's manifest" in m.main.__doc__
        assert "main$host" not in m.function_names and "main$host" not in dir(m)
    with load(cpu_vmfb("embed_head"), ["local-task", "local-task"]) as m:
        assert str(m.main.signature.args[0].type) == "tensor<2x5xi64>"


def test_user_mistakes_are_one_line_errors(cpu_vmfb, mdc_run):
    with load(cpu_vmfb("embed_head"), ["local-task", "local-task"]) as m:
        with pytest.raises(ShimError, match="int64"):
            m.main(np.zeros((2, 5), np.float32))
        with pytest.raises(ShimError, match="shape"):
            m.main(np.zeros((2, 6), np.int64))
        with pytest.raises(ShimTypeError):
            m.main()
    proc = mdc_run(f"--module={cpu_vmfb('split_mlp')}", "--function=main", "--device=local-task",
                   "--device=local-task", "--input=3x16xf32=0")
    assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1, proc.stderr
    assert proc.stderr.startswith("mdc-run: error: ") and "Traceback" not in proc.stderr


# -- the tied batch (issue 32) ---------------------------------------------------
#
# dynamic_batch's arguments share torch's symbolic batch; the manifest ties
# them (passes/analysis/tied_dims.py), and the shim refuses two batches before any
# run: a batch of 3 for x and 7 for y, both committed inputs.
MISMATCHED = ("dynamic_batch.input0.npy", "dynamic_batch.size7.input1.npy")


def tied_error(function: str, x_rows: int, y_rows: int) -> str:
    return (f"@{function}: dimension 0 of input 0 (%input0) is {x_rows} but dimension 0 of input 1 (%input1) "
            f"is {y_rows}; the program requires them equal")


def _assert_refused_by_mdc_run(mdc_run, vmfb, devices, tmp_path):
    out = tmp_path / "refused.npy"
    proc = mdc_run(f"--module={vmfb}", "--function=main", *(f"--device={d}" for d in devices),
                   *(f"--input=@{EXPORTED / f}" for f in MISMATCHED), f"--output=@{out}")
    assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1, proc.stderr
    assert proc.stderr.startswith(f"mdc-run: error: {tied_error('main', 3, 7)}"), proc.stderr
    assert not out.exists()


def test_tied_batches_mdc_run(cpu_vmfb, mdc_run, tmp_path):
    _assert_refused_by_mdc_run(mdc_run, cpu_vmfb("dynamic_batch"), ["local-task", "local-task"], tmp_path)


def test_tied_batches_python_api(cpu_vmfb):
    """Every way a call takes inputs: arrays (by position and keyword), the
    fenced form, a placed input, a result left on its device, pipelined
    map. Matching batches still run (the cases above compare them with
    torch's outputs)."""
    x, y = _load_arrays(MISMATCHED)
    with load(cpu_vmfb("dynamic_batch"), ["local-task", "local-task"]) as m:
        on_device = m.main.call_on_devices(y, y)[0]
        assert on_device.shape == (7, 8)
        calls = [(lambda: m.main(x, y), "main", 3, 7), (lambda: m.main(input1=y, input0=x), "main", 3, 7),
                 (lambda: m["main$async"].call(x, y), "main$async", 3, 7),
                 (lambda: m.main(m.main.place(0, x), y), "main", 3, 7),
                 (lambda: m.main(on_device, x), "main", 7, 3),
                 (lambda: list(m.main.map([y], [x])), "main", 7, 3)]
        for call, function, x_rows, y_rows in calls:
            with pytest.raises(ShimError, match=re.escape(tied_error(function, x_rows, y_rows))):
                call()


def test_stock_iree_runs_tied_batches_unchecked(cpu_vmfb, tmp_path):
    """Canary: stock iree-run-module on the host twin takes the two batches
    and returns a result as long as x (the bug the shim's check steps
    around); if IREE starts refusing, the shim's check may go."""
    out = tmp_path / "out.npy"
    r = subprocess.run([iree_run_module(), f"--module={cpu_vmfb('dynamic_batch')}", "--function=main$host",
                        "--device=local-task", "--device=local-task",
                        *(f"--input=@{EXPORTED / f}" for f in MISMATCHED), f"--output=@{out}"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert np.load(out).shape == (3, 8)


# -- local + Vulkan (lavapipe) --------------------------------------------------


@pytest.mark.vulkan
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_vulkan_mdc_run(case, vulkan_vmfb, mdc_run, tmp_path):
    """Vulkan first: mdc-run puts the CPU first for the host twin itself."""
    _, name, inputs, outputs = case
    got = _mdc_run(mdc_run, vulkan_vmfb(name), "main", ["vulkan", "local-task"], inputs, tmp_path,
                   len(outputs))
    assert_matches_torch(got, outputs, "mdc-run @main on local + vulkan")


@pytest.mark.vulkan
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_vulkan_python_api(case, vulkan_vmfb):
    _, name, inputs, outputs = case
    args = _load_arrays(inputs)
    with load(vulkan_vmfb(name), ["local-task", "vulkan"]) as m:
        assert isinstance(m, NativeModule)
        assert m.function_names == ["main$async", "main"]
        assert_matches_torch([m.main(*args)], outputs, "load(local-task, vulkan).main")
        assert_matches_torch(m["main$async"].call(*args), outputs, "main$async")


@pytest.mark.vulkan
def test_vulkan_tied_batches(vulkan_vmfb, mdc_run, tmp_path):
    """Through iree-run-module (NativeModule) as well: refused before it runs."""
    _assert_refused_by_mdc_run(mdc_run, vulkan_vmfb("dynamic_batch"), ["local-task", "vulkan"], tmp_path)
    with load(vulkan_vmfb("dynamic_batch"), ["local-task", "vulkan"]) as m:
        with pytest.raises(ShimError, match=re.escape(tied_error('main', 3, 7))):
            m.main(*_load_arrays(MISMATCHED))


# -- the GPU kit, built for two CPUs -------------------------------------------


def test_gpu_kit_cpu_only(tmp_path):
    """gpu_torch.py build --cpu-only, then run: every case and runner matches
    torch (the kit the H200 runs, with __device_1 a staged CPU)."""
    script = str(REPO / "test" / "e2e" / "gpu_torch.py")
    env = {"PYTHONPATH": str(REPO), "PATH": str(Path(sys.executable).parent)}
    built = subprocess.run([sys.executable, script, "build", str(tmp_path), "--cpu-only"], capture_output=True,
                           text=True, timeout=900, env=env)
    assert built.returncode == 0, built.stdout + built.stderr
    ran = subprocess.run([sys.executable, script, "run", str(tmp_path), "--timeout", "120"], capture_output=True,
                         text=True, timeout=900, env=env)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    rows = [line for line in ran.stdout.splitlines() if line.startswith(("split_mlp", "embed_head", "dynamic"))]
    assert len(rows) == 18 and all(" match " in row for row in rows), ran.stdout
    assert ran.stdout.rstrip().endswith("18 passed, 0 failed")
