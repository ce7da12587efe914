"""Values declared on no device live on the module's default device, IREE's
(the device whose name sorts first: device_a of default_device.mlir,
whatever the --device order). The manifest records it and the shim places
such arguments and reads such results there (issue 32: the shim took the
first --device instead, and a local buffer reached device_a's queue), and
where it is a device the CPU cannot reach the function has a host entry
point, so mdc-run and load run it beside Vulkan (before, mdc-run refused:
"compile it again without --no-host-entry-points", a flag never given).

Each case is compared with numpy and with stock IREE on all-local devices.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

PROGRAM = Path(__file__).parent / "programs" / "default_device.mlir"
X = np.array([1.5, -2.0, 3.25, 4.0], dtype=np.float32)
EXPECTED = {"moved": X * X, "plain": X + X}
# Both --device orders: the default is device_a in each.
CPU_ORDERS = {"a-first": ("a=local[0]", "b=local[1]"), "b-first": ("b=local[0]", "a=local[1]")}
VULKAN_ORDERS = {"a-first": ("a=vulkan[0]", "b=local[0]"), "b-first": ("b=local[0]", "a=vulkan[0]")}


@pytest.fixture(scope="module")
def stock_results(build_stock_vmfb):
    """What stock IREE computes with every device local."""
    from mdc.runtime_shim import load

    vmfb = build_stock_vmfb("default_device", PROGRAM.read_text(),
                            {"device_a": "local[0]", "device_b": "local[1]"})
    with load(vmfb, ["local-task", "local-task"]) as m:
        return {f: m[f](X) for f in EXPECTED}


def _check(got, function, stock_results):
    np.testing.assert_allclose(got, EXPECTED[function], rtol=1e-6)
    np.testing.assert_array_equal(got, stock_results[function])


def _mdc_run_result(mdc_run, vmfb, devices, function, tmp_path):
    out = tmp_path / f"{function}.npy"
    r = mdc_run(f"--module={vmfb}", *[f"--device={d}" for d in devices], f"--function={function}",
                "--input=4xf32=" + ",".join(str(v) for v in X), f"--output=@{out}")
    assert r.returncode == 0, r.stderr
    return np.load(out)


@pytest.mark.parametrize("function", sorted(EXPECTED))
@pytest.mark.parametrize("order", sorted(CPU_ORDERS))
def test_default_device_on_staged_cpu_pair(build_vmfb, mdc_run, stock_results, tmp_path, order, function):
    from mdc.runtime_shim import load

    vmfb = build_vmfb("default_device", PROGRAM.read_text(), CPU_ORDERS[order], links=("a:b=staged",))
    devices = ["local-task", "local-sync"]
    _check(_mdc_run_result(mdc_run, vmfb, devices, function, tmp_path), function, stock_results)
    with load(vmfb, devices) as m:
        assert m.manifest.default_device == "device_a"
        _check(m[function](X), function, stock_results)


@pytest.mark.vulkan
@pytest.mark.parametrize("function", sorted(EXPECTED))
@pytest.mark.parametrize("order", sorted(VULKAN_ORDERS))
def test_default_device_beside_vulkan(build_vmfb, mdc_run, stock_results, tmp_path, order, function):
    """device_a, the default, on Vulkan (the GPU is the default: class 3 of
    issue 32) and device_b on the CPU, in either --device order."""
    from mdc.runtime_shim import load

    vmfb = build_vmfb("default_device_vulkan", PROGRAM.read_text(), VULKAN_ORDERS[order])
    devices = ["local-task", "vulkan"]
    _check(_mdc_run_result(mdc_run, vmfb, devices, function, tmp_path), function, stock_results)
    with load(vmfb, list(reversed(devices))) as m:
        _check(m[function](X), function, stock_results)


@pytest.mark.vulkan
def test_refusal_names_the_flag_only_when_given(run_tool, mdc_run, tmp_path):
    """Compiled with --no-host-entry-points, a function with its values on
    the Vulkan default has no twin, and mdc-run says that flag is why."""
    vmfb = tmp_path / "no_twins.vmfb"
    r = run_tool([sys.executable, "-m", "mdc.pipeline", PROGRAM, "--device=a=vulkan[0]", "--device=b=local[0]",
                  "--no-host-entry-points", "-o", vmfb])
    assert r.returncode == 0, r.stderr
    r = mdc_run(f"--module={vmfb}", "--device=local-task", "--device=vulkan", "--function=plain",
                "--input=4xf32=1,2,3,4")
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1, r.stderr
    assert "has no host entry point for it: compile it again without --no-host-entry-points" in r.stderr
