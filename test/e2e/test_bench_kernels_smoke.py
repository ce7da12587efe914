"""The kernel grid and the tuner (python -m bench kernels / tune), with a
local-task device standing in for the GPU (--smoke): they build, run,
check every output against a float64 reference and print their tables.
The numbers mean nothing here; docs/PERFORMANCE.md has the GPU's."""

import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _bench(*args):
    return subprocess.run([sys.executable, "-m", "bench", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=900)


def test_kernels_smoke(tmp_path):
    built = _bench("kernels", "build", str(tmp_path), "--smoke")
    assert built.returncode == 0, built.stdout + built.stderr
    ran = _bench("kernels", "run", str(tmp_path))
    assert ran.returncode == 0, ran.stdout + ran.stderr
    rows = re.findall(r"^cpu\s+f32\s+(nn|nt)\s+\d+\s+\d+\s+\d+ \|\s+nan\s+([\d.]+)\s+([\d.]+)", ran.stdout, re.M)
    assert len(rows) == 4, ran.stdout  # 2 M x 2 layouts, default and mdc each timed
    assert "WRONG" not in ran.stdout
    with open(tmp_path / "results.jsonl") as f:
        results = [json.loads(line) for line in f if '"start"' not in line]
    assert {r["variant"] for r in results} == {"default", "mdc"}
    assert all(r["error"] < 1e-5 for r in results), results


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
