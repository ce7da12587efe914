"""The tools under test, and the limits every case's output must keep to."""

from __future__ import annotations

import os
import shutil
import sys

BIN = os.path.dirname(sys.executable)
TIMEOUT = 60.0
MAX_LINES = 25
MAX_CHARS = 4000
TOOLS = ("mdc-compile", "mdc-opt", "mdc-run")


def tool(name: str) -> str:
    path = os.path.join(BIN, name)
    return path if os.path.exists(path) else (shutil.which(name) or name)
