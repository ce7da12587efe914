"""The kernel grid and the tuner (python -m bench kernels / tune), with a
local-task device standing in for the GPU (--smoke): they build, run,
check every output against a float64 reference and print their tables.
The numbers mean nothing here; docs/PERFORMANCE.md has the GPU's.

torch's CPU time is measured in a child process of its own
(bench/kernel_torch_cpu.py). torch is not a dependency, so these tests
run that path with a stand-in: a ``torch`` package first on PYTHONPATH
that does the two products with numpy (and refuses to run beside IREE's
runtime), or one whose import fails as a missing torch's does; whatever
torch the machine has, the tests see the same."""

import json
import os
import re

from bench import kernel_torch_cpu
from harness.bench_cli import bench

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

FAKE_TORCH = """import contextlib, sys, types
import numpy as np
from_numpy = np.asarray
get_num_threads = lambda: 3
cuda = types.SimpleNamespace(is_available=lambda: False)
nn = types.SimpleNamespace(functional=types.SimpleNamespace(linear=lambda x, w: x @ w.T))
def no_grad():
    # torch's CPU time is measured where no IREE runtime is loaded.
    assert not any(m.startswith("iree") for m in sys.modules), "torch timed beside IREE"
    return contextlib.nullcontext()
"""
NO_TORCH = "raise ImportError('No module named torch')\n"


def _torch(folder, text: str) -> str:
    os.makedirs(folder / "torch", exist_ok=True)
    (folder / "torch" / "__init__.py").write_text(text)
    return str(folder)


def _bench(*args, path: str | None = None):
    env = dict(os.environ)
    if path:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [path, ROOT, env.get("PYTHONPATH")]))
    return bench(*args, timeout=900, env=env)


def _rows(stdout: str):
    """(layout, default, mdc, torch) of the table's CPU rows."""
    return re.findall(r"^cpu\s+f32\s+(nn|nt)\s+\d+\s+\d+\s+\d+ \|\s+nan\s+([\d.]+)\s+([\d.]+)\s+([\d.]+|nan) ",
                      stdout, re.M)


def _results(path):
    with open(path) as f:
        return [json.loads(line) for line in f if '"start"' not in line]


def test_kernels_smoke(tmp_path):
    kit = tmp_path / "kit"
    built = _bench("kernels", "build", str(kit), "--smoke")
    assert built.returncode == 0, built.stdout + built.stderr
    # The CPU functions read their weight from a parameter, as a model's do.
    modules = json.loads((kit / "kernels.json").read_text())["modules"]
    assert all(m["target"] == "cpu" and len(m["parameters"]) == len(m["entries"]) == 2 for m in modules), modules
    assert all(e["weight"] in {q["name"] for q in m["parameters"]} for m in modules for e in m["entries"])

    ran = _bench("kernels", "run", str(kit), path=_torch(tmp_path / "none", NO_TORCH))
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "torch on the CPU, in its own process: 0 of 4 points (no torch)" in ran.stdout, ran.stdout
    rows = _rows(ran.stdout)
    assert len(rows) == 4 and all(t == "nan" for *_, t in rows), ran.stdout  # 2 M x 2 layouts
    assert "WRONG" not in ran.stdout
    results = _results(kit / "results.jsonl")
    assert {r["variant"] for r in results} == {"default", "mdc"} and len(results) == 8
    assert all(r["error"] < 1e-5 for r in results), results

    out = tmp_path / "with_torch.jsonl"
    ran = _bench("kernels", "run", str(kit), "--out", str(out), path=_torch(tmp_path / "fake", FAKE_TORCH))
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "torch on the CPU, in its own process: 4 of 4 points, 3 threads" in ran.stdout, ran.stdout
    rows = _rows(ran.stdout)
    assert len(rows) == 4 and all(t != "nan" for *_, t in rows), ran.stdout
    results = _results(out)
    assert len(results) == 8 and all(r["torch_us"] > 0 and r["error"] < 1e-5 for r in results), results


def test_torch_child_without_torch_measures_nothing(tmp_path, monkeypatch):
    """A torch that cannot be imported: no times, no thread count, and the
    file a run before left is not read as this run's."""
    monkeypatch.syspath_prepend(_torch(tmp_path / "none", NO_TORCH))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path / "none"), ROOT]))
    out = tmp_path / "torch.jsonl"
    out.write_text(json.dumps(dict(key="f32_nn_1x8x8", torch_us=1.0, threads=2)) + "\n")
    point = dict(dtype="f32", layout="nn", m=1, k=8, n=8)
    assert kernel_torch_cpu.times([point], 45, str(out)) == ({}, None)
def test_tune_smoke(tmp_path):
    built = _bench("tune", "build", str(tmp_path), "--smoke")
    assert built.returncode == 0, built.stdout + built.stderr
    ran = _bench("tune", "run", str(tmp_path), "--device", "local-task")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert re.search(r"^8 functions measured, 0 failed$", ran.stdout, re.M), ran.stdout
    table = tmp_path / "table.json"
    picked = _bench("tune", "pick", str(tmp_path / "results.jsonl"), "-o", str(table))
    assert picked.returncode == 0, picked.stdout + picked.stderr
    # The smoke kit holds IREE's defaults alone: nothing can beat them.
    assert json.loads(table.read_text())["rows"] == []
    assert picked.stdout.count("no row:") == 8, picked.stdout


def test_tune_smoke_batch_and_dynamic(tmp_path):
    """The batch sub-space (linalg.batch_matmul, Q x K^T and P x V) and the
    dynamic one (M dynamic, each function timed at two M): built, run and
    checked against the reference."""
    for ops, count in (("batch", 4), ("dynamic", 2)):
        kit = tmp_path / ops
        built = _bench("tune", "build", str(kit), "--smoke", "--ops", ops)
        assert built.returncode == 0, built.stdout + built.stderr
        ran = _bench("tune", "run", str(kit), "--device", "local-task")
        assert ran.returncode == 0, ran.stdout + ran.stderr
        assert re.search(rf"^{count} functions measured, 0 failed$", ran.stdout, re.M), ran.stdout
        with open(kit / "results.jsonl") as f:
            results = [json.loads(line) for line in f if '"start"' not in line]
        assert all(r["error"] < 1e-5 for r in results), results
        points = [r["point"] for r in results]
        if ops == "batch":
            assert {p["layout"] for p in points} == {"nn", "nt"} and all(p["batch"] == 2 for p in points)
            assert "batch_matmul   f32   nt         4" in ran.stdout
        else:
            assert sorted(p["m"] for p in points) == [1, 7] and all(p["dynamic"] for p in points)
            assert "dynamic_matmul f32   nn         0" in ran.stdout


def test_tune_smoke_mixed(tmp_path):
    """The mixed sub-space (f16 and bf16 operands accumulating in f32, as
    torch's matmuls are: linalg.matmul into an f32 fill, then the
    truncation), and the batch one in those dtypes (--dtypes: torch's f16
    and bf16 attention, linalg.batch_matmul): built, run, and each output
    within one rounding to f16 or bf16 of the float64 reference, as no sum
    in f16 or bf16 would be."""
    for ops, extra, count, m in (("mixed", [], 4, 8), ("batch", ["--dtypes", "f16f32,bf16f32"], 8, 4)):
        kit = tmp_path / ops
        built = _bench("tune", "build", str(kit), "--smoke", "--ops", ops, *extra)
        assert built.returncode == 0, built.stdout + built.stderr
        ran = _bench("tune", "run", str(kit), "--device", "local-task")
        assert ran.returncode == 0, ran.stdout + ran.stderr
        assert re.search(rf"^{count} functions measured, 0 failed$", ran.stdout, re.M), ran.stdout
        results = _results(kit / "results.jsonl")
        assert {r["point"]["dtype"] for r in results} == {"f16f32", "bf16f32"}
        # One rounding of the output: 2^-11 (f16) and 2^-8 (bf16) of the largest value.
        limit = {"f16f32": 2 ** -11, "bf16f32": 2 ** -8}
        assert all(r["error"] < 1.05 * limit[r["point"]["dtype"]] for r in results), results
        kind = "matmul        " if ops == "mixed" else "batch_matmul  "
        assert f"{kind} f16f32 nt         {m}" in ran.stdout, ran.stdout


def test_kernels_build_refuses_an_unknown_dtype(tmp_path):
    built = _bench("kernels", "build", str(tmp_path / "kit"), "--smoke", "--dtypes", "f32,f64")
    assert built.returncode == 1, built.stdout + built.stderr
    assert "bench kernels: error: --dtypes: unknown element type 'f64'" in built.stderr, built.stderr
    assert "Traceback" not in built.stderr
