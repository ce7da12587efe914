"""Public results declared on no device (no ``iree.abi.affinity``) that end
on a GPU: a constant moved there, a value computed there, mdc's placement,
two results on two devices, a coarse-fences function (issue 32).

mdc-run and ``load`` must bring each back to the host: mdc-compile records
where such a result lives in the manifest (``result_devices``) and gives
the function a host twin where host-entry-points gave it none. Each is run
through ``load`` and through mdc-run, on a staged CPU pair and on local +
Vulkan (lavapipe) with each device in turn the Vulkan one, and compared
with numpy; on the CPU pair (in-process) each result is also left on its
device and must be on the one it lives on. Without the fix, the Vulkan runs fail with "PERMISSION_DENIED;
buffer has DEVICE_LOCAL, operation requires HOST_VISIBLE".
"""

from __future__ import annotations

import os

import numpy as np
import pytest

from conftest import REPO

PROGRAMS = REPO / "test" / "e2e" / "programs"
SYNC = (PROGRAMS / "undeclared_results.mlir").read_text()
ASYNC = (PROGRAMS / "undeclared_result_async.mlir").read_text()

X = np.array([1.5, -2.0, 3.0, 0.25], dtype=np.float32)
B = np.linspace(-3, 3, 16, dtype=np.float32)

# function -> (inputs, expected results), by numpy
CALLS = {
    "constant_on_b": ((), (np.array([1.5, -2.0, 3.25, 4.0], dtype=np.float32),)),
    "square_on_b": ((X,), (X * X,)),
    "two_devices": ((X,), (X * X, X + X)),
    "placed_on_b": ((X, B), (np.tile(X, 4) * B,)),
    "declared_on_b": ((X,), (X * X,)),
}
ASYNC_CALLS = {"async_square_on_b": ((X,), (X * X,))}

# (program, its calls, --iree-execution-model=async-external: every
# public function coarse-fences)
PROGRAMS_RUN = [(SYNC, CALLS, False), (ASYNC, ASYNC_CALLS, False), (SYNC, CALLS, True)]


STAGED_PAIR = (("a=local[0]", "b=local[1]"), ("a:b=staged",), ["local-task", "local-sync"])
VULKAN_B = (("a=local[0]", "b=vulkan[0]"), (), ["local-task", "vulkan"])
VULKAN_A = (("a=vulkan[0]", "b=local[0]"), (), ["vulkan", "local-task"])


def _check(got, want) -> None:
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(np.asarray(g), w)


# function -> the declared device each result lives on
RESULT_DEVICES = {"constant_on_b": ("device_b",), "square_on_b": ("device_b",),
                  "two_devices": ("device_b", "device_a"), "placed_on_b": ("device_b",),
                  "declared_on_b": ("device_b",), "async_square_on_b": ("device_b",)}


def _via_load(vmfb, uris, calls, resident: bool = False) -> None:
    """Each call through ``load``; ``resident``: also left on the devices
    (call_on_devices, the in-process runtime only), each result on the
    runtime device its declared device is bound to."""
    from mdc.runtime_shim import load

    with load(str(vmfb), uris) as m:
        for name, (inputs, want) in calls.items():
            got = m[name](*inputs)
            _check(got if isinstance(got, tuple) else (got,), want)
            if resident:
                values = m[name].call_on_devices(*inputs)
                assert [v.device for v in values] == [uris[m.binding[d]] for d in RESULT_DEVICES[name]]
                _check([v.to_host() for v in values], want)


def _via_mdc_run(mdc_run, tmp_path, vmfb, uris, calls) -> None:
    for name, (inputs, want) in calls.items():
        flags = []
        for i, x in enumerate(inputs):
            np.save(tmp_path / f"{name}_in{i}.npy", x)
            flags.append(f"--input=@{tmp_path / f'{name}_in{i}.npy'}")
        outs = [tmp_path / f"{name}_out{j}.npy" for j in range(len(want))]
        r = mdc_run(f"--module={vmfb}", f"--function={name}", *(f"--device={u}" for u in uris), *flags,
                    *(f"--output=@{o}" for o in outs))
        assert r.returncode == 0, r.stderr
        _check([np.load(o) for o in outs], want)


@pytest.mark.parametrize("runner", ["load", "mdc-run"])
def test_staged_cpu_pair(build_vmfb, mdc_run, tmp_path, runner):
    devices, links, uris = STAGED_PAIR
    for mlir, calls, async_external in PROGRAMS_RUN:
        vmfb = build_vmfb("undeclared_results", mlir, devices, links=links, async_external=async_external)
        if runner == "load":
            _via_load(vmfb, uris, calls, resident=True)
        else:
            _via_mdc_run(mdc_run, tmp_path, vmfb, uris, calls)


@pytest.mark.vulkan
@pytest.mark.parametrize("layout", [VULKAN_B, VULKAN_A], ids=["b_on_vulkan", "a_on_vulkan"])
@pytest.mark.parametrize("runner", ["load", "mdc-run"])
def test_local_and_vulkan(build_vmfb, mdc_run, tmp_path, layout, runner):
    devices, links, uris = layout
    for mlir, calls, async_external in PROGRAMS_RUN:
        vmfb = build_vmfb("undeclared_results", mlir, devices, links=links, async_external=async_external)
        if runner == "load":
            _via_load(vmfb, uris, calls)
        else:
            _via_mdc_run(mdc_run, tmp_path, vmfb, uris, calls)
