"""gpu_place_wide.py's build and run steps without a GPU: the kit built with
``--smoke`` (the accelerator a second CPU device, staged as for a GPU, run
on local-sync), its weights made from the seed and its reference stock
IREE's all-local module; a wrong reference must be reported WRONG with
status 1, and a kit for cuda on a machine without one must be status 2.

Each step prints a line at least every few seconds here (16-26 s a run,
about 35 s a build on 2 cores); a step silent for QUIET seconds is taken
as hung and fails with its Python stacks (run_tool), so that a hang costs
a minute and a half, not the old 900 s."""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

import pytest

from harness.cuda_kit import run_as_cuda_kit

SCRIPT = Path(__file__).resolve().parent / "gpu_place_wide.py"
QUIET = 90  # seconds of silence that mean a hung step
ROW = re.compile(r"^\| (auto|cpu|gpu)[^|]* \| (\d+) of (\d+) \| (\d+) \| ([\d.]+) \| ([\d.]+) \| [^|]* \| [^|]* \| "
                 r"([^|]*) \| (\w+) \|$", re.M)


@pytest.fixture(scope="module")
def kit(tmp_path_factory, run_tool) -> Path:
    path = tmp_path_factory.mktemp("place_wide_kit")
    r = run_tool([sys.executable, SCRIPT, "build", path, "--smoke"], timeout=900, quiet=QUIET)
    assert r.returncode == 0, r.stdout + r.stderr
    return path


def test_smoke_kit_runs_to_the_stock_reference(kit, run_tool):
    meta = json.loads((kit / "kit.json").read_text())
    # The budget forces a split: half the weights, which are 8 blocks of width 1024.
    assert meta["budget"] * 2 <= meta["weights"] and meta["weights"] > 400 * 2**20
    r = run_tool([sys.executable, SCRIPT, "run", kit], timeout=600, quiet=QUIET)
    assert r.returncode == 0, r.stdout + r.stderr
    rows = {m[0]: m for m in ROW.findall(r.stdout)}
    assert set(rows) == {"auto", "cpu", "gpu"}, r.stdout
    assert all(m[-1] == "ok" and float(m[4]) > 0 and float(m[5]) > 0 for m in rows.values()), r.stdout
    assert rows["cpu"][1] == "0" and rows["gpu"][1] == rows["gpu"][2], r.stdout
    assert "every result right" in r.stdout


def test_a_module_that_fails_is_a_row_and_status_1(kit, run_tool, tmp_path):
    bad = tmp_path / "kit"
    shutil.copytree(kit, bad)
    meta = json.loads((bad / "kit.json").read_text())
    meta["modules"][0]["vmfb"] = "ids.npy"  # not a module
    (bad / "kit.json").write_text(json.dumps(meta))
    r = run_tool([sys.executable, SCRIPT, "run", bad], timeout=600, quiet=QUIET)
    assert r.returncode == 1, r.stdout + r.stderr
    assert re.search(r"^\| auto \|.*\| FAILED \w+", r.stdout, re.M), r.stdout
    assert re.search(r"^\| cpu \|.*\| ok \|$", r.stdout, re.M), r.stdout
    assert "WRONG results above" in r.stdout


def test_cuda_kit_without_cuda_is_status_2(kit, run_tool, tmp_path):
    r = run_as_cuda_kit(SCRIPT, kit, "kit.json", run_tool, tmp_path)
    assert r.returncode == 2 and "no cuda device" in r.stderr, r.stdout + r.stderr
