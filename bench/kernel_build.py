"""Compiling many matmul functions into few timing modules, here.

One module holds many ``func.func``s, one per (point, candidate); a
function whose config iree-compile refuses is dropped (the error's line
says which) and the module compiled again, so one bad candidate costs
itself alone. Each module is compiled with every dispatch repeated R times
(``--iree-hal-benchmark-dispatch-repeat-count``), so the GPU run can take
a kernel's time as (call - empty call) / R.
"""

from __future__ import annotations

import os
import re
import subprocess

from .kernel_grid import TINY, module

CUDA = ["--iree-hal-target-device=cuda", "--iree-cuda-target=sm_80"]
_LINE = re.compile(r"\.mlir:(\d+):\d+: error: (.*)")


def _function_at(starts: list[tuple[int, str]], line: int) -> str | None:
    name = None
    for start, fn in starts:
        if start <= line:
            name = fn
    return name


def _run(cmd: list[str]):
    def run(src: str, out: str, flags: list[str], timeout: int) -> subprocess.CompletedProcess:
        return subprocess.run([*cmd, *flags, src, "-o", out], capture_output=True, text=True, timeout=timeout)
    return run


def compile_functions(functions: dict[str, str], out: str, flags: list[str], compiler: list[str] | None = None,
                      timeout: int = 1200, runner=None) -> tuple[list[str], dict[str, str]]:
    """Compiles ``functions`` (name -> text) and TINY into ``out`` with
    ``compiler`` (a command line; default iree-compile for cuda) or
    ``runner(src, out, flags, timeout)``; returns (names compiled, {name
    dropped: the compiler's first error for it})."""
    keep = dict(functions)
    dropped: dict[str, str] = {}
    src = out + ".mlir"
    run = runner or _run(compiler or ["iree-compile", *CUDA])
    while True:
        texts, starts, line = [], [], 2
        for name, text in keep.items():
            starts.append((line, name))
            texts.append(text)
            line += text.count("\n")
        with open(src, "w") as f:
            f.write(module([*texts, TINY]))
        r = run(src, out, flags, timeout)
        if r.returncode == 0:
            os.remove(src)
            return list(keep), dropped
        bad = {}
        for m in _LINE.finditer(r.stderr):
            name = _function_at(starts, int(m.group(1)))
            if name is not None and name not in bad:
                bad[name] = m.group(2)[:200]
        if not bad:
            raise RuntimeError(f"iree-compile failed on {src} and named no function:\n{r.stderr[-2000:]}")
        for name, why in bad.items():
            dropped[name] = why
            del keep[name]
