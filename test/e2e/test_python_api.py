"""The Python API as IREE and numpy users expect it (issue 18): device
strings, real signatures and docstrings, keyword arguments, close(),
builtin exception types, values-only calls and iree.runtime's names; for
the in-process Module and for the iree-run-module-backed NativeModule
(Vulkan beside a CPU). Also mdc-run's messages for the issue's
command-line mistakes. Numerics are compared with numpy, or with stock
iree.runtime on the same vmfb."""

from __future__ import annotations

import inspect
import os
import shutil

import numpy as np
import pytest

import iree.runtime as rt
from mdc import runtime_shim
from mdc.runtime_shim import (DeviceValue, NativeModule, ShimError, ShimTypeError, load,
                              load_vm_flatbuffer_file, movers)
from conftest import CPU_FLAGS
from test_runtime_shim import (ONE_LOCAL, STAGED_LINK, TWO_LOCAL, TYPES, TYPES_FLAGS, assert_user_error,
                               seed_program)

# A tensor on device_a and a scalar in, the product on device_b out.
MUL = """
func.func public @mul(%x: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}, %s: f32) -> (tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>}) {
  %0 = flow.tensor.transfer %x : tensor<4xf32> to #hal.device.promise<@device_b>
  %e = tensor.empty() : tensor<4xf32>
  %f = linalg.fill ins(%s : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %1 = arith.mulf %0, %f : tensor<4xf32>
  return %1 : tensor<4xf32>
}
"""


@pytest.fixture(scope="module")
def mul(build_vmfb):
    return build_vmfb("mul", MUL, TWO_LOCAL, links=STAGED_LINK)


@pytest.fixture(scope="module")
def types(build_vmfb):
    return build_vmfb("types", TYPES, ONE_LOCAL, flags=TYPES_FLAGS)


@pytest.fixture(scope="module")
def seed(build_vmfb):
    return build_vmfb("seed", seed_program(), TWO_LOCAL, links=STAGED_LINK)


X = np.array([1.5, -2, 3, 40], np.float32)


# -- devices ------------------------------------------------------------------


def test_one_device_as_a_string(types):
    for devices in ("local-task", ["local-task"]):
        with load(types, devices) as m:
            assert m.uris == ["local-task"]
            np.testing.assert_array_equal(m.f64(np.float64([1, 2.5, -3, 0.1])), 2 * np.float64([1, 2.5, -3, 0.1]))
    with load(types, devices="local-sync") as m:
        assert m.uris == ["local-sync"]


def test_device_errors_in_python_words(seed, types):
    """Python errors name Python arguments, never mdc-run's flags."""
    cases = [("local-task", "wrong device count"), ([], "no devices given"),
             (["local_task", "local-task"], "unknown driver 'local_task'")]
    for devices, needle in cases:
        with pytest.raises(ShimError, match=needle) as e:
            load(seed, devices)
        assert "--device" not in str(e.value)
    with pytest.raises(ShimError, match="devices="):
        load(seed, [])
    for bad in (3, [3], None):
        with pytest.raises(TypeError, match="devices must be"):
            load(types, bad)


# -- signatures, docstrings, keywords, dir ------------------------------------


def test_signature_and_docstring_from_the_reflection(mul):
    with load(mul, ["local-task", "local-sync"]) as m:
        f = m.mul
        sig = inspect.signature(f)
        assert list(sig.parameters) == ["input0", "input1"]
        assert all(p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD for p in sig.parameters.values())
        assert [p.annotation for p in sig.parameters.values()] == ["tensor<4xf32>", "f32"]
        assert sig.return_annotation == "tensor<4xf32>"
        doc = f.__doc__
        assert doc.startswith("mul(input0, input1): @mul of ")
        assert "input0: tensor<4xf32>: numpy float32 array of shape (4,), on device_a (local[0], " \
               "runtime device local-task)" in doc
        assert "input1: f32: a Python float" in doc
        assert "on device_b (local[1], runtime device local-sync)" in doc
        assert inspect.getdoc(f) == doc
        assert "mul" in dir(m) and "function_names" in dir(m)


def test_keyword_arguments(mul, types):
    with load(mul, ["local-task", "local-sync"]) as m:
        np.testing.assert_array_equal(m.mul(X, 2.0), X * np.float32(2))
        np.testing.assert_array_equal(m.mul(X, input1=3.0), X * np.float32(3))
        np.testing.assert_array_equal(m.mul(input1=0.5, input0=X), X * np.float32(0.5))
        for args, kwargs in [((X,), {}), ((X, 1.0, 2.0), {}), ((X,), {"s": 1.0}),
                             ((X, 1.0), {"input0": X})]:
            with pytest.raises(TypeError, match="@mul takes 2 input"):
                m.mul(*args, **kwargs)
        with pytest.raises(TypeError, match="unexpected keyword argument 's'"):
            m.mul(X, s=1.0)
    with load(types, "local-task") as m:
        assert m.scalars(3, 2.5, input2=7, input4=0.1, input3=-9) == (3, 2.5, 7, -9, 0.1)
        d = np.arange(6, dtype=np.float32).reshape(2, 3)
        assert "numpy float32 array of shape (?,)" in m.dyn.__doc__
        np.testing.assert_array_equal(m.f32(input0=d), d + d)


def test_same_results_as_stock_iree_runtime(types):
    """load_vm_flatbuffer_file, iree.runtime's name, with its driver=
    keyword, against iree.runtime's own on the same vmfb."""
    x = np.random.default_rng(7).standard_normal((2, 3)).astype(np.float32)
    stock = rt.load_vm_flatbuffer_file(str(types), driver="local-task")
    want = stock.f32(x).to_host()
    with load_vm_flatbuffer_file(str(types), driver="local-task") as m:
        np.testing.assert_array_equal(m.f32(x), want)
        np.testing.assert_array_equal(m.f32(x), x + x)
    with load_vm_flatbuffer_file(str(types), devices=["local-sync"]) as m:
        np.testing.assert_array_equal(m.f32(x), want)
    with pytest.raises(TypeError, match="one of driver= or devices="):
        load_vm_flatbuffer_file(str(types))


# -- call returns values ----------------------------------------------------


def test_call_returns_values_only(types):
    with load(types, "local-task") as m:
        x = np.float32([1.5, -2.5, 3, 4])
        one = m.f32.call(np.ones((2, 3), np.float32))
        assert isinstance(one, tuple) and len(one) == 1
        np.testing.assert_array_equal(one[0], np.full((2, 3), 2, np.float32))
        f, i = m.two.call(x)
        np.testing.assert_array_equal(f, x + x)
        np.testing.assert_array_equal(i, x.astype(np.int32))
        assert m.scalars.call(3, 2.5, 7, -9, 0.1) == (3, 2.5, 7, -9, 0.1)
        assert all(isinstance(v, (np.ndarray, np.generic)) for v in m.two.call(x) + m.scalars.call(1, 2, 3, 4, 5))


# -- exception types -----------------------------------------------------------


def test_errors_are_builtin_types(seed):
    assert issubclass(ShimError, ValueError) and issubclass(ShimTypeError, ShimError)
    assert issubclass(ShimTypeError, TypeError)
    with load(seed, ["local-task", "local-sync"]) as m:
        with pytest.raises(ValueError, match="dtype mismatch"):
            m.multi_device_mul(np.zeros(4, np.float64))
        with pytest.raises(ValueError, match="shape mismatch"):
            m.multi_device_mul(np.zeros(5, np.float32))
        with pytest.raises(TypeError, match="takes 1 input"):
            m.multi_device_mul()
        with pytest.raises(ValueError, match="unknown function"):
            m["nope"]
    with pytest.raises(ValueError, match="module file not found"):
        load("/nonexistent/x.vmfb", "local-task")


# -- close -----------------------------------------------------------------


def test_close(seed):
    m = load(seed, ["local-task", "local-sync"])
    f = m.multi_device_mul
    placed = f.place(0, X)
    assert placed.array is not None and not placed.released
    np.testing.assert_array_equal(f(placed), X * np.float32([0, 1, 2, 3]) * np.float32([4, 5, 6, 7]))
    assert not m.closed and "closed" not in repr(m)
    # Each public class names itself by its import path, mdc.runtime_shim.
    assert repr(m).startswith(f"<mdc.runtime_shim.Module {seed} on ['local-task', 'local-sync']"), repr(m)
    assert repr(f).startswith("<mdc.runtime_shim.Function "), repr(f)
    assert repr(placed).startswith("<mdc.runtime_shim.Placed input 0 of @multi_device_mul"), repr(placed)
    m.close()
    assert m.closed and repr(m).endswith(", closed>")
    for call in (lambda: m.multi_device_mul(X), lambda: m.function("multi_device_mul"),
                 lambda: m["multi_device_mul"], lambda: f(X), lambda: f.call(X), lambda: f.place(0, X),
                 lambda: placed.array, lambda: f(placed)):
        with pytest.raises(ShimError, match="closed"):
            call()
    assert placed.released and "released" in repr(placed)
    m.close()  # twice is fine
    assert "multi_device_mul" in m.function_names


# -- devices, results left on their devices, pinned arguments (for timing) -----


PROGRAMS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "programs")


def test_module_devices_in_the_order_of_uris(mul):
    """Module.devices: the opened HAL devices, one per runtime device in the
    order given: an input placed on device_a (staged, so a buffer of the
    device's own) is allocated on devices[0] and nowhere else."""
    with load(mul, ["local-task", "local-sync"], staged_transfers=True) as m:
        assert len(m.devices) == 2 and all(isinstance(d, rt.HalDevice) for d in m.devices)
        before = [d.allocator.statistics["device_bytes_allocated"] for d in m.devices]
        placed = m.mul.place(0, X)
        grew = [d.allocator.statistics["device_bytes_allocated"] - b for d, b in zip(m.devices, before)]
        assert grew[0] >= X.nbytes and grew[1] == 0, grew
        np.testing.assert_array_equal(m.mul(placed, 2.0), X * np.float32(2))
    with pytest.raises(ShimError, match="closed"):
        m.devices


def test_call_on_devices_leaves_results_unconverted(mul, monkeypatch):
    """call_on_devices: each tensor result a DeviceValue on the device it
    ends on, nothing brought to the host (the shim's to_host is not called)
    until to_host()."""
    with load(mul, ["local-task", "local-sync"]) as m:
        x_in = m.mul.place(0, X)
        fetched = []
        read = movers.Mover.read
        monkeypatch.setattr(movers.Mover, "read", lambda *a, **k: fetched.append(1) or read(*a, **k))
        (r,) = m.mul.call_on_devices(x_in, 2.0)
        (again,) = m.mul.call_on_devices(X, input1=3.0)  # an array, placed by the call
        assert fetched == []
        assert isinstance(r, DeviceValue) and not r.released
        assert (r.shape, r.dtype, r.device, r.device_index) == ((4,), np.float32, "local-sync", 1)
        assert isinstance(r.view, rt.HalBufferView) and "4xf32 on local-sync" in repr(r)
        assert repr(r).startswith("<mdc.runtime_shim.DeviceValue "), repr(r)
        np.testing.assert_array_equal(r.to_host(), X * np.float32(2))
        np.testing.assert_array_equal(again.to_host(), X * np.float32(3))
        assert len(fetched) == 2
        r.release()
        with pytest.raises(ShimError, match="released"):
            r.to_host()
    assert again.released
    with pytest.raises(ShimError, match="closed"):
        again.to_host()


def test_call_on_devices_results_feed_later_calls(seed, mul, types):
    """A result left on its device is an input of a later call that reads
    it on that device; on another device, or of the wrong type, it is
    refused before anything runs. Scalars come back as numpy scalars."""
    want = np.float32([0, 1, 2, 3]) * np.float32([4, 5, 6, 7])
    with load(seed, ["local-task", "local-sync"]) as m:
        f = m.multi_device_mul
        (once,) = f.call_on_devices(X)
        (twice,) = f.call_on_devices(once)
        assert once.device == twice.device == "local-task"
        np.testing.assert_array_equal(f(twice), X * want * want * want)
    with load(mul, ["local-task", "local-sync"]) as m:
        (on_b,) = m.mul.call_on_devices(X, 2.0)
        with pytest.raises(ShimError, match="on runtime device local-sync, but this input is read on local-task"):
            m.mul(on_b, 1.0)
        with pytest.raises(ShimError, match="not a tensor"):
            m.mul(X, on_b)
        with load(seed, ["local-task", "local-sync"]) as other:
            (foreign,) = other.multi_device_mul.call_on_devices(X)
            with pytest.raises(ShimError, match="a result of another module"):
                m.mul(foreign, 1.0)
    with load(types, "local-task") as m:
        (as_f32,) = m.f32.call_on_devices(np.ones((2, 3), np.float32))
        with pytest.raises(ShimError, match="dtype mismatch"):
            m.f64(as_f32)
        with pytest.raises(ShimError, match="input 0 .*: shape mismatch, expected 4, got a result of shape 2x3"):
            m.nan(as_f32)
        assert m.scalars.call_on_devices(3, 2.5, 7, -9, 0.1) == (3, 2.5, 7, -9, 0.1)
        assert all(isinstance(v, np.generic) for v in m.scalars.call_on_devices(1, 2, 3, 4, 5))


def test_call_on_devices_async_external(build_vmfb):
    """An async-external function: call_on_devices returns once its signal
    fence is reached, so the results are complete."""
    path = build_vmfb("mul", MUL, TWO_LOCAL, links=STAGED_LINK, async_external=True)
    with load(path, ["local-task", "local-sync"]) as m:
        for scale in (1.0, -4.0):
            (r,) = m.mul.call_on_devices(X, scale)
            np.testing.assert_array_equal(r.to_host(), X * np.float32(scale))


def test_pinned_arguments(build_vmfb, mul):
    """Function.pinned_arguments: {argument index: device index} of the
    arguments given in pinned memory; place puts them in that device's
    memory; a result on a device is refused for them. Empty without
    --pinned-arguments, and a copy the caller cannot change the shim by."""
    with open(os.path.join(PROGRAMS, "pinned_output.mlir")) as f:
        into = build_vmfb("pinned_output", f.read(), TWO_LOCAL, links=STAGED_LINK,
                          flags=(*CPU_FLAGS, "--pinned-arguments"))
    with open(os.path.join(PROGRAMS, "pinned_arguments.mlir")) as f:
        both = build_vmfb("pinned_arguments", f.read(), TWO_LOCAL, links=STAGED_LINK,
                          flags=(*CPU_FLAGS, "--pinned-arguments"))
    with load(both, ["local-task", "local-sync"]) as m:
        assert m.pinned_arguments.pinned_arguments == {0: 1, 1: 1}
        assert m.pinned_product.pinned_arguments == {0: 1, 1: 1}
    with load(into, ["local-task", "local-sync"]) as m:
        f = m.square_into
        assert f.pinned_arguments == {1: 1}
        f.pinned_arguments[0] = 0
        assert f.pinned_arguments == {1: 1}
        x = np.linspace(-2, 2, 64, dtype=np.float32)
        before = [d.allocator.statistics["host_bytes_allocated"] for d in m.devices]
        out = f.place(1, np.zeros_like(x))
        grew = [d.allocator.statistics["host_bytes_allocated"] - b for d, b in zip(m.devices, before)]
        assert grew == [0, x.nbytes], grew  # in the pinned memory of devices[1], a buffer of its own
        (square,) = f.call_on_devices(x, out)
        np.testing.assert_array_equal(out.array, x * x)
        np.testing.assert_array_equal(square.to_host(), x * x)
        with pytest.raises(ShimError, match="read from pinned memory"):
            f(x, square)
    with load(mul, ["local-task", "local-sync"]) as m:
        assert m.mul.pinned_arguments == {}


# -- the module run by iree-run-module (Vulkan beside a CPU) ---------------------


@pytest.mark.vulkan
def test_native_module_same_api(build_vmfb):
    path = build_vmfb("mul_vulkan", MUL, ("a=local[0]", "b=vulkan[0]"))
    m = load(path, ["vulkan", "local-task"])
    assert isinstance(m, NativeModule)
    f = m.mul
    assert repr(m).startswith("<mdc.runtime_shim.NativeModule ") and repr(f).startswith(
        "<mdc.runtime_shim.NativeFunction "), (repr(m), repr(f))
    assert list(inspect.signature(f).parameters) == ["input0", "input1"]
    assert "on device_b (vulkan[0], runtime device vulkan)" in f.__doc__
    assert "mul" in dir(m)
    np.testing.assert_array_equal(f(X, 2.0), X * np.float32(2))
    np.testing.assert_array_equal(f(input1=0.25, input0=X), X * np.float32(0.25))
    (only,) = f.call(X, input1=-1.0)
    np.testing.assert_array_equal(only, -X)
    with pytest.raises(TypeError, match="@mul takes 2 input"):
        f(X)
    with pytest.raises(ValueError, match="dtype mismatch"):
        f(X.astype(np.float64), 1.0)
    m.close()
    assert m.closed and repr(m).endswith(", closed>")
    for call in (lambda: m.mul(X, 1.0), lambda: f(X, 1.0), lambda: m.function("mul")):
        with pytest.raises(ShimError, match="closed"):
            call()


# -- mdc-run: the command-line mistakes --------------------------------------


def test_cli_unknown_driver_as_stock(types, mdc_run, run_tool):
    flags = [f"--module={types}", "--device=local_task", "--function=f32", "--input=2x3xf32=1"]
    stock = run_tool([shutil.which("iree-run-module"), *flags])
    assert stock.returncode != 0 and "no driver 'local_task' registered" in stock.stderr
    assert_user_error(mdc_run(*flags), "unknown driver 'local_task'", "no driver of that name is registered")


def test_cli_text_file_input(types, mdc_run, tmp_path):
    text = tmp_path / "in.txt"
    text.write_text("1 2 3 4 5 6\n")
    proc = mdc_run(f"--module={types}", "--device=local-task", "--function=f32", f"--input=@{text}")
    assert_user_error(proc, "is not a .npy file", "only numpy .npy files are supported")
    assert "pickle" not in proc.stderr


def test_cli_bad_counts_name_no_internals(seed, mdc_run):
    for flag in ("--benchmark=abc", "--benchmark=-3", "--output_max_element_count=x",
                 "--task_topology_group_count=1.5"):
        proc = mdc_run(f"--module={seed}", "--device=local-task", "--device=local-sync", flag)
        assert_user_error(proc, flag.split("=")[0], "expected a whole number")
        assert "_count" not in proc.stderr.replace(flag.split("=")[0], "")


def test_cli_trace_execution(seed, mdc_run):
    """--trace_execution=true runs as without it, with a one-line note:
    the runtime wheel has no VM tracing (test_cli_dropin keeps the canary
    that its own iree-run-module prints no trace either)."""
    base = [f"--module={seed}", "--device=local-task", "--device=local-sync", "--input=4xf32=10,11,12,13"]
    plain = mdc_run(*base)
    for flag in ("--trace_execution=true", "--trace_execution"):
        traced = mdc_run(*base, flag)
        assert (traced.returncode, traced.stdout) == (0, plain.stdout), traced.stderr
        (note,) = traced.stderr.splitlines()
        assert note.startswith("mdc-run: note: --trace_execution:") and "without VM execution tracing" in note
    assert_user_error(mdc_run(*base, "--trace_execution=maybe"), "expected true or false")
    proc = mdc_run(*base, "--trace_execution=false")
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, plain.stdout, "")


def test_cli_trace_execution_note_before_error(seed, mdc_run):
    """The note says how the flag was taken before anything runs, so a
    fatal error's line comes after it, last, where a reader looks."""
    proc = mdc_run(f"--module={seed}", "--device=local-task", "--device=local-sync", "--trace_execution",
                   "--function=no_such_function", "--input=4xf32=10,11,12,13")
    assert proc.returncode == 2 and proc.stdout == "", proc
    note, error = proc.stderr.splitlines()
    assert note.startswith("mdc-run: note: --trace_execution:"), proc.stderr
    assert error.startswith("mdc-run: error: ") and "no_such_function" in error, proc.stderr


def test_cli_no_device(seed, mdc_run):
    assert_user_error(mdc_run(f"--module={seed}", "--input=4xf32=1"), "no --device given")


GPU_ONLY = """
func.func public @f32(%a: tensor<2x3xf32>) -> tensor<2x3xf32> { %0 = arith.addf %a, %a : tensor<2x3xf32> return %0 : tensor<2x3xf32> }
"""


@pytest.mark.parametrize("driver", ["cuda", "hip"])
def test_cli_uri_with_an_ordinal_binds_as_stock(build_vmfb, mdc_run, run_tool, driver):
    """`--device=hip:0` is the hip driver's device 0 to iree-run-module,
    which then binds hip[0] to it; on a machine without the GPU library both
    get as far as creating the driver."""
    path = build_vmfb(f"{driver}_only", GPU_ONLY, (f"device_a={driver}",), flags=())
    flags = [f"--module={path}", f"--device={driver}:0", "--input=2x3xf32=1"]
    if driver in rt.query_available_drivers():
        try:
            rt.get_driver(driver)
            pytest.skip(f"this machine has a {driver} device")
        except RuntimeError:
            pass
    stock = run_tool([shutil.which("iree-run-module"), *flags])
    assert stock.returncode != 0 and "UNAVAILABLE" in stock.stderr, stock.stderr
    assert_user_error(mdc_run(*flags), f"device '{driver}:0': the '{driver}' driver is not available here")


def test_uri_with_a_path_reaches_the_driver_as_stock(types, mdc_run, run_tool):
    """`local-task:0` binds local[0]; the driver then refuses the path, as
    it does for iree-run-module."""
    flags = [f"--module={types}", "--device=local-task:0", "--function=f32", "--input=2x3xf32=1"]
    stock = run_tool([shutil.which("iree-run-module"), *flags])
    assert stock.returncode != 0 and "device paths not yet implemented" in stock.stderr
    assert_user_error(mdc_run(*flags), "cannot create device 'local-task:0'", "device paths not yet implemented")


@pytest.mark.vulkan
def test_native_module_leaves_nothing_on_a_device(build_vmfb):
    """The NativeModule answers the device-level API in words: no opened
    devices, no results left on a device, no pinned arguments."""
    path = build_vmfb("mul_vulkan", MUL, ("a=local[0]", "b=vulkan[0]"))
    with load(path, ["vulkan", "local-task"]) as m:
        assert isinstance(m, NativeModule)
        assert m.mul.pinned_arguments == {}
        with pytest.raises(ShimError, match="leaves no result on a device"):
            m.mul.call_on_devices(X, 1.0)
        with pytest.raises(ShimError, match="not opened in this process"):
            m.devices


def test_public_names_of_the_device_level_api():
    assert "DeviceValue" in runtime_shim.__all__
    for name in ("call_on_devices", "pinned_arguments"):
        assert hasattr(runtime_shim.Function, name) and hasattr(runtime_shim.NativeFunction, name)
    assert hasattr(runtime_shim.Module, "devices") and hasattr(runtime_shim.NativeModule, "devices")


def test_public_names():
    assert {"load", "load_vm_flatbuffer_file", "Module", "NativeModule", "Function", "NativeFunction",
            "Placed", "ShimError", "ShimTypeError"} <= set(runtime_shim.__all__)
    assert inspect.signature(load).parameters["devices"].kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
