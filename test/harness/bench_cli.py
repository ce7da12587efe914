"""``python -m bench`` as the bench smoke tests call it, and the one check
they all make first: a run given a folder with no kit says so in one line,
naming the command that builds it, with no traceback."""

from __future__ import annotations

import re
import subprocess
import sys

from .paths import ROOT


def bench(*args: str, timeout: float = 600, env: dict | None = None) -> subprocess.CompletedProcess:
    """``python -m bench ARGS`` from the repository root, captured."""
    return subprocess.run([sys.executable, "-m", "bench", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout, env=env)


def assert_refuses_missing_kit(command: str, kit_file: str, folder: str, *extra: str) -> None:
    """``bench COMMAND run FOLDER`` (a folder with no kit) exits 1 with one
    line: KIT_FILE is missing, and ``bench COMMAND build`` makes it."""
    r = bench(command, "run", folder, *extra)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stdout + r.stderr
    assert re.fullmatch(rf"bench: error: \S+{re.escape(kit_file)}: No such file or directory; build the kit with "
                        rf"python -m bench {command} build \S+\n", r.stderr), r.stderr
