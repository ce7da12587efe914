"""Build here, run on a GPU machine: mdc-compiled local+cuda programs.

    python test/e2e/gpu_kit.py build KIT_DIR     # here: needs the compiler
    python test/e2e/gpu_kit.py run KIT_DIR       # there: runtime only

``build`` compiles each case with mdc-compile for a local CPU device (with a
portable CPU target) and a cuda device, draws seeded inputs, and computes the
expected outputs with *stock* IREE on all-local devices on this machine.
``run`` executes every case with stock ``iree-run-module`` (cases whose
arguments and results live on local devices), with the runtime shim
(``python -m mdc.runtime_shim``), or with the shim's placed inputs (runner
``placed``: each input placed once with Function.place, then called with
its bytes overwritten in place, then restored, under a timeout, compares with the expected
outputs, and prints one table. With no cuda device it says so and exits
with status 2 (``--allow-no-gpu``: exit 0, a skip).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PROGRAMS = os.path.join(HERE, "programs")
EXAMPLES = os.path.join(ROOT, "examples")

AB = ["a=local[0]", "b=cuda[0]"]
RT_AB = ["local-task", "cuda"]
NO_GPU_STATUS = 2  # run's exit status with no cuda device (a run that checked nothing)


def _case(name, program, function, inputs, *, devices=AB, runtime=RT_AB,
          model="async-internal", runner="iree-run-module", program_dir=PROGRAMS, compiler="mdc",
          flags=(), results=1):
    """compiler="iree": stock iree-compile instead of mdc-compile (for
    programs stock IREE compiles, to see what the GPU makes of its output).
    flags: more mdc-compile flags. results: how many results the function
    has, each compared."""
    return dict(name=name, program=os.path.join(program_dir, program), function=function,
                inputs=inputs, devices=devices, runtime=runtime, model=model, runner=runner,
                compiler=compiler, flags=list(flags), results=results)


def _result_files(name: str, kind: str, results: int) -> list[str]:
    """The .npy file names of a case's results: one, or one per result."""
    if results == 1:
        return [f"{name}.{kind}.npy"]
    return [f"{name}.{kind}{k}.npy" for k in range(results)]


def _cases(rng):
    f32 = lambda *s: rng.standard_normal(s).astype(np.float32)
    return [
        _case("seed", "multi_device_mul.mlir", "multi_device_mul",
              [np.array([10, 11, 12, 13], np.float32)], program_dir=EXAMPLES),
        _case("seed_async_external", "multi_device_mul.mlir", "multi_device_mul",
              [np.array([10, 11, 12, 13], np.float32)], program_dir=EXAMPLES, model="async-external"),
        _case("diamond", "diamond.mlir", "diamond", [f32(16, 8)]),
        _case("diamond_async_external", "diamond.mlir", "diamond", [f32(16, 8)], model="async-external"),
        _case("matmul_chain", "matmul_chain.mlir", "matmul_chain", [f32(32, 64), f32(64, 48), f32(48, 16)]),
        _case("dynamic_2d_f16", "dynamic_2d.mlir", "dynamic_2d",
              [rng.standard_normal((5, 7)).astype(np.float16)]),
        _case("loop_dynamic", "loop.mlir", "ping_pong", [f32(37), np.array(3, np.int64)]),
        # Large enough that copies race their producers if a wait is missing.
        _case("loop_dynamic_large", "loop.mlir", "ping_pong", [f32(1 << 20), np.array(20, np.int64)]),
        # Sizes known at run time only, small ones read in place by the GPU
        # (passes/lowering/small_in_place.py): many iterations, so a CPU
        # write into the site before the GPU's read of the last one shows;
        # and a CPU kernel's result, just under and over the size limit.
        _case("loop_dynamic_small_in_place", "loop.mlir", "ping_pong", [f32(1000), np.array(50, np.int64)]),
        _case("seed_dynamic_in_place", "seed_dynamic.mlir", "multi_device_mul", [f32(16384)],
              program_dir=os.path.join(ROOT, "bench", "programs")),
        _case("seed_dynamic_copied", "seed_dynamic.mlir", "multi_device_mul", [f32(16385)],
              program_dir=os.path.join(ROOT, "bench", "programs")),
        # A small value sent to the GPU in every iteration and only summed
        # there: the GPU's copy out of the pinned site is waited for by the
        # site's next write alone (passes/lowering/small_in_place.py).
        _case("sum_on_gpu", "sum_on_b.mlir", "sum_on_b",
              [np.arange(16, dtype=np.float32), np.array(300, np.int64)]),
        # The same with its size known at run time only: read in place up to
        # 64 KiB (16384 f32), copied above, each iteration's site write
        # waiting for the GPU's read of the last one only when in place.
        _case("sum_on_gpu_dynamic_in_place", "sum_on_b_dynamic.mlir", "sum_on_b",
              [(np.arange(16384) % 16).astype(np.float32), np.array(300, np.int64)]),
        _case("sum_on_gpu_dynamic_copied", "sum_on_b_dynamic.mlir", "sum_on_b",
              [(np.arange(16385) % 16).astype(np.float32), np.array(300, np.int64)]),
        _case("three_devices", "three_devices.mlir", "three_devices",
              [rng.integers(-50, 50, (4, 4)).astype(np.int32)],
              devices=["a=local[0]", "b=cuda[0]", "c=local[1]"],
              runtime=["local-task", "cuda", "local-sync"]),
        _case("global_call", "globals_call.mlir", "apply", [f32(4)]),
        # A mutable global stored on the GPU and read on the CPU: the first
        # result is the state after one call, read back within the second.
        _case("state_on_two_devices", "state_on_two_devices.mlir", "accumulate_twice", [f32(4)], runner="shim"),
        # Globals kept on the CPU and read on the GPU, and carried through a
        # loop on the GPU (a read of a global on another device once ran
        # IREE's usage refinement out of memory).
        _case("globals_across_write", "globals_across_devices.mlir", "write_a", [f32(4)], runner="shim"),
        _case("globals_across_loop", "globals_across_devices.mlir", "run", [f32(8), np.array(3, np.int64)],
              runner="shim"),
        # Arguments or results on the GPU: stock iree-run-module cannot place
        # them (docs/DESIGN.md section 2), so these go through the runtime shim.
        _case("arg_on_gpu", "two_args.mlir", "add_across", [f32(2, 3), f32(2, 3)], runner="shim"),
        _case("result_on_gpu", "result_on_b.mlir", "square_to_b",
              [rng.integers(-1000, 1000, 8).astype(np.int32)], runner="shim"),
        _case("arg_and_result_on_gpu", "gpu_both.mlir", "gpu_roundtrip", [f32(64)], runner="shim"),
        # Results left on the GPU, half of them dropped as the calls go on:
        # freed memory is reused by later calls (runtime_shim/cuda_free.py)
        # while the held results stay right.
        _case("results_left_on_gpu", "result_on_b.mlir", "square_to_b",
              [rng.integers(-1000, 1000, 8).astype(np.int32)], runner="resident"),
        _case("results_left_on_gpu_large", "to_gpu.mlir", "to_gpu",
              [rng.integers(-128, 128, 1 << 20).astype(np.int8)], runner="resident",
              program_dir=os.path.join(ROOT, "bench", "programs")),
        # Results declared on no device that end on the GPU (a constant
        # moved there, a value computed there, mdc's placement, a
        # coarse-fences function): the manifest's result_devices tells the
        # shim to fetch each from the GPU (else PERMISSION_DENIED).
        _case("undeclared_constant_on_gpu", "undeclared_results.mlir", "constant_on_b", [], runner="shim"),
        _case("undeclared_result_on_gpu", "undeclared_results.mlir", "square_on_b", [f32(4)], runner="shim"),
        _case("undeclared_result_on_gpu_async_external", "undeclared_results.mlir", "square_on_b", [f32(4)],
              runner="shim", model="async-external"),
        _case("undeclared_result_placed_on_gpu", "undeclared_results.mlir", "placed_on_b", [f32(4), f32(16)],
              runner="shim"),
        _case("undeclared_result_coarse_fences", "undeclared_result_async.mlir", "async_square_on_b", [f32(4)],
              runner="shim"),
        _case("arg_and_result_on_gpu_async_external", "gpu_both.mlir", "gpu_roundtrip", [f32(64)],
              runner="shim", model="async-external"),
        _case("seed_shim", "multi_device_mul.mlir", "multi_device_mul",
              [np.array([10, 11, 12, 13], np.float32)], program_dir=EXAMPLES, runner="shim"),
        # One executable dispatched on the CPU and on the GPU (IREE created it
        # on one device from the other's variant: executable-per-target).
        _case("shared_executable_gpu", "shared_executable.mlir", "on_gpu", [f32(1000)], runner="shim"),
        _case("shared_executable_cpu", "shared_executable.mlir", "on_cpu", [f32(1000)], runner="shim"),
        _case("shared_executable_round_trip", "shared_executable.mlir", "there_and_back", [f32(1000)],
              runner="shim"),
        # A loop on the GPU whose buffer IREE frees with a PreferOrigin
        # dealloca on the CPU's queue, with mdc and with stock iree-compile
        # (test/lit/regress/loop_on_gpu_dealloca_on_default_device.mlir).
        _case("loop_on_gpu", "loop_on_gpu.mlir", "loop_on_b", [f32(4), np.array(5, np.int64)],
              devices=["device_a=local[0]", "b=cuda[0]"], runner="shim"),
        _case("loop_on_gpu_stock_iree", "loop_on_gpu.mlir", "loop_on_b",
              [f32(4), np.array(5, np.int64)], devices=["device_a=local[0]", "b=cuda[0]"],
              runner="shim", compiler="iree"),
        # Arguments given in the GPU's pinned memory (--pinned-arguments):
        # the GPU copies them straight out of the buffers the shim placed
        # them in; a CPU buffer there fails with CUDA_ERROR_INVALID_VALUE.
        _case("pinned_arguments", "pinned_arguments.mlir", "pinned_product", [f32(1 << 18), f32(1 << 18)],
              runner="shim", flags=["--pinned-arguments"]),
        _case("pinned_arguments_async_external", "pinned_arguments.mlir", "pinned_product",
              [f32(1 << 18), f32(1 << 18)], runner="shim", flags=["--pinned-arguments"],
              model="async-external"),
        _case("pinned_arguments_placed", "pinned_arguments.mlir", "pinned_product",
              [f32(1 << 18), f32(1 << 18)], runner="placed", flags=["--pinned-arguments"]),
        # A GPU result written by the GPU straight into an output argument
        # (iree.abi.output) in its pinned memory.
        _case("pinned_output", "pinned_output.mlir", "square_into", [f32(1 << 18), f32(1 << 18)],
              runner="shim", flags=["--pinned-arguments"]),
        _case("pinned_output_async_external", "pinned_output.mlir", "square_into",
              [f32(1 << 18), f32(1 << 18)], runner="shim", flags=["--pinned-arguments"],
              model="async-external"),
        # The same output argument in the CPU's memory (no flag): the CPU's
        # copy out of pinned memory writes into it.
        _case("output_in_cpu_memory", "pinned_output.mlir", "square_into", [f32(1 << 18), f32(1 << 18)],
              runner="shim"),
        # Results the GPU writes into the shim's pooled memory (a
        # result-storage twin, runner "lent"): static and dynamic shapes,
        # both execution models.
        _case("lent_static", "results_from_b.mlir", "scaled", [f32(512, 512)], runner="lent"),
        _case("lent_static_async_external", "results_from_b.mlir", "scaled", [f32(512, 512)], runner="lent",
              model="async-external"),
        _case("lent_dynamic", "results_from_b.mlir", "negated", [f32(1 << 18)], runner="lent"),
        # Pipelined calls (Function.map, runner "pipelined"): a CPU stage
        # and a GPU stage, calls in flight together, both execution models.
        _case("pipelined", "split_stages.mlir", "stages", [f32(64, 128)], runner="pipelined"),
        _case("pipelined_async_external", "split_stages.mlir", "stages", [f32(64, 128)], runner="pipelined",
              model="async-external"),
        # ... and results the GPU writes into the shim's pooled memory.
        _case("pipelined_lent", "results_from_b.mlir", "scaled", [f32(512, 512)], runner="pipelined"),
        # Calls from a thread other than the loading one (runner
        # "other_thread"): IREE's cuda driver makes its context current on
        # the loading thread only (runtime_shim/cuda_thread.py).
        _case("other_thread", "split_stages.mlir", "stages", [f32(64, 128)], runner="other_thread"),
        _case("other_thread_lent", "results_from_b.mlir", "scaled", [f32(512, 512)], runner="other_thread"),
        # Inputs the shim placed on the GPU go back through its queue
        # (runner "given_back", runtime_shim/cuda_free.py): a global that
        # stored one must still read right once the memory is reused.
        _case("argument_given_back", "argument_stored_on_gpu.mlir", "keep_then_read", [f32(1 << 16)],
              runner="given_back"),
        # IREE frees a constant's copy on the CPU at a loop's exit with a
        # dealloca the GPU's next alloca awaited (a GPU queue waiting on a
        # CPU's semaphore never runs): the host waits for it
        # (test/lit/regress/constant_read_on_gpu_waits_on_cpu.mlir).
        _case("constant_read_on_gpu_after_loop", "constant_read_on_gpu_waits_on_cpu.mlir", "p104", [f32(4, 3, 7)],
              devices=["a=local[0]", "b=cuda[0]", "c=local[1]"], runtime=["local-task", "cuda", "local-sync"],
              program_dir=os.path.join(ROOT, "test", "lit", "regress"), runner="shim",
              flags=["--iree-opt-const-eval=false"], results=3),
    ]


def _run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def _scalar_or_file(kit, case_name, i, value):
    if value.ndim == 0:
        return f"--input={value.item()}"
    path = os.path.join(kit, f"{case_name}.in{i}.npy")
    np.save(path, value)
    return f"--input=@{os.path.basename(path)}"


def build(kit: str, cpu: str, seed: int, mdc_flags=()) -> int:
    kit = os.path.abspath(kit)
    os.makedirs(kit, exist_ok=True)
    rng = np.random.default_rng(seed)
    manifest = []
    for case in _cases(rng):
        name = case["name"]
        vmfb = os.path.join(kit, f"{name}.vmfb")
        model_flag = f"--iree-execution-model={case['model']}"
        if case["compiler"] == "iree":
            targets = []
            for d in case["devices"]:
                name_, spec = d.split("=")
                name_ = name_ if name_.startswith("device_") else f"device_{name_}"
                kind = spec.split("[")[0]
                targets.append(f"--iree-hal-target-device={name_}={kind}")
            r = _run(["iree-compile", case["program"], *targets,
                      "--iree-hal-local-target-device-backends=llvm-cpu", "--iree-cuda-target=sm_80",
                      f"--iree-llvmcpu-target-cpu={cpu}", model_flag, "-o", vmfb])
        else:
            r = _run(["mdc-compile", case["program"], *[f"--device={d}" for d in case["devices"]],
                      f"--iree-llvmcpu-target-cpu={cpu}", model_flag, *case["flags"], *mdc_flags, "-o", vmfb])
        if r.returncode:
            print(f"{name}: mdc-compile failed\n{r.stderr}")
            return 1
        # The expected output: stock IREE, every device a local one.
        ref = os.path.join(kit, f"{name}.ref.vmfb")
        local_devices = []
        for i, d in enumerate(case["devices"]):
            name_ = d.split("=")[0]
            name_ = name_ if name_.startswith("device_") else f"device_{name_}"
            local_devices.append(f"--iree-hal-target-device={name_}=local[{i}]")
        r = _run(["iree-compile", case["program"], *local_devices,
                  "--iree-hal-local-target-device-backends=llvm-cpu", model_flag,
                  *[f for f in case["flags"] if f.startswith("--iree-")], "-o", ref])
        if r.returncode:
            print(f"{name}: stock iree-compile failed\n{r.stderr}")
            return 1
        inputs = [_scalar_or_file(kit, name, i, v) for i, v in enumerate(case["inputs"])]
        expected = _result_files(name, "expected", case["results"])
        r = _run(["iree-run-module", f"--module={ref}", f"--function={case['function']}",
                  *["--device=local-task"] * len(case["devices"]), *inputs, *[f"--output=@{e}" for e in expected]],
                 cwd=kit)
        if r.returncode:
            print(f"{name}: stock reference run failed\n{r.stderr}")
            return 1
        os.unlink(ref)
        manifest.append(dict(name=name, module=os.path.basename(vmfb), function=case["function"],
                             devices=case["runtime"], inputs=inputs, runner=case["runner"],
                             expected=expected))
    with open(os.path.join(kit, "cases.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    if _build_stock_cuda_canaries(kit):
        return 1
    print(f"built {len(manifest)} cases in {kit}, and the stock CUDA min-reduce and maxsi canaries")
    return 0


# Stock IREE 3.13 on cuda alone (iree-compile, one cuda device, no mdc): a
# min-reduce of i32 over the last dimension of a tensor<?x1x?xi32> (an
# expand_shape of a dynamic 2-D argument) gives wrong rows on an H200, in
# every run. The same with static shapes, or with f32, is right. Found by
# gpu_random (seed 20261201, program 100), whose --all-on-gpu oracle (stock
# IREE, every device the GPU) gives the same wrong numbers: a program of
# that kind fails gpu_random through IREE's CUDA code, not mdc's
# crossings. Measured 2026-12-02.
MIN_REDUCE_CANARY = """
func.func @f(%a: tensor<?x?xi32>) -> tensor<?x1xi32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %d0 = tensor.dim %a, %c0 : tensor<?x?xi32>
  %d1 = tensor.dim %a, %c1 : tensor<?x?xi32>
  %e = tensor.expand_shape %a [[0, 1], [2]] output_shape [%d0, 1, %d1] : tensor<?x?xi32> into tensor<?x1x?xi32>
  %max = arith.constant 2147483647 : i32
  %r0 = tensor.empty(%d0) : tensor<?x1xi32>
  %init = linalg.fill ins(%max : i32) outs(%r0 : tensor<?x1xi32>) -> tensor<?x1xi32>
  %r = linalg.reduce ins(%e : tensor<?x1x?xi32>) outs(%init : tensor<?x1xi32>) dimensions = [2]
    (%in: i32, %acc: i32) {
      %m = arith.minsi %in, %acc : i32
      linalg.yield %m : i32
    }
  return %r : tensor<?x1xi32>
}
"""
MIN_REDUCE_INPUT = [[38, -18], [-10, -10], [0, -19], [37, 28], [-21, -9], [-3, 16], [5, -25]]


# Stock IREE 3.13 on cuda alone: an i32 maxsi reduction from INT_MIN over
# the middle dimension of a tensor<4x?x?xi32> gives 0 where the maximum is
# negative on an H200 (gpu_random seed 4122026 program 43, whose dispatch
# is the difference variant; stock IREE with every device the GPU gives the
# same). mdc-compile warns of the pattern (passes/cuda_maxsi_warning.py).
# The variants, minimized and not yet run alone on a GPU, tell which shapes
# fail: static or dynamic, middle or last dimension.
MAXSI_VARIANTS = {  # name: (shape, reduced dimension, inputs)
    "dynamic_middle": ("4x?x?", 1, 1),
    "static_middle": ("4x3x3", 1, 1),
    "dynamic_last": ("4x?x?", 2, 1),
    "dynamic_middle_difference": ("4x?x?", 1, 2),  # max of a - b, as program 43 fuses it
}


def maxsi_canary_source(shape: str, reduced: int, inputs: int) -> str:
    """@f: the maxsi reduction from INT_MIN of ``inputs`` (one tensor, or
    the difference of two) over dimension ``reduced`` of a tensor<SHAPExi32>."""
    dims = shape.split("x")
    in_type = f"tensor<{shape}xi32>"
    out_type = f"tensor<{'x'.join(d for i, d in enumerate(dims) if i != reduced)}xi32>"
    dynamic = [i for i, d in enumerate(dims) if d == "?" and i != reduced]
    identity = "affine_map<(d0, d1, d2) -> (d0, d1, d2)>"
    kept = ", ".join(f"d{i}" for i in range(3) if i != reduced)
    iterators = ", ".join('"reduction"' if i == reduced else '"parallel"' for i in range(3))
    args = [f"%a{k}" for k in range(inputs)]
    lines = [f"func.func @f({', '.join(f'{a}: {in_type}' for a in args)}) -> {out_type} {{"]
    for i in dynamic:
        lines += [f"  %c{i} = arith.constant {i} : index", f"  %d{i} = tensor.dim %a0, %c{i} : {in_type}"]
    lines += [
        "  %min = arith.constant -2147483648 : i32",
        f"  %e = tensor.empty({', '.join(f'%d{i}' for i in dynamic)}) : {out_type}",
        f"  %init = linalg.fill ins(%min : i32) outs(%e : {out_type}) -> {out_type}",
        f"  %r = linalg.generic {{indexing_maps = [{', '.join([identity] * inputs)}, "
        f"affine_map<(d0, d1, d2) -> ({kept})>], iterator_types = [{iterators}]}}",
        f"      ins({', '.join(args)} : {', '.join([in_type] * inputs)}) outs(%init : {out_type}) {{",
        f"  ^bb0({', '.join(f'%x{k}: i32' for k in range(inputs))}, %acc: i32):",
    ]
    value = "%x0"
    if inputs == 2:
        lines.append("    %v = arith.subi %x0, %x1 : i32")
        value = "%v"
    lines += [f"    %m = arith.maxsi {value}, %acc : i32", "    linalg.yield %m : i32", f"  }} -> {out_type}",
              f"  return %r : {out_type}", "}"]
    return "\n".join(lines) + "\n"


def maxsi_canary_inputs(inputs: int) -> list[np.ndarray]:
    """A 4x3x3 i32 tensor whose slices 1 and 3 are all negative (so are
    their maxima over any dimension), or two whose difference is it."""
    x = (np.arange(36, dtype=np.int32).reshape(4, 3, 3) * 17) % 81 - 40
    x[1::2] -= 50
    if inputs == 1:
        return [x]
    b = (np.arange(36, dtype=np.int32).reshape(4, 3, 3) * 7) % 23 - 11
    return [x + b, b]


def _stock_cuda_canaries() -> dict[str, tuple[str, list[np.ndarray], np.ndarray]]:
    """Every stock cuda canary module: name -> (source, inputs, numpy's answer)."""
    min_input = np.array(MIN_REDUCE_INPUT, np.int32)
    canaries = {"canary_min_reduce": (MIN_REDUCE_CANARY, [min_input], min_input.min(axis=1, keepdims=True))}
    for variant, (shape, reduced, n) in MAXSI_VARIANTS.items():
        inputs = maxsi_canary_inputs(n)
        value = inputs[0] if n == 1 else inputs[0] - inputs[1]
        canaries[f"canary_maxsi_{variant}"] = (maxsi_canary_source(shape, reduced, n), inputs,
                                               value.max(axis=reduced))
    return canaries


def _build_stock_cuda_canaries(kit: str) -> int:
    """Each canary's module (stock iree-compile, cuda only), its inputs, and
    numpy's answer."""
    for name, (source, inputs, expected) in _stock_cuda_canaries().items():
        src = os.path.join(kit, f"{name}.mlir")
        with open(src, "w") as f:
            f.write(source)
        r = _run(["iree-compile", src, "--iree-hal-target-device=cuda", "--iree-cuda-target=sm_80",
                  "-o", os.path.join(kit, f"{name}.vmfb")])
        if r.returncode:
            print(f"{name}: stock iree-compile failed\n{r.stderr}")
            return 1
        for k, x in enumerate(inputs):
            np.save(os.path.join(kit, f"{name}.in{k}.npy"), x)
        np.save(os.path.join(kit, f"{name}.expected.npy"), expected)
    return 0


def _stock_cuda_canary(kit: str, name: str, timeout: float) -> tuple[bool | None, str]:
    """Runs one canary module -> (wrong: True/False, or None when it did
    not run, what it gave)."""
    out = os.path.join(kit, f"{name}.out.npy")
    tool = shutil.which("iree-run-module")
    if tool is None:
        return None, "iree-run-module not found: put the runtime's bin/ on PATH"
    inputs = sorted(f for f in os.listdir(kit) if f.startswith(f"{name}.in") and f.endswith(".npy"))
    try:
        r = _run([tool, f"--module={name}.vmfb", "--function=f", "--device=cuda",
                  *[f"--input=@{f}" for f in inputs], f"--output=@{out}"], cwd=kit, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "TIMEOUT"
    if r.returncode:
        return None, f"rc={r.returncode}: {(r.stderr.strip().splitlines() or [''])[-1][:200]}"
    got, want = np.load(out), np.load(os.path.join(kit, f"{name}.expected.npy"))
    wrong = int((got != want).sum()) if got.shape == want.shape else got.size
    return wrong > 0, f"{wrong} of {want.size} wrong: {got.ravel().tolist()} against numpy's {want.ravel().tolist()}"


def canary_stock_cuda_min_reduce(kit: str, timeout: float) -> tuple[bool, str]:
    """-> (stock IREE still gives wrong numbers, what it gave)."""
    wrong, what = _stock_cuda_canary(kit, "canary_min_reduce", timeout)
    return bool(wrong), what


def canary_stock_cuda_maxsi(kit: str, timeout: float) -> tuple[bool | None, list[str]]:
    """-> (stock IREE still gives wrong numbers in some variant; None where
    none is wrong and some did not run, one line per variant: wrong, right
    or did not run, and what it gave)."""
    lines, results = [], []
    for variant in MAXSI_VARIANTS:
        wrong, what = _stock_cuda_canary(kit, f"canary_maxsi_{variant}", timeout)
        results.append(wrong)
        lines.append(f"{variant}: {'WRONG' if wrong else 'right' if wrong is False else 'did not run'}: {what}")
    still = True if any(results) else None if None in results else False
    return still, lines


def compare(got: np.ndarray, want: np.ndarray, rel_tol: float | None = None) -> tuple[bool, float]:
    """Integers and booleans must be equal; floats within a relative
    Frobenius error of ``rel_tol``, by default 1e-4 (f32: summation order
    differs across devices) or 1e-2 (f16). Returns (ok, error)."""
    if got.shape != want.shape or got.dtype != want.dtype:
        return False, float("inf")
    if want.dtype.kind != "f":
        return bool(np.array_equal(got, want)), float(np.count_nonzero(got != want))
    g, w = got.astype(np.float64), want.astype(np.float64)
    if not np.all(np.isfinite(g)):
        return False, float("inf")
    err = float(np.linalg.norm(g - w) / max(np.linalg.norm(w), 1e-30))
    if rel_tol is None:
        rel_tol = 1e-2 if want.dtype.itemsize <= 2 else 1e-4
    return err <= rel_tol, err


def _cuda_available() -> bool:
    try:
        import iree.runtime as rt

        return "cuda" in rt.query_available_drivers() and bool(
            rt.get_driver("cuda").query_available_devices())
    except Exception:
        return False


def run(kit: str, timeout: float, only: str | None, repeat: int = 1, cpu_driver: str = "local-task",
        allow_no_gpu: bool = False) -> int:
    """Runs each case ``repeat`` times; a case passes only if every run
    matched (a missing wait shows as an intermittent mismatch: before
    fixing one, loop_dynamic_large came back wrong in 22 of 40 runs, and
    one run a case hid it for several sessions). ``cpu_driver`` runs the
    devices the cases give to local-task (local-sync: every CPU submission
    runs on the calling thread)."""
    kit = os.path.abspath(kit)
    if not _cuda_available():
        if allow_no_gpu:
            print("gpu_kit: no cuda device here; skipping (--allow-no-gpu)")
            return 0
        print("gpu_kit: error: no cuda device here; nothing was checked "
              "(--allow-no-gpu makes this a skip with exit status 0)", file=sys.stderr)
        return NO_GPU_STATUS
    with open(os.path.join(kit, "cases.json")) as f:
        cases = json.load(f)
    rows, failures = [], 0
    for case in cases:
        if only and case["name"] != only:
            continue
        case = dict(case, devices=[cpu_driver if d == "local-task" else d for d in case["devices"]])
        verdicts, errs, elapsed, detail = [], [], 0.0, []
        for _ in range(repeat):
            verdict, err, seconds, run_detail = _run_case(kit, case, timeout)
            if verdict != "match" and not detail:
                detail = run_detail  # the first failing run's message, not a later run's
            verdicts.append(verdict)
            errs.append(err)
            elapsed += seconds
        wrong = sum(v != "match" for v in verdicts)
        verdict = "match" if not wrong else next(v for v in verdicts if v != "match")
        if errs and all(e is not None for e in errs):
            detail = [f"rel err {max(errs):.1e}"]
        if repeat > 1:
            detail = [f"{wrong} of {repeat} runs wrong" + (f", {detail[0]}" if detail else "")]
        failures += bool(wrong)
        rows.append((case["name"], case["runner"], " ".join(case["devices"]), verdict,
                     f"{elapsed / repeat:.2f}s", detail[0][:90] if detail else ""))
    print(f"{'case':24} {'runner':16} {'devices':30} {'result':9} {'wall':7} detail")
    for row in rows:
        print(f"{row[0]:24} {row[1]:16} {row[2]:30} {row[3]:9} {row[4]:7} {row[5]}")
    print(f"{len(rows) - failures} passed, {failures} failed")
    if not only:
        still, what = canary_stock_cuda_other_thread()
        print(f"canary, stock cuda allocation on another thread: {'still fails' if still else 'CHANGED'}: {what}")
        failures += not still
        if os.path.exists(os.path.join(kit, "canary_min_reduce.vmfb")):
            still, what = canary_stock_cuda_min_reduce(kit, timeout)
            print(f"canary, stock cuda i32 min-reduce of a dynamic shape: {'still wrong' if still else 'CHANGED'}: "
                  f"{what}")
            failures += not still
        if os.path.exists(os.path.join(kit, "canary_maxsi_dynamic_middle.vmfb")):
            still, lines = canary_stock_cuda_maxsi(kit, timeout)
            verdict = {True: "still fails", False: "CHANGED", None: "DID NOT RUN"}[still]
            print(f"canary, stock cuda i32 maxsi-reduce from INT_MIN: {verdict} "
                  "(a variant wrong: mdc-compile's warning stays; none: narrow or drop it)")
            for line in lines:
                print(f"  {line}")
            failures += not still
    return 1 if failures else 0


def _run_case(kit: str, case: dict, timeout: float):
    """One run of ``case``: (verdict, relative error or None, seconds, detail lines)."""
    outs = [os.path.join(kit, f) for f in _result_files(case["name"], "out", len(case["expected"]))]
    for out in outs:
        if os.path.exists(out):
            os.unlink(out)
    if case["runner"] == "shim" or case["runner"] in _RUNNERS:
        cmd = [sys.executable, "-m", "mdc.runtime_shim"]
        if case["runner"] in _RUNNERS:
            cmd = [sys.executable, os.path.abspath(__file__), f"_{case['runner']}"]
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")]))
    else:
        cmd = [shutil.which("iree-run-module") or "iree-run-module"]
        env = None
    cmd += [f"--module={case['module']}", f"--function={case['function']}",
            *[f"--device={d}" for d in case["devices"]], *case["inputs"], *[f"--output=@{o}" for o in outs]]
    start = time.perf_counter()
    try:
        r = _run(cmd, cwd=kit, timeout=timeout, env=env)
        status = "ok" if r.returncode == 0 else f"rc={r.returncode}"
        detail = (r.stderr or r.stdout).strip().splitlines()[-1:] if r.returncode else []
    except subprocess.TimeoutExpired:
        status, detail = "TIMEOUT", []
    except FileNotFoundError:
        return "NO-TOOL", None, 0.0, [f"{cmd[0]} not found: put the runtime's bin/ on PATH"]
    elapsed = time.perf_counter() - start
    verdict, err = status, None
    missing = [o for o in outs if not os.path.exists(o)]
    if status == "ok" and missing:
        # The runners check the result count; a run that still wrote no
        # result is a failure, not a crash of this script.
        return "NO-OUTPUT", None, elapsed, [f"exit 0 but no {os.path.basename(missing[0])}"]
    if status == "ok":
        verdict, errs = "match", []
        for out, expected in zip(outs, case["expected"]):
            want = np.load(os.path.join(kit, expected))
            same, err = compare(np.load(out), want)
            verdict = verdict if same else "MISMATCH"
            if want.dtype.kind == "f":
                errs.append(err)
        err = max(errs) if errs else None
    return verdict, err, elapsed, detail


def _runner_arguments(argv) -> tuple[dict, list[str], list[np.ndarray]]:
    """A runner's flags as iree-run-module's: (--flag -> value, the
    --device values in order, the --input=@file arrays in order)."""
    flags = dict(a.split("=", 1) for a in argv)
    devices = [a.split("=", 1)[1] for a in argv if a.startswith("--device=")]
    inputs = [np.load(a.split("=@", 1)[1]) for a in argv if a.startswith("--input=@")]
    return flags, devices, inputs


def _in_pool_memory(array: np.ndarray) -> bool:
    """The array is over the shim's pooled memory (a result-storage twin's
    result), not a copy."""
    from mdc.runtime_shim import result_storage

    base = array
    while isinstance(base, np.ndarray) and base.base is not None:
        base = base.base
    return isinstance(base, result_storage._Lease)


def _placed(argv) -> int:
    """Runner ``placed``: each input placed once (runtime_shim's
    Function.place), a call with input 0's bytes overwritten in place (its
    result must differ from the first call's), then with them restored (its
    result, which must equal the first call's, is the output)."""
    from mdc.runtime_shim import load

    flags, devices, inputs = _runner_arguments(argv)
    m = load(flags["--module"], devices)
    try:
        f = m.function(flags["--function"])
        placed = [f.place(i, x) for i, x in enumerate(inputs)]
        first = np.asarray(f(*placed))
        kept = placed[0].array.copy()
        placed[0].array[...] = 0
        other = np.asarray(f(*placed))
        placed[0].array[...] = kept
        again = np.asarray(f(*placed))
        np.save(flags["--output"].lstrip("@"), again)
    finally:
        m.close()
    if np.array_equal(other, first):
        print("a call after overwriting input 0 in place gave the first call's result")
        return 1
    if not np.array_equal(again, first):
        print("a call after restoring input 0 differs from the first call")
        return 1
    return 0


def _lent(argv) -> int:
    """Runner ``lent``: a linear function of one input called on it scaled
    by 1, 2, 4 and 8, every result held: each must be an array over the
    shim's pooled memory (after the first call, which learns a dynamic
    shape), none may share memory with another, and each must be its scale
    times the first (exact: powers of two). The first is the output."""
    from mdc.runtime_shim import load

    flags, devices, (x,) = _runner_arguments(argv)
    m = load(flags["--module"], devices)
    try:
        f = m.function(flags["--function"])
        held = [f(x * np.float32(2 ** k)) for k in range(4)]
        np.save(flags["--output"].lstrip("@"), held[0])
        for k, y in enumerate(held[1:], 1):
            if not _in_pool_memory(y):
                print(f"call {k}: the result is a copy, not the shim's pooled memory")
                return 1
            if not np.array_equal(y, held[0] * np.float32(2 ** k)):
                print(f"call {k}: a held result is not {2 ** k} times the first")
                return 1
        if len({y.ctypes.data for y in held}) != len(held):
            print("two held results share memory")
            return 1
    finally:
        m.close()
    return 0


def _resident(argv) -> int:
    """Runner ``resident``: 16 calls on input 0 plus k, each result left on
    the GPU (call_on_devices), every other one dropped at once (its memory
    goes back through the device's queue, runtime_shim/cuda_free.py, and the next
    calls reuse it): each held result, read back at the end, must equal a
    plain call's on the same input. The first is the output."""
    from mdc.runtime_shim import load

    flags, devices, (x,) = _runner_arguments(argv)
    m = load(flags["--module"], devices)
    try:
        f = m.function(flags["--function"])
        xs = [x + x.dtype.type(k) for k in range(16)]
        held = {}
        for k, v in enumerate(xs):
            (result,) = f.call_on_devices(v)
            if k % 2 == 0:
                held[k] = result
            del result
        got = {k: r.to_host() for k, r in held.items()}
        np.save(flags["--output"].lstrip("@"), got[0])
        for k, y in got.items():
            if not np.array_equal(y, np.asarray(f(xs[k]))):
                print(f"call {k}: the held result differs from a plain call's on the same input")
                return 1
    finally:
        m.close()
    return 0


def _pipelined(argv) -> int:
    """Runner ``pipelined``: the function called on 12 inputs (input 0
    scaled by 1 + k/8), first one call after another, then through
    Function.map with 3 calls in flight, every result held: each pipelined
    result must equal its plain call's, and be an array over the shim's
    pooled memory where the function has a result-storage twin. The first
    is the output."""
    from mdc.runtime_shim import load

    flags, devices, (x,) = _runner_arguments(argv)
    m = load(flags["--module"], devices)
    try:
        f = m.function(flags["--function"])
        xs = [x * np.float32(1 + k / 8) for k in range(12)]
        plain = [np.array(f(v)) for v in xs]
        piped = list(f.map(xs, depth=3))
        np.save(flags["--output"].lstrip("@"), piped[0])
        for k, (a, b) in enumerate(zip(piped, plain)):
            if not np.array_equal(a, b):
                print(f"item {k}: the pipelined result differs from the plain call's")
                return 1
        if len(piped) != len(xs):
            print(f"map gave {len(piped)} results for {len(xs)} inputs")
            return 1
        if m.manifest.storage_twin(f.name) is not None:
            for k, y in enumerate(piped):
                if not _in_pool_memory(y):
                    print(f"item {k}: the pipelined result is a copy, not the shim's pooled memory")
                    return 1
    finally:
        m.close()
    return 0


def _other_thread(argv) -> int:
    """Runner ``other_thread``: the module loaded on this thread, then
    called on a new one (a plain call, a call leaving its results on the
    devices brought to the host there, and a Placed input), each result
    equal to the plain call's on the loading thread. The new thread's
    result is the output."""
    import threading

    from mdc.runtime_shim import load

    flags, devices, (x,) = _runner_arguments(argv)
    m = load(flags["--module"], devices)
    got, errors = {}, []

    def calls():
        try:
            got["plain"] = np.array(f(x))
            got["on_devices"] = f.call_on_devices(x)[0].to_host()
            got["placed"] = np.array(f(f.place(0, x)))
        except Exception as e:  # the thread's error is the runner's
            errors.append(e)

    try:
        f = m.function(flags["--function"])
        here = np.array(f(x))
        t = threading.Thread(target=calls)
        t.start()
        t.join()
        if errors:
            print(f"a call on another thread failed: {type(errors[0]).__name__}: {errors[0]}"[:400])
            return 1
        np.save(flags["--output"].lstrip("@"), got["plain"])
        for how, y in got.items():
            if not np.array_equal(y, here):
                print(f"{how} on another thread differs from the call on the loading thread")
                return 1
    finally:
        m.close()
    return 0


def _given_back(argv) -> int:
    """Runner ``given_back`` (argument_stored_on_gpu.mlir): input 0 given
    to @keep as an array, which the shim places on the GPU for that call
    and gives back through the GPU's queue once it is done, then as a
    Placed input, given back when released; after each, eight placements
    of other values reuse the memory given back, and @kept must still read
    what @keep stored (IREE copies an argument it stores in a global). The
    first read is the output; the run fails unless each of the two steps
    gave exactly one buffer back."""
    from mdc.runtime_shim import load

    flags, devices, (x,) = _runner_arguments(argv)
    m = load(flags["--module"], devices)
    try:
        keep, kept = m.function("keep"), m.function("kept")
        free = m._ledger.queue_free[keep._arg_devices[0]]
        counts = []

        def given_back_by(step) -> None:
            before = free._value  # queue deallocas asked so far
            step()
            counts.append(free._value - before)

        given_back_by(lambda: keep(x))
        reused = [keep.place(0, -x - np.float32(k)) for k in range(8)]
        first = np.asarray(kept())
        np.save(flags["--output"].lstrip("@"), first)
        del reused
        placed = keep.place(0, 2 * x)
        keep(placed)
        given_back_by(placed.release)
        reused = [keep.place(0, -x - np.float32(k)) for k in range(8)]
        second = np.asarray(kept())
        del reused
        if counts != [1, 1]:
            print(f"buffers given back by the call and by the release: {counts}, expected [1, 1]")
            return 1
        if not np.array_equal(second, 2 * x):
            print("@kept after a Placed input was stored and released differs from it")
            return 1
    finally:
        m.close()
    return 0


def canary_stock_cuda_other_thread() -> tuple[bool, str]:
    """Stock IREE 3.13 (iree.runtime alone): a cuda device created on this
    thread cannot allocate on another (CUDA_ERROR_INVALID_CONTEXT), which
    runtime_shim/cuda_thread.py steps around. -> (still so, what happened);
    when it no longer is, drop that binding. Run in a process of its own."""
    r = _run([sys.executable, os.path.abspath(__file__), "_canary_cuda_thread"], timeout=60)
    last = (r.stdout.strip().splitlines() or [""])[-1]
    return r.returncode == 0 and "INVALID_CONTEXT" in last, last or r.stderr.strip()[-200:]


def _canary_cuda_thread() -> int:
    import threading

    import iree.runtime as rt

    device = rt.get_driver("cuda").create_default_device()
    seen = []

    def allocate():
        try:
            device.allocator.allocate_buffer(memory_type=rt.MemoryType.DEVICE_LOCAL,
                                             allowed_usage=rt.BufferUsage.DEFAULT, allocation_size=4096)
            seen.append("allocated on another thread")
        except Exception as e:
            seen.append(f"{type(e).__name__}: {e}")

    device.allocator.allocate_buffer(memory_type=rt.MemoryType.DEVICE_LOCAL,
                                     allowed_usage=rt.BufferUsage.DEFAULT, allocation_size=4096)
    t = threading.Thread(target=allocate)
    t.start()
    t.join()
    print(" ".join(seen[0].split())[:300])
    return 0


# The runners of this file's own (each a subprocess: `gpu_kit.py _NAME ...`).
_RUNNERS = {"placed": _placed, "lent": _lent, "resident": _resident, "pipelined": _pipelined,
            "other_thread": _other_thread, "given_back": _given_back}


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "_canary_cuda_thread":
        return _canary_cuda_thread()
    if len(sys.argv) > 1 and sys.argv[1].startswith("_") and sys.argv[1][1:] in _RUNNERS:
        return _RUNNERS[sys.argv[1][1:]](sys.argv[2:])
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build")
    b.add_argument("kit")
    b.add_argument("--cpu", default="generic", help="portable CPU target for the local device")
    b.add_argument("--seed", type=int, default=20261130)
    b.add_argument("--mdc-flag", action="append", default=[], help="extra mdc-compile flag, e.g. --staging=emplace")
    r = sub.add_parser("run")
    r.add_argument("kit")
    r.add_argument("--timeout", type=float, default=60.0)
    r.add_argument("--only")
    r.add_argument("--repeat", type=int, default=1, help="runs per case; a case passes only if all match")
    r.add_argument("--cpu-driver", default="local-task", choices=["local-task", "local-sync"],
                   help="driver of the devices the cases run on local-task")
    r.add_argument("--allow-no-gpu", action="store_true",
                   help=f"with no cuda device, say so and exit 0 (default: exit status {NO_GPU_STATUS})")
    a = p.parse_args()
    if a.cmd == "build":
        return build(a.kit, a.cpu, a.seed, a.mdc_flag)
    return run(a.kit, a.timeout, a.only, a.repeat, a.cpu_driver, a.allow_no_gpu)


if __name__ == "__main__":
    sys.exit(main())
