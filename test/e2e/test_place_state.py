"""--place=auto with program state (issue 46): a toy decoder of two layers
whose K caches are mutable globals, shared by a prefill and a decode
function (test/lit/assign/Inputs/toy_decoder.mlir), placed under a budget
that puts layer 0 and its cache on the accelerator and layer 1's cache on
the host (test/lit/assign/state.test checks that placement).

On a staged CPU pair, a prefill then decodes at the following positions,
through mdc.runtime_shim.load, equal numpy's running reference: the caches
survive from call to call on their devices. On local + Vulkan (lavapipe)
the runner makes one call a process (test_global_state.py), so the state
does not outlive a call: each function, called on the caches' initial
state, equals numpy's.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

INPUTS = Path(__file__).resolve().parents[1] / "lit" / "assign" / "Inputs"
PROGRAM = INPUTS / "toy_decoder.mlir"
PROFILE = INPUTS / "fast_gpu_slow_link_profile.json"
# Layer 0's weight and cache fit beside the calls' working memory, layer 1's do not.
BUDGET = 600
PROMPT = 2
W = [np.array([[0.5, -0.25, 0.125, 0.0], [0.25, 0.5, -0.5, 0.125], [-0.125, 0.25, 0.5, 0.25],
               [0.0, -0.5, 0.25, 0.5]], np.float32),
     np.array([[0.25, 0.5, -0.125, 0.5], [-0.5, 0.25, 0.0, 0.25], [0.125, -0.25, 0.5, 0.0],
               [0.5, 0.125, 0.25, -0.25]], np.float32)]
CPU_PAIR = (("--device=cpu=local[0]", "--device=gpu=local[1]", "--link=cpu:gpu=staged"), ["local-task", "local-sync"])
VULKAN_PAIR = (("--device=cpu=local[0]", "--device=gpu=vulkan[0]"), ["local-task", "vulkan"])


class Decoder:
    """numpy's toy decoder: the caches and the two functions (the program's
    header says what they compute)."""

    def __init__(self):
        self.k = [np.zeros((1, 8, 4), np.float32) for _ in W]

    def prefill(self, x: np.ndarray) -> np.ndarray:
        for k, w in zip(self.k, W):
            h = x @ w
            k[0, :h.shape[1]] = h[0]
            x = np.tanh(h + k.sum(axis=1)[:, None, :])
        return x

    def decode(self, x: np.ndarray, pos: int) -> np.ndarray:
        for k, w in zip(self.k, W):
            h = x @ w
            k[0, pos] = h[0, 0]
            x = np.tanh(h + k[:, :pos + 1].sum(axis=1)[:, None, :])
        return x


def check_prefill_then_decodes(m, rng) -> None:
    """A prefill of PROMPT positions, then a decode at each later position
    of the cache, on the loaded toy decoder ``m``: each result numpy's."""
    want = Decoder()
    x = rng.standard_normal((1, PROMPT, 4)).astype(np.float32)
    np.testing.assert_allclose(m.prefill(x), want.prefill(x), rtol=1e-5, atol=1e-6)
    for pos in range(PROMPT, 8):
        x = rng.standard_normal((1, 1, 4)).astype(np.float32)
        got = m.decode(x, np.array([pos], np.int64))
        np.testing.assert_allclose(got, want.decode(x, pos), rtol=1e-5, atol=1e-6, err_msg=f"decode at {pos}")


def _compile(tmp_path: Path, devices) -> Path:
    out = tmp_path / "toy.vmfb"
    r = subprocess.run([sys.executable, "-m", "mdc.pipeline", str(PROGRAM), "-o", str(out), *devices,
                        "--place=auto", f"--place-profile={PROFILE}", f"--gpu-memory={BUDGET}",
                        f"--max-dim=arg0.d1={PROMPT}"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    # The split the test is about: some work on each device.
    assert "units on gpu" in r.stderr and "all 14 units" not in r.stderr, r.stderr
    return out


def test_prefill_then_decodes_keep_the_caches_across_calls(tmp_path):
    from mdc.runtime_shim import load

    rng = np.random.default_rng(46)
    with load(str(_compile(tmp_path, CPU_PAIR[0])), CPU_PAIR[1]) as m:
        check_prefill_then_decodes(m, rng)


@pytest.mark.vulkan
def test_each_function_on_lavapipe_equals_numpy_from_the_initial_caches(tmp_path):
    from mdc.runtime_shim import load

    rng = np.random.default_rng(47)
    vmfb = str(_compile(tmp_path, VULKAN_PAIR[0]))
    x = rng.standard_normal((1, PROMPT, 4)).astype(np.float32)
    with load(vmfb, VULKAN_PAIR[1]) as m:
        np.testing.assert_allclose(m.prefill(x), Decoder().prefill(x), rtol=1e-5, atol=1e-6)
    x = rng.standard_normal((1, 1, 4)).astype(np.float32)
    with load(vmfb, VULKAN_PAIR[1]) as m:
        got = m.decode(x, np.array([3], np.int64))
    np.testing.assert_allclose(got, Decoder().decode(x, 3), rtol=1e-5, atol=1e-6)
