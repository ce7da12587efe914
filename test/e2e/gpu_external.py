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

import argparse
import json
import os
import subprocess
import sys

import numpy as np

import _harness_path  # noqa: F401  (test/ and the checkout on sys.path)
from harness import external_corpus as corpus  # noqa: E402
from harness.gpu_kit import NO_GPU_STATUS, cuda_available  # noqa: E402
from harness.paths import ROOT  # noqa: E402

INPUT_SEED = 20261203


def _run(cmd, **kw):
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)


def _first_error(stderr: str) -> str:
    lines = [line for line in stderr.strip().splitlines() if line.strip()]
    return next((line for line in lines if "error" in line), lines[0] if lines else "no output")[:200]


def _expected(kit: str, program: corpus.Program, values, stem: str) -> str:
    """Stock IREE's results, every device local, saved as STEM.expected{k}.npy;
    '' or why they could not be computed."""
    devices = corpus.all_local(program)
    src = os.path.join(kit, f"{stem}.stock.mlir")
    with open(src, "w") as f:
        f.write(corpus.source(program, devices))
    vmfb = os.path.join(kit, f"{stem}.stock.vmfb")
    r = _run(["iree-compile", src, *(f"--iree-hal-target-device={d}" for d in devices),
              "--iree-hal-local-target-device-backends=llvm-cpu", "--iree-llvmcpu-target-cpu=host", "-o", vmfb])
    if r.returncode:
        return f"stock iree-compile failed: {_first_error(r.stderr)}"
    flags = corpus.iree_run_inputs(values, kit, f"{stem}.stock")
    listed = _run(["iree-run-module", f"--module={vmfb}", f"--function={program.function}",
                   *["--device=local-task"] * len(devices), *flags])
    if listed.returncode:
        return f"stock run failed: {_first_error(listed.stderr)}"
    count = sum(line.startswith("result[") for line in listed.stdout.splitlines())
    outs = [os.path.join(kit, f"{stem}.expected{k}.npy") for k in range(count)]
    r = _run(["iree-run-module", f"--module={vmfb}", f"--function={program.function}",
              *["--device=local-task"] * len(devices), *flags, *(f"--output=@{o}" for o in outs)])
    for path in (src, vmfb, *(f[len("--input=@"):] for f in flags if f.startswith("--input=@"))):
        os.unlink(path)
    return f"stock run failed: {_first_error(r.stderr)}" if r.returncode else ""


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
            r = _run(["mdc-compile", src, *(f"--device={d}" for d in devices), "--iree-cuda-target=sm_80",
                      f"--iree-llvmcpu-target-cpu={cpu}", "-o", os.path.join(kit, f"{stem}.vmfb")])
            error = f"mdc-compile: {_first_error(r.stderr)}" if r.returncode else ""
            refused += bool(error)
            cases.append(dict(program=program.name, gpu=gpu, module=f"{stem}.vmfb", function=program.function,
                              runtime=corpus.runtime_devices(devices, "cuda"), inputs=len(values),
                              build_error=error))
    with open(os.path.join(kit, "cases.json"), "w") as f:
        json.dump(cases, f, indent=1)
    print(f"built {len(cases) - refused} of {len(cases)} cases in {kit}"
          + (f"; mdc-compile refused {refused} (run lists them as FAIL)" if refused else ""))
    return 0


def _call(kit: str, index: int) -> int:
    """The child of one case: load, call, save the results as CASE.got{k}.npy."""
    from mdc.runtime_shim import load

    case = json.load(open(os.path.join(kit, "cases.json")))[index]
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
    for name in os.listdir(kit):
        if name.startswith(f"{stem}.got"):
            os.unlink(os.path.join(kit, name))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")]))
    try:
        r = _run([sys.executable, os.path.abspath(__file__), "_call", kit, str(index)], timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return f"TIMEOUT after {timeout:g}s"
    if r.returncode:
        return f"rc={r.returncode}: {_first_error(r.stderr)}"
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
        if allow_no_gpu:
            print("gpu_external: no cuda device here; skipping (--allow-no-gpu)")
            return 0
        print("gpu_external: error: no cuda device here; nothing was checked "
              "(--allow-no-gpu makes this a skip with exit status 0)", file=sys.stderr)
        return NO_GPU_STATUS
    with open(os.path.join(kit, "cases.json")) as f:
        cases = json.load(f)
    print(f"{'program':36} {'cuda device':12} {'result':6} error")
    failures = 0
    for index, case in enumerate(cases):
        error = _verdict(kit, case, index, timeout)
        failures += bool(error)
        print(f"{case['program']:36} {case['gpu']:12} {'FAIL' if error else 'ok':6} {error}", flush=True)
    print(f"{len(cases) - failures} ok, {failures} failed")
    return 1 if failures else 0


def main() -> int:
    if len(sys.argv) == 4 and sys.argv[1] == "_call":
        return _call(sys.argv[2], int(sys.argv[3]))
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build")
    b.add_argument("kit")
    b.add_argument("--cpu", default="generic", help="portable CPU target for the local devices")
    r = sub.add_parser("run")
    r.add_argument("kit")
    r.add_argument("--timeout", type=float, default=120.0, help="seconds per case (its child is killed after)")
    r.add_argument("--allow-no-gpu", action="store_true",
                   help=f"with no cuda device, say so and exit 0 (default: exit status {NO_GPU_STATUS})")
    a = p.parse_args()
    return build(a.kit, a.cpu) if a.cmd == "build" else run(a.kit, a.timeout, a.allow_no_gpu)


if __name__ == "__main__":
    sys.exit(main())
