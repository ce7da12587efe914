"""Where the harness finds the checkout: its root, test/e2e's programs, and
the scripts run as ``python test/e2e/NAME.py`` (a harness module that runs
a part of itself in a child process runs it through its script)."""

from __future__ import annotations

import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
E2E = os.path.join(ROOT, "test", "e2e")
PROGRAMS = os.path.join(E2E, "programs")
EXAMPLES = os.path.join(ROOT, "examples")


def script(name: str) -> str:
    """The path of test/e2e/NAME.py, the script that runs harness module NAME."""
    return os.path.join(E2E, f"{name}.py")
