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

import argparse
import json
import os
import re
import subprocess
import sys

import _harness_path  # noqa: F401  (test/ and the checkout on sys.path)
from harness.gpu_kit import cuda_available

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SOURCE = os.path.join(ROOT, "examples", "pytorch", "exported_wide", "gpt2_wide.mlir")
PROFILE = os.path.join(ROOT, "bench", "profiles", "h100.json")
ENV = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")])))
SEED, SCALE, VOCAB, TOKENS = 20261206, 0.02, 8192, 64
RTOL, ATOL = 1e-3, 1e-4
TIMED_CALLS = 10
NO_GPU_STATUS = 2
GPU_FLAGS = ["--device=cpu=local[0]", "--device=gpu=cuda[0]", "--iree-cuda-target=sm_80",
             "--iree-llvmcpu-target-cpu=x86-64-v3"]
SMOKE_FLAGS = ["--device=cpu=local[0]", "--device=gpu=local[1]", "--link=cpu:gpu=staged",
               "--iree-llvmcpu-target-cpu=x86-64-v3"]
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

def _run(cmd: list[str], what: str) -> subprocess.CompletedProcess:
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=900, env=ENV)
    if r.returncode:
        raise RuntimeError(f"{what} failed: {r.stderr.strip()[-2000:]}")
    return r


def _mdc(flags: list[str], stem: str) -> dict:
    print(f"compiling {os.path.basename(stem)}", flush=True)  # progress: a watched run takes silence as a hang
    _run([sys.executable, "-m", "mdc.pipeline", SOURCE, *flags, f"--report={stem}.json", "-o", f"{stem}.vmfb"],
         os.path.basename(stem))
    with open(f"{stem}.json") as f:
        return json.load(f)["placement"]


def build(kit: str, smoke: bool) -> int:
    import numpy as np

    kit = os.path.abspath(kit)
    os.makedirs(kit, exist_ok=True)
    with open(SOURCE) as f:
        params = parameters_of(f.read())
    with open(PROFILE) as f:
        reserved = 0 if smoke else int(json.load(f)["devices"]["cuda"].get("reserved_bytes") or 0)
    weights = sum(_nbytes(p) for p in params)
    budget = weights // 2 + reserved
    flags = [*(SMOKE_FLAGS if smoke else GPU_FLAGS), f"--place-profile={PROFILE}"]
    rows = []
    try:
        auto = _mdc([*flags, "--place=auto", f"--gpu-memory={budget}"], os.path.join(kit, "auto"))
        cpu = _mdc([*flags, "--place=auto", "--gpu-memory=0"], os.path.join(kit, "cpu"))
        everything = os.path.join(kit, "gpu.assignment.json")
        with open(everything, "w") as f:
            json.dump({"units": [{"id": u["id"], "device": "gpu"} for u in auto["units"]],
                       "weights": [{"name": w["name"], "device": "gpu"} for w in auto["weights"]]}, f)
        gpu = _mdc([*flags, f"--place={everything}"], os.path.join(kit, "gpu"))
        print("compiling stock", flush=True)
        _run(["iree-compile", SOURCE, *STOCK_FLAGS, "-o", os.path.join(kit, "stock.vmfb")], "iree-compile")
    except (RuntimeError, subprocess.TimeoutExpired) as e:
        print(f"gpu_place_wide: {e}", file=sys.stderr)
        return 1
    for name, placement in (("auto", auto), ("cpu", cpu), ("gpu", gpu)):
        units = [u["device"] for u in placement["units"]]
        rows.append({"name": name, "vmfb": f"{name}.vmfb", "summary": placement["summary"],
                     "estimate_s": placement["estimate_seconds"], "gpu_units": units.count("gpu"),
                     "units": len(units), "crossings": len(placement["crossings"])})
        print(f"{name}: {placement['summary']}", flush=True)
    ids = np.random.default_rng(SEED).integers(0, VOCAB, size=(1, TOKENS), dtype=np.int64)
    np.save(os.path.join(kit, "ids.npy"), ids)
    meta = {"devices": ["local-task", "local-sync"] if smoke else ["local-task", "cuda"], "budget": budget,
            "weights": weights, "seed": SEED, "scale": SCALE, "parameters": params, "modules": rows}
    with open(os.path.join(kit, "kit.json"), "w") as f:
        json.dump(meta, f, indent=1)
    size = sum(os.path.getsize(os.path.join(kit, n)) for n in os.listdir(kit))
    print(f"built {len(rows)} modules and the stock reference in {kit}, {size / 2**20:.1f} MiB; budget "
          f"{budget / 2**20:.1f} MiB for {weights / 2**20:.1f} MiB of weights")
    return 0


# ---------------------------------------------------------------- run there

def write_archive(meta: dict, path: str) -> str:
    """The seeded weights as a parameter archive; -> ``scope=path``."""
    import numpy as np
    import iree.runtime as rt

    rng = np.random.default_rng(meta["seed"])
    index = rt.ParameterIndex()
    scopes = {p["scope"] for p in meta["parameters"]}
    if len(scopes) != 1:
        raise RuntimeError(f"one parameter scope expected, found {sorted(scopes)}")
    for p in meta["parameters"]:
        index.add_buffer(p["name"], (rng.standard_normal(p["shape"], dtype=np.float32) * meta["scale"]).tobytes())
    index.create_archive_file(path)
    return f"{scopes.pop()}={path}"


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


def run(kit: str) -> int:
    import statistics
    import tempfile
    import time

    import numpy as np

    kit = os.path.abspath(kit)
    with open(os.path.join(kit, "kit.json")) as f:
        meta = json.load(f)
    devices = meta["devices"]
    if "cuda" in devices and not cuda_available():
        print("gpu_place_wide: error: no cuda device here; nothing was run", file=sys.stderr)
        return NO_GPU_STATUS
    from mdc.runtime_shim import load

    memory = None
    if "cuda" in devices:
        from bench.placement import GpuMemory

        memory = GpuMemory()
    ids = np.load(os.path.join(kit, "ids.npy"))
    with tempfile.TemporaryDirectory(prefix="mdc-wide-") as scratch:
        began = time.perf_counter()
        archive = write_archive(meta, os.path.join(scratch, "weights.irpa"))
        want = stock_reference(kit, archive, ids).astype(np.float64)
        print(f"weights {meta['weights'] / 2**20:.1f} MiB from seed {meta['seed']} and the stock all-local "
              f"reference in {time.perf_counter() - began:.1f} s; budget {meta['budget'] / 2**20:.1f} MiB; "
              f"devices {' + '.join(devices)}", flush=True)
        lines, right, peaks = [], True, {}
        for row in meta["modules"]:
            try:
                import contextlib
                import gc

                gc.collect()
                with memory if memory is not None else contextlib.nullcontext():
                    with load(os.path.join(kit, row["vmfb"]), devices, parameters=[archive]) as m:
                        got = np.asarray(m.main(ids))
                        times = []
                        for _ in range(TIMED_CALLS):
                            start = time.perf_counter()
                            m.main(ids)
                            times.append(time.perf_counter() - start)
                peaks[row["name"]] = memory.grown if memory is not None else None
                ok = got.shape == want.shape and bool(np.allclose(got, want, rtol=RTOL, atol=ATOL))
                err = float(np.max(np.abs(got - want))) if got.shape == want.shape else float("nan")
                verdict, shown, ms = ("ok" if ok else "WRONG"), f"{err:.1e}", f"{statistics.median(times) * 1e3:.2f}"
            except Exception as e:  # a module that fails is a row, not the end
                ok, verdict, shown, ms = False, f"FAILED {type(e).__name__}: {str(e).splitlines()[0][:80]}", "", ""
                peaks[row["name"]] = None
            right = right and ok
            lines.append((row, verdict, shown, ms))
            print(f"{row['name']}: loaded, called and closed", flush=True)  # progress, as in build
    base = peaks.get("cpu")
    print(f"\nms: the report's estimate and the median of {TIMED_CALLS} calls; peak MiB: GPU memory in use over "
          "the module's load and calls less before, and less the all-CPU module's own for the budget check; "
          f"rtol {RTOL}, atol {ATOL} against stock IREE on local-task")
    print("| placement | units on gpu | crossings a call | est ms | ms | peak MiB | in budget | max abs error | check |")
    print("|---|---:|---:|---:|---:|---:|---|---:|---|")
    for row, verdict, shown, ms in lines:
        peak = peaks.get(row["name"])
        held = "n/a" if peak is None or base is None else ("yes" if peak - base <= meta["budget"] else "no")
        shown_peak = "n/a" if peak is None else f"{peak / 2**20:.1f}"
        note = " (over the budget, the reference)" if row["name"] == "gpu" else ""
        print(f"| {row['name']}{note} | {row['gpu_units']} of {row['units']} | {row['crossings']} | "
              f"{row['estimate_s'] * 1e3:.2f} | {ms} | {shown_peak} | {held} | {shown} | {verdict} |")
    print("\nevery result right" if right else "\nWRONG results above")
    return 0 if right else 1


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build", help="compile the kit (here)")
    b.add_argument("kit")
    b.add_argument("--smoke", action="store_true", help="two staged CPU devices, no GPU needed")
    r = sub.add_parser("run", help="run the kit (GPU machine)")
    r.add_argument("kit")
    args = p.parse_args(argv)
    if args.cmd == "build":
        return build(args.kit, args.smoke)
    return run(args.kit)


if __name__ == "__main__":
    sys.exit(main())
