"""The kit's cases: each a program, a function, seeded inputs, the devices
and the runner that calls it on the GPU machine."""

from __future__ import annotations

import os

import numpy as np

from ..paths import EXAMPLES, PROGRAMS, ROOT

AB = ["a=local[0]", "b=cuda[0]"]
RT_AB = ["local-task", "cuda"]


def kit_case(name, program, function, inputs, *, devices=AB, runtime=RT_AB,
          model="async-internal", runner="iree-run-module", program_dir=PROGRAMS, compiler="mdc",
          flags=(), results=1):
    """compiler="iree": stock iree-compile instead of mdc-compile (for
    programs stock IREE compiles, to see what the GPU makes of its output).
    flags: more mdc-compile flags. results: how many results the function
    has, each compared."""
    return dict(name=name, program=os.path.join(program_dir, program), function=function,
                inputs=inputs, devices=devices, runtime=runtime, model=model, runner=runner,
                compiler=compiler, flags=list(flags), results=results)


def result_files(name: str, kind: str, results: int) -> list[str]:
    """The .npy file names of a case's results: one, or one per result."""
    if results == 1:
        return [f"{name}.{kind}.npy"]
    return [f"{name}.{kind}{k}.npy" for k in range(results)]


def kit_cases(rng):
    f32 = lambda *s: rng.standard_normal(s).astype(np.float32)
    return [
        kit_case("seed", "multi_device_mul.mlir", "multi_device_mul",
              [np.array([10, 11, 12, 13], np.float32)], program_dir=EXAMPLES),
        kit_case("seed_async_external", "multi_device_mul.mlir", "multi_device_mul",
              [np.array([10, 11, 12, 13], np.float32)], program_dir=EXAMPLES, model="async-external"),
        kit_case("diamond", "diamond.mlir", "diamond", [f32(16, 8)]),
        kit_case("diamond_async_external", "diamond.mlir", "diamond", [f32(16, 8)], model="async-external"),
        kit_case("matmul_chain", "matmul_chain.mlir", "matmul_chain", [f32(32, 64), f32(64, 48), f32(48, 16)]),
        kit_case("dynamic_2d_f16", "dynamic_2d.mlir", "dynamic_2d",
              [rng.standard_normal((5, 7)).astype(np.float16)]),
        kit_case("loop_dynamic", "loop.mlir", "ping_pong", [f32(37), np.array(3, np.int64)]),
        # Large enough that copies race their producers if a wait is missing.
        kit_case("loop_dynamic_large", "loop.mlir", "ping_pong", [f32(1 << 20), np.array(20, np.int64)]),
        # Sizes known at run time only, small ones read in place by the GPU
        # (passes/lowering/small_in_place.py): many iterations, so a CPU
        # write into the site before the GPU's read of the last one shows;
        # and a CPU kernel's result, just under and over the size limit.
        kit_case("loop_dynamic_small_in_place", "loop.mlir", "ping_pong", [f32(1000), np.array(50, np.int64)]),
        kit_case("seed_dynamic_in_place", "seed_dynamic.mlir", "multi_device_mul", [f32(16384)],
              program_dir=os.path.join(ROOT, "bench", "programs")),
        kit_case("seed_dynamic_copied", "seed_dynamic.mlir", "multi_device_mul", [f32(16385)],
              program_dir=os.path.join(ROOT, "bench", "programs")),
        # A small value sent to the GPU in every iteration and only summed
        # there: the GPU's copy out of the pinned site is waited for by the
        # site's next write alone (passes/lowering/small_in_place.py).
        kit_case("sum_on_gpu", "sum_on_b.mlir", "sum_on_b",
              [np.arange(16, dtype=np.float32), np.array(300, np.int64)]),
        # The same with its size known at run time only: read in place up to
        # 64 KiB (16384 f32), copied above, each iteration's site write
        # waiting for the GPU's read of the last one only when in place.
        kit_case("sum_on_gpu_dynamic_in_place", "sum_on_b_dynamic.mlir", "sum_on_b",
              [(np.arange(16384) % 16).astype(np.float32), np.array(300, np.int64)]),
        kit_case("sum_on_gpu_dynamic_copied", "sum_on_b_dynamic.mlir", "sum_on_b",
              [(np.arange(16385) % 16).astype(np.float32), np.array(300, np.int64)]),
        kit_case("three_devices", "three_devices.mlir", "three_devices",
              [rng.integers(-50, 50, (4, 4)).astype(np.int32)],
              devices=["a=local[0]", "b=cuda[0]", "c=local[1]"],
              runtime=["local-task", "cuda", "local-sync"]),
        kit_case("global_call", "globals_call.mlir", "apply", [f32(4)]),
        # A mutable global stored on the GPU and read on the CPU: the first
        # result is the state after one call, read back within the second.
        kit_case("state_on_two_devices", "state_on_two_devices.mlir", "accumulate_twice", [f32(4)], runner="shim"),
        # Globals kept on the CPU and read on the GPU, and carried through a
        # loop on the GPU (a read of a global on another device once ran
        # IREE's usage refinement out of memory).
        kit_case("globals_across_write", "globals_across_devices.mlir", "write_a", [f32(4)], runner="shim"),
        kit_case("globals_across_loop", "globals_across_devices.mlir", "run", [f32(8), np.array(3, np.int64)],
              runner="shim"),
        # Arguments or results on the GPU: stock iree-run-module cannot place
        # them (docs/DESIGN.md section 2), so these go through the runtime shim.
        kit_case("arg_on_gpu", "two_args.mlir", "add_across", [f32(2, 3), f32(2, 3)], runner="shim"),
        kit_case("result_on_gpu", "result_on_b.mlir", "square_to_b",
              [rng.integers(-1000, 1000, 8).astype(np.int32)], runner="shim"),
        kit_case("arg_and_result_on_gpu", "gpu_both.mlir", "gpu_roundtrip", [f32(64)], runner="shim"),
        # Results left on the GPU, half of them dropped as the calls go on:
        # freed memory is reused by later calls (runtime_shim/cuda_free.py)
        # while the held results stay right.
        kit_case("results_left_on_gpu", "result_on_b.mlir", "square_to_b",
              [rng.integers(-1000, 1000, 8).astype(np.int32)], runner="resident"),
        kit_case("results_left_on_gpu_large", "to_gpu.mlir", "to_gpu",
              [rng.integers(-128, 128, 1 << 20).astype(np.int8)], runner="resident",
              program_dir=os.path.join(ROOT, "bench", "programs")),
        # Results declared on no device that end on the GPU (a constant
        # moved there, a value computed there, mdc's placement, a
        # coarse-fences function): the manifest's result_devices tells the
        # shim to fetch each from the GPU (else PERMISSION_DENIED).
        kit_case("undeclared_constant_on_gpu", "undeclared_results.mlir", "constant_on_b", [], runner="shim"),
        kit_case("undeclared_result_on_gpu", "undeclared_results.mlir", "square_on_b", [f32(4)], runner="shim"),
        kit_case("undeclared_result_on_gpu_async_external", "undeclared_results.mlir", "square_on_b", [f32(4)],
              runner="shim", model="async-external"),
        kit_case("undeclared_result_placed_on_gpu", "undeclared_results.mlir", "placed_on_b", [f32(4), f32(16)],
              runner="shim"),
        kit_case("undeclared_result_coarse_fences", "undeclared_result_async.mlir", "async_square_on_b", [f32(4)],
              runner="shim"),
        kit_case("arg_and_result_on_gpu_async_external", "gpu_both.mlir", "gpu_roundtrip", [f32(64)],
              runner="shim", model="async-external"),
        kit_case("seed_shim", "multi_device_mul.mlir", "multi_device_mul",
              [np.array([10, 11, 12, 13], np.float32)], program_dir=EXAMPLES, runner="shim"),
        # One executable dispatched on the CPU and on the GPU (IREE created it
        # on one device from the other's variant: executable-per-target).
        kit_case("shared_executable_gpu", "shared_executable.mlir", "on_gpu", [f32(1000)], runner="shim"),
        kit_case("shared_executable_cpu", "shared_executable.mlir", "on_cpu", [f32(1000)], runner="shim"),
        kit_case("shared_executable_round_trip", "shared_executable.mlir", "there_and_back", [f32(1000)],
              runner="shim"),
        # A loop on the GPU whose buffer IREE frees with a PreferOrigin
        # dealloca on the CPU's queue, with mdc and with stock iree-compile
        # (test/lit/regress/loop_on_gpu_dealloca_on_default_device.mlir).
        kit_case("loop_on_gpu", "loop_on_gpu.mlir", "loop_on_b", [f32(4), np.array(5, np.int64)],
              devices=["device_a=local[0]", "b=cuda[0]"], runner="shim"),
        kit_case("loop_on_gpu_stock_iree", "loop_on_gpu.mlir", "loop_on_b",
              [f32(4), np.array(5, np.int64)], devices=["device_a=local[0]", "b=cuda[0]"],
              runner="shim", compiler="iree"),
        # Arguments given in the GPU's pinned memory (--pinned-arguments):
        # the GPU copies them straight out of the buffers the shim placed
        # them in; a CPU buffer there fails with CUDA_ERROR_INVALID_VALUE.
        kit_case("pinned_arguments", "pinned_arguments.mlir", "pinned_product", [f32(1 << 18), f32(1 << 18)],
              runner="shim", flags=["--pinned-arguments"]),
        kit_case("pinned_arguments_async_external", "pinned_arguments.mlir", "pinned_product",
              [f32(1 << 18), f32(1 << 18)], runner="shim", flags=["--pinned-arguments"],
              model="async-external"),
        kit_case("pinned_arguments_placed", "pinned_arguments.mlir", "pinned_product",
              [f32(1 << 18), f32(1 << 18)], runner="placed", flags=["--pinned-arguments"]),
        # A GPU result written by the GPU straight into an output argument
        # (iree.abi.output) in its pinned memory.
        kit_case("pinned_output", "pinned_output.mlir", "square_into", [f32(1 << 18), f32(1 << 18)],
              runner="shim", flags=["--pinned-arguments"]),
        kit_case("pinned_output_async_external", "pinned_output.mlir", "square_into",
              [f32(1 << 18), f32(1 << 18)], runner="shim", flags=["--pinned-arguments"],
              model="async-external"),
        # The same output argument in the CPU's memory (no flag): the CPU's
        # copy out of pinned memory writes into it.
        kit_case("output_in_cpu_memory", "pinned_output.mlir", "square_into", [f32(1 << 18), f32(1 << 18)],
              runner="shim"),
        # Results the GPU writes into the shim's pooled memory (a
        # result-storage twin, runner "lent"): static and dynamic shapes,
        # both execution models.
        kit_case("lent_static", "results_from_b.mlir", "scaled", [f32(512, 512)], runner="lent"),
        kit_case("lent_static_async_external", "results_from_b.mlir", "scaled", [f32(512, 512)], runner="lent",
              model="async-external"),
        kit_case("lent_dynamic", "results_from_b.mlir", "negated", [f32(1 << 18)], runner="lent"),
        # Pipelined calls (Function.map, runner "pipelined"): a CPU stage
        # and a GPU stage, calls in flight together, both execution models.
        kit_case("pipelined", "split_stages.mlir", "stages", [f32(64, 128)], runner="pipelined"),
        kit_case("pipelined_async_external", "split_stages.mlir", "stages", [f32(64, 128)], runner="pipelined",
              model="async-external"),
        # ... and results the GPU writes into the shim's pooled memory.
        kit_case("pipelined_lent", "results_from_b.mlir", "scaled", [f32(512, 512)], runner="pipelined"),
        # Calls from a thread other than the loading one (runner
        # "other_thread"): IREE's cuda driver makes its context current on
        # the loading thread only (runtime_shim/cuda_thread.py).
        kit_case("other_thread", "split_stages.mlir", "stages", [f32(64, 128)], runner="other_thread"),
        kit_case("other_thread_lent", "results_from_b.mlir", "scaled", [f32(512, 512)], runner="other_thread"),
        # Inputs the shim placed on the GPU go back through its queue
        # (runner "given_back", runtime_shim/cuda_free.py): a global that
        # stored one must still read right once the memory is reused.
        kit_case("argument_given_back", "argument_stored_on_gpu.mlir", "keep_then_read", [f32(1 << 16)],
              runner="given_back"),
        # IREE frees a constant's copy on the CPU at a loop's exit with a
        # dealloca the GPU's next alloca awaited (a GPU queue waiting on a
        # CPU's semaphore never runs): the host waits for it
        # (test/lit/regress/constant_read_on_gpu_waits_on_cpu.mlir).
        kit_case("constant_read_on_gpu_after_loop", "constant_read_on_gpu_waits_on_cpu.mlir", "p104", [f32(4, 3, 7)],
              devices=["a=local[0]", "b=cuda[0]", "c=local[1]"], runtime=["local-task", "cuda", "local-sync"],
              program_dir=os.path.join(ROOT, "test", "lit", "regress"), runner="shim",
              flags=["--iree-opt-const-eval=false"], results=3),
    ]
