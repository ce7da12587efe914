"""The check every GPU script's smoke test makes: a kit that names cuda,
run where there is none, is exit status 2 and says so."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from harness.gpu_kit import cuda_available


def run_as_cuda_kit(script: Path, kit: Path, index: str, run_tool, tmp_path: Path):
    """``script run`` on a copy of ``kit`` whose ``index`` (its JSON file
    with a ``devices`` list) names local-task and cuda; skipped where a cuda
    device is here."""
    if cuda_available():
        pytest.skip("a cuda device is here")
    bad = tmp_path / "kit"
    shutil.copytree(kit, bad)
    meta = json.loads((bad / index).read_text())
    meta["devices"] = ["local-task", "cuda"]
    (bad / index).write_text(json.dumps(meta))
    return run_tool([sys.executable, script, "run", bad], timeout=300)
