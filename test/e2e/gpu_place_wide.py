#!/usr/bin/env python3
"""Build here, run on a GPU machine: ``--place=auto`` splitting a GPT-2 the GPU is faster for.

    python test/e2e/gpu_place_wide.py build KIT_DIR [--smoke]   # here: the compiler
    python test/e2e/gpu_place_wide.py run KIT_DIR               # there: runtime and numpy only

The exports of examples/pytorch/exported_unplaced are too small for a GPU
to pay off (gpu_place_torch.py: everything on the CPU is fastest, and
``--place=auto`` says so). examples/pytorch/exported_wide/gpt2_wide.mlir is
a ``transformers`` GPT2LMHeadModel of 8 blocks of width 1024 and a vocabulary
of 8192 (417 MiB of f32 weights, as named parameters in scope ``model``),
exported by examples/pytorch/export_wide.py with no device named, one call
on 64 token ids. Its weights are too large to carry, so the run makes them
from a seed with numpy (normal, scale 0.02) and writes them as a parameter
archive; its reference is stock IREE's all-local module (``iree-compile``
for ``local``, run by ``iree.runtime`` on local-task with the same
archive), not torch.

``build`` compiles for ``--device=cpu=local[0] --device=gpu=cuda[0]``
(``--iree-cuda-target=sm_80``, ``--iree-llvmcpu-target-cpu=x86-64-v3``,
``--place-profile=bench/profiles/h100.json``):

- ``auto``: ``--place=auto`` under half the weights' bytes plus the
  profile's reserved bytes: the model does not fit, so a split is forced;
- ``cpu``: ``--place=auto --gpu-memory=0``, everything on the CPU;
- ``gpu``: ``--place=FILE.json``, everything on the GPU (over the budget:
  the reference that says how fast the GPU alone would be);

and the stock all-local reference module. ``run`` checks each module
against the reference (rtol 1e-3, atol 1e-4: summation orders differ on
the GPU), times it (median of TIMED_CALLS after one) beside its estimate,
samples the GPU memory in use around each module's load and calls (peak
less before, less the all-CPU module's own, against the budget), and
prints one table. Exit status 1 on a wrong result or a failed module, 2
without cuda. ``--smoke`` builds for two staged CPU devices instead (run
on local-task and local-sync), to check the kit without a GPU.
"""

from __future__ import annotations

import os
import re
import sys

import _harness_path  # noqa: F401  (test/ and the checkout on sys.path)
from bench.kitframe import (ROOT, Step, failed, kit_main, kit_mib, markdown, option, parameter_archive,
                            read_manifest, run_timed, verdict, write_manifest)
from harness.place_kit import (PROFILE, compile_placed, everything_on_gpu, no_cuda, placed_counts, reserved_bytes,
                               targets, write_assignment)

SOURCE = os.path.join(ROOT, "examples", "pytorch", "exported_wide", "gpt2_wide.mlir")
SEED, SCALE, VOCAB, TOKENS = 20261206, 0.02, 8192, 64
RTOL, ATOL = 1e-3, 1e-4
TIMED_CALLS = 10
STOCK_FLAGS = ["--iree-hal-target-device=local", "--iree-hal-local-target-device-backends=llvm-cpu",
               "--iree-llvmcpu-target-cpu=x86-64-v3"]
PARAMETER = re.compile(r'#flow\.parameter\.named<"(\w+)"::"([^"]+)"> : tensor<([0-9x]+)xf32>')


def parameters_of(text: str) -> list[dict]:
    """Every named f32 parameter of the program: scope, name, shape."""
    found = {}
    for scope, name, dims in PARAMETER.findall(text):
        found[(scope, name)] = [int(d) for d in dims.split("x")]
    return [{"scope": s, "name": n, "shape": shape} for (s, n), shape in sorted(found.items())]


def _nbytes(p: dict) -> int:
    n = 4
    for d in p["shape"]:
        n *= d
    return n


# ---------------------------------------------------------------- build here

def _mdc(flags: list[str], stem: str) -> dict:
    print(f"compiling {os.path.basename(stem)}", flush=True)  # progress: a watched run takes silence as a hang
    return compile_placed(SOURCE, flags, stem)


def build(kit: str, smoke: bool) -> int:
    import numpy as np

    kit = os.path.abspath(kit)
    os.makedirs(kit, exist_ok=True)
    with open(SOURCE) as f:
        params = parameters_of(f.read())
    weights = sum(_nbytes(p) for p in params)
    budget = weights // 2 + (0 if smoke else reserved_bytes())
    target_flags, devices = targets(smoke)
    flags = [*target_flags, f"--place-profile={PROFILE}"]
    try:
        auto = _mdc([*flags, "--place=auto", f"--gpu-memory={budget}"], os.path.join(kit, "auto"))
        cpu = _mdc([*flags, "--place=auto", "--gpu-memory=0"], os.path.join(kit, "cpu"))
        gpu = _mdc([*flags, write_assignment(os.path.join(kit, "gpu.assignment.json"), everything_on_gpu(auto))],
                   os.path.join(kit, "gpu"))
        print("compiling stock", flush=True)
        stock = run_timed(["iree-compile", SOURCE, *STOCK_FLAGS, "-o", os.path.join(kit, "stock.vmfb")], 900)
        if not stock.ok:
            raise RuntimeError(f"iree-compile failed: {stock.stderr.strip()[-2000:] or stock.status}")
    except RuntimeError as e:
        print(f"gpu_place_wide: {e}", file=sys.stderr)
        return 1
    rows = []
    for name, placement in (("auto", auto), ("cpu", cpu), ("gpu", gpu)):
        rows.append({"name": name, "vmfb": f"{name}.vmfb", **placed_counts(placement),
                     "crossings": len(placement["crossings"])})
        print(f"{name}: {placement['summary']}", flush=True)
    ids = np.random.default_rng(SEED).integers(0, VOCAB, size=(1, TOKENS), dtype=np.int64)
    np.save(os.path.join(kit, "ids.npy"), ids)
    write_manifest(kit, "kit.json", {"devices": devices, "budget": budget, "weights": weights, "seed": SEED,
                                     "scale": SCALE, "parameters": params, "modules": rows})
    print(f"built {len(rows)} modules and the stock reference in {kit}, {kit_mib(kit):.1f} MiB; budget "
          f"{budget / 2**20:.1f} MiB for {weights / 2**20:.1f} MiB of weights")
    return 0


# ---------------------------------------------------------------- run there

def write_archive(meta: dict, path: str) -> str:
    """The seeded weights as a parameter archive; -> ``scope=path``."""
    import numpy as np

    rng = np.random.default_rng(meta["seed"])
    scopes = {p["scope"] for p in meta["parameters"]}
    if len(scopes) != 1:
        raise RuntimeError(f"one parameter scope expected, found {sorted(scopes)}")
    return parameter_archive(path, scopes.pop(), ((p["name"], rng.standard_normal(p["shape"], dtype=np.float32)
                                                   * meta["scale"]) for p in meta["parameters"]))


def stock_reference(kit: str, archive: str, ids):
    """Stock IREE's all-local module on local-task with the archive."""
    import numpy as np
    import iree.runtime as rt

    scope, _, path = archive.partition("=")
    config = rt.Config("local-task")
    index = rt.ParameterIndex()
    index.load(path)
    modules = [rt.create_io_parameters_module(config.vm_instance, index.create_provider(scope=scope)),
               rt.create_hal_module(config.vm_instance, config.device),
               rt.VmModule.mmap(config.vm_instance, os.path.join(kit, "stock.vmfb"))]
    context = rt.VmContext(config.vm_instance, modules)
    function = modules[-1].lookup_function("main")
    result = rt.FunctionInvoker(context, config.device, function)(ids)
    return np.asarray(result.to_host() if hasattr(result, "to_host") else result)


def _measure(kit: str, row: dict, devices: list[str], archive: str, ids, want, memory) -> tuple:
    """One module loaded, called and timed: ((ms, max abs error, check), peak
    GPU bytes or None); its GPU memory sampled around its load and calls."""
    import contextlib
    import gc

    import numpy as np

    from bench.common import median_time
    from mdc.runtime_shim import load

    try:
        gc.collect()
        with memory if memory is not None else contextlib.nullcontext():
            with load(os.path.join(kit, row["vmfb"]), devices, parameters=[archive]) as m:
                got = np.asarray(m.main(ids))
                seconds = median_time(lambda: m.main(ids), TIMED_CALLS, warmup=0)
        ok = got.shape == want.shape and bool(np.allclose(got, want, rtol=RTOL, atol=ATOL))
        err = float(np.max(np.abs(got - want))) if got.shape == want.shape else float("nan")
        cells = (f"{seconds * 1e3:.2f}", f"{err:.1e}", "ok" if ok else "WRONG")
        return cells, ok, memory.grown if memory is not None else None
    except Exception as e:  # a module that fails is a row, not the end
        return ("", "", failed(e)), False, None


def run(kit: str) -> int:
    import tempfile
    import time

    import numpy as np

    kit = os.path.abspath(kit)
    meta = read_manifest(kit, "kit.json", build=f"python test/e2e/gpu_place_wide.py build {kit}")
    devices = meta["devices"]
    status = no_cuda("gpu_place_wide", devices)
    if status is not None:
        return status
    memory = None
    if "cuda" in devices:
        from mdc.profiler.memory import CudaMemory

        memory = CudaMemory()
    ids = np.load(os.path.join(kit, "ids.npy"))
    with tempfile.TemporaryDirectory(prefix="mdc-wide-") as scratch:
        began = time.perf_counter()
        archive = write_archive(meta, os.path.join(scratch, "weights.irpa"))
        want = stock_reference(kit, archive, ids).astype(np.float64)
        print(f"weights {meta['weights'] / 2**20:.1f} MiB from seed {meta['seed']} and the stock all-local "
              f"reference in {time.perf_counter() - began:.1f} s; budget {meta['budget'] / 2**20:.1f} MiB; "
              f"devices {' + '.join(devices)}", flush=True)
        measured = {}
        for row in meta["modules"]:
            measured[row["name"]] = _measure(kit, row, devices, archive, ids, want, memory)
            print(f"{row['name']}: loaded, called and closed", flush=True)  # progress, as in build
    base = measured.get("cpu", (None, None, None))[2]
    print(f"\nms: the report's estimate and the median of {TIMED_CALLS} calls; peak MiB: GPU memory in use over "
          "the module's load and calls less before, and less the all-CPU module's own for the budget check; "
          f"rtol {RTOL}, atol {ATOL} against stock IREE on local-task")
    lines = []
    for row in meta["modules"]:
        (ms, shown, check), _, peak = measured[row["name"]]
        held = "n/a" if peak is None or base is None else ("yes" if peak - base <= meta["budget"] else "no")
        note = " (over the budget, the reference)" if row["name"] == "gpu" else ""
        lines.append((f"{row['name']}{note}", f"{row['gpu_units']} of {row['units']}", row["crossings"],
                      f"{row['estimate_s'] * 1e3:.2f}", ms, "n/a" if peak is None else f"{peak / 2**20:.1f}", held,
                      shown, check))
    print(markdown(("placement", "units on gpu", "crossings a call", "est ms", "ms", "peak MiB", "in budget",
                    "max abs error", "check"), "lrrrrrlrl", lines))
    return verdict(all(ok for _, ok, _ in measured.values()))


BUILD = Step(lambda a: build(a.kit, a.smoke), [
    option("--smoke", action="store_true", help="two staged CPU devices, no GPU needed")],
    help="compile the kit (here)")
RUN = Step(lambda a: run(a.kit), help="run the kit (GPU machine)")


def main(argv=None) -> int:
    return kit_main(__doc__.splitlines()[0], BUILD, RUN, argv)


if __name__ == "__main__":
    sys.exit(main())
