"""The exports that name no device (examples/pytorch/exported_unplaced) on a
staged CPU pair, in each order of the device names: the default device is
the name that sorts first, and the host of the host twins the first local
``--device``; the two differ where the host sorts after the accelerator
(``--device=cpu=local[0] --device=acc=local[1]``).

* Unplaced: everything is on the default device, arguments and results
  included; where the host is the other device, ``@main$host`` takes and
  returns values on it. Each module runs to torch's outputs through
  ``mdc.runtime_shim.load`` on local-task + local-sync, and the twin
  through stock iree-run-module. (mdc-compile failed on the orders whose
  host sorts last: IREE dropped the host, which the program never names,
  before the stream-level twin was built on it;
  test/lit/regress/unplaced_export_host_sorts_after_default.test.)
* Placed by ``--place=auto``, with a machine profile that makes the device
  named ``gpu`` fast: each order runs to torch's outputs through ``load``.

Tolerance: test_unplaced_exports.py's, ``rtol=1e-5, atol=1e-6``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from harness import placement
from mdc.runtime_shim import load
from mdc.runtime_shim.native import iree_run_module

REPO = Path(__file__).resolve().parents[2]
EXPORTED = REPO / "examples" / "pytorch" / "exported_unplaced"
INDEX = json.loads((EXPORTED / "index.json").read_text())
RTOL, ATOL = 1e-5, 1e-6
RUNTIME = ["local-task", "local-sync"]  # local[0], local[1]

# order: (--device values, --link, the default device, the host of the
# twins, where it is another device: else there is no twin)
ORDERS = {
    "cpu-acc": (("cpu=local[0]", "acc=local[1]"), "cpu:acc=staged", "acc", "cpu"),
    "host-gpu": (("host=local[0]", "gpu=local[1]"), "host:gpu=staged", "gpu", "host"),
    "acc-cpu": (("acc=local[1]", "cpu=local[0]"), "cpu:acc=staged", "acc", None),
    "cpu-gpu": (("cpu=local[0]", "gpu=local[1]"), "cpu:gpu=staged", "cpu", None),
}
# The placed orders: the accelerator (``gpu``, fast in the profile) sorting
# before and after the host, and given first.
PLACED_ORDERS = {
    "host-gpu": (("host=local[0]", "gpu=local[1]"), "host:gpu=staged"),
    "cpu-gpu": (("cpu=local[0]", "gpu=local[1]"), "cpu:gpu=staged"),
    "gpu-host": (("gpu=local[1]", "host=local[0]"), "host:gpu=staged"),
}
PLACED_MODELS = ["split_mlp", "embed_head"]


def _parameters(name: str) -> list[str]:
    p = INDEX[name].get("parameters")
    return [f"{p['scope']}={EXPORTED / p['file']}"] if p else []


def _inputs(name: str) -> list[np.ndarray]:
    return [np.load(EXPORTED / i["file"]) for i in INDEX[name]["inputs"]]


def _assert_matches_torch(got: np.ndarray, name: str, where: str) -> None:
    (want,) = [np.load(EXPORTED / o["file"]) for o in INDEX[name]["outputs"]]
    got = np.asarray(got)
    assert got.dtype == want.dtype and got.shape == want.shape, (where, got.dtype, got.shape)
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL, err_msg=where)


def _stock_twin(vmfb: Path, name: str, tmp_path: Path) -> np.ndarray:
    """``@main$host`` of ``vmfb`` run by stock iree-run-module, the host first."""
    out = tmp_path / "twin.npy"
    proc = subprocess.run([iree_run_module(), f"--module={vmfb}", "--function=main$host",
                           *(f"--device={d}" for d in RUNTIME), *(f"--parameters={p}" for p in _parameters(name)),
                           *(f"--input=@{EXPORTED / i['file']}" for i in INDEX[name]["inputs"]),
                           f"--output=@{out}"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, (proc.stdout, proc.stderr)
    return np.load(out)


@pytest.mark.parametrize("order", list(ORDERS))
@pytest.mark.parametrize("name", list(INDEX))
def test_unplaced_on_the_default_device(name, order, build_vmfb, tmp_path):
    devices, link, default, host = ORDERS[order]
    vmfb = build_vmfb(f"unplaced_{name}_{order}", (EXPORTED / f"{name}.mlir").read_text(), devices, links=(link,))
    with load(str(vmfb), RUNTIME, parameters=_parameters(name)) as m:
        assert (m.manifest.default, m.manifest.host) == (default, host)
        sig = m.main.signature
        assert {v.affinity for v in (*sig.args, *sig.results)} == {default}, sig
        twins = dict(m.manifest.host_entry_points)
        _assert_matches_torch(m.main(*_inputs(name)), name, f"load, {order}")
    if host is None:
        assert twins == {}, twins
        return
    assert twins == {"main": "main$host", "main$async": "main$host"}, twins
    _assert_matches_torch(_stock_twin(vmfb, name, tmp_path), name, f"stock iree-run-module, @main$host, {order}")


@pytest.fixture(scope="module")
def fast_gpu_profile(tmp_path_factory) -> Path:
    return placement.fast_gpu_profile(tmp_path_factory.mktemp("profile") / "fast_gpu.json",
                                      crossing_bytes_per_s=1e12)


@pytest.mark.parametrize("order", list(PLACED_ORDERS))
@pytest.mark.parametrize("name", PLACED_MODELS)
def test_placed_in_each_order(name, order, fast_gpu_profile, run_tool, tmp_path):
    devices, link = PLACED_ORDERS[order]
    vmfb = tmp_path / "placed.vmfb"
    r = run_tool([sys.executable, "-m", "mdc.pipeline", EXPORTED / f"{name}.mlir", *(f"--device={d}" for d in devices),
                  f"--link={link}", "--place=auto", f"--place-profile={fast_gpu_profile}",
                  "--iree-llvmcpu-target-cpu=host", "-o", vmfb], timeout=300)
    assert r.returncode == 0, r.stderr
    with load(str(vmfb), RUNTIME, parameters=_parameters(name)) as m:
        _assert_matches_torch(m.main(*_inputs(name)), name, f"load, placed, {order}")
