#!/usr/bin/env python3
"""Build here, run on a GPU machine: the iree-turbine exports on local + cuda.

    python test/e2e/gpu_torch.py build KIT_DIR [--cpu-only]   # here: needs the compiler
    python test/e2e/gpu_torch.py run KIT_DIR                  # there: runtime only

``build`` compiles the three exports of examples/pytorch/exported (the MLP
split, the embedding with int64 ids, the dynamic batch) with mdc-compile
for ``--device=0=local[0] --device=1=cuda[0]`` with a portable CPU
(``--iree-llvmcpu-target-cpu=generic``, ``--iree-cuda-target=sm_80``), and
copies their inputs and torch's outputs into the kit (the dynamic batch at
every batch the export has torch's outputs for). ``--cpu-only`` builds the
same kit for two CPU devices staged as for a GPU (``--device=1=local[1]
--link=0:1=staged``), to check the kit and this script without a GPU.

``run`` calls ``@main`` of every case through mdc-run (``python -m
mdc.runtime_shim``) and through the Python API (``mdc.runtime_shim.load``,
``@main`` and the fenced ``@main$async``, in a child process), each call
under a timeout, compares every result with torch's within ``rtol=1e-4,
atol=1e-5`` (CUDA's tanh, exp and summation order are not torch's CPU
ones; the largest error is printed) and prints one table. With no cuda
device (and a kit built for cuda) it says so and exits with status 2
(``--allow-no-gpu``: exit 0, a skip).
"""

from __future__ import annotations

import json
import os
import shutil
import sys

import numpy as np

import _harness_path  # noqa: F401  (test/ and the checkout on sys.path)
from bench.kitframe import (ROOT, Step, allow_no_gpu_option, checkout_env, close, cuda_available, fixed, kit_main,
                            no_device, option, read_manifest, run_timed, write_manifest)

EXPORTED = os.path.join(ROOT, "examples", "pytorch", "exported")
RTOL, ATOL = 1e-4, 1e-5
COLUMNS = ("22", "16", "9", "7", "")  # case, runner, result, wall, max abs error / detail

GPU_FLAGS = ["--device=0=local[0]", "--device=1=cuda[0]", "--iree-llvmcpu-target-cpu=generic",
             "--iree-cuda-target=sm_80"]
CPU_ONLY_FLAGS = ["--device=0=local[0]", "--device=1=local[1]", "--link=0:1=staged",
                  "--iree-llvmcpu-target-cpu=generic"]


def _cases(index: dict) -> list[dict]:
    """Each model at its exported shapes, and at every other size of its
    dynamic dimension it has torch's outputs for."""
    cases = []
    for name, entry in index.items():
        sized = [(name, entry)] + [(f"{name}_size{s['size']}", s) for s in entry.get("other_sizes", [])]
        for case, files in sized:
            cases.append(dict(name=case, module=f"{name}.vmfb", inputs=[i["file"] for i in files["inputs"]],
                              expected=[o["file"] for o in files["outputs"]]))
    return cases


def build(kit: str, cpu_only: bool) -> int:
    kit = os.path.abspath(kit)
    os.makedirs(kit, exist_ok=True)
    with open(os.path.join(EXPORTED, "index.json")) as f:
        index = json.load(f)
    flags = CPU_ONLY_FLAGS if cpu_only else GPU_FLAGS
    for name, entry in index.items():
        r = run_timed([sys.executable, "-m", "mdc.pipeline", os.path.join(EXPORTED, entry["mlir"]), *flags,
                       "-o", os.path.join(kit, f"{name}.vmfb")], 600, env=checkout_env())
        if not r.ok:
            print(f"{name}: mdc-compile did not finish within 600 s" if r.status == "TIMEOUT" else
                  f"{name}: mdc-compile failed\n{r.stderr}")
            return 1
    cases = _cases(index)
    for case in cases:
        for file in case["inputs"] + case["expected"]:
            shutil.copyfile(os.path.join(EXPORTED, file), os.path.join(kit, file))
    devices = ["local-task", "local-task"] if cpu_only else ["local-task", "cuda"]
    write_manifest(kit, "cases.json", {"devices": devices, "cases": cases})
    print(f"built {len(index)} modules, {len(cases)} cases in {kit} for {' + '.join(devices)}")
    return 0


def _compare(outputs: list[str], expected: list[str], kit: str) -> tuple[str, str]:
    """(verdict, largest absolute error) of result files against torch's."""
    worst = 0.0
    for got_file, want_file in zip(outputs, expected):
        if not os.path.exists(got_file):
            return "NO-OUTPUT", ""
        got, want = np.load(got_file), np.load(os.path.join(kit, want_file))
        ok, err = close(got, want, RTOL, ATOL)
        if err != err:  # NaN: not the same shape or type
            return "MISMATCH", f"{got.dtype}{list(got.shape)} for {want.dtype}{list(want.shape)}"
        worst = max(worst, err)
        if not ok:
            return "MISMATCH", f"{worst:.1e}"
    return "match", f"{worst:.1e}"


def _run_case(kit: str, case: dict, devices: list[str], runner: str, timeout: float) -> tuple:
    function = "main$async" if runner == "api main$async" else "main"
    tag = runner.replace(" ", "_").replace("$", "_")
    outputs = [os.path.join(kit, f"{case['name']}.{tag}.out{k}.npy") for k in range(len(case["expected"]))]
    if runner == "mdc-run":
        cmd = [sys.executable, "-m", "mdc.runtime_shim", f"--module={case['module']}", f"--function={function}",
               *(f"--device={d}" for d in devices), *(f"--input=@{i}" for i in case["inputs"]),
               *(f"--output=@{o}" for o in outputs)]
    else:
        cmd = [sys.executable, os.path.abspath(__file__), "_api", case["module"], function, ",".join(devices),
               ",".join(case["inputs"]), ",".join(outputs)]
    ran = run_timed(cmd, timeout, cwd=kit, env=checkout_env(), outputs=outputs)
    if not ran.ok:
        return ran.status, ran.seconds, ran.last_line(80) if ran.returncode else ""
    verdict, error = _compare(outputs, case["expected"], kit)
    return verdict, ran.seconds, error


def _spec(kit: str) -> dict:
    return read_manifest(kit, "cases.json", build=f"python test/e2e/gpu_torch.py build {kit}")


def run(kit: str, timeout: float, allow_no_gpu: bool) -> int:
    kit = os.path.abspath(kit)
    spec = _spec(kit) if os.path.exists(os.path.join(kit, "cases.json")) else None
    devices = spec["devices"] if spec else ["local-task", "cuda"]
    if "cuda" in devices and not cuda_available():
        return no_device("gpu_torch", allow=allow_no_gpu)
    spec = spec or _spec(kit)  # no kit: its KitError says how to build one
    rows, failures = [], 0
    for case in spec["cases"]:
        for runner in ("mdc-run", "api main", "api main$async"):
            verdict, seconds, detail = _run_case(kit, case, devices, runner, timeout)
            failures += verdict != "match"
            rows.append((case["name"], runner, verdict, f"{seconds:.2f}s", detail))
    print(f"devices: {' + '.join(devices)}; tolerance rtol={RTOL:g} atol={ATOL:g} against torch")
    for row in [("case", "runner", "result", "wall", "max abs error / detail"), *rows]:
        print(fixed(row, COLUMNS))
    print(f"{len(rows) - failures} passed, {failures} failed")
    return 1 if failures else 0


def _api(argv: list[str]) -> int:
    """Child process of ``run``: load the module, call the function on the
    inputs, save the results."""
    module, function, devices, inputs, outputs = argv
    from mdc.runtime_shim import load

    with load(module, devices.split(",")) as m:
        results = m.function(function).call(*[np.load(p) for p in inputs.split(",")])
    for path, result in zip(outputs.split(","), results):
        np.save(path, result)
    return 0


BUILD = Step(lambda a: build(a.kit, a.cpu_only), [
    option("--cpu-only", action="store_true",
           help="__device_1 a second CPU, staged as for a GPU (no GPU needed to run the kit)")])
RUN = Step(lambda a: run(a.kit, a.timeout, a.allow_no_gpu), [
    option("--timeout", type=float, default=120.0, help="seconds per call (default 120)"),
    allow_no_gpu_option()])


def main() -> int:
    return kit_main(__doc__, BUILD, RUN, children={"_api": _api})


if __name__ == "__main__":
    sys.exit(main())
