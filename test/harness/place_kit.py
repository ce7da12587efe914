"""What gpu_place_torch.py and gpu_place_wide.py share: the CPU + CUDA
devices they compile for (with ``--smoke``, two CPU devices staged as for
a GPU, run on local-task and local-sync), the machine profile they place
with, mdc-compile's report of a placement, and the run's refusal of a
cuda kit where there is no cuda device."""

from __future__ import annotations

import json
import os
import sys

from bench.kitframe import ROOT, checkout_env, cuda_available, no_device, run_timed

PROFILE = os.path.join(ROOT, "bench", "profiles", "h100.json")
GPU_FLAGS = ["--device=cpu=local[0]", "--device=gpu=cuda[0]", "--iree-cuda-target=sm_80",
             "--iree-llvmcpu-target-cpu=x86-64-v3"]
SMOKE_FLAGS = ["--device=cpu=local[0]", "--device=gpu=local[1]", "--link=cpu:gpu=staged",
               "--iree-llvmcpu-target-cpu=x86-64-v3"]
GPU_DEVICES, SMOKE_DEVICES = ["local-task", "cuda"], ["local-task", "local-sync"]


def targets(smoke: bool) -> tuple[list[str], list[str]]:
    """(mdc-compile's device flags, the run's devices)."""
    return (SMOKE_FLAGS, SMOKE_DEVICES) if smoke else (GPU_FLAGS, GPU_DEVICES)


def compile_placed(source: str, flags: list[str], stem: str) -> dict:
    """mdc-compile ``source`` into ``stem``.vmfb with ``--report=stem.json``;
    -> the report's "placement". RuntimeError with mdc-compile's words
    when it fails."""
    r = run_timed([sys.executable, "-m", "mdc.pipeline", source, *flags, f"--report={stem}.json", "-o",
                   f"{stem}.vmfb"], 900, env=checkout_env())
    if not r.ok:
        why = "did not finish within 900 s" if r.status == "TIMEOUT" else f"failed: {r.stderr.strip()[-2000:]}"
        raise RuntimeError(f"mdc-compile {why} ({os.path.basename(stem)})")
    with open(f"{stem}.json") as f:
        return json.load(f)["placement"]


def reserved_bytes(profile: str = PROFILE, device: str = "cuda") -> int:
    """The profile's bytes the runtime itself takes on ``device``."""
    with open(profile) as f:
        return int(json.load(f)["devices"].get(device, {}).get("reserved_bytes") or 0)


def everything_on_gpu(placement: dict) -> dict:
    """The assignment of every unit and weight of ``placement`` to ``gpu``."""
    return {"units": [{"id": u["id"], "device": "gpu"} for u in placement["units"]],
            "weights": [{"name": w["name"], "device": "gpu"} for w in placement["weights"]]}


def write_assignment(path: str, assignment: dict) -> str:
    """``assignment`` as a ``--place=FILE.json``; -> the flag."""
    with open(path, "w") as f:
        json.dump(assignment, f, indent=1)
    return f"--place={path}"


def placed_counts(placement: dict) -> dict:
    """A kit row's summary, estimate and units on the GPU of all."""
    units = [u["device"] for u in placement["units"]]
    return dict(summary=placement["summary"], estimate_s=placement["estimate_seconds"],
                gpu_units=units.count("gpu"), units=len(units))


def no_cuda(script: str, devices: list[str]) -> int | None:
    """A kit for cuda where there is none: the exit status, having said
    so; else None."""
    if "cuda" in devices and not cuda_available():
        return no_device(script, nothing="run")
    return None
