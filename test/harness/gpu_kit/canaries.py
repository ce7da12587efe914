"""Canaries of stock IREE 3.13 on cuda: each still-wrong answer of IREE's own
that mdc works around or reports; when one turns right, drop what it guards."""

from __future__ import annotations

import os
import sys

import numpy as np

from bench.kitframe import run_timed

from ..paths import script
from ..processes import run_captured


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
# same). mdc-compile warns of the pattern (passes/targets/cuda/cuda_maxsi_warning.py).
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


def stock_cuda_canaries() -> dict[str, tuple[str, list[np.ndarray], np.ndarray]]:
    """Every stock cuda canary module: name -> (source, inputs, numpy's answer)."""
    min_input = np.array(MIN_REDUCE_INPUT, np.int32)
    canaries = {"canary_min_reduce": (MIN_REDUCE_CANARY, [min_input], min_input.min(axis=1, keepdims=True))}
    for variant, (shape, reduced, n) in MAXSI_VARIANTS.items():
        inputs = maxsi_canary_inputs(n)
        value = inputs[0] if n == 1 else inputs[0] - inputs[1]
        canaries[f"canary_maxsi_{variant}"] = (maxsi_canary_source(shape, reduced, n), inputs,
                                               value.max(axis=reduced))
    return canaries


def build_stock_cuda_canaries(kit: str) -> int:
    """Each canary's module (stock iree-compile, cuda only), its inputs, and
    numpy's answer."""
    for name, (source, inputs, expected) in stock_cuda_canaries().items():
        src = os.path.join(kit, f"{name}.mlir")
        with open(src, "w") as f:
            f.write(source)
        r = run_captured(["iree-compile", src, "--iree-hal-target-device=cuda", "--iree-cuda-target=sm_80",
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
    inputs = sorted(f for f in os.listdir(kit) if f.startswith(f"{name}.in") and f.endswith(".npy"))
    r = run_timed(["iree-run-module", f"--module={name}.vmfb", "--function=f", "--device=cuda",
                   *[f"--input=@{f}" for f in inputs], f"--output=@{out}"], timeout, cwd=kit, outputs=[out])
    if r.status in ("TIMEOUT", "NO-TOOL"):
        return None, r.stderr or r.status
    if not r.ok:
        return None, f"{r.status}: {(r.stderr.strip().splitlines() or [''])[-1][:200]}"
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


def canary_stock_cuda_other_thread() -> tuple[bool, str]:
    """Stock IREE 3.13 (iree.runtime alone): a cuda device created on this
    thread cannot allocate on another (CUDA_ERROR_INVALID_CONTEXT), which
    runtime_shim/cuda_thread.py steps around. -> (still so, what happened);
    when it no longer is, drop that binding. Run in a process of its own."""
    r = run_captured([sys.executable, script("gpu_kit"), "_canary_cuda_thread"], timeout=60)
    last = (r.stdout.strip().splitlines() or [""])[-1]
    return r.returncode == 0 and "INVALID_CONTEXT" in last, last or r.stderr.strip()[-200:]


def canary_cuda_thread_child() -> int:
    """The child of canary_stock_cuda_other_thread (``gpu_kit.py _canary_cuda_thread``)."""
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
