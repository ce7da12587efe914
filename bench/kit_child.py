"""What the GPU machine's diagnostic scripts over a ``bench generate`` kit
share (bench/gpu_memory_steps.py, bench/gpu_generate_flags.py): each
module runs in a process of its own (``SCRIPT --child KIT SCRATCH NAME
FLAGS...``, its result one JSON line), with runtime flags parsed before
any device opens, and loaded with the scratch folder's f32 archive.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Callable


def child_or_help(argv: list[str], doc: str, child: Callable) -> int | None:
    """Runs ``child(kit, scratch, name, flags)`` and prints its result for
    ``--child``, prints ``doc`` for -h; returns the exit status, or None
    for any other command line."""
    if argv[:1] == ["--child"]:
        print(json.dumps(child(argv[1], argv[2], argv[3], argv[4:])))
        return 0
    if argv[:1] in (["-h"], ["--help"]):
        print(doc.strip())
        return 0
    return None


def usage(doc: str) -> int:
    line = next(line for line in doc.splitlines() if "python -m" in line)
    print(f"usage: {line.strip()}", file=sys.stderr)
    return 2


def load_module(kit: str, scratch: str, name: str, flags: list[str]):
    """``(module, prompt)``: the kit's NAME.vmfb loaded on its devices with
    SCRATCH's f32 archive (a context manager), and the prompt's ids;
    ``flags`` are parsed first."""
    import numpy as np

    import iree.runtime as rt
    from mdc.runtime_shim import load

    if flags:
        rt.flags.parse_flags(*flags)
    with open(os.path.join(kit, "kit.json")) as f:
        meta = json.load(f)
    prompt = np.load(os.path.join(scratch, "prompt.npy"))
    archive = os.path.join(scratch, f"{meta['config']}_f32.irpa")
    return load(os.path.join(kit, f"{name}.vmfb"), meta["devices"], parameters=[f"model={archive}"]), prompt


def run_child(script: str, kit: str, scratch: str, name: str, flags: list[str], timeout: int):
    """``script``'s child for one module: its result, or a line saying why not."""
    try:
        r = subprocess.run([sys.executable, "-m", script, "--child", kit, scratch, name, *flags],
                           capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return f"failed: no answer in {timeout} s"
    if r.returncode:
        return f"failed: {r.stderr.strip()[-600:]}"
    return json.loads(r.stdout.strip().splitlines()[-1])
