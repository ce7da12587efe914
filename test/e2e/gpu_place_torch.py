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

import json
import os
import re
import shutil
import sys

import _harness_path  # noqa: F401  (test/ and the checkout on sys.path)
from bench.kitframe import (ROOT, Step, as_list, close, failed, kit_main, kit_mib, markdown, option, read_manifest,
                            verdict, write_manifest)
from harness.place_kit import (PROFILE, compile_placed, everything_on_gpu, no_cuda, placed_counts, reserved_bytes,
                               targets, write_assignment)

EXPORTED = os.path.join(ROOT, "examples", "pytorch", "exported_unplaced")
RTOL, ATOL = 1e-4, 1e-5
MAX_BATCH = 64
TIMED_CALLS = 20
MATMULS = ("matmul", "batch_matmul")  # the first word of a report unit's label
PLACEMENTS = ("auto", "auto90", "file", "gpu")


# ---------------------------------------------------------------- build here

def _max_dims(entry: dict) -> list[str]:
    """A bound on the batch of every argument of a dynamic export."""
    if "dynamic" not in entry:
        return []
    return [f"--max-dim=arg{i}.d0={MAX_BATCH}" for i in range(len(entry["inputs"]))]


def _compile_auto(source: str, flags: list[str], budget: int, stem: str) -> dict:
    """``--place=auto`` under ``budget``, or under the least budget that puts
    work on the accelerator where the error names one above it."""
    try:
        return compile_placed(source, [*flags, f"--gpu-memory={budget}"], stem)
    except RuntimeError as e:
        least = re.search(r"--gpu-memory=(\d+) \([^)]*\) is the least", str(e))
        if not least:
            raise
        return compile_placed(source, [*flags, f"--gpu-memory={least.group(1)}"], stem)


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


def crossings_a_call(summary: str) -> int:
    m = re.search(r"(\d+) crossings? a call", summary)
    return int(m.group(1)) if m else -1


def _row(name: str, how: str, placement: dict, entry: dict) -> dict:
    sizes = [entry] + entry.get("other_sizes", [])
    p = entry.get("parameters")
    return dict(model=name, placement=how, vmfb=f"{name}.{how}.vmfb", **placed_counts(placement),
                crossings=crossings_a_call(placement["summary"]),
                parameters=[f"{p['scope']}={p['file']}"] if p else [],
                calls=[dict(inputs=[i["file"] for i in s["inputs"]], outputs=[o["file"] for o in s["outputs"]])
                       for s in sizes if all(i["shape"][0] <= MAX_BATCH for i in s["inputs"])])


def _placements(source: str, flags: list[str], reserved: int, stem: str) -> dict:
    """Each placement of one export (the module's doc): PLACEMENTS -> the report's placement."""
    first = compile_placed(source, [*flags, "--place=auto"], f"{stem}.probe")
    for extra in (f"{stem}.probe.vmfb", f"{stem}.probe.json"):
        os.remove(extra)
    auto = _compile_auto(source, [*flags, "--place=auto"], split_budget(first, reserved), f"{stem}.auto")
    most = _compile_auto(source, [*flags, "--place=auto"], split_budget(first, reserved, 0.9), f"{stem}.auto90")
    placed = compile_placed(source, [*flags, write_assignment(f"{stem}.assignment.json", matmul_split(auto))],
                            f"{stem}.file")
    gpu = compile_placed(source, [*flags, write_assignment(f"{stem}.gpu.assignment.json", everything_on_gpu(auto))],
                         f"{stem}.gpu")
    return dict(zip(PLACEMENTS, (auto, most, placed, gpu)))


def build(kit: str, smoke: bool, only: list[str] | None = None) -> int:
    kit = os.path.abspath(kit)
    os.makedirs(kit, exist_ok=True)
    with open(os.path.join(EXPORTED, "index.json")) as f:
        index = json.load(f)
    flags, devices = targets(smoke)
    reserved = 0 if smoke else reserved_bytes()
    rows = []
    for name, entry in index.items():
        if only and name not in only:
            continue
        try:
            placements = _placements(os.path.join(EXPORTED, entry["mlir"]),
                                     [*flags, f"--place-profile={PROFILE}", *_max_dims(entry)], reserved,
                                     os.path.join(kit, name))
        except RuntimeError as e:
            print(f"{name}: {e}")
            return 1
        rows += [_row(name, how, placement, entry) for how, placement in placements.items()]
        for file in {f for r in rows[-4:] for c in r["calls"] for f in c["inputs"] + c["outputs"]} | (
                {entry["parameters"]["file"]} if entry.get("parameters") else set()):
            shutil.copyfile(os.path.join(EXPORTED, file), os.path.join(kit, file))
        print("\n".join(f"{name}: {how} {p['summary']}" for how, p in placements.items()), flush=True)
    write_manifest(kit, "modules.json", {"devices": devices, "modules": rows})
    print(f"built {len(rows)} modules in {kit} for {' + '.join(devices)}, {kit_mib(kit):.1f} MiB")
    return 0


# ---------------------------------------------------------------- run there

def check_module(kit: str, row: dict, devices: list[str]) -> tuple[float, bool, float]:
    """(largest absolute error, every result within tolerance) of every
    call, and the median seconds of the first inputs' call."""
    import numpy as np

    from bench.common import median_time
    from mdc.runtime_shim import load

    worst, right = 0.0, True
    params = [f"{scope}={os.path.join(kit, file)}" for scope, _, file in (p.partition("=") for p in row["parameters"])]
    with load(os.path.join(kit, row["vmfb"]), devices, parameters=params) as m:
        for call in row["calls"]:
            got = as_list(m.main(*(np.load(os.path.join(kit, f)) for f in call["inputs"])))
            want = [np.load(os.path.join(kit, f)) for f in call["outputs"]]
            checked = [close(g, w, RTOL, ATOL) for g, w in zip(got, want)]
            if len(got) != len(want) or any(err != err for _, err in checked):  # NaN: another shape or type
                return float("nan"), False, float("nan")
            worst = max([worst, *(err for _, err in checked)])
            right = right and all(ok for ok, _ in checked)
        inputs = [np.load(os.path.join(kit, f)) for f in row["calls"][0]["inputs"]]
        seconds = median_time(lambda: m.main(*inputs), TIMED_CALLS, warmup=1)
    return worst, right, seconds


def run(kit: str) -> int:
    kit = os.path.abspath(kit)
    meta = read_manifest(kit, "modules.json", build=f"python test/e2e/gpu_place_torch.py build {kit}")
    devices = meta["devices"]
    status = no_cuda("gpu_place_torch", devices)
    if status is not None:
        return status
    lines, right = [], True
    for row in meta["modules"]:
        try:
            err, ok, seconds = check_module(kit, row, devices)
            cells = (f"{seconds * 1e3:.3f}", f"{err:.1e}", "ok" if ok else "WRONG")
        except Exception as e:  # a module that fails is a row, not the end
            ok, cells = False, ("", "", failed(e))
        right = right and ok
        estimate = f"{row['estimate_s'] * 1e3:.3f}" if "estimate_s" in row else "n/a"  # kits built before it
        lines.append((row["model"], row["placement"], f"{row['gpu_units']} of {row['units']}", row["crossings"],
                      estimate, *cells))
    print(f"\ndevices: {' + '.join(devices)}; rtol {RTOL}, atol {ATOL}; ms: one call of the first inputs, "
          f"the report's estimate and the median of {TIMED_CALLS} measured; gpu: everything there, over the budget")
    print(markdown(("model", "placement", "units on gpu", "crossings a call", "est ms", "ms", "max abs error", "check"),
                   "llrrrrrl", lines))
    return verdict(right)


BUILD = Step(lambda a: build(a.kit, a.smoke, a.only), [
    option("--smoke", action="store_true", help="two staged CPU devices, no GPU needed"),
    option("--only", action="append", help="this export only (repeatable)")],
    help="compile the exports into a kit (here)")
RUN = Step(lambda a: run(a.kit), help="run the kit's modules (GPU machine)")


def main(argv=None) -> int:
    return kit_main(__doc__.splitlines()[0], BUILD, RUN, argv)


if __name__ == "__main__":
    sys.exit(main())
