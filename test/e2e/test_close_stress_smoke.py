"""close_stress.py (issue 47: a module's close hung in the runtime's
release of a device) built here and run briefly: a few hundred load, call,
check and close cycles in fresh processes on the staged CPU pair of the
hang (local-task + local-sync) and on local-task + lavapipe, none of
which may hang or fail; and its verdicts: a cycle over ``--hang`` seconds
is a hang with the child's stacks, a broken module a failure, both status
1, and a cuda case without cuda status 2. About 40 s here on 2 cores."""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parent / "close_stress.py"
QUIET = 90  # seconds of silence that mean the script itself hung
ROW = re.compile(r"^\| ([^|]+) \| (\d+) \| (\d+) \| (\d+) \| (\d+) \| ([\d.]+) \|$", re.M)


def rows(out: str) -> dict:
    return {m[0]: tuple(int(v) for v in m[1:5]) for m in ROW.findall(out)}


@pytest.fixture(scope="module")
def kit(tmp_path_factory, run_tool) -> Path:
    path = tmp_path_factory.mktemp("close_kit")
    r = run_tool([sys.executable, SCRIPT, "build", path], timeout=600, quiet=QUIET)
    assert r.returncode == 0, r.stdout + r.stderr
    return path


def test_no_hang_on_the_staged_cpu_pair(kit, run_tool):
    r = run_tool([sys.executable, SCRIPT, "run", kit, "--device", "local-task", "--device", "local-sync",
                  "--processes", "4", "--loads", "60", "--hang", "20"], timeout=300, quiet=QUIET)
    assert r.returncode == 0, r.stdout + r.stderr
    assert rows(r.stdout) == {"local-task + local-sync": (4, 0, 0, 240)}, r.stdout


@pytest.mark.vulkan
def test_no_hang_on_local_and_lavapipe(kit, run_tool):
    r = run_tool([sys.executable, SCRIPT, "run", kit, "--device", "local-task", "--device", "vulkan",
                  "--processes", "2", "--loads", "50", "--hang", "20"], timeout=300, quiet=QUIET)
    assert r.returncode == 0, r.stdout + r.stderr
    assert rows(r.stdout) == {"local-task + vulkan": (2, 0, 0, 100)}, r.stdout


def test_a_cycle_over_the_bound_is_a_hang_with_its_stacks(kit, run_tool):
    r = run_tool([sys.executable, SCRIPT, "run", kit, "--device", "local-task", "--device", "local-task",
                  "--processes", "2", "--loads", "50", "--hang", "0.001"], timeout=300, quiet=QUIET)
    assert r.returncode == 1, r.stdout + r.stderr
    # A cycle (a load, two calls, a close) takes milliseconds: one of 50 passes 1 ms.
    runs, hangs, failures, cycles = rows(r.stdout)["local-task + local-task"]
    assert (runs, hangs, failures) == (2, 2, 0) and cycles < 100, r.stdout
    assert "local-task + local-task: HANG" in r.stdout and "close_stress.py" in r.stdout, r.stdout
    assert "HANGS OR FAILURES above" in r.stdout


def test_a_module_that_does_not_load_is_a_failure(kit, run_tool, tmp_path):
    bad = tmp_path / "kit"
    shutil.copytree(kit, bad)
    (bad / "pair_local_async.vmfb").write_bytes(b"not a module")
    r = run_tool([sys.executable, SCRIPT, "run", bad, "--device", "local-task", "--device", "local-sync",
                  "--processes", "1", "--loads", "4"], timeout=300, quiet=QUIET)
    assert r.returncode == 1, r.stdout + r.stderr
    assert rows(r.stdout) == {"local-task + local-sync": (1, 0, 1, 1)}, r.stdout
    assert "FAILED cycles=1" in r.stdout, r.stdout


def test_cuda_without_cuda_is_status_2(kit, run_tool):
    r = run_tool([sys.executable, SCRIPT, "run", kit, "--device", "local-task", "--device", "cuda",
                  "--processes", "1", "--loads", "1"], timeout=120, quiet=QUIET)
    if "skipped" not in r.stdout:
        pytest.skip("a cuda device is here")
    assert r.returncode == 2 and "nothing was run" in r.stderr, r.stdout + r.stderr
