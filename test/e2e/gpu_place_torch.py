#!/usr/bin/env python3
"""Build here, run on a GPU machine: ``--place`` on the unplaced PyTorch exports, CPU + CUDA.

    python test/e2e/gpu_place_torch.py build KIT_DIR [--smoke] [--only NAME]  # here: the compiler
    python test/e2e/gpu_place_torch.py run KIT_DIR                           # there: runtime only

``build`` compiles each export of examples/pytorch/exported_unplaced (its
index.json names the files) for ``--device=cpu=local[0]
--device=gpu=cuda[0]`` (``--iree-cuda-target=sm_80``,
``--iree-llvmcpu-target-cpu=x86-64-v3``) twice:

- ``auto``: ``--place=auto --place-profile=bench/profiles/h100.json`` under
  ``--gpu-memory`` of half the export's weight bytes plus the profile's
  reserved bytes for cuda, so that not everything fits on the GPU;
- ``auto90``: the same under 90% of the weight bytes (plus the reserve): a
  budget that leaves the search room to split a model the GPU runs faster;
- ``file``: ``--place=FILE.json`` from the auto report's units, the larger
  half of the matmuls (by bytes, at least one) on ``gpu``, every other unit
  and every weight on ``cpu``, so that the GPU run has a real split even
  where auto keeps a small model on the CPU (the GPU's fixed cost a call);
- ``gpu``: ``--place=FILE.json`` with every unit and weight on ``gpu``, over
  the budget: the reference that says whether the GPU is faster at all.

The dynamic batch gets ``--max-dim`` for both arguments. The kit holds the
vmfbs, one ``modules.json`` (each module's placement summary, units on
``gpu`` and crossings a call from its report), the inputs, torch's outputs
and the .irpa parameter files. ``--smoke`` builds for two CPU devices staged
as for a GPU (``--device=gpu=local[1] --link=cpu:gpu=staged``, run on
``local-task`` and ``local-sync``), to check the kit and this script without
a GPU.

``run`` loads each module with ``mdc.runtime_shim.load`` on the kit's
devices, calls ``main`` with the inputs (the dynamic batch at each batch
torch has outputs for), compares with torch's outputs within ``rtol=1e-4,
atol=1e-5`` (CUDA's summation order is not torch's CPU one), times the
first inputs' call (median of TIMED_CALLS after one) beside the report's
estimate, and prints one table. Exit status 1 if any result is wrong or a module fails, 2 if the kit
needs cuda and there is no cuda device.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys

import _harness_path  # noqa: F401  (test/ and the checkout on sys.path)
from harness.gpu_kit import cuda_available

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
EXPORTED = os.path.join(ROOT, "examples", "pytorch", "exported_unplaced")
PROFILE = os.path.join(ROOT, "bench", "profiles", "h100.json")
ENV = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")])))
NO_GPU_STATUS = 2
RTOL, ATOL = 1e-4, 1e-5
MAX_BATCH = 64
TIMED_CALLS = 20
MATMULS = ("matmul", "batch_matmul")  # the first word of a report unit's label

GPU_FLAGS = ["--device=cpu=local[0]", "--device=gpu=cuda[0]", "--iree-cuda-target=sm_80",
             "--iree-llvmcpu-target-cpu=x86-64-v3"]
SMOKE_FLAGS = ["--device=cpu=local[0]", "--device=gpu=local[1]", "--link=cpu:gpu=staged",
               "--iree-llvmcpu-target-cpu=x86-64-v3"]
GPU_DEVICES, SMOKE_DEVICES = ["local-task", "cuda"], ["local-task", "local-sync"]


# ---------------------------------------------------------------- build here

def _max_dims(entry: dict) -> list[str]:
    """A bound on the batch of every argument of a dynamic export."""
    if "dynamic" not in entry:
        return []
    return [f"--max-dim=arg{i}.d0={MAX_BATCH}" for i in range(len(entry["inputs"]))]


def _compile(source: str, flags: list[str], stem: str) -> dict:
    """The report's "placement" of ``stem``.vmfb compiled from ``source``."""
    cmd = [sys.executable, "-m", "mdc.pipeline", source, *flags, f"--report={stem}.json", "-o", f"{stem}.vmfb"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=900, env=ENV)
    if r.returncode:
        raise RuntimeError(f"mdc-compile failed ({os.path.basename(stem)}): {r.stderr.strip()}")
    with open(f"{stem}.json") as f:
        return json.load(f)["placement"]


def _compile_auto(source: str, flags: list[str], budget: int, stem: str) -> dict:
    """``--place=auto`` under ``budget``, or under the least budget that puts
    work on the accelerator where the error names one above it."""
    try:
        return _compile(source, [*flags, f"--gpu-memory={budget}"], stem)
    except RuntimeError as e:
        least = re.search(r"--gpu-memory=(\d+) \([^)]*\) is the least", str(e))
        if not least:
            raise
        return _compile(source, [*flags, f"--gpu-memory={least.group(1)}"], stem)


def reserved_bytes(profile: str, device: str = "cuda") -> int:
    with open(profile) as f:
        return int(json.load(f)["devices"].get(device, {}).get("reserved_bytes") or 0)


def split_budget(placement: dict, reserved: int, share: float = 0.5) -> int:
    """``share`` of the weights' bytes plus the accelerator's reserved bytes."""
    return int(sum(w["bytes"] for w in placement["weights"]) * share) + reserved


def matmul_split(placement: dict) -> dict:
    """An assignment with the larger half of the (batch) matmuls (at least one) on
    ``gpu`` and every other unit and every weight on ``cpu``."""
    matmuls = sorted((u for u in placement["units"] if u["label"].split()[0] in MATMULS),
                     key=lambda u: (-u["bytes"], u["id"]))
    on_gpu = {u["id"] for u in matmuls[:max(1, len(matmuls) // 2)]}
    return {"units": [{"id": u["id"], "device": "gpu" if u["id"] in on_gpu else "cpu"} for u in placement["units"]],
            "weights": [{"name": w["name"], "device": "cpu"} for w in placement["weights"]]}


def everything_on_gpu(placement: dict) -> dict:
    return {"units": [{"id": u["id"], "device": "gpu"} for u in placement["units"]],
            "weights": [{"name": w["name"], "device": "gpu"} for w in placement["weights"]]}


def crossings_a_call(summary: str) -> int:
    m = re.search(r"(\d+) crossings? a call", summary)
    return int(m.group(1)) if m else -1


def _row(name: str, how: str, placement: dict, entry: dict) -> dict:
    units = [u["device"] for u in placement["units"]]
    sizes = [entry] + entry.get("other_sizes", [])
    p = entry.get("parameters")
    return dict(model=name, placement=how, vmfb=f"{name}.{how}.vmfb", summary=placement["summary"],
                estimate_s=placement["estimate_seconds"],
                gpu_units=units.count("gpu"), units=len(units), crossings=crossings_a_call(placement["summary"]),
                parameters=[f"{p['scope']}={p['file']}"] if p else [],
                calls=[dict(inputs=[i["file"] for i in s["inputs"]], outputs=[o["file"] for o in s["outputs"]])
                       for s in sizes if all(i["shape"][0] <= MAX_BATCH for i in s["inputs"])])


def build(kit: str, smoke: bool, only: list[str] | None = None) -> int:
    kit = os.path.abspath(kit)
    os.makedirs(kit, exist_ok=True)
    with open(os.path.join(EXPORTED, "index.json")) as f:
        index = json.load(f)
    flags, reserved = (SMOKE_FLAGS, 0) if smoke else (GPU_FLAGS, reserved_bytes(PROFILE))
    rows = []
    for name, entry in index.items():
        if only and name not in only:
            continue
        source, stem = os.path.join(EXPORTED, entry["mlir"]), os.path.join(kit, name)
        try:
            first = _compile(source, [*flags, "--place=auto", f"--place-profile={PROFILE}", *_max_dims(entry)],
                             f"{stem}.probe")
            auto = _compile_auto(source, [*flags, "--place=auto", f"--place-profile={PROFILE}", *_max_dims(entry)],
                                 split_budget(first, reserved), f"{stem}.auto")
            most = _compile_auto(source, [*flags, "--place=auto", f"--place-profile={PROFILE}", *_max_dims(entry)],
                                 split_budget(first, reserved, 0.9), f"{stem}.auto90")
            assignment = f"{stem}.assignment.json"
            with open(assignment, "w") as f:
                json.dump(matmul_split(auto), f, indent=1)
            placed = _compile(source, [*flags, f"--place={assignment}", f"--place-profile={PROFILE}",
                                       *_max_dims(entry)], f"{stem}.file")
            everything = f"{stem}.gpu.assignment.json"
            with open(everything, "w") as f:
                json.dump(everything_on_gpu(auto), f, indent=1)
            gpu = _compile(source, [*flags, f"--place={everything}", f"--place-profile={PROFILE}",
                                    *_max_dims(entry)], f"{stem}.gpu")
        except (RuntimeError, subprocess.TimeoutExpired) as e:
            print(f"{name}: {e}")
            return 1
        for extra in (f"{stem}.probe.vmfb", f"{stem}.probe.json"):
            os.remove(extra)
        rows += [_row(name, "auto", auto, entry), _row(name, "auto90", most, entry), _row(name, "file", placed, entry),
                 _row(name, "gpu", gpu, entry)]
        for file in {f for r in rows[-4:] for c in r["calls"] for f in c["inputs"] + c["outputs"]} | (
                {entry["parameters"]["file"]} if entry.get("parameters") else set()):
            shutil.copyfile(os.path.join(EXPORTED, file), os.path.join(kit, file))
        print(f"{name}: auto {auto['summary']}\n{name}: auto90 {most['summary']}\n{name}: file {placed['summary']}\n{name}: gpu {gpu['summary']}",
              flush=True)
    devices = SMOKE_DEVICES if smoke else GPU_DEVICES
    with open(os.path.join(kit, "modules.json"), "w") as f:
        json.dump({"devices": devices, "modules": rows}, f, indent=1)
    size = sum(os.path.getsize(os.path.join(kit, n)) for n in os.listdir(kit))
    print(f"built {len(rows)} modules in {kit} for {' + '.join(devices)}, {size / 2**20:.1f} MiB")
    return 0


# ---------------------------------------------------------------- run there

def check_module(kit: str, row: dict, devices: list[str]) -> tuple[float, bool, float]:
    """(largest absolute error, every result within tolerance) of every
    call, and the median seconds of the first inputs' call."""
    import statistics
    import time

    import numpy as np

    from mdc.runtime_shim import load

    worst, right = 0.0, True
    params = [f"{scope}={os.path.join(kit, file)}" for scope, _, file in (p.partition("=") for p in row["parameters"])]
    with load(os.path.join(kit, row["vmfb"]), devices, parameters=params) as m:
        for call in row["calls"]:
            got = m.main(*(np.load(os.path.join(kit, f)) for f in call["inputs"]))
            got = list(got) if isinstance(got, (list, tuple)) else [got]
            want = [np.load(os.path.join(kit, f)) for f in call["outputs"]]
            if len(got) != len(want):
                return float("nan"), False, float("nan")
            for g, w in zip(got, want):
                g = np.asarray(g)
                if g.shape != w.shape or g.dtype != w.dtype:
                    return float("nan"), False, float("nan")
                if w.size:
                    worst = max(worst, float(np.max(np.abs(g.astype(np.float64) - w))))
                right = right and bool(np.allclose(g, w, rtol=RTOL, atol=ATOL))
        inputs = [np.load(os.path.join(kit, f)) for f in row["calls"][0]["inputs"]]
        m.main(*inputs)
        times = []
        for _ in range(TIMED_CALLS):
            start = time.perf_counter()
            m.main(*inputs)
            times.append(time.perf_counter() - start)
    return worst, right, statistics.median(times)


def run(kit: str) -> int:
    kit = os.path.abspath(kit)
    with open(os.path.join(kit, "modules.json")) as f:
        meta = json.load(f)
    devices = meta["devices"]
    if "cuda" in devices and not cuda_available():
        print("gpu_place_torch: error: no cuda device here; nothing was run", file=sys.stderr)
        return NO_GPU_STATUS
    lines, right = [], True
    for row in meta["modules"]:
        try:
            err, ok, seconds = check_module(kit, row, devices)
            verdict, shown, measured = ("ok" if ok else "WRONG"), f"{err:.1e}", f"{seconds * 1e3:.3f}"
        except Exception as e:  # a module that fails is a row, not the end
            ok, verdict, shown, measured = False, f"FAILED {type(e).__name__}: {str(e).splitlines()[0][:80]}", "", ""
        right = right and ok
        estimate = f"{row['estimate_s'] * 1e3:.3f}" if "estimate_s" in row else "n/a"  # kits built before it
        lines.append(f"| {row['model']} | {row['placement']} | {row['gpu_units']} of {row['units']} "
                     f"| {row['crossings']} | {estimate} | {measured} | {shown} | {verdict} |")
    print(f"\ndevices: {' + '.join(devices)}; rtol {RTOL}, atol {ATOL}; ms: one call of the first inputs, "
          f"the report's estimate and the median of {TIMED_CALLS} measured; gpu: everything there, over the budget")
    print("| model | placement | units on gpu | crossings a call | est ms | ms | max abs error | check |")
    print("|---|---|---:|---:|---:|---:|---:|---|")
    print("\n".join(lines))
    print("\nevery result right" if right else "\nWRONG results above")
    return 0 if right else 1


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build", help="compile the exports into a kit (here)")
    b.add_argument("kit")
    b.add_argument("--smoke", action="store_true", help="two staged CPU devices, no GPU needed")
    b.add_argument("--only", action="append", help="this export only (repeatable)")
    r = sub.add_parser("run", help="run the kit's modules (GPU machine)")
    r.add_argument("kit")
    args = p.parse_args(argv)
    if args.cmd == "build":
        return build(args.kit, args.smoke, args.only)
    return run(args.kit)


if __name__ == "__main__":
    sys.exit(main())
