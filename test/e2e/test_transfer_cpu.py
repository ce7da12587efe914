"""Transfer insertion on a CPU-only machine.

Each program is compiled by mdc with staging forced between two local
devices (`--link=a:b=staged`, the GPU code path) and run on *stock*
iree-run-module with local-task + local-sync; its printed output must equal
that of stock IREE compiled for plain local devices. The same programs must
compile for a cuda and a hip device, and their stream-level IR must hold no
`#hal.device.optimal` set spanning a staged pair.
"""

from __future__ import annotations

import os
import re
import subprocess

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAMS = os.path.join(HERE, "programs")
EXAMPLE = os.path.join(os.path.dirname(os.path.dirname(HERE)), "examples", "multi_device_mul.mlir")
REGRESS = os.path.join(os.path.dirname(HERE), "lit", "regress")

# (id, program, inputs as iree-run-module flags or arrays for .npy, devices, extra flags)
AB = ("a=local[0]", "b=local[1]")
CASES = [
    ("example", EXAMPLE, ["--input=4xf32=10,11,12,13"], AB, []),
    ("arg_on_b", f"{PROGRAMS}/two_args.mlir", ['--input=2x3xf32=[1 2 3][4 5 6]', '--input=2x3xf32=[10 20 30][40 50 60]'], AB, []),
    ("result_on_b", f"{PROGRAMS}/result_on_b.mlir", ["--input=8xi32=1,-2,3,-4,5,-6,7,-8"], AB, []),
    ("loop_dynamic", f"{PROGRAMS}/loop.mlir", ["--input=5xf32=1,2,3,4,5", "--input=4"], AB, []),
    ("globals_call", f"{PROGRAMS}/globals_call.mlir", ["--input=4xf32=1,2,3,4"], AB, []),
    ("diamond", f"{PROGRAMS}/diamond.mlir", [np.arange(128, dtype=np.float32).reshape(16, 8) / 7], AB, []),
    ("matmul_chain", f"{PROGRAMS}/matmul_chain.mlir",
     [np.linspace(-1, 1, 32 * 64, dtype=np.float32).reshape(32, 64),
      np.linspace(1, -1, 64 * 48, dtype=np.float32).reshape(64, 48),
      np.linspace(-2, 2, 48 * 16, dtype=np.float32).reshape(48, 16)], AB, []),
    ("dynamic_2d_f16", f"{PROGRAMS}/dynamic_2d.mlir", [np.linspace(-3, 3, 35).astype(np.float16).reshape(5, 7)], AB, []),
    ("if_taken", f"{PROGRAMS}/if_branch.mlir", ["--input=6xi32=1,2,3,4,5,6", "--input=1"], AB, []),
    ("if_not_taken", f"{PROGRAMS}/if_branch.mlir", ["--input=6xi32=1,2,3,4,5,6", "--input=0"], AB, []),
    ("while", f"{PROGRAMS}/while_loop.mlir", ["--input=3xf32=100,2,3", "--input=5"], AB, []),
    ("arg_and_result_on_b", f"{PROGRAMS}/gpu_both.mlir", [np.linspace(-4, 4, 64, dtype=np.float32)], AB, []),
    ("call_no_inline", f"{PROGRAMS}/call_no_inline.mlir", ["--input=5xi64=1,-2,3,-4,5"], AB, []),
    ("initializer", f"{PROGRAMS}/initializer.mlir", ["--input=8xf32=1,2,3,4,5,6,7,8"], AB, ["--iree-opt-const-eval=false"]),
    ("default_argument_moved", f"{PROGRAMS}/default_argument_moved.mlir",
     ["--input=4xf32=1,2,3,4", "--input=4xf32=1,1,1,1"], AB, []),
    ("argument_returned_on_a", f"{PROGRAMS}/argument_returned_elsewhere.mlir",
     ["--input=4xf32=1.5,-2,3,4", "--input=2x3xi32=[1 -2 3][4 5 -6]"], AB, []),
    ("argument_returned_on_b", f"{PROGRAMS}/argument_returned_to_b.mlir",
     ["--input=3xi64=7,-8,9", "--input=2x2xf16=[0.5 -1][2 3]"], AB, []),
    ("computed_result_folded", f"{PROGRAMS}/computed_result_folded.mlir",
     ["--input=2x5xi32=[1 -2 3 -4 5][-2147483648 7 2147483647 0 -9]", "--input=6xf32=1.5,-2,0,-0,3.25,1e30"], AB, []),
    ("cond_br_taken", f"{PROGRAMS}/cond_br_merge.mlir", ["--input=6xi32=1,2,3,4,5,-6", "--input=1"], AB, []),
    ("cond_br_not_taken", f"{PROGRAMS}/cond_br_merge.mlir", ["--input=6xi32=1,2,3,4,5,-6", "--input=0"], AB, []),
    ("while_condition_moved", f"{PROGRAMS}/while_condition_moved.mlir", ["--input=3xf32=100,2,3", "--input=5"], AB, []),
    ("while_condition_moved_no_trip", f"{PROGRAMS}/while_condition_moved.mlir", ["--input=3xf32=4,2,3", "--input=5"],
     AB, []),
    # A size known at run time only, on both sides of the 64 KiB limit up to
    # which device_b reads it in place (passes/lowering/small_in_place.py).
    ("sum_on_b_dynamic_in_place", f"{PROGRAMS}/sum_on_b_dynamic.mlir",
     [(np.arange(1000) % 16).astype(np.float32), "--input=50"], AB, []),
    ("sum_on_b_dynamic_copied", f"{PROGRAMS}/sum_on_b_dynamic.mlir",
     [(np.arange(16385) % 16).astype(np.float32), "--input=50"], AB, []),
    # A constant both devices' matmuls read packed (data tiling): moved plain
    # and packed again where devices pack differently (test_vulkan's run).
    ("packed_constant_both_devices", f"{PROGRAMS}/packed_constant_both_devices.mlir",
     [np.linspace(-1, 1, 4 * 32 * 16, dtype=np.float32).reshape(4, 32, 16),
      np.linspace(1, -1, 4 * 16 * 32, dtype=np.float32).reshape(4, 16, 32),
      np.linspace(-2, 2, 4 * 32 * 16, dtype=np.float32).reshape(4, 32, 16),
      np.linspace(2, -2, 4 * 16 * 32, dtype=np.float32).reshape(4, 16, 32)], AB, []),
    ("three_devices", f"{PROGRAMS}/three_devices.mlir", ["--input=4x4xi32=[1 2 3 4][5 6 7 8][9 10 11 12][-1 -2 -3 -4]"],
     ("a=local[0]", "b=local[1]", "c=local[2]"), []),
    # IREE's dealloca on the default device at a loop's exit, awaited by
    # device_b's next alloca: the host waits for it (cross-driver-waits).
    ("constant_read_on_b_after_loop", f"{REGRESS}/constant_read_on_gpu_waits_on_cpu.mlir",
     [np.linspace(-2, 2, 84, dtype=np.float32).reshape(4, 3, 7)], ("a=local[0]", "b=local[1]", "c=local[2]"),
     ["--iree-opt-const-eval=false"]),
]
for dtype in ("f32", "f16", "bf16", "i8", "i16", "i32", "i64", "i1"):
    CASES.append((f"dtype_{dtype}", f"{PROGRAMS}/dtypes/roundtrip_{dtype}.mlir", None, AB, []))

RUNTIME = {2: ["local-task", "local-sync"], 3: ["local-task", "local-sync", "local-task"]}
_I1_INPUT = np.array([[True, False, True], [False, False, True]])


def _run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    assert r.returncode == 0, f"{' '.join(cmd)}\n{r.stdout}\n{r.stderr}"
    return r.stdout


def _input_flags(inputs, tmp_path, dtype_case):
    if inputs is None:  # the dtype round trips take one 2x3 tensor
        dtype = dtype_case.split("_", 1)[1]
        if dtype == "i1":
            path = tmp_path / "in.npy"
            np.save(path, _I1_INPUT)  # stock iree-run-module rejects i1 literals
            return [f"--input=@{path}"]
        return [f"--input=2x3x{dtype}=[1 -2 3][4 5 -6]"]
    flags = []
    for i, v in enumerate(inputs):
        if isinstance(v, str):
            flags.append(v)
        else:
            path = tmp_path / f"in{i}.npy"
            np.save(path, v)
            flags.append(f"--input=@{path}")
    return flags


def _result_lines(text):
    return [line for line in text.splitlines() if not line.startswith(("EXEC", "result["))]


@pytest.mark.parametrize("model,staging", [("async-internal", "copy"), ("async-external", "copy"),
                                           ("async-internal", "emplace")])
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_forced_staging_matches_stock_all_local(case, model, staging, tmp_path):
    name, program, inputs, devices, extra = case
    links = [f"--link=a:{d.split('=')[0]}=staged" for d in devices[1:2]]
    if len(devices) == 3:
        links.append("--link=c:b=staged")
    staged = tmp_path / "staged.vmfb"
    _run(["mdc-compile", program, *[f"--device={d}" for d in devices], *links, f"--staging={staging}",
          f"--iree-execution-model={model}", *extra, "-o", str(staged)])
    # The lowering really happened: every crossing went through staging.
    mdc_ir = _run(["mdc-compile", program, *[f"--device={d}" for d in devices], *links, f"--staging={staging}",
                   f"--iree-execution-model={model}", *extra, "--compile-to=mdc", "-o", "-"])
    assert "util.call @__mdc_stage" in mdc_ir
    for line in mdc_ir.splitlines():
        if "stream.async.transfer" in line:  # only moves within shared pairs remain
            ends = re.findall(r"(?:from|to)\(#hal\.device\.affinity<@(\w+)>", line)
            assert "device_b" not in ends or len(set(ends)) == 1, line

    reference = tmp_path / "reference.vmfb"
    _run(["iree-compile", program,
          *[f"--iree-hal-target-device=device_{d.split('=')[0]}=local[{i}]" for i, d in enumerate(devices)],
          "--iree-hal-local-target-device-backends=llvm-cpu", "--iree-llvmcpu-target-cpu=host",
          f"--iree-execution-model={model}", *extra, "-o", str(reference)])

    flags = _input_flags(inputs, tmp_path, name)
    got = _run(["iree-run-module", f"--module={staged}", *[f"--device={d}" for d in RUNTIME[len(devices)]], *flags])
    want = _run(["iree-run-module", f"--module={reference}", *["--device=local-task"] * len(devices), *flags])
    assert _result_lines(got) and _result_lines(got) == _result_lines(want)


_OPTIMAL = re.compile(r"#hal\.device\.optimal<\[([^\]]*)\]>")


@pytest.mark.parametrize("gpu", ["cuda[0]", "hip[0]", "cuda[0] --staging=emplace"])
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_compiles_for_gpu_without_shared_staged_memory(case, gpu, tmp_path):
    name, program, _, devices, extra = case
    gpu, *more = gpu.split()
    devices = [devices[0], f"b={gpu}", *devices[2:]]
    flags = [f"--device={d}" for d in devices] + extra + more
    stream_ir = _run(["mdc-compile", program, *flags, "--compile-to=stream", "-o", "-"])
    for members in _OPTIMAL.findall(stream_ir):
        names = set(re.findall(r"@(\w+)", members))
        assert "device_b" not in names, f"optimal set spans a staged pair: {members}"
    _run(["mdc-compile", program, *flags, "-o", str(tmp_path / "gpu.vmfb")])
    assert (tmp_path / "gpu.vmfb").stat().st_size > 0


@pytest.mark.parametrize("devices", [["local-task", "local-sync"], ["local-task", "local-task"]])
def test_pieces_wait_for_a_loop_carried_value(devices, tmp_path):
    """A value a loop carries, written into pinned memory in pieces
    (--staging-pieces=4, the default towards a GPU): the CPU's piece copies
    must wait for the previous iteration's producer. IREE 3.13 issued them
    without that wait (a copy inside the nested pieces loop of a value the
    outer loop carries); before the fix 19 of 20 calls came back wrong here,
    as loop_dynamic_large did on the H200 (8 of 25)."""
    from mdc.runtime_shim import load

    vmfb = tmp_path / "m.vmfb"
    _run(["mdc-compile", os.path.join(PROGRAMS, "loop.mlir"), "--device=a=local[0]", "--device=b=local[1]",
          "--link=a:b=staged", "--staging-pieces=4", "-o", str(vmfb)])
    rng = np.random.default_rng(7)
    with load(str(vmfb), devices) as m:
        f = m.function("ping_pong")
        for call in range(6):
            x = rng.standard_normal(1 << 20).astype(np.float32)
            want = x.copy()
            for _ in range(20):
                want = want + want + 1
            np.testing.assert_allclose(f(x, 20), want, rtol=1e-6, err_msg=f"call {call}")


@pytest.mark.parametrize("devices", [["local-sync", "local-task"], ["local-task", "local-task"]])
def test_small_crossing_site_waits_for_its_last_read(devices, tmp_path):
    """A small value crosses to device_b in every iteration of a loop and
    device_b only sums it: device_b's copy out of the site's pinned buffer
    is waited for by nobody but the site's next write (the record_read
    fence). Without that wait, 19 of 20 calls came back wrong on
    local-sync + local-task and 5 of 20 on local-task + local-task."""
    from mdc.runtime_shim import load

    vmfb = tmp_path / "m.vmfb"
    _run(["mdc-compile", os.path.join(PROGRAMS, "sum_on_b.mlir"), "--device=a=local[0]", "--device=b=local[1]",
          "--link=a:b=staged", "-o", str(vmfb)])
    n = 300
    with load(str(vmfb), devices) as m:
        f = m.function("sum_on_b")
        for call in range(20):
            x = np.arange(16, dtype=np.float32) * (call + 1)
            want = (n * x + n * (n + 1) / 2).astype(np.float32)
            np.testing.assert_array_equal(f(x, n), want, err_msg=f"call {call}")


@pytest.mark.parametrize("pieces", [None, 3])
@pytest.mark.parametrize("devices", [["local-sync", "local-task"], ["local-task", "local-task"]])
def test_dynamic_small_crossing_read_in_place_waits_for_its_last_read(devices, pieces, tmp_path):
    """sum_on_b with its size known at run time only, sizes on both sides
    of the 64 KiB in-place limit, written by a dispatch and in pieces. A CPU
    device_b keeps the emplace lowering (small_in_place.SmallInPlace.
    applies): this checks that lowering at every size; the run-time in-place
    choice itself runs where device_b has its own memory (test_vulkan's
    sum_on_b_dynamic cases, gpu_kit's sum_on_gpu_dynamic cases)."""
    from mdc.runtime_shim import load

    vmfb = tmp_path / "m.vmfb"
    more = [] if pieces is None else [f"--staging-pieces={pieces}"]
    _run(["mdc-compile", os.path.join(PROGRAMS, "sum_on_b_dynamic.mlir"), "--device=a=local[0]",
          "--device=b=local[1]", "--link=a:b=staged", *more, "-o", str(vmfb)])
    n = 300
    with load(str(vmfb), devices) as m:
        f = m.function("sum_on_b")
        for call in range(10):
            for size in (16, 1000, 16384, 16385, 40000):  # 16384 f32: 64 KiB, the limit
                x = (np.arange(size) % 16).astype(np.float32) * (call + 1)  # sums stay exact in f32
                want = (n * x + n * (n + 1) / 2).astype(np.float32)
                np.testing.assert_array_equal(f(x, n), want, err_msg=f"call {call}, {size} elements")


def test_emplace_writes_a_computed_value_in_place(tmp_path):
    """--staging=emplace: a value computed on device_a with no other use is
    written by its producer into device_b's pinned buffer (no copy on a's
    queue), and the result is right."""
    program = os.path.join(os.path.dirname(os.path.dirname(HERE)), "bench", "programs", "compute_to_gpu.mlir")
    flags = ["--device=a=local[0]", "--device=b=local[1]", "--link=a:b=staged", "--staging=emplace"]
    stream_ir = _run(["mdc-compile", program, *flags, "--compile-to=stream", "-o", "-"])
    body = stream_ir[stream_ir.index("util.func public @compute_to_gpu"):]
    body = body[:body.index("util.return")]
    # The dispatch writes the imported pinned buffer; nothing copies it on
    # device_a, neither a queue copy nor a copy dispatch.
    assert "stream.tensor.import on(#hal.device.affinity<@device_a>) consume" in body
    assert "stream.cmd.copy" not in body
    assert "@__mdc_copy_on_device_a" not in body
    # device_b, a CPU here, copies it out of pinned memory with a dispatch.
    assert "stream.cmd.dispatch @__mdc_copy_on_device_b::" in body
    vmfb = tmp_path / "m.vmfb"
    _run(["mdc-compile", program, *flags, "-o", str(vmfb)])
    np.save(tmp_path / "x.npy", np.arange(-100, 100, dtype=np.int8))
    out = _run(["mdc-run", f"--module={vmfb}", "--device=local-task", "--device=local-sync",
                f"--input=@{tmp_path / 'x.npy'}", f"--output=@{tmp_path / 'y.npy'}"])
    assert np.array_equal(np.load(tmp_path / "y.npy"), np.arange(-99, 101, dtype=np.int8)), out


@pytest.mark.parametrize("pieces", [1, 3, 64])
def test_argument_copied_in_pieces_arrives_whole(pieces, tmp_path):
    """--staging-pieces=N: an argument is copied into pinned memory in N
    pieces of a size rounded up to 64 bytes, so with sizes around and below
    that (down to empty, and pieces left empty) every byte must still arrive
    once, in place."""
    from mdc.runtime_shim import load

    program = os.path.join(os.path.dirname(os.path.dirname(HERE)), "bench", "programs", "to_gpu.mlir")
    vmfb = tmp_path / "m.vmfb"
    _run(["mdc-compile", program, "--device=a=local[0]", "--device=b=local[1]", "--link=a:b=staged",
          f"--staging-pieces={pieces}", "-o", str(vmfb)])
    m = load(str(vmfb), ["local-task", "local-sync"])
    try:
        f = m.function("to_gpu")
        for n in (0, 1, 63, 64, 65, 191, 4097, (1 << 20) + 3):
            x = (np.arange(n, dtype=np.int64) * 7 % 251 - 125).astype(np.int8)
            y = np.asarray(f(x))
            assert y.dtype == np.int8 and np.array_equal(y, x), (n, pieces)
    finally:
        m.close()


@pytest.mark.parametrize("model,staging", [("async-internal", "emplace"), ("async-external", "emplace"),
                                           ("async-internal", "copy")])
def test_pinned_arguments_arrive_and_are_placed_pinned(model, staging, tmp_path, monkeypatch):
    """--pinned-arguments: the manifest lists both arguments as given in
    device_b's pinned memory, the shim places them there (and nowhere
    else), and the GPU side reads them straight from there: the results
    match numpy, for sizes down to empty."""
    from mdc.runtime_shim import load, values

    vmfb = tmp_path / "m.vmfb"
    _run(["mdc-compile", os.path.join(PROGRAMS, "pinned_arguments.mlir"), "--device=a=local[0]",
          "--device=b=local[1]", "--link=a:b=staged", "--pinned-arguments", f"--staging={staging}",
          f"--iree-execution-model={model}", "-o", str(vmfb)])
    placed = []
    to_pinned = values.to_pinned
    monkeypatch.setattr(values, "to_pinned", lambda device, *a, **k: placed.append(device) or to_pinned(device, *a, **k))
    m = load(str(vmfb), ["local-task", "local-sync"])
    try:
        assert m.manifest.pinned("pinned_arguments") == {0: "device_b", 1: "device_b"}
        f = m.function("pinned_arguments")
        for n in (0, 1, 1000, (1 << 18) + 5):
            x = np.linspace(-3, 3, n, dtype=np.float32)
            y = np.cos(x)
            placed.clear()
            total, difference = f(x, y)
            assert placed == [m._session.devices[1], m._session.devices[1]], n
            np.testing.assert_array_equal(total, x + y)
            np.testing.assert_array_equal(difference, x - y)
        # Placed once (in pinned memory of device_b), written in place, and
        # called again: each call reads what is there now.
        x = np.linspace(-3, 3, 4096, dtype=np.float32)
        placed.clear()
        x_in, y_in = f.place(0, x), f.place(1, np.cos(x))
        assert placed == [m._session.devices[1], m._session.devices[1]]
        for step in range(3):
            x_in.array[...] = x + step
            total, difference = f(x_in, y_in)
            assert placed == [m._session.devices[1], m._session.devices[1]], "a placed input was placed again"
            np.testing.assert_array_equal(total, (x + step) + np.cos(x))
            np.testing.assert_array_equal(difference, (x + step) - np.cos(x))
        from mdc.runtime_shim import ShimError
        with pytest.raises(ShimError, match="input 1 .*given input 0 of @pinned_arguments"):
            f(x_in, x_in)
    finally:
        m.close()
    with pytest.raises(ShimError, match="placed by a module now closed"):
        x_in.view


@pytest.mark.parametrize("register", [False, True])
def test_to_pinned_gives_the_bytes(register):
    """mdc.runtime_shim.values.to_pinned, copying or importing the array's own
    pages: the view holds the array's bytes, shape and type."""
    import iree.runtime as rt
    from mdc.runtime_shim import values

    device = rt.get_driver("local-task").create_default_device()
    for x in (np.arange(12, dtype=np.float32).reshape(3, 4), values.aligned_array(np.arange(4097, dtype=np.int8)),
              np.zeros((0,), np.float32)):
        view = values.to_pinned(device, x, values.hal_type_for_dtype(x.dtype), register=register)
        assert list(view.shape) == list(x.shape)
        got = values.to_host(device, view, staged=False, timeout_s=30)
        np.testing.assert_array_equal(got, x)
        del view


@pytest.mark.parametrize("model", ["async-internal", "async-external"])
def test_pinned_output_written_in_place(model, tmp_path):
    """--pinned-arguments with an output argument (iree.abi.output) that a
    value coming back from device_b is written into: the owner's queue
    copies it straight into the caller's storage, the result is that
    storage (a placed output comes back as the placed memory itself, no
    copy), and storage too small for the value is refused, not overrun."""
    from mdc.runtime_shim import load

    vmfb = tmp_path / "m.vmfb"
    _run(["mdc-compile", os.path.join(PROGRAMS, "pinned_output.mlir"), "--device=a=local[0]",
          "--device=b=local[1]", "--link=a:b=staged", "--pinned-arguments",
          f"--iree-execution-model={model}", "-o", str(vmfb)])
    m = load(str(vmfb), ["local-task", "local-sync"])
    try:
        assert m.manifest.pinned("square_into") == {1: "device_b"}
        f = m.function("square_into")
        for n in (1, 1000, (1 << 18) + 3):
            x = np.linspace(-2, 2, n, dtype=np.float32)
            np.testing.assert_array_equal(f(x, np.full(n, np.nan, np.float32)), x * x)
        x = np.linspace(-2, 2, 4096, dtype=np.float32)
        out = f.place(1, np.full(4096, np.nan, np.float32))
        for step in range(3):
            y = f(x + step, out)
            np.testing.assert_array_equal(y, (x + step) ** 2)
            assert np.shares_memory(y, out.array)
        with pytest.raises(Exception, match="mdc: output storage buffer byte length 3996 less than expected minimum 4000"):
            f(np.zeros(1000, np.float32), np.zeros(999, np.float32))
    finally:
        m.close()


def test_placed_input_keeps_the_memory_it_borrows(tmp_path):
    """Function.place of an input on a CPU device imports the array's own
    memory (zero-copy), and the view it keeps does not hold that array
    (IREE 3.13, see test_runtime_shim). The Placed must: with the caller's
    last reference dropped and the freed sizes allocated again and
    scribbled on, the placed storage still gets the right numbers, and it
    is released with its module."""
    import gc
    import weakref

    from mdc.runtime_shim import load, values

    vmfb = tmp_path / "m.vmfb"
    _run(["mdc-compile", os.path.join(PROGRAMS, "pinned_output.mlir"), "--device=a=local[0]",
          "--device=b=local[1]", "--link=a:b=staged", "-o", str(vmfb)])
    m = load(str(vmfb), ["local-task", "local-sync"])
    try:
        f = m.function("square_into")
        x = np.linspace(-2, 2, 1 << 18, dtype=np.float32)
        storage = values.aligned_array(np.full(x.shape, np.nan, np.float32))
        assert values.can_import(storage)  # so place imports it, not a copy
        alive = weakref.ref(storage)
        out = f.place(1, storage)
        del storage
        gc.collect()
        assert alive() is not None, "the placed memory was freed while placed"
        scribbles = [np.full(x.size + k, 7.0, np.float32) for k in range(0, 256, 16)]
        for step in range(3):
            y = f(x + step, out)
            np.testing.assert_array_equal(y, (x + step) ** 2)
            assert np.shares_memory(y, out.array)
        del scribbles, y
    finally:
        m.close()
    gc.collect()
    assert alive() is None, "a closed module's placed input still holds its memory"


@pytest.mark.parametrize("staging", ["emplace", "copy"])
def test_output_storage_in_cpu_memory_is_the_result(staging, tmp_path):
    """Without --pinned-arguments an output argument (iree.abi.output) is
    storage in the CPU's memory: a value coming back from device_b is
    copied into it (with emplace, by the CPU's copy dispatch out of pinned
    memory) and the result is that storage, not a copy: a placed output
    comes back as the placed memory, and the numbers match numpy."""
    from mdc.runtime_shim import load

    vmfb = tmp_path / "m.vmfb"
    _run(["mdc-compile", os.path.join(PROGRAMS, "pinned_output.mlir"), "--device=a=local[0]",
          "--device=b=local[1]", "--link=a:b=staged", f"--staging={staging}", "-o", str(vmfb)])
    m = load(str(vmfb), ["local-task", "local-sync"])
    try:
        assert m.manifest.pinned("square_into") == {}
        f = m.function("square_into")
        x = np.linspace(-2, 2, (1 << 18) + 3, dtype=np.float32)
        np.testing.assert_array_equal(f(x, np.zeros_like(x)), x * x)
        out = f.place(1, np.full(x.shape, np.nan, np.float32))
        for step in range(3):
            y = f(x - step, out)
            np.testing.assert_array_equal(y, (x - step) ** 2)
            assert np.shares_memory(y, out.array)
    finally:
        m.close()
