"""Building a kit here: each case compiled with mdc-compile (or stock
iree-compile) for a local CPU and a cuda device, and its expected outputs
computed with stock IREE on all-local devices."""

from __future__ import annotations

import os

import numpy as np

from bench.kitframe import write_manifest

from ..processes import run_captured
from .canaries import build_stock_cuda_canaries
from .cases import kit_cases, result_files


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
    for case in kit_cases(rng):
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
            r = run_captured(["iree-compile", case["program"], *targets,
                      "--iree-hal-local-target-device-backends=llvm-cpu", "--iree-cuda-target=sm_80",
                      f"--iree-llvmcpu-target-cpu={cpu}", model_flag, "-o", vmfb])
        else:
            r = run_captured(["mdc-compile", case["program"], *[f"--device={d}" for d in case["devices"]],
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
        r = run_captured(["iree-compile", case["program"], *local_devices,
                  "--iree-hal-local-target-device-backends=llvm-cpu", model_flag,
                  *[f for f in case["flags"] if f.startswith("--iree-")], "-o", ref])
        if r.returncode:
            print(f"{name}: stock iree-compile failed\n{r.stderr}")
            return 1
        inputs = [_scalar_or_file(kit, name, i, v) for i, v in enumerate(case["inputs"])]
        expected = result_files(name, "expected", case["results"])
        r = run_captured(["iree-run-module", f"--module={ref}", f"--function={case['function']}",
                  *["--device=local-task"] * len(case["devices"]), *inputs, *[f"--output=@{e}" for e in expected]],
                 cwd=kit)
        if r.returncode:
            print(f"{name}: stock reference run failed\n{r.stderr}")
            return 1
        os.unlink(ref)
        manifest.append(dict(name=name, module=os.path.basename(vmfb), function=case["function"],
                             devices=case["runtime"], inputs=inputs, runner=case["runner"],
                             expected=expected))
    write_manifest(kit, "cases.json", manifest)
    if build_stock_cuda_canaries(kit):
        return 1
    print(f"built {len(manifest)} cases in {kit}, and the stock CUDA min-reduce and maxsi canaries")
    return 0
