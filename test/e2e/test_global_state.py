"""State kept in a mutable global and used on two devices
(programs/state_on_two_devices.mlir): the sum is computed and stored on
device_b and read on device_a, so every store and read of it crosses.

What must hold: on a staged pair of CPUs, calls one after another keep
the state, each result equal to numpy's running sum, in both execution
models; on local + Vulkan (memory of its own) the module compiles, the
verifier accepts it, and one call that accumulates twice returns numpy's
numbers (the runner there makes one call a process, so the state does not
outlive a call); for cuda it compiles.
"""

from __future__ import annotations

import os
import subprocess

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAM = os.path.join(HERE, "programs", "state_on_two_devices.mlir")
XS = [np.array([1.0, -2.0, 3.5, 0.25], np.float32), np.array([10.0, 20.0, -30.0, 0.5], np.float32),
      np.array([-0.125, 4.0, 4.0, -8.0], np.float32)]


def _compile(out, *devices_and_flags) -> str:
    r = subprocess.run(["mdc-compile", PROGRAM, "--device=a=local[0]", *devices_and_flags, "-o", str(out)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return str(out)


@pytest.mark.parametrize("model", ["async-internal", "async-external"])
def test_state_kept_across_calls_on_a_staged_pair(model, tmp_path):
    from mdc.runtime_shim import load

    vmfb = _compile(tmp_path / "state.vmfb", "--device=b=local[1]", "--link=a:b=staged",
                    f"--iree-execution-model={model}")
    with load(vmfb, ["local-task", "local-sync"]) as m:
        np.testing.assert_array_equal(m.current(), np.zeros(4, np.float32))
        total = np.zeros(4, np.float32)
        for x in XS:
            before, after = m.accumulate(x)
            np.testing.assert_array_equal(before, total)
            total = total + x
            np.testing.assert_array_equal(after, total)
            np.testing.assert_array_equal(m.current(), total)
        np.testing.assert_array_equal(m.accumulate_twice(XS[0]), total + XS[0] + XS[0])


@pytest.mark.vulkan
def test_state_on_vulkan_beside_a_cpu(tmp_path):
    from mdc.runtime_shim import load

    vmfb = _compile(tmp_path / "state.vmfb", "--device=b=vulkan[0]")
    with load(vmfb, ["local-task", "vulkan"]) as m:
        np.testing.assert_array_equal(m.accumulate_twice(XS[1]), XS[1] + XS[1])
        before, after = m.accumulate(XS[2])
        np.testing.assert_array_equal(before, np.zeros(4, np.float32))
        np.testing.assert_array_equal(after, XS[2])


def test_state_compiles_for_cuda(tmp_path):
    assert os.path.getsize(_compile(tmp_path / "state.vmfb", "--device=b=cuda[0]")) > 0
