"""mdc-compile and mdc-run as drop-ins for iree-compile and iree-run-module
(issue 18), through the real command lines.

The report's pair (iree-compile ... --iree-hal-target-device=device_b=hip[0]
--iree-hip-target=gfx1103, then iree-run-module ... --device=hip:0
--trace_execution=true --task_topology_group_count=1) with only the tool
names changed: compiled for hip (no HIP device here), and run with device_b
on a second CPU device and on Vulkan (lavapipe) instead. Then the flags of
iree-run-module that mdc-run refused or treated differently, each compared
with the wheel's own iree-run-module on all-local modules (where stock runs
them right) and with numpy.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

import iree.runtime as rt
from conftest import REPO
from test_runtime_shim import ONE_LOCAL, TYPES, TYPES_FLAGS

REPORT_PROGRAM = REPO / "test" / "lit" / "compile" / "Inputs" / "issue18_multi.mlir"
REPORT_INPUT = np.float32([10, 11, 12, 13])
REPORT_OUTPUT = REPORT_INPUT * np.float32([0, 1, 2, 3]) * np.float32([4, 5, 6, 7])


def report_compile_flags(device_b: str) -> list[str]:
    """The report's iree-compile flags, device_b on ``device_b``."""
    return ["--iree-execution-model=async-external", "--iree-hal-target-device=device_a=local[0]",
            f"--iree-hal-target-device=device_b={device_b}",
            "--iree-hal-local-target-device-backends=vmvx", "--iree-hip-target=gfx1103"]


REPORT_RUN_FLAGS = ["--function=mutli_device_mul", "--input=4xf32=10,11,12,13", "--trace_execution=true",
                    "--task_topology_group_count=1"]
TRACE_NOTE_START = "mdc-run: note: --trace_execution:"
ROCM_NOTE = "mdc-compile: note: --iree-hip-target is --iree-rocm-target in IREE 3.13.0: passing --iree-rocm-target=gfx1103"


def stock_run_module() -> str:
    return shutil.which("iree-run-module")


@pytest.fixture(scope="session")
def mdc_compile(run_tool):
    """mdc_compile(*argv) runs `python -m mdc.pipeline` (what mdc-compile runs)."""
    return lambda *argv: run_tool([sys.executable, "-m", "mdc.pipeline", *map(str, argv)], timeout=300)


def printed(array: np.ndarray) -> str:
    return "4xf32=" + " ".join("%G" % v for v in array)


@pytest.fixture(scope="module")
def stock_report_pair(tmp_path_factory, run_tool):
    """The report's program from stock iree-compile on two local devices
    (a pair whose memory is shared, which stock compiles and runs)."""
    out = tmp_path_factory.mktemp("stock") / "cpu_cpu.vmfb"
    flags = [f for f in report_compile_flags("local[1]") if not f.startswith("--iree-hip-")]
    done = run_tool([shutil.which("iree-compile"), REPORT_PROGRAM, *flags, "-o", out], timeout=300)
    assert done.returncode == 0, done.stderr
    ran = run_tool([stock_run_module(), f"--module={out}", "--device=local-task", "--device=local-task",
                    *REPORT_RUN_FLAGS])
    assert ran.returncode == 0 and ran.stdout.splitlines()[-1] == printed(REPORT_OUTPUT), ran.stderr
    return ran.stdout


@pytest.mark.parametrize("links", [(), ("--link=a:b=staged",)], ids=["shared", "staged"])
def test_report_pair_on_two_cpus(links, stock_report_pair, mdc_compile, mdc_run, tmp_path):
    """device_b a second CPU: the same output as stock, a note for each
    flag mdc reads its own way, nothing else on stderr."""
    out = tmp_path / "cpu_cpu.vmfb"
    done = mdc_compile(REPORT_PROGRAM, *report_compile_flags("local[1]"), *links, "-o", out)
    assert (done.returncode, done.stderr.splitlines()) == (0, [ROCM_NOTE]), done.stderr
    ran = mdc_run(f"--module={out}", "--device=local-task", "--device=local-task", *REPORT_RUN_FLAGS)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout == stock_report_pair
    (note,) = ran.stderr.splitlines()
    assert note.startswith(TRACE_NOTE_START)


def test_report_pair_compiles_for_hip(mdc_compile, mdc_run, run_tool, tmp_path):
    """The report's exact pair: compiles; with no HIP device here, mdc-run
    says which device is missing, as stock iree-run-module fails too."""
    out = tmp_path / "cpu_gpu.vmfb"
    done = mdc_compile(REPORT_PROGRAM, *report_compile_flags("hip[0]"), "-o", out)
    assert (done.returncode, done.stderr.splitlines()) == (0, [ROCM_NOTE]), done.stderr
    data = out.read_bytes()
    assert b"vmvx-bytecode-fb" in data and b"rocm-hsaco-fb" in data
    flags = [f"--module={out}", "--device=local-task", "--device=hip:0", *REPORT_RUN_FLAGS]
    try:
        rt.get_driver("hip")
        pytest.skip("this machine has a HIP driver: run the pair on it by hand")
    except (RuntimeError, ValueError):
        pass
    stock = run_tool([stock_run_module(), *flags])
    assert stock.returncode != 0 and "UNAVAILABLE" in stock.stderr
    ran = mdc_run(*flags)
    assert ran.returncode == 2 and ran.stdout == ""
    note, error = ran.stderr.splitlines()  # the note as the flag is taken, then the error, last
    assert error.startswith("mdc-run: error: device 'hip:0': the 'hip' driver is not available here")
    assert note.startswith(TRACE_NOTE_START)


@pytest.mark.vulkan
def test_report_pair_on_vulkan(stock_report_pair, mdc_compile, mdc_run, tmp_path):
    """device_b on Vulkan (lavapipe) in place of hip: staged for real, run
    by the wheel's iree-run-module; the same output as stock all-local."""
    out = tmp_path / "cpu_vulkan.vmfb"
    done = mdc_compile(REPORT_PROGRAM, *report_compile_flags("vulkan[0]"), "-o", out)
    assert (done.returncode, done.stderr.splitlines()) == (0, [ROCM_NOTE]), done.stderr
    ran = mdc_run(f"--module={out}", "--device=local-task", "--device=vulkan", *REPORT_RUN_FLAGS)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout == stock_report_pair
    assert [line.startswith(TRACE_NOTE_START) for line in ran.stderr.splitlines()] == [True]


def test_canary_wheel_runtime_has_no_vm_tracing(stock_report_pair, tmp_path, run_tool, mdc_compile):
    """Stock iree-run-module of the runtime wheel takes --trace_execution
    and prints no trace: the wheel is built without VM execution tracing
    (so mdc-run has no traced runner to hand a traced call to). Fails when
    a wheel traces; mdc-run could then run such calls in it."""
    out = tmp_path / "cpu_cpu.vmfb"
    assert mdc_compile(REPORT_PROGRAM, "--device=a=local[0]", "--device=b=local[1]", "-o", out).returncode == 0
    from mdc.runtime_shim.native import iree_run_module

    ran = run_tool([iree_run_module(), f"--module={out}", "--device=local-task", "--device=local-task",
                    "--function=mutli_device_mul", "--input=4xf32=10,11,12,13", "--trace_execution=true"])
    assert (ran.returncode, ran.stderr) == (0, ""), ran.stderr
    assert ran.stdout.splitlines()[-1] == printed(REPORT_OUTPUT)


# -- --expected_output -----------------------------------------------------------


@pytest.fixture(scope="module")
def types(build_vmfb):
    return build_vmfb("types", TYPES, ONE_LOCAL, flags=TYPES_FLAGS)


def both(run_tool, mdc_run, *flags):
    """(stock iree-run-module's, mdc-run's) runs of the same flags."""
    return run_tool([stock_run_module(), *flags]), mdc_run(*flags)


EXPECTED_CASES = [
    ("f32", ["2x3xf32=1"], ["2x3xf32=2"], []),
    ("f32", ["2x3xf32=1"], ["2x3xf32=2.0001"], []),                      # within atol 1e-4
    ("f32", ["2x3xf32=1"], ["2x3xf32=2.001"], []),                       # outside it
    ("f32", ["2x3xf32=1"], ["2x3xf32=2.001"], ["--expected_f32_threshold=0.01"]),
    ("f32", ["2x3xf32=1"], ["2x3xf32=2.0003"], ["--expected_rtol=0.0001"]),
    ("f32", ["2x3xf32=1"], ["2x3xf32=2.00001"], ["--equality_mode=exact"]),
    ("f32", ["2x3xf32=1"], ["2x3xf32=2"], ["--equality_mode=exact"]),
    ("f32", ["2x3xf32=1"], ["3x2xf32=2"], []),                           # shape
    ("f32", ["2x3xf32=1"], ["2x3xi32=2"], []),                           # element type
    ("f32", ["2x3xf32=1"], ["(ignored)"], []),
    ("f16", ["4xf16=1,2,3,4"], ["4xf16=2,4,6,8.01"], []),
    ("f16", ["4xf16=1,2,3,4"], ["4xf16=2,4,6,8.001"], []),
    ("bf16", ["4xbf16=1,2,3,4"], ["4xbf16=2,4,6,8.05"], []),
    ("f64", ["4xf64=1,2,3,4"], ["4xf64=2,4,6,8.00001"], []),
    ("nan", ["4xf32=1,inf,3,4"], ["4xf32=0,nan,0,0"], []),              # NaN matches NaN
    ("nan", ["4xf32=1,inf,3,4"], ["4xf32=0,0,0,0"], []),
    ("i8", ["4xi8=1,2,3,4"], ["4xi8=2,4,6,9"], []),
    ("positive", ["4xi8=1,0,3,-4"], ["4xi8=1,0,1,0"], []),
    ("two", ["4xf32=1.5,2,3,4"], ["4xf32=3,4,6,8", "4xi32=1,2,3,5"], []),
    ("two", ["4xf32=1.5,2,3,4"], ["4xf32=3,4,6,8"], []),                # fewer than the results
    ("big", ["2000xf32=1.5"], ["2000xf32=3"], []),
    ("big", ["2000xf32=1.5"], ["2000xf32=3.5"], []),
]


@pytest.mark.parametrize("function,inputs,expected,extra", EXPECTED_CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(EXPECTED_CASES)])
def test_expected_output_as_stock(types, run_tool, mdc_run, function, inputs, expected, extra):
    flags = [f"--module={types}", "--device=local-task", f"--function={function}",
             *(f"--input={i}" for i in inputs), *(f"--expected_output={e}" for e in expected), *extra]
    stock, ours = both(run_tool, mdc_run, *flags)
    assert (ours.returncode, ours.stdout, ours.stderr) == (stock.returncode, stock.stdout, "")
    assert ("[SUCCESS]" in ours.stdout) != ("[FAILED]" in ours.stdout)
    assert ours.returncode == (0 if "[SUCCESS]" in ours.stdout else 1)


def test_expected_output_from_files_as_stock(types, run_tool, mdc_run, tmp_path):
    want = np.full((2, 3), 2, np.float32)
    np.save(tmp_path / "e.npy", want)
    want.tofile(tmp_path / "e.bin")
    (want + 1).tofile(tmp_path / "wrong.bin")
    for expected in (f"@{tmp_path / 'e.npy'}", f"2x3xf32=@{tmp_path / 'e.bin'}",
                     f"2x3xf32=@{tmp_path / 'wrong.bin'}"):
        stock, ours = both(run_tool, mdc_run, f"--module={types}", "--device=local-task", "--function=f32",
                           "--input=2x3xf32=1", f"--expected_output={expected}")
        assert (ours.returncode, ours.stdout) == (stock.returncode, stock.stdout), expected


def test_canary_stock_scalar_results_never_match(types, run_tool, mdc_run):
    """Stock 3.13.0 reports every scalar result as a type mismatch ("expected
    i32 but got i32"), whatever its value. mdc-run compares them exactly."""
    inputs = [f"--input={v}" for v in ("3", "1.5", "7", "-9", "2.5")]
    flags = [f"--module={types}", "--device=local-task", "--function=scalars", *inputs]
    right = [f"--expected_output={v}" for v in ("3", "1.5", "7", "-9", "2.5")]
    stock = run_tool([stock_run_module(), *flags, *right])
    assert stock.returncode == 1 and "[FAILED] result[0]: variant types mismatch; expected i32 but got i32" in stock.stdout
    ours = mdc_run(*flags, *right)
    assert (ours.returncode, ours.stdout) == (0, "EXEC @scalars\n[SUCCESS] all function outputs matched their expected values.\n")
    wrong = mdc_run(*flags, "--expected_output=4", *right[1:])
    assert wrong.returncode == 1
    assert wrong.stdout == "EXEC @scalars\n[FAILED] result[0]: i32 values differ\n  expected: 4\n  actual: 3\n"


def test_expected_output_mistakes(types, mdc_run):
    base = [f"--module={types}", "--device=local-task", "--function=f32", "--input=2x3xf32=1"]
    extra = mdc_run(*base, "--expected_output=2x3xf32=2", "--expected_output=2x3xf32=2")
    assert (extra.returncode, extra.stdout) == (1, "EXEC @f32\n[FAILED] expected 2 list elements but 1 provided\n")
    bad = mdc_run(*base, "--expected_output=2x3xf32=2", "--equality_mode=fuzzy")
    assert bad.returncode == 2 and "--equality_mode: invalid choice: 'fuzzy'" in bad.stderr
    ignored = mdc_run(*base, "--expected_output=2x3xf32=2", "--output=@nowhere.npy")
    assert ignored.returncode == 0 and "--output is ignored with --expected_output" in ignored.stderr
    assert not Path("nowhere.npy").exists() and not (REPO / "nowhere.npy").exists()


# -- --input and --output files ---------------------------------------------------

ADD2 = """
func.func public @add(%a: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = arith.addf %a, %b : tensor<4xf32>
  %1 = arith.subf %a, %b : tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}
"""
A, B = np.float32([1.5, -2, 3, 40]), np.float32([0.25, 8, -3, 1])


@pytest.fixture(scope="module")
def add2(build_vmfb):
    return build_vmfb("add2", ADD2, ONE_LOCAL)


def test_raw_and_npy_inputs_as_stock(add2, run_tool, mdc_run, tmp_path):
    """SHAPExTYPE=@file reads raw bytes from the start, +file on from where
    the last value stopped; @file.npy the first array, +file.npy the next,
    *file.npy all that are left: as stock, and as numpy computes."""
    raw, npy = tmp_path / "ab.bin", tmp_path / "ab.npy"
    raw.write_bytes(A.tobytes() + B.tobytes())
    with open(npy, "wb") as f:
        np.save(f, A)
        np.save(f, B)
    want = f"EXEC @add\nresult[0]: hal.buffer_view\n{printed(A + B)}\nresult[1]: hal.buffer_view\n{printed(A - B)}\n"
    for inputs in ([f"4xf32=@{raw}", f"4xf32=+{raw}"], [f"@{npy}", f"+{npy}"], [f"*{npy}"],
                   [f"4xf32=@{raw}", f"4xf32=@{raw}"]):
        stock, ours = both(run_tool, mdc_run, f"--module={add2}", "--device=local-task",
                           *(f"--input={i}" for i in inputs))
        assert (ours.returncode, ours.stdout, ours.stderr) == (stock.returncode, stock.stdout, ""), inputs
        if inputs[1:] != [f"4xf32=@{raw}"]:
            assert ours.stdout == want


def test_input_file_mistakes(add2, mdc_run, tmp_path):
    from test_runtime_shim import assert_user_error

    raw = tmp_path / "short.bin"
    raw.write_bytes(A.tobytes()[:10])
    base = [f"--module={add2}", "--device=local-task"]
    assert_user_error(mdc_run(*base, f"--input=4xf32=@{raw}", "--input=4xf32=1"),
                      f"{raw} has 10 bytes from offset 0, and 4xf32 takes 16")
    one = tmp_path / "one.npy"
    np.save(one, A)
    assert_user_error(mdc_run(*base, f"--input=@{one}", f"--input=+{one}"),
                      "has no further .npy array at offset")
    assert_user_error(mdc_run(*base, f"--input=*{one}"), "@add takes 2 input(s), 1 --input given")
    assert_user_error(mdc_run(*base, f"--input=4xf32=@{tmp_path / 'none.bin'}", "--input=4xf32=1"),
                      "cannot read")


def test_outputs_as_stock(add2, run_tool, mdc_run, tmp_path):
    """@file.bin is the raw bytes, +file appends (to .npy: another array
    numpy.load reads next), byte for byte what stock writes; no temporary
    file is left."""
    def run(tool, out):
        flags = [f"--module={add2}", "--device=local-task", f"--input=4xf32={','.join(map(str, A))}",
                 f"--input=4xf32={','.join(map(str, B))}", *(f"--output={o}" for o in out)]
        done = (run_tool([stock_run_module(), *flags]) if tool == "stock" else mdc_run(*flags))
        assert (done.returncode, done.stdout) == (0, "EXEC @add\n"), done.stderr
    for tool in ("stock", "mdc"):
        d = tmp_path / tool
        d.mkdir()
        (d / "old.npy").write_bytes(b"")
        np.save(d / "old.npy", np.int8([7]))
        run(tool, [f"@{d / 'sum.bin'}", f"@{d / 'diff.npy'}"])
        run(tool, [f"@{d / 'both.npy'}", f"+{d / 'both.npy'}"])
        run(tool, [f"+{d / 'old.npy'}", f"+{d / 'raw.dat'}"])
        run(tool, [f"+{d / 'old.npy'}", ""])
    names = sorted(p.name for p in (tmp_path / "mdc").iterdir())
    assert names == sorted(p.name for p in (tmp_path / "stock").iterdir())
    for name in names:
        assert (tmp_path / "mdc" / name).read_bytes() == (tmp_path / "stock" / name).read_bytes(), name
    assert (tmp_path / "mdc" / "sum.bin").read_bytes() == (A + B).tobytes()
    with open(tmp_path / "mdc" / "old.npy", "rb") as f:
        loaded = [np.load(f) for _ in range(3)]
    np.testing.assert_array_equal(loaded[0], [7])
    np.testing.assert_array_equal(loaded[1], A + B)
    np.testing.assert_array_equal(loaded[2], A + B)


RANK0 = """
func.func public @total(%x: tensor<4xf32>) -> tensor<f32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>],
                       iterator_types = ["reduction"]} ins(%x : tensor<4xf32>) outs(%f : tensor<f32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %r : tensor<f32>
}
"""


def test_rank0_result_to_npy_as_stock(build_vmfb, run_tool, mdc_run, tmp_path):
    """A tensor<f32> result written to .npy is a 0-d array, as stock writes
    it (CI seed 796142387 p4: mdc-run wrote shape (1,)), byte for byte."""
    vmfb = build_vmfb("rank0", RANK0, ONE_LOCAL)
    for tool in ("stock", "mdc"):
        flags = [f"--module={vmfb}", "--device=local-task", "--input=4xf32=1,2,3,4",
                 f"--output=@{tmp_path / tool}.npy"]
        done = run_tool([stock_run_module(), *flags]) if tool == "stock" else mdc_run(*flags)
        assert done.returncode == 0, done.stderr
    got = np.load(tmp_path / "mdc.npy")
    assert got.shape == () and got == np.float32(10)
    assert (tmp_path / "mdc.npy").read_bytes() == (tmp_path / "stock.npy").read_bytes()


def test_scalar_outputs_as_stock(types, run_tool, mdc_run, tmp_path):
    for tool in ("stock", "mdc"):
        d = tmp_path / tool
        d.mkdir()
        flags = [f"--module={types}", "--device=local-task", "--function=scalars",
                 *(f"--input={v}" for v in ("3", "1.5", "7", "-9", "2.5")),
                 f"--output=@{d / 's.npy'}", *(f"--output=+{d / 's.npy'}" for _ in range(2)),
                 f"--output=@{d / 'i.bin'}", f"--output=+{d / 'i.bin'}"]
        done = run_tool([stock_run_module(), *flags]) if tool == "stock" else mdc_run(*flags)
        assert done.returncode == 0, done.stderr
    for name in ("s.npy", "i.bin"):
        assert (tmp_path / "mdc" / name).read_bytes() == (tmp_path / "stock" / name).read_bytes(), name
    with open(tmp_path / "mdc" / "s.npy", "rb") as f:
        assert [np.load(f).item() for _ in range(3)] == [3, 1.5, 7]


def test_output_mistakes(add2, mdc_run, tmp_path):
    from test_runtime_shim import assert_user_error

    base = [f"--module={add2}", "--device=local-task", "--input=4xf32=1", "--input=4xf32=2"]
    assert_user_error(mdc_run(*base, "--output=sum.npy", "--output="), "expected @file.npy or @file.bin")
    assert_user_error(mdc_run(*base, f"--output=+{tmp_path}", "--output="), "is a directory")
    assert_user_error(mdc_run(*base, f"--output=@{tmp_path / 'no' / 'x.bin'}", "--output="), "no directory")
    assert list(tmp_path.iterdir()) == []


# -- several modules, parameters, statistics ---------------------------------------

LIB = """
module @lib {
  func.func public @double(%x: tensor<4xf32>) -> tensor<4xf32> {
    %0 = arith.addf %x, %x : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
"""
MAIN = """
module @main {
  func.func private @lib.double(tensor<4xf32>) -> tensor<4xf32>
  func.func public @twice_plus(%x: tensor<4xf32>) -> tensor<4xf32> {
    %0 = call @lib.double(%x) : (tensor<4xf32>) -> tensor<4xf32>
    %1 = arith.addf %0, %x : tensor<4xf32>
    return %1 : tensor<4xf32>
  }
}
"""


def test_modules_load_in_order(build_vmfb, run_tool, mdc_run):
    """As stock: earlier --module flags are loaded first and the last
    module's function calls theirs; in the wrong order the call has
    nothing to bind to, which both say."""
    lib, main = build_vmfb("lib", LIB, ONE_LOCAL), build_vmfb("main", MAIN, ONE_LOCAL)
    flags = ["--device=local-task", "--function=twice_plus", "--input=4xf32=1,2,3,-4"]
    stock, ours = both(run_tool, mdc_run, f"--module={lib}", f"--module={main}", *flags)
    assert (ours.returncode, ours.stdout) == (stock.returncode, stock.stdout) == (0, ours.stdout)
    assert ours.stdout.splitlines()[-1] == printed(3 * np.float32([1, 2, 3, -4]))
    stock, ours = both(run_tool, mdc_run, f"--module={main}", f"--module={lib}", *flags)
    assert stock.returncode != 0 and "required module 'lib'" in stock.stderr
    assert ours.returncode == 2 and "required module 'lib'" in ours.stderr and "Traceback" not in ours.stderr


PARAMS = """
util.global private @w = #flow.parameter.named<"model"::"w"> : tensor<4xf32>
func.func public @scale(%x: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}) -> (tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %w = util.global.load @w : tensor<4xf32>
  %x_b = flow.tensor.transfer %x : tensor<4xf32> to #hal.device.promise<@device_b>
  %w_b = flow.tensor.transfer %w : tensor<4xf32> to #hal.device.promise<@device_b>
  %p = arith.mulf %x_b, %w_b : tensor<4xf32>
  %back = flow.tensor.transfer %p : tensor<4xf32> to #hal.device.promise<@device_a>
  return %back : tensor<4xf32>
}
"""
W = np.float32([1, -2, 0.5, 4])


@pytest.fixture(scope="module")
def irpa(tmp_path_factory):
    path = tmp_path_factory.mktemp("params") / "w.irpa"
    index = rt.ParameterIndex()
    index.add_buffer("w", W.tobytes())
    index.create_archive_file(str(path))
    return path


@pytest.mark.parametrize("mode", ["file", "preload"])
def test_parameters(build_vmfb, irpa, run_tool, mdc_run, mode):
    """--parameters=model=w.irpa feeds the program's #flow.parameter.named
    global, the value crossing to (staged) device_b: as stock, and as numpy."""
    vmfb = build_vmfb("params", PARAMS, ("a=local[0]", "b=local[1]"), links=("a:b=staged",))
    flags = [f"--module={vmfb}", "--device=local-task", "--device=local-sync",
             f"--parameters=model={irpa}", f"--parameter_mode={mode}", "--input=4xf32=10,20,30,40"]
    stock, ours = both(run_tool, mdc_run, *flags)
    assert (ours.returncode, ours.stdout, ours.stderr) == (0, stock.stdout, ""), ours.stderr
    assert ours.stdout.splitlines()[-1] == printed(np.float32([10, 20, 30, 40]) * W)
    missing = mdc_run(*[f for f in flags if not f.startswith("--parameters")])
    assert missing.returncode == 2 and "give their file with --parameters=SCOPE=FILE" in missing.stderr
    nofile = mdc_run(*flags[:3], "--parameters=model=/nonexistent.irpa", flags[-1])
    assert nofile.returncode == 2 and "--parameters=model=/nonexistent.irpa: no such file" in nofile.stderr


def test_print_statistics(add2, mdc_run):
    flags = [f"--module={add2}", "--device=local-task", "--input=4xf32=1", "--input=4xf32=2"]
    plain = mdc_run(*flags)
    for flag in ("--print_statistics", "--print_statistics=true"):
        stats = mdc_run(*flags, flag)
        assert (stats.returncode, stats.stdout) == (0, plain.stdout)
        assert stats.stderr.startswith("Device: local-task\n[[ iree_hal_allocator_t memory statistics ]]\n"
                                       "  HOST_LOCAL:"), stats.stderr
        assert "DEVICE_LOCAL:" in stats.stderr and "B live" in stats.stderr
    assert mdc_run(*flags, "--print_statistics=false").stderr == ""


@pytest.mark.vulkan
def test_vulkan_beside_cpu_parameters_expected_statistics(build_vmfb, irpa, mdc_run):
    """Run by the wheel's iree-run-module (Vulkan beside a CPU): parameters
    reach it, --expected_output is checked here, its statistics are shown."""
    vmfb = build_vmfb("params_vk", PARAMS, ("a=local[0]", "b=vulkan[0]"))
    want = ",".join(map(str, np.float32([10, 20, 30, 40]) * W))
    flags = [f"--module={vmfb}", "--device=local-task", "--device=vulkan", f"--parameters=model={irpa}",
             "--input=4xf32=10,20,30,40"]
    ok = mdc_run(*flags, f"--expected_output=4xf32={want}", "--print_statistics")
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout == "EXEC @scale\n[SUCCESS] all function outputs matched their expected values.\n"
    assert "Device: local-task\n" in ok.stderr and "Device: vulkan\n" in ok.stderr
    bad = mdc_run(*flags, "--expected_output=4xf32=0")
    assert bad.returncode == 1 and "[FAILED] result[0]: element at index 0" in bad.stdout


# -- flags --------------------------------------------------------------------------


def test_flags_as_stock_takes_them(add2, run_tool, mdc_run, tmp_path):
    """--flagfile, the driver flags, the informational flags; the flags
    mdc-run does not offer are refused with the reason."""
    from test_runtime_shim import assert_user_error

    flagfile = tmp_path / "flags.txt"
    flagfile.write_text(f"# a comment\n--module={add2}\n\n--device=local-task\n--input=4xf32=1\n")
    stock, ours = both(run_tool, mdc_run, f"--flagfile={flagfile}", "--input=4xf32=2",
                       "--task_topology_max_group_count=1", "--task_worker_spin_us=0")
    assert (ours.returncode, ours.stdout, ours.stderr) == (0, stock.stdout, ""), ours.stderr
    for info in ("--list_drivers", "--list_devices=local-task"):
        stock, ours = both(run_tool, mdc_run, info)
        assert (ours.returncode, ours.stdout) == (stock.returncode, stock.stdout) == (0, stock.stdout)
    base = [f"--module={add2}", "--device=local-task", "--input=4xf32=1", "--input=4xf32=2"]
    assert_user_error(mdc_run(*base, "--device_profiling_mode=queue-events"),
                      "--device_profiling_mode is not supported", "does not expose")
    assert_user_error(mdc_run(*base, "--device_lead_allocator=1"), "--device_lead_allocator is not supported")
    assert_user_error(mdc_run(*base, "--task_no_such_flag=1"), "bad runtime flag")
    assert_user_error(mdc_run(*base, f"--flagfile={tmp_path / 'none.txt'}"), "cannot read")
