"""State kept in mutable globals and used on two devices.

programs/state_on_two_devices.mlir: a sum computed and stored on device_b
and read on device_a, so every store and read of it crosses. What must
hold: on a staged pair of CPUs, calls one after another keep the state,
each result equal to numpy's running sum, in both execution models; on
local + Vulkan (memory of its own) the module compiles, the verifier
accepts it, and one call that accumulates twice returns numpy's numbers
(the runner there makes one call a process, so the state does not outlive
a call); for cuda it compiles.

programs/globals_across_devices.mlir: globals kept on each device and used
on the other, one carried through a loop. A sequence of calls on the
staged pair gives stock IREE's results on all-local devices, call by call;
on Vulkan each call, made on fresh state, gives stock's first call.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from conftest import compile_mlir, compile_mlir_with_stock_iree

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAM = os.path.join(HERE, "programs", "state_on_two_devices.mlir")
XS = [np.array([1.0, -2.0, 3.5, 0.25], np.float32), np.array([10.0, 20.0, -30.0, 0.5], np.float32),
      np.array([-0.125, 4.0, 4.0, -8.0], np.float32)]


ACROSS = os.path.join(HERE, "programs", "globals_across_devices.mlir")


def _compile(out, device_b: str, model: str = "async-internal", program: str = PROGRAM) -> str:
    """mdc-compile (conftest.compile_mlir) with device_a on the CPU and
    ``device_b`` as given; a second CPU device is staged as a GPU would be."""
    compile_mlir(Path(program), out, ("a=local[0]", f"b={device_b}"),
                 links=("a:b=staged",) if device_b.startswith("local") else (),
                 async_external=model == "async-external")
    return str(out)


@pytest.mark.parametrize("model", ["async-internal", "async-external"])
def test_state_kept_across_calls_on_a_staged_pair(model, tmp_path):
    from mdc.runtime_shim import load

    vmfb = _compile(tmp_path / "state.vmfb", "local[1]", model)
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

    vmfb = _compile(tmp_path / "state.vmfb", "vulkan[0]")
    with load(vmfb, ["local-task", "vulkan"]) as m:
        np.testing.assert_array_equal(m.accumulate_twice(XS[1]), XS[1] + XS[1])
        before, after = m.accumulate(XS[2])
        np.testing.assert_array_equal(before, np.zeros(4, np.float32))
        np.testing.assert_array_equal(after, XS[2])


def test_state_compiles_for_cuda(tmp_path):
    assert os.path.getsize(_compile(tmp_path / "state.vmfb", "cuda[0]")) > 0


def _calls():
    """(function, arguments) of globals_across_devices.mlir, in order."""
    x4 = [np.array([1.5, -2.0, 0.5, 3.0], np.float32), np.array([2.0, 0.25, -1.0, 4.0], np.float32)]
    x8 = np.linspace(-1, 2, 8, dtype=np.float32)
    return [("read_both", ()), ("write_a", (x4[0],)), ("run", (x8, 3)), ("read_both", ()),
            ("write_a", (x4[1],)), ("run", (x8, 0)), ("run", (-x8, 2)), ("read_both", ())]


def _results(module, calls) -> list[list[np.ndarray]]:
    out = []
    for name, args in calls:
        got = module.function(name)(*args)
        out.append([np.asarray(r) for r in (got if isinstance(got, tuple) else (got,))])
    return out


def _stock_all_local(tmp_path, model: str) -> str:
    ref = tmp_path / "stock.vmfb"
    compile_mlir_with_stock_iree(Path(ACROSS), ref, {"device_a": "local[0]", "device_b": "local[1]"},
                                 async_external=model == "async-external")
    return str(ref)


@pytest.mark.parametrize("model", ["async-internal", "async-external"])
def test_globals_across_devices_match_stock_all_local(model, tmp_path):
    from mdc.runtime_shim import load

    vmfb = _compile(tmp_path / "across.vmfb", "local[1]", model, program=ACROSS)
    with load(_stock_all_local(tmp_path, model), ["local-task", "local-task"]) as stock:
        want = _results(stock, _calls())
    with load(vmfb, ["local-task", "local-sync"]) as m:
        got = _results(m, _calls())
    for (name, _), g, w in zip(_calls(), got, want):
        assert len(g) == len(w), name
        for a, b in zip(g, w):
            np.testing.assert_array_equal(a, b, err_msg=name)


@pytest.mark.vulkan
def test_globals_across_devices_on_vulkan(tmp_path):
    """Each call a run of its own on fresh state: stock's first call of
    each function, on all-local devices."""
    from mdc.runtime_shim import load

    vmfb = _compile(tmp_path / "across.vmfb", "vulkan[0]", program=ACROSS)
    calls = [c for c in _calls() if c[0] != "read_both"][:2] + [("read_both", ())]
    ref = _stock_all_local(tmp_path, "async-internal")
    for call in calls:
        with load(ref, ["local-task", "local-task"]) as stock:
            (want,) = _results(stock, [call])
        with load(vmfb, ["local-task", "vulkan"]) as m:
            (got,) = _results(m, [call])
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a, b, err_msg=call[0])
