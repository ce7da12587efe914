"""Build here, run on a GPU machine: the external-shapes corpus on local + cuda.

    python test/e2e/gpu_external.py build KIT_DIR    # here: needs the compiler
    python test/e2e/gpu_external.py run KIT_DIR      # there: runtime only

``build`` compiles every program of test/e2e/programs/external/ with
mdc-compile for local + cuda, each device of the program in turn the cuda
one (the others local[0], local[1], ...), with a portable CPU target and
``--iree-cuda-target=sm_80``; it draws the inputs (test/harness/external_corpus.py) and
computes the expected outputs with stock IREE, every device local, on this
machine. A case mdc-compile refuses is kept in the kit with its error, and
``run`` lists it as failed.

``run`` calls each case through ``mdc.runtime_shim.load`` on local-task +
cuda (no compiler), each call in a child process under a timeout (a hang
is a TIMEOUT row, not a stuck run), compares with the expected outputs,
and prints one table: program, cuda device, ok/FAIL, error. Exit status 1
when a case failed; with no cuda device it says so and exits 2
(``--allow-no-gpu``: exit 0, a skip).
"""

from __future__ import annotations

import os
import sys

import numpy as np

import _harness_path  # noqa: F401  (test/ and the checkout on sys.path)
from bench.kitframe import (Step, allow_no_gpu_option, checkout_env, cuda_available, fixed, kit_main,  # noqa: E402
                            no_device, option, read_manifest, run_timed, write_manifest)
from harness import external_corpus as corpus  # noqa: E402

INPUT_SEED = 20261203
COLUMNS = ("36", "12", "6", "")  # program, cuda device, result, error


def _expected(kit: str, program: corpus.Program, values, stem: str) -> str:
    """Stock IREE's results, every device local, saved as STEM.expected{k}.npy;
    '' or why they could not be computed."""
    devices = corpus.all_local(program)
    src = os.path.join(kit, f"{stem}.stock.mlir")
    with open(src, "w") as f:
        f.write(corpus.source(program, devices))
    vmfb = os.path.join(kit, f"{stem}.stock.vmfb")
    r = run_timed(["iree-compile", src, *(f"--iree-hal-target-device={d}" for d in devices),
                   "--iree-hal-local-target-device-backends=llvm-cpu", "--iree-llvmcpu-target-cpu=host", "-o", vmfb])
    if not r.ok:
        return f"stock iree-compile failed: {r.first_error()}"
    flags = corpus.iree_run_inputs(values, kit, f"{stem}.stock")
    run = ["iree-run-module", f"--module={vmfb}", f"--function={program.function}",
           *["--device=local-task"] * len(devices), *flags]
    listed = run_timed(run)
    if not listed.ok:
        return f"stock run failed: {listed.first_error()}"
    count = sum(line.startswith("result[") for line in listed.stdout.splitlines())
    r = run_timed([*run, *(f"--output=@{kit}/{stem}.expected{k}.npy" for k in range(count))])
    for path in (src, vmfb, *(f[len("--input=@"):] for f in flags if f.startswith("--input=@"))):
        os.unlink(path)
    return "" if r.ok else f"stock run failed: {r.first_error()}"


def build(kit: str, cpu: str) -> int:
    kit = os.path.abspath(kit)
    os.makedirs(kit, exist_ok=True)
    cases, refused = [], 0
    for program in corpus.programs():
        values = corpus.inputs(program, INPUT_SEED)
        for i, value in enumerate(values):
            np.save(os.path.join(kit, f"{program.name}.in{i}.npy"), value)
        why = _expected(kit, program, values, program.name)
        if why:
            print(f"{program.name}: {why}")
            return 1
        for gpu in program.devices:
            devices = corpus.with_gpu(program, gpu, "cuda")
            stem = f"{program.name}.{gpu}"
            src = os.path.join(kit, f"{stem}.mlir")
            with open(src, "w") as f:
                f.write(corpus.source(program, devices))
            r = run_timed(["mdc-compile", src, *(f"--device={d}" for d in devices), "--iree-cuda-target=sm_80",
                           f"--iree-llvmcpu-target-cpu={cpu}", "-o", os.path.join(kit, f"{stem}.vmfb")])
            error = "" if r.ok else f"mdc-compile: {r.first_error()}"
            refused += bool(error)
            cases.append(dict(program=program.name, gpu=gpu, module=f"{stem}.vmfb", function=program.function,
                              runtime=corpus.runtime_devices(devices, "cuda"), inputs=len(values),
                              build_error=error))
    write_manifest(kit, "cases.json", cases)
    print(f"built {len(cases) - refused} of {len(cases)} cases in {kit}"
          + (f"; mdc-compile refused {refused} (run lists them as FAIL)" if refused else ""))
    return 0


def _call(kit: str, index: int) -> int:
    """The child of one case: load, call, save the results as CASE.got{k}.npy."""
    from mdc.runtime_shim import load

    case = read_manifest(kit, "cases.json")[index]
    values = [np.load(os.path.join(kit, f"{case['program']}.in{i}.npy")) for i in range(case["inputs"])]
    with load(os.path.join(kit, case["module"]), case["runtime"]) as m:
        got = getattr(m, case["function"])(*values)
    for k, value in enumerate(got if isinstance(got, tuple) else (got,)):
        np.save(os.path.join(kit, f"{case['program']}.{case['gpu']}.got{k}.npy"), np.asarray(value))
    return 0


def _verdict(kit: str, case: dict, index: int, timeout: float) -> str:
    """'' when the case ran and matched stock IREE, else what went wrong."""
    if case["build_error"]:
        return case["build_error"]
    stem = f"{case['program']}.{case['gpu']}"
    stale = [os.path.join(kit, name) for name in os.listdir(kit) if name.startswith(f"{stem}.got")]
    r = run_timed([sys.executable, os.path.abspath(__file__), "_call", kit, str(index)], timeout, env=checkout_env(),
                  outputs=stale)
    if r.status == "TIMEOUT":
        return f"TIMEOUT after {timeout:g}s"
    if not r.ok:
        return f"{r.status}: {r.first_error()}"
    k = 0
    while os.path.exists(os.path.join(kit, f"{case['program']}.expected{k}.npy")):
        want = np.load(os.path.join(kit, f"{case['program']}.expected{k}.npy"))
        path = os.path.join(kit, f"{stem}.got{k}.npy")
        if not os.path.exists(path):
            return f"result {k} missing"
        differs = corpus.same(np.load(path), want)
        if differs:
            return f"result {k}: {differs}"
        k += 1
    return "" if not os.path.exists(os.path.join(kit, f"{stem}.got{k}.npy")) else f"more than {k} results"


def run(kit: str, timeout: float, allow_no_gpu: bool) -> int:
    kit = os.path.abspath(kit)
    if not cuda_available():
        return no_device("gpu_external", allow=allow_no_gpu)
    cases = read_manifest(kit, "cases.json", build=f"python test/e2e/gpu_external.py build {kit}")
    print(fixed(("program", "cuda device", "result", "error"), COLUMNS))
    failures = 0
    for index, case in enumerate(cases):
        error = _verdict(kit, case, index, timeout)
        failures += bool(error)
        print(fixed((case["program"], case["gpu"], "FAIL" if error else "ok", error), COLUMNS), flush=True)
    print(f"{len(cases) - failures} ok, {failures} failed")
    return 1 if failures else 0


BUILD = Step(lambda a: build(a.kit, a.cpu), [
    option("--cpu", default="generic", help="portable CPU target for the local devices")])
RUN = Step(lambda a: run(a.kit, a.timeout, a.allow_no_gpu), [
    option("--timeout", type=float, default=120.0, help="seconds per case (its child is killed after)"),
    allow_no_gpu_option()])


def main() -> int:
    return kit_main(__doc__, BUILD, RUN, children={"_call": lambda argv: _call(argv[0], int(argv[1]))})


if __name__ == "__main__":
    sys.exit(main())
