"""Recursion: stock IREE 3.13 never finishes compiling it; mdc refuses it at once.

The canary keeps the stock reproduction: a function that calls itself until
a counter runs out (so it would end at run time), compiled by stock
``iree-compile`` for one local device. When the canary fails, stock IREE
compiles recursion again: drop ``passes/transforms/recursive_calls.py`` and this file's
mdc test, and check that mdc-compile's output for such a program runs.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from harness.processes import run_killing_group

RECURSIVE = """
func.func private @halve(%x: tensor<4xf32>, %n: i32) -> tensor<4xf32> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %done = arith.cmpi sle, %n, %c0 : i32
  %r = scf.if %done -> tensor<4xf32> {
    scf.yield %x : tensor<4xf32>
  } else {
    %m = arith.subi %n, %c1 : i32
    %h = arith.mulf %x, %x : tensor<4xf32>
    %y = func.call @halve(%h, %m) : (tensor<4xf32>, i32) -> tensor<4xf32>
    scf.yield %y : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
func.func public @main(%x: tensor<4xf32>, %n: i32) -> tensor<4xf32> {
  %y = call @halve(%x, %n) : (tensor<4xf32>, i32) -> tensor<4xf32>
  return %y : tensor<4xf32>
}
"""

# Stock iree-compile needs about a second for a program this size; twenty
# times that without an answer is a hang.
HANG_S = 20
TIMED_OUT = -999  # harness.processes.run_killing_group's return code for a timeout


def _bin(name: str) -> str:
    return str(Path(sys.executable).parent / name)


def test_canary_stock_iree_compile_hangs_on_recursion(tmp_path):
    src = tmp_path / "recursive.mlir"
    src.write_text(RECURSIVE)
    # The venv's iree-compile is a Python wrapper around the real binary: a
    # timeout must kill the whole process group, or the compiler spins on.
    done = run_killing_group(
        [_bin("iree-compile"), str(src), "--iree-hal-target-device=local",
         "--iree-hal-local-target-device-backends=llvm-cpu", "--iree-llvmcpu-target-cpu=generic",
         "-o", str(tmp_path / "r.vmfb")], HANG_S)
    assert done.returncode == TIMED_OUT, (f"stock iree-compile now ends on recursion (exit {done.returncode}): "
                                          "drop refuse-recursive-calls (see this file's docstring)")


def test_mdc_compile_refuses_recursion_at_once(tmp_path):
    src = tmp_path / "recursive.mlir"
    src.write_text(RECURSIVE)
    out = tmp_path / "r.vmfb"
    done = subprocess.run(
        [_bin("mdc-compile"), str(src), "--device=a=local[0]", "--device=b=local[1]", "-o", str(out)],
        capture_output=True, text=True, timeout=HANG_S)
    assert done.returncode == 1, done.stderr
    first = done.stderr.splitlines()[0]
    assert first.startswith(f"{src}:11:10: error: @halve calls itself"), done.stderr
    assert "Traceback" not in done.stderr
    assert not out.exists()
