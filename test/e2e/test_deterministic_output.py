"""A compile gives the same vmfb every time.

Stock IREE names and places the globals of its memoized device selections
(``__allocator_select_device``, ``..._0``) in an order that changes from one
MLIR context to the next: its pass visits them in the order of a hash map
keyed by attribute addresses (the canary below). mdc's
memoized-selects-in-order pass fixes the order (program order). The program
here has two distinct selects (two local CPUs that a constant and an
argument are both placed on); before the pass, compiles of it in one
process gave one of two vmfbs, about half the time each, and separate
processes gave the rarer one about one time in four. Each compile makes a
fresh context, so ten of them meet both orders where mdc fixes none.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys

from mdc.pipeline import compile
from mdc.pipeline.driver import iree_flags_for
from mdc.pipeline.ireec import Compiler, module_text

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAM = os.path.join(HERE, "programs", "external", "constant_on_two_devices.mlir")
DEVICES = {"dev_a": "local[0]", "dev_b": "local[1]", "dev_c": "vulkan[0]"}
CPU = ["--iree-llvmcpu-target-cpu=generic"]
COMPILES = 10
# The canary stops at the second order it sees; with each order coming
# about a third of the time or more, 24 tries all alike are rarer than 1 in 10^4.
STOCK_TRIES = 24


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def test_one_vmfb_over_many_compiles():
    digests = {_digest(compile(PROGRAM, DEVICES, iree_flags=CPU).vmfb) for _ in range(COMPILES)}
    assert len(digests) == 1, f"{COMPILES} compiles gave {len(digests)} different vmfbs: {sorted(digests)}"


def test_same_vmfb_in_another_process(tmp_path):
    """A new process (other addresses) gives the vmfb this one does."""
    out = tmp_path / "other.vmfb"
    devices = [f"--device={name}={spec}" for name, spec in DEVICES.items()]
    subprocess.run([sys.executable, "-m", "mdc.pipeline", PROGRAM, "-o", str(out), *devices, *CPU],
                   check=True, capture_output=True)
    assert _digest(out.read_bytes()) == _digest(compile(PROGRAM, DEVICES, iree_flags=CPU).vmfb)


def test_canary_stock_iree_memoizes_selects_in_varying_order():
    """Stock IREE's phases from stream to hal, on one and the same stream
    IR, name the memoized selects differently in different contexts. When
    this fails (one order in every try), IREE visits them in a fixed order
    and memoized-selects-in-order can go."""
    stream = compile(PROGRAM, DEVICES, iree_flags=CPU, compile_to="stream").text
    flags = iree_flags_for(PROGRAM, DEVICES, iree_flags=CPU)
    seen = set()
    for _ in range(STOCK_TRIES):
        compiler = Compiler(flags)
        hal = compiler.run_phases(compiler.parse_text(stream, "stream.mlir"), "stream", "hal")
        seen.add(_digest(module_text(hal).encode()))
        if len(seen) > 1:
            return
    raise AssertionError(f"stock IREE gave one hal module in {STOCK_TRIES} contexts: is it fixed?")
