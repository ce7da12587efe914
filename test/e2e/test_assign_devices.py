"""--place=FILE.json end to end: hand-written programs with their weights as
util.global constants, placed by assignment files, compiled by mdc-compile,
run through mdc-run and mdc.runtime_shim.load, and compared with numpy.

Two programs: a chain of two matmuls and elementwise ops (each matmul of
its own shape, so that its dispatch can be found by name), and an
embedding-style gather from a table followed by a matmul. Each runs under
several assignments on a CPU pair with staging forced (the GPU code path)
and on local + lavapipe (a device with memory of its own: a value the
rewrite failed to move fails there). The stream IR of each compile shows
every matmul assigned to the accelerator dispatched there, and every
other one on the host.
"""

from __future__ import annotations

import json
import re
import sys

import numpy as np
import pytest

from harness.placement import matmul_lines, run_both_ways

CPU_PAIR = (("cpu=local[0]", "gpu=local[1]"), ("--link=cpu:gpu=staged",), ("local-task", "local-sync"))
VULKAN_PAIR = (("cpu=local[0]", "gpu=vulkan[0]"), (), ("local-task", "vulkan"))
RNG = np.random.default_rng(34)


def _dense(a: np.ndarray) -> str:
    return f"dense<{json.dumps(a.tolist())}> : tensor<{'x'.join(map(str, a.shape))}xf32>"


# The chain: units 0 matmul 4x16x8, 1 add of b1, 2 tanh, 3 matmul 4x8x16.
W1, B1, W2 = (RNG.standard_normal(s).astype(np.float32) / 4 for s in ((8, 16), (4, 16), (16, 8)))
CHAIN = "\n".join([
    f"util.global private @w1 = {_dense(W1)}",
    f"util.global private @b1 = {_dense(B1)}",
    f"util.global private @w2 = {_dense(W2)}",
    "func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {",
    "  %zero = arith.constant 0.0 : f32",
    "  %w1 = util.global.load @w1 : tensor<8x16xf32>",
    *matmul_lines("x", "w1", "h", 4, 8, 16),
    "  %b1 = util.global.load @b1 : tensor<4x16xf32>",
    "  %a = arith.addf %h, %b1 : tensor<4x16xf32>",
    "  %t = math.tanh %a : tensor<4x16xf32>",
    "  %w2 = util.global.load @w2 : tensor<16x8xf32>",
    *matmul_lines("t", "w2", "y", 4, 16, 8),
    "  return %y : tensor<4x8xf32>",
    "}", ""])
CHAIN_MATMULS = {0: "matmul_4x16x8_f32", 3: "matmul_4x8x16_f32"}


def chain_reference(x):
    return np.tanh(x @ W1 + B1) @ W2


# The gather: units 0 the rows of @table that ids names, 1 matmul 3x4x8.
TABLE, W = RNG.standard_normal((10, 8)).astype(np.float32), RNG.standard_normal((8, 4)).astype(np.float32)
GATHER = "\n".join([
    f"util.global private @table = {_dense(TABLE)}",
    f"util.global private @w = {_dense(W)}",
    "func.func @main(%ids: tensor<3xi64>) -> tensor<3x4xf32> {",
    "  %zero = arith.constant 0.0 : f32",
    "  %table = util.global.load @table : tensor<10x8xf32>",
    "  %rows_e = tensor.empty() : tensor<3x8xf32>",
    "  %rows = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], "
    'iterator_types = ["parallel", "parallel"]} ins(%ids : tensor<3xi64>) outs(%rows_e : tensor<3x8xf32>) {',
    "  ^bb0(%id: i64, %o: f32):",
    "    %r = arith.index_cast %id : i64 to index",
    "    %c = linalg.index 1 : index",
    "    %v = tensor.extract %table[%r, %c] : tensor<10x8xf32>",
    "    linalg.yield %v : f32",
    "  } -> tensor<3x8xf32>",
    "  %w = util.global.load @w : tensor<8x4xf32>",
    *matmul_lines("rows", "w", "y", 3, 8, 4),
    "  return %y : tensor<3x4xf32>",
    "}", ""])
GATHER_MATMULS = {0: "elementwise_broadcast_3x8_i64xf32", 1: "matmul_3x4x8_f32"}


def gather_reference(ids):
    return TABLE[ids] @ W


def _assignment(units: str, weights: dict) -> dict:
    """``units``: one letter a unit, c(pu) or g(pu), in unit order."""
    device = {"c": "cpu", "g": "gpu"}
    return {"units": [{"id": i, "device": device[d]} for i, d in enumerate(units)],
            "weights": [{"name": n, "device": device[d]} for n, d in weights.items()]}


# (id, program, matmul dispatches by unit, numpy reference, input, assignment)
CASES = [
    ("chain-all-cpu", CHAIN, CHAIN_MATMULS, chain_reference, "x", _assignment("cccc", {"w1": "c", "b1": "c", "w2": "c"})),
    ("chain-all-gpu", CHAIN, CHAIN_MATMULS, chain_reference, "x", _assignment("gggg", {"w1": "g", "b1": "g", "w2": "g"})),
    ("chain-first-half-gpu", CHAIN, CHAIN_MATMULS, chain_reference, "x",
     _assignment("ggcc", {"w1": "g", "b1": "g", "w2": "c"})),
    # Every unit on the other device than the last, and each weight on the
    # other device than its user: a crossing on every edge.
    ("chain-alternating", CHAIN, CHAIN_MATMULS, chain_reference, "x",
     _assignment("cgcg", {"w1": "g", "b1": "c", "w2": "c"})),
    ("gather-table-on-cpu", GATHER, GATHER_MATMULS, gather_reference, "ids", _assignment("cg", {"table": "c", "w": "g"})),
    ("gather-all-gpu", GATHER, GATHER_MATMULS, gather_reference, "ids", _assignment("gg", {"table": "g", "w": "g"})),
    ("gather-matmul-on-cpu", GATHER, GATHER_MATMULS, gather_reference, "ids",
     _assignment("gc", {"table": "c", "w": "g"})),
]
INPUTS = {"x": RNG.standard_normal((4, 8)).astype(np.float32), "ids": np.array([7, 0, 7], dtype=np.int64)}


def _write_case(tmp_path, case):
    name, program, _, _, _, assignment = case
    source, placement = tmp_path / f"{name}.mlir", tmp_path / f"{name}.json"
    source.write_text(program)
    placement.write_text(json.dumps(assignment))
    return source, placement


def _compile(run_tool, source, placement, devices, links, *extra):
    r = run_tool([sys.executable, "-m", "mdc.pipeline", source, *(f"--device={d}" for d in devices), *links,
                  f"--place={placement}", "--iree-llvmcpu-target-cpu=host", *extra], timeout=300)
    assert r.returncode == 0, r.stderr
    return r


def _dispatch_devices(stream_ir: str) -> dict[str, set]:
    """Each dispatch of @main's code (by entry point name) -> the devices
    whose execution regions dispatch it."""
    found: dict[str, set] = {}
    device = None
    for line in stream_ir.splitlines():
        m = re.search(r"stream\.cmd\.execute .*on\(#hal\.device\.affinity<@(\w+)>\)", line)
        if m:
            device = m.group(1)
        m = re.search(r"stream\.cmd\.dispatch @(\w+)::@(\w+)", line)
        if m and device is not None:
            found.setdefault(m.group(2), set()).add(device)
    return found


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_each_unit_runs_where_the_file_puts_it(case, tmp_path, run_tool):
    """--compile-to=stream: every matmul (and the gather) runs on the device
    the file assigns it, and with everything on one device every dispatch
    of the program runs there."""
    source, placement = _write_case(tmp_path, case)
    devices, links, _ = CPU_PAIR
    out = tmp_path / "stream.mlir"
    _compile(run_tool, source, placement, devices, links, "--compile-to=stream", "-o", out)
    dispatched = _dispatch_devices(out.read_text())
    units = {u["id"]: u["device"] for u in case[5]["units"]}
    for unit, kernel in case[2].items():
        where = [devices for name, devices in dispatched.items() if name.endswith(kernel)]
        assert where == [{units[unit]}], (kernel, dispatched)
    program = {name: d for name, d in dispatched.items() if name.startswith("main_dispatch")}
    if len(set(units.values())) == 1:
        assert set().union(*program.values()) == set(units.values()), program


def _check_results(case, tmp_path, pair, run_tool, mdc_run):
    source, placement = _write_case(tmp_path, case)
    devices, links, runtime_devices = pair
    vmfb, report = tmp_path / "placed.vmfb", tmp_path / "report.json"
    r = _compile(run_tool, source, placement, devices, links, f"--report={report}", "-o", vmfb)
    assert re.search(r"placed @main from .*: (\d+ of \d+ units on gpu|all \d+ units on cpu), .* a call estimated .*; \d+ crossings? a call", r.stderr)
    placed = json.loads(report.read_text())["placement"]
    assert [u["device"] for u in placed["units"]] == [u["device"] for u in case[5]["units"]]
    x = INPUTS[case[4]]
    want = case[3](x)
    for got in run_both_ways(tmp_path, vmfb, runtime_devices, x, mdc_run):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_placed_program_matches_numpy_on_a_staged_cpu_pair(case, tmp_path, run_tool, mdc_run):
    _check_results(case, tmp_path, CPU_PAIR, run_tool, mdc_run)


VULKAN_CASES = [c for c in CASES if c[0] in ("chain-alternating", "gather-table-on-cpu", "gather-all-gpu")]


@pytest.mark.vulkan
@pytest.mark.parametrize("case", VULKAN_CASES, ids=[c[0] for c in VULKAN_CASES])
def test_placed_program_matches_numpy_on_local_and_lavapipe(case, tmp_path, run_tool, mdc_run):
    _check_results(case, tmp_path, VULKAN_PAIR, run_tool, mdc_run)


def test_the_python_api_takes_the_placement_keywords(tmp_path):
    """mdc.pipeline.compile(place=..., ...): the file's placement in the
    result's report; a usage mistake is a CompileError with status 2."""
    from mdc.pipeline import compile as mdc_compile
    from mdc.pipeline.driver import CompileError

    source, placement = _write_case(tmp_path, CASES[2])
    result = mdc_compile(source, ["cpu=local[0]", "gpu=local[1]"], links=["cpu:gpu=staged"], place=str(placement),
                         compile_to="mdc", iree_flags=["--iree-llvmcpu-target-cpu=host"])
    assert [u["device"] for u in result.report.placement["units"]] == ["gpu", "gpu", "cpu", "cpu"]
    assert "stream.tensor.dispatch on(#hal.device.affinity<@gpu>)" in result.text
    # The program's dimensions are all static: a bound for one is a mistake, named as the keyword.
    with pytest.raises(CompileError, match=r"max_dims entry 'arg0.d0=4': arg0.d0 of @main is static") as e:
        mdc_compile(source, ["cpu=local[0]", "gpu=local[1]"], place=str(placement), max_dims={"arg0.d0": 4},
                    compile_to="mdc")
    assert e.value.exit_code == 2
    with pytest.raises(CompileError, match="needs exactly two devices") as e:
        mdc_compile(source, ["cpu=local[0]"], place="auto")
    assert e.value.exit_code == 2
    with pytest.raises(CompileError, match=r"^gpu_memory='8 parsecs': expected a size"):
        mdc_compile(source, ["cpu=local[0]", "gpu=local[1]"], place="auto", gpu_memory="8 parsecs")
