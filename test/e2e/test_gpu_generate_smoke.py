"""gpu_generate.py's build and run steps without a GPU: the kit built with
``--smoke`` (the tiny config for one local device, run on local-task), its
weights made from the seed by llama_weights.py (not the committed archive)
and its reference torch's committed greedy ids where torch is missing: the
run must find torch's ids in f32 and f16; a kit whose reference is made
wrong must be reported WRONG with status 1, and a kit for cuda on a machine
without one must be status 2."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness.cuda_kit import run_as_cuda_kit

SCRIPT = Path(__file__).resolve().parent / "gpu_generate.py"


def _script(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, SCRIPT, *map(str, args)], capture_output=True, text=True, timeout=900)


@pytest.fixture(scope="module")
def kit(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("generate_kit")
    r = _script("build", path, "--smoke")
    assert r.returncode == 0, r.stdout + r.stderr
    return path


def test_smoke_kit_finds_torchs_ids(kit):
    r = _script("run", kit)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "llama_tiny_f32: against torch over 64 ids: the same 64 ids" in r.stdout, r.stdout
    assert "llama_tiny_f16: against torch over 32 ids: the same 32 ids" in r.stdout, r.stdout
    assert r.stdout.count("tokens/s") >= 2, r.stdout


def test_a_wrong_reference_is_wrong(kit, tmp_path):
    meta = json.loads((kit / "kit.json").read_text())
    meta["prompt_tokens"] = 11  # another prompt than the committed references'
    wrong = tmp_path / "wrong"
    wrong.mkdir()
    for row in meta["modules"]:
        (wrong / row["vmfb"]).symlink_to(kit / row["vmfb"])
    (wrong / "kit.json").write_text(json.dumps(meta))
    r = _script("run", wrong)
    if "torch: torch" in r.stdout:  # torch is here: its reference follows the prompt, nothing is wrong
        pytest.skip("torch is importable here, so the reference is made for the kit's prompt")
    assert r.returncode == 1 and "WRONG" in r.stdout, r.stdout + r.stderr


def test_a_cuda_kit_without_cuda(kit, run_tool, tmp_path):
    r = run_as_cuda_kit(SCRIPT, kit, "kit.json", run_tool, tmp_path)
    assert r.returncode == 2 and "no cuda device here" in r.stderr, r.stdout + r.stderr
