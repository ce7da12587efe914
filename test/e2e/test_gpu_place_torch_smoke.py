"""gpu_place_torch.py's build and run steps without a GPU: the kit built
with ``--smoke`` (the accelerator a second CPU device, staged as for a GPU,
run on local-sync) for the three small exports, then run to torch's
outputs; a wrong output must be reported WRONG with status 1, and a kit for
cuda on a machine without one must be status 2."""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from harness.cuda_kit import run_as_cuda_kit

SCRIPT = Path(__file__).resolve().parent / "gpu_place_torch.py"
SMALL = ("split_mlp", "embed_head", "dynamic_batch")
PLACEMENTS = ("auto", "auto90", "file", "gpu")
ROW = re.compile(r"^\| (\w+) \| (\w+) \| (\d+) of (\d+) \| (-?\d+) \| ([\d.]+) \| ([\d.]+) \| ([^|]*) \| (\w+) \|$",
                 re.M)


@pytest.fixture(scope="module")
def kit(tmp_path_factory, run_tool) -> Path:
    path = tmp_path_factory.mktemp("place_torch_kit")
    only = [a for name in SMALL for a in ("--only", name)]
    r = run_tool([sys.executable, SCRIPT, "build", path, "--smoke", *only], timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    return path


def test_smoke_kit_runs_to_torch_outputs(kit, run_tool):
    r = run_tool([sys.executable, SCRIPT, "run", kit], timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    rows = {(m[0], m[1]): m for m in ROW.findall(r.stdout)}
    assert set(rows) == {(name, how) for name in SMALL for how in PLACEMENTS}, r.stdout
    for (name, how), (_, _, gpu, units, crossings, estimate, measured, _, verdict) in rows.items():
        assert verdict == "ok", r.stdout
        assert float(estimate) > 0 and float(measured) > 0, r.stdout
        if how == "file":  # the file's split puts a matmul on the accelerator, and its values cross
            assert 0 < int(gpu) < int(units) and int(crossings) > 0, r.stdout
        if how == "gpu":  # everything on the accelerator
            assert int(gpu) == int(units), r.stdout


def test_wrong_output_is_status_1(kit, run_tool, tmp_path):
    bad = tmp_path / "kit"
    shutil.copytree(kit, bad)
    out = bad / "split_mlp.output0.npy"
    np.save(out, np.load(out) + 1.0)
    r = run_tool([sys.executable, SCRIPT, "run", bad], timeout=300)
    assert r.returncode == 1, r.stdout + r.stderr
    assert re.search(r"^\| split_mlp \| auto \|.*\| WRONG \|$", r.stdout, re.M), r.stdout


def test_cuda_kit_without_cuda_is_status_2(kit, run_tool, tmp_path):
    r = run_as_cuda_kit(SCRIPT, kit, "modules.json", run_tool, tmp_path)
    assert r.returncode == 2 and "no cuda device" in r.stderr, r.stdout + r.stderr
