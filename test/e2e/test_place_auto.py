"""--place=auto end to end: hand-written programs with their weights as
util.global constants, placed by the search under budgets that force
different splits, compiled by mdc-compile, run through mdc-run and
mdc.runtime_shim.load, and compared with numpy and with stock iree-compile
on one local device.

Two programs: a chain (a gather of rows from an embedding table, two
matmuls with a bias and a tanh between them) and a small DAG with a
residual (a matmul, a relu, a second matmul added back to the first's
output). The machine profile makes the device named gpu 1000x faster
than local (a device name's entry overrides its kind's), so that the
search puts on gpu all that the budget lets it. They run on a CPU pair
with staging forced (the GPU code path) and on local + lavapipe.

Each compile is checked statically too: the report's accelerator bytes
are within the budget, and the weights it puts on gpu are exactly the
globals IREE's stream IR (--compile-to=stream) keeps on gpu.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import numpy as np
import pytest

from harness.placement import fast_gpu_profile, matmul_lines, run_both_ways

CPU_PAIR = (("cpu=local[0]", "gpu=local[1]"), ("--link=cpu:gpu=staged",), ("local-task", "local-sync"))
VULKAN_PAIR = (("cpu=local[0]", "gpu=vulkan[0]"), (), ("local-task", "vulkan"))
RNG = np.random.default_rng(3434)


def _dense(a: np.ndarray) -> str:
    values = json.dumps(np.round(a, 4).tolist())
    return f"dense<{values}> : tensor<{'x'.join(map(str, a.shape))}xf32>"


def _weights(**shapes) -> dict[str, np.ndarray]:
    return {name: np.round(RNG.standard_normal(shape).astype(np.float32) / 4, 4) for name, shape in shapes.items()}


# The chain: 0 gather of 4 rows of @table (64x32), 1 matmul by @w1 (32x64),
# 2 add of @b1, 3 tanh, 4 matmul by @w2 (64x16).
CHAIN_W = _weights(table=(64, 32), w1=(32, 64), b1=(4, 64), w2=(64, 16))
CHAIN = "\n".join([
    *(f"util.global private @{n} = {_dense(a)}" for n, a in CHAIN_W.items()),
    "func.func @main(%ids: tensor<4xi64>) -> tensor<4x16xf32> {",
    "  %zero = arith.constant 0.0 : f32",
    "  %table = util.global.load @table : tensor<64x32xf32>",
    "  %rows_e = tensor.empty() : tensor<4x32xf32>",
    "  %rows = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], "
    'iterator_types = ["parallel", "parallel"]} ins(%ids : tensor<4xi64>) outs(%rows_e : tensor<4x32xf32>) {',
    "  ^bb0(%id: i64, %o: f32):",
    "    %r = arith.index_cast %id : i64 to index",
    "    %c = linalg.index 1 : index",
    "    %v = tensor.extract %table[%r, %c] : tensor<64x32xf32>",
    "    linalg.yield %v : f32",
    "  } -> tensor<4x32xf32>",
    "  %w1 = util.global.load @w1 : tensor<32x64xf32>",
    *matmul_lines("rows", "w1", "h", 4, 32, 64),
    "  %b1 = util.global.load @b1 : tensor<4x64xf32>",
    "  %a = arith.addf %h, %b1 : tensor<4x64xf32>",
    "  %t = math.tanh %a : tensor<4x64xf32>",
    "  %w2 = util.global.load @w2 : tensor<64x16xf32>",
    *matmul_lines("t", "w2", "y", 4, 64, 16),
    "  return %y : tensor<4x16xf32>",
    "}", ""])


def chain_reference(ids):
    w = CHAIN_W
    return np.tanh(w["table"][ids] @ w["w1"] + w["b1"]) @ w["w2"]


# The DAG: 0 matmul by @wa (16x48), 1 relu, 2 matmul by @wb (48x48),
# 3 the residual add of unit 0's output, 4 matmul by @wc (48x8).
DAG_W = _weights(wa=(16, 48), wb=(48, 48), wc=(48, 8))
DAG = "\n".join([
    *(f"util.global private @{n} = {_dense(a)}" for n, a in DAG_W.items()),
    "func.func @main(%x: tensor<8x16xf32>) -> tensor<8x8xf32> {",
    "  %zero = arith.constant 0.0 : f32",
    "  %zeros = arith.constant dense<0.0> : tensor<8x48xf32>",
    "  %wa = util.global.load @wa : tensor<16x48xf32>",
    *matmul_lines("x", "wa", "h", 8, 16, 48),
    "  %r = arith.maximumf %h, %zeros : tensor<8x48xf32>",
    "  %wb = util.global.load @wb : tensor<48x48xf32>",
    *matmul_lines("r", "wb", "g", 8, 48, 48),
    "  %s = arith.addf %g, %h : tensor<8x48xf32>",
    "  %wc = util.global.load @wc : tensor<48x8xf32>",
    *matmul_lines("s", "wc", "y", 8, 48, 8),
    "  return %y : tensor<8x8xf32>",
    "}", ""])


def dag_reference(x):
    w = DAG_W
    h = x @ w["wa"]
    return (np.maximum(h, 0) @ w["wb"] + h) @ w["wc"]


PROGRAMS = {"chain": (CHAIN, chain_reference, np.array([63, 0, 7, 7], dtype=np.int64)),
            "dag": (DAG, dag_reference, RNG.standard_normal((8, 16)).astype(np.float32))}


@pytest.fixture(scope="module")
def profile(tmp_path_factory):
    return str(fast_gpu_profile(tmp_path_factory.mktemp("profile") / "fast_gpu.json", crossing_bytes_per_s=1e11))


def _mdc_compile(run_tool, source, devices, links, *flags):
    return run_tool([sys.executable, "-m", "mdc.pipeline", source, *(f"--device={d}" for d in devices), *links,
                     "--iree-llvmcpu-target-cpu=host", *flags], timeout=300)


def _place(run_tool, tmp_path, name, pair, profile, budget, *extra, out=""):
    """mdc-compile --place=auto of program ``name`` under ``budget`` (None:
    none): the vmfb, the report's placement, the stream IR, stderr (the
    outputs' names end in ``out``)."""
    devices, links, _ = pair
    source = tmp_path / f"{name}.mlir"
    source.write_text(PROGRAMS[name][0])
    vmfb, report, stages = (tmp_path / f"{name}{out}.vmfb", tmp_path / f"{name}{out}.json",
                            tmp_path / f"{name}{out}-stages")
    r = _mdc_compile(run_tool, source, devices, links, "--place=auto", f"--place-profile={profile}",
                     *([f"--gpu-memory={budget}"] if budget is not None else []), f"--report={report}",
                     f"--dump-stages={stages}", "-o", vmfb, *extra)
    assert r.returncode == 0, r.stderr
    return vmfb, json.loads(report.read_text())["placement"], (stages / "stream.mlir").read_text(), r.stderr


def _constant_bytes_by_device(stream_ir: str) -> dict[str, int]:
    """The bytes of the constants (the weights) IREE's initializer makes on
    each device, from its stream IR."""
    found: dict[str, int] = {}
    for device, size in re.findall(r"stream\.resource\.try_map on\(#hal\.device\.affinity<@(\w+)>\) "
                                   r"%\w+\[%c0\] : !util\.buffer -> i1, !stream\.resource<constant>\{%c(\d+)\}",
                                   stream_ir):
        found[device] = found.get(device, 0) + int(size)
    return found


def _check_static(placement, stream_ir, budget):
    """The report's accelerator bytes are within the budget; the weights it
    puts on each device are what IREE keeps there."""
    used = placement["accelerator_bytes"]
    if budget is not None:
        limit = int(budget[:-len("KiB")]) * 1024 if budget.endswith("KiB") else int(budget)
        assert placement["budget_bytes"] == limit
        assert used["total"] <= limit and used["fits"], used
    placed: dict[str, int] = {}
    for w in placement["weights"]:
        placed[w["device"]] = placed.get(w["device"], 0) + w["bytes"]
    assert _constant_bytes_by_device(stream_ir) == {d: b for d, b in placed.items() if b}, placement["weights"]
    assert used["weights"] == placed.get("gpu", 0)


@pytest.fixture(scope="module")
def stock_results(build_stock_vmfb):
    """Each program's result from stock iree-compile and iree.runtime, all
    on one local device."""
    import iree.runtime as rt

    results = {}
    for name, (program, _, x) in PROGRAMS.items():
        vmfb = build_stock_vmfb(f"stock-{name}", program, {"cpu": "local[0]"})
        results[name] = np.asarray(rt.load_vm_flatbuffer_file(str(vmfb), driver="local-task").main(x))
    return results


def _check_results(tmp_path, name, pair, vmfb, mdc_run, stock):
    _, reference, x = PROGRAMS[name]
    for got in run_both_ways(tmp_path, vmfb, pair[2], x, mdc_run):
        np.testing.assert_allclose(got, reference(x), rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(got, stock[name], rtol=1e-5, atol=1e-5)


# (program, budget, units on gpu): budgets that force different splits.
SPLITS = [("chain", None, 5), ("chain", "20KiB", 4), ("chain", "10KiB", 3), ("chain", "0", 0),
          ("dag", "10KiB", 4), ("dag", "4KiB", 1)]


@pytest.mark.parametrize("name,budget,on_gpu", SPLITS, ids=[f"{s[0]}-{s[1]}" for s in SPLITS])
def test_auto_placement_on_a_staged_cpu_pair(name, budget, on_gpu, tmp_path, profile, run_tool, mdc_run,
                                             stock_results):
    vmfb, placement, stream_ir, stderr = _place(run_tool, tmp_path, name, CPU_PAIR, profile, budget)
    units = [u["device"] for u in placement["units"]]
    assert units.count("gpu") == on_gpu, units
    if on_gpu == 0:
        assert "all 5 units on cpu, as --gpu-memory=0 asks" in stderr
    else:
        assert re.search(rf"mdc-compile: placed @main: {on_gpu} of 5 units on gpu, .* a call estimated", stderr)
    _check_static(placement, stream_ir, budget)
    _check_results(tmp_path, name, CPU_PAIR, vmfb, mdc_run, stock_results)


@pytest.mark.vulkan
@pytest.mark.parametrize("name,budget,on_gpu", [("chain", "10KiB", 3), ("dag", "10KiB", 4)])
def test_auto_placement_on_local_and_lavapipe(name, budget, on_gpu, tmp_path, profile, run_tool, mdc_run,
                                              stock_results):
    vmfb, placement, stream_ir, _ = _place(run_tool, tmp_path, name, VULKAN_PAIR, profile, budget)
    assert [u["device"] for u in placement["units"]].count("gpu") == on_gpu
    _check_static(placement, stream_ir, budget)
    _check_results(tmp_path, name, VULKAN_PAIR, vmfb, mdc_run, stock_results)


@pytest.mark.vulkan
def test_auto_keeps_narrow_tensors_off_lavapipe_and_matches_numpy(tmp_path, profile, run_tool):
    """Issue 45: auto put f16 work on lavapipe, where stock IREE 3.13 does
    not compile an f16 matmul and reads and writes f16 wrong. With gpu fast,
    auto now keeps the f16 matmul and the unit reading its f16 result on the
    host and puts the f32 rest on lavapipe; the module compiles and matches
    numpy (the f16 matmul rounded to f16, as the program says)."""
    from mdc.runtime_shim import load

    source = Path(__file__).resolve().parents[2] / "test" / "lit" / "assign" / "Inputs" / "f16_then_f32.mlir"
    vmfb, report = tmp_path / "mixed.vmfb", tmp_path / "mixed.json"
    r = _mdc_compile(run_tool, source, VULKAN_PAIR[0], VULKAN_PAIR[1], "--place=auto", f"--place-profile={profile}",
                     f"--report={report}", "-o", vmfb)
    assert r.returncode == 0, r.stderr
    units = json.loads(report.read_text())["placement"]["units"]
    assert [u["device"] for u in units] == ["cpu", "cpu", "gpu", "gpu"]
    assert all("f16 tensors" in u["why"] for u in units[:2])
    a, b = (np.round(RNG.standard_normal((64, 64)) / 8, 3).astype(np.float16) for _ in range(2))
    y = RNG.standard_normal((64, 64)).astype(np.float32)
    product = (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16).astype(np.float32)
    with load(str(vmfb), list(VULKAN_PAIR[2])) as m:
        got = np.asarray(m.main(a, b, y))
    np.testing.assert_allclose(got, np.tanh(product) + y, rtol=1e-3, atol=1e-3)


def test_the_same_program_and_profile_give_the_same_vmfb_and_report(tmp_path, profile, run_tool):
    """Determinism: twice the same compile, byte-identical vmfb and the
    same report and summary."""
    first, second = (_place(run_tool, tmp_path, "dag", CPU_PAIR, profile, "10KiB", out=out) for out in ("1", "2"))
    assert first[0].read_bytes() == second[0].read_bytes()
    assert first[1] == second[1]
    assert first[3] == second[3]


# Bad inputs: (id, argv after the source, the one line, exit status).
BAD = [
    ("profile-missing", ["--place-profile=no_such_profile.json"],
     r"mdc-compile: error: --place-profile=no_such_profile.json: no such file", 2),
    ("profile-not-json", ["--place-profile={not_json}"],
     r"mdc-compile: error: machine profile .*not_json.json: not JSON \(line 1: .*\)", 1),
    ("profile-wrong-field", ["--place-profile={wrong_field}"],
     r"mdc-compile: error: machine profile .*wrong_field.json: devices.local.seconds_per_call "
     r"is not a finite number \('fast'\)", 1),
    ("one-device", ["--device=cpu=local[0]"],
     r"mdc-compile: error: --place=auto needs exactly two devices, a host and an accelerator \(got 1\): "
     r"e\.g\. --device=cpu=local\[0\] --device=gpu=cuda\[0\]", 2),
    ("three-devices", ["--device=cpu=local[0]", "--device=gpu=local[1]", "--device=npu=local[2]"],
     r"mdc-compile: error: --place=auto needs exactly two devices, a host and an accelerator \(got 3\): "
     r"e\.g\. --device=cpu=local\[0\] --device=gpu=cuda\[0\]", 2),
    ("unbounded-dimension", ["dynamic"],
     r".*dynamic.mlir:\d+:\d+: error: dimension arg0.d0 is dynamic and automatic placement needs a bound: "
     r"give --max-dim=arg0.d0=N", 1),
]
DYNAMIC = "\n".join([
    "func.func @main(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {",
    "  %e = math.exp %x : tensor<?x4xf32>",
    "  return %e : tensor<?x4xf32>",
    "}", ""])


@pytest.mark.parametrize("case", BAD, ids=[b[0] for b in BAD])
def test_every_bad_input_is_one_line_and_leaves_no_output(case, tmp_path, profile, run_tool):
    """The exit status docs/mdc-compile.md gives, one line, no traceback; a
    failed compile (status 1) removes an earlier run's outputs, a command
    line not understood (2) writes none."""
    _, flags, line, status = case
    (tmp_path / "not_json.json").write_text("{")
    document = json.loads(open(profile).read())
    document["devices"]["local"]["seconds_per_call"] = "fast"
    (tmp_path / "wrong_field.json").write_text(json.dumps(document))
    source = tmp_path / "program.mlir"
    source.write_text(DYNAMIC if flags == ["dynamic"] else CHAIN)
    if flags == ["dynamic"]:
        source = source.rename(tmp_path / "dynamic.mlir")
    flags = [f.format(not_json=tmp_path / "not_json.json", wrong_field=tmp_path / "wrong_field.json")
             for f in flags if f != "dynamic"]
    devices = [f[len("--device="):] for f in flags if f.startswith("--device=")] or list(CPU_PAIR[0])
    others = [f for f in flags if not f.startswith("--device=")]
    if not any(f.startswith("--place-profile") for f in others):
        others.append(f"--place-profile={profile}")
    outputs = [tmp_path / "out.vmfb", tmp_path / "out.json"]
    if status == 1:  # an earlier run's outputs, which a failed compile removes
        for path in outputs:
            path.write_text("stale")
    r = run_tool([sys.executable, "-m", "mdc.pipeline", source, *(f"--device={d}" for d in devices), "--place=auto",
                  *others, f"--report={outputs[1]}", "-o", outputs[0]], cwd=tmp_path)
    assert r.returncode == status, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and re.fullmatch(line, lines[0]), r.stderr
    assert "Traceback" not in r.stderr
    assert not any(path.exists() for path in outputs)


def test_the_python_api_places_automatically(tmp_path, profile):
    """mdc.pipeline.compile(place="auto", gpu_memory=...): the search's
    placement in the result's report, its vmfb run by load; a budget too
    small for any work on the accelerator places it all on the host, with a
    warning; a program that cannot be placed is a CompileError with status 1."""
    from mdc.pipeline import compile as mdc_compile
    from mdc.pipeline.driver import CompileError
    from mdc.runtime_shim import load

    source = tmp_path / "chain.mlir"
    source.write_text(CHAIN)
    result = mdc_compile(source, list(CPU_PAIR[0]), links=["cpu:gpu=staged"], place="auto", gpu_memory="10KiB",
                         place_profile=profile, iree_flags=["--iree-llvmcpu-target-cpu=host"])
    placement = result.report.placement
    assert [u["device"] for u in placement["units"]].count("gpu") == 3
    assert placement["accelerator_bytes"]["total"] <= 10 * 1024
    assert placement["summary"].startswith("placed @main: 3 of 5 units on gpu, ")
    result.save(tmp_path / "chain.vmfb")
    _, reference, ids = PROGRAMS["chain"]
    with load(str(tmp_path / "chain.vmfb"), list(CPU_PAIR[2])) as m:
        np.testing.assert_allclose(np.asarray(m.main(ids)), reference(ids), rtol=1e-4, atol=1e-4)
    small = mdc_compile(source, list(CPU_PAIR[0]), place="auto", gpu_memory=1024, place_profile=profile)
    assert all(u["device"] == "cpu" for u in small.report.placement["units"])
    (warning,) = [w for w in small.warnings if "fits no work" in w.message]
    assert re.match(r"@main: --gpu-memory=1024 \(1 KiB\) fits no work on 'gpu', so everything stays on 'cpu', "
                    r"as with --gpu-memory=0: the largest unit is .*; --gpu-memory=\d+ \(.*\) is the least",
                    warning.message), warning
    (tmp_path / "dynamic.mlir").write_text(DYNAMIC)
    with pytest.raises(CompileError, match="dimension arg0.d0 is dynamic") as e:
        mdc_compile(tmp_path / "dynamic.mlir", list(CPU_PAIR[0]), place="auto", place_profile=profile)
    assert e.value.exit_code == 1


def test_the_python_api_takes_gpu_memory_auto(tmp_path, profile):
    """gpu_memory="auto-SIZE": the profile's free memory of gpu less SIZE,
    the same placement as that budget given in bytes, and the report says
    where it came from; a profile with no free memory is a CompileError
    that names the profile and the field, in the keywords' spelling."""
    from mdc.pipeline import compile as mdc_compile
    from mdc.pipeline.driver import CompileError

    source = tmp_path / "chain.mlir"
    source.write_text(CHAIN)
    document = json.loads(open(profile).read())
    document["devices"]["gpu"]["free_bytes"] = 1 << 20
    measured = tmp_path / "measured.json"
    measured.write_text(json.dumps(document))
    auto = mdc_compile(source, list(CPU_PAIR[0]), place="auto", gpu_memory="auto-1014KiB", place_profile=measured)
    sized = mdc_compile(source, list(CPU_PAIR[0]), place="auto", gpu_memory="10KiB", place_profile=measured)
    placement = auto.report.placement
    assert placement["budget_bytes"] == 10 * 1024
    assert placement["budget_from"] == {"gpu_memory": "auto-1014KiB", "profile": str(measured), "device": "gpu",
                                        "free_bytes": 1 << 20, "margin_bytes": 1014 * 1024}
    assert placement["units"] == sized.report.placement["units"]
    assert "(--gpu-memory=auto-1014KiB: 1 MiB free less a 1014 KiB margin)" in placement["summary"]
    with pytest.raises(CompileError, match=r"^gpu_memory='auto' needs the free memory of 'gpu' \(local\), and "
                       r"machine profile .* has none \(devices.gpu.free_bytes is missing") as e:
        mdc_compile(source, list(CPU_PAIR[0]), place="auto", gpu_memory="auto", place_profile=profile)
    assert e.value.exit_code == 1


def test_the_readme_shows_the_line_mdc_prints_for_its_example(tmp_path, run_tool):
    """README.md's "Place automatically" quotes the summary line for
    examples/placement/mlp.mlir on cuda with the built-in profile (the doc
    commands run it on lavapipe): it is the line mdc prints."""
    repo = Path(__file__).resolve().parents[2]
    r = run_tool([sys.executable, "-m", "mdc.pipeline", repo / "examples" / "placement" / "mlp.mlir",
                  "--device=cpu=local[0]", "--device=gpu=cuda[0]", "--place=auto", "--gpu-memory=8GiB",
                  "--compile-to=mdc", "-o", tmp_path / "mlp.mlir"])
    assert r.returncode == 0, r.stderr
    printed = re.fullmatch(r"mdc-compile: (placed @main: .*)\n", r.stderr).group(1)
    readme = " ".join((repo / "README.md").read_text().split())
    assert f"`{printed}`" in readme, printed
