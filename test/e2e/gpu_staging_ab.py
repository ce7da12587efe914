"""The staging lowerings side by side on a real GPU: build here, run there.

    python test/e2e/gpu_staging_ab.py build KIT   # here: compiler, stock IREE for the references
    python test/e2e/gpu_staging_ab.py run KIT     # there: runtime only; one table

Each program of ``programs/staging_ab/`` (and the random programs named in
``RANDOM``) is compiled by mdc-compile for device_a = local[0],
device_b = cuda[0], device_c = local[1], once per staging variant
(``--staging=emplace`` and ``copy``, each with and without
``--pinned-arguments``) and execution model. ``run`` calls each function
three times with the runtime shim on each CPU driver set (the third device
on local-sync or on local-task), each call under a watchdog, and compares
every result with the reference. A cell of the table says ``ok`` or what
went wrong; a lowering that is wrong where another is right is the finding.

The references come from stock IREE on all-local devices (one local-task
device per declared device) on the build machine; the random programs
bring progen's numpy reference. Inputs are seeded.
"""

from __future__ import annotations

import glob
import os
import re
import subprocess
import sys

import numpy as np

import _harness_path  # noqa: F401  (test/ and the checkout on sys.path)
from bench.kitframe import (ROOT, Step, as_list, fixed, kit_main, load_values, option, read_manifest,  # noqa: E402
                            run_timed, save_values, watchdog, write_manifest)

PROGRAMS = os.path.join(ROOT, "test", "e2e", "programs", "staging_ab")
RANDOM = [(20261201, 247)]  # (seed, index): random programs wrong under one lowering on the H200
VARIANTS = {
    "emplace": ["--staging=emplace"],
    "emplace+pinned": ["--staging=emplace", "--pinned-arguments"],
    "copy": ["--staging=copy"],
    "copy+pinned": ["--staging=copy", "--pinned-arguments"],
}
MODELS = ["async-internal", "async-external"]
DEVICES = ["--device=a=local[0]", "--device=b=cuda[0]", "--device=c=local[1]"]
# --cpu-only: the same kit for a machine without a GPU (device_b a third CPU,
# every pair staged as towards a GPU), to check the script itself.
CPU_ONLY_DEVICES = ["--device=a=local[0]", "--device=b=local[1]", "--device=c=local[2]",
                    "--link=a:b=staged", "--link=b:c=staged", "--link=a:c=staged"]
RUNTIMES = {"task,cuda,sync": ["local-task", "cuda", "local-sync"],
            "task,cuda,task": ["local-task", "cuda", "local-task"]}
CALLS = 3
_ARG = re.compile(r"%\w+: tensor<([0-9x]+)x(i32|f32)>")


def _inputs_for(text: str, seed: int) -> list[np.ndarray]:
    """Seeded inputs for a hand-written program (static i32/f32 tensors only)."""
    start = text.index("func.func public")
    header = text[start:text.index("->", start)]
    rng = np.random.default_rng(seed)
    out = []
    for dims, dtype in _ARG.findall(header):
        shape = [int(d) for d in dims.split("x")]
        if dtype == "i32":
            out.append(rng.integers(-50, 50, size=shape, dtype=np.int32))
        else:
            out.append(rng.standard_normal(shape).astype(np.float32))
    return out


def _stock_reference(src: str, function: str, inputs, work: str) -> list[np.ndarray]:
    """The function's results from stock IREE, every device a local-task CPU
    (stock iree-compile and iree-run-module)."""
    vmfb = os.path.join(work, "stock.vmfb")
    subprocess.run(["iree-compile", src, *[f"--iree-hal-target-device=device_{n}=local[{i}]" for i, n in enumerate("abc")],
                    "--iree-hal-local-target-device-backends=llvm-cpu", "--iree-llvmcpu-target-cpu=generic",
                    "-o", vmfb], check=True, capture_output=True, text=True)
    args = []
    for k, x in enumerate(inputs):
        np.save(os.path.join(work, f"stock.in{k}.npy"), x)
        args.append(f"--input=@{os.path.join(work, f'stock.in{k}.npy')}")
    text = open(src).read()
    header = text[text.index(f"@{function}("):]
    count = header[header.index("->"):header.index("{\n", header.index("->"))].count("tensor<")
    outs = [os.path.join(work, f"stock.out{k}.npy") for k in range(count)]
    subprocess.run(["iree-run-module", f"--module={vmfb}", f"--function={function}", *["--device=local-task"] * 3,
                    *args, *[f"--output=@{o}" for o in outs]], check=True, capture_output=True, text=True)
    return [np.load(o) for o in outs]


def _programs(kit: str):
    """(name, source path, function, inputs, references, bounds or None)."""
    from harness import progen

    for path in sorted(glob.glob(os.path.join(PROGRAMS, "*.mlir"))):
        text = open(path).read()
        function = re.search(r"func\.func public @([\w$]+)", text).group(1)
        inputs = _inputs_for(text, seed=len(function))
        yield function, path, function, inputs, _stock_reference(path, function, inputs, kit), None
    for seed, index in RANDOM:
        prog = progen.generate(seed, index)
        src = os.path.join(kit, f"{prog.name}.mlir")
        with open(src, "w") as f:
            f.write(progen.module_text([prog]))
        inputs = [x if isinstance(x, np.ndarray) else int(x) for x in prog.inputs()]
        refs = prog.reference()
        yield (f"{prog.name} (seed {seed})", src, prog.name, inputs, [r for r, _ in refs],
               [(b, v.dtype) for (_, b), (v, _) in zip(refs, prog.results)])


def build(kit: str, cpu_only: bool = False) -> int:
    kit = os.path.abspath(kit)
    os.makedirs(kit, exist_ok=True)
    cases, failed = [], 0
    for n, (name, src, function, inputs, refs, bounds) in enumerate(_programs(kit)):
        case = {"name": name, "function": function, "inputs": save_values(kit, f"c{n}.in", inputs),
                "refs": save_values(kit, f"c{n}.ref", [np.asarray(r) for r in refs]), "bounds": [], "modules": {}}
        if bounds:
            files = save_values(kit, f"c{n}.bound", [np.asarray(b) for b, _ in bounds])
            case["bounds"] = [[f, dtype] for f, (_, dtype) in zip(files, bounds)]
        for model in MODELS:
            for variant, flags in VARIANTS.items():
                out = f"c{n}.{model}.{variant}.vmfb"
                r = run_timed(["mdc-compile", src, *(CPU_ONLY_DEVICES if cpu_only else DEVICES),
                               "--iree-llvmcpu-target-cpu=generic", "--iree-cuda-target=sm_80",
                               "--iree-opt-const-eval=false", f"--iree-execution-model={model}", *flags,
                               "-o", os.path.join(kit, out)])
                if not r.ok:
                    failed += 1
                    case["modules"][f"{model} {variant}"] = {"error": r.stderr.strip().splitlines()[0][:120]}
                else:
                    case["modules"][f"{model} {variant}"] = {"vmfb": out}
        cases.append(case)
    write_manifest(kit, "staging_ab.json", {"cases": cases, "gpu": "local-task" if cpu_only else "cuda"})
    print(f"{len(cases)} programs x {len(MODELS) * len(VARIANTS)} builds; {failed} failed to compile")
    return 1 if failed else 0


def _compare(got, case, kit) -> str | None:
    """None if a call's results agree with the case's references: progen's
    error bound for a random program, else bit for bit with stock IREE."""
    from harness.progen import compare_bitwise, compare_reference

    refs = load_values(kit, case["refs"])
    if len(got) != len(refs):
        return f"{len(got)} results, {len(refs)} references"
    for k, (g, ref) in enumerate(zip(got, refs)):
        g = np.asarray(g)
        if case["bounds"]:
            bound, dtype = case["bounds"][k]
            why = compare_reference(g, ref, np.load(os.path.join(kit, bound)), dtype)
        else:
            why = compare_bitwise(g, ref)
        if why:
            return f"result {k}: {why}"
    return None


def run(kit: str, call_timeout: float) -> int:
    kit = os.path.abspath(kit)
    spec = read_manifest(kit, "staging_ab.json", build=f"python test/e2e/gpu_staging_ab.py build {kit}")
    cases = spec["cases"]
    rows, bad = [], 0
    for case in cases:
        inputs = load_values(kit, case["inputs"])
        for build_name, m in case["modules"].items():
            for runtime, devices in RUNTIMES.items():
                if "error" in m:
                    cell = f"compile failed: {m['error']}"
                else:
                    devices = [spec.get("gpu", "cuda") if d == "cuda" else d for d in devices]
                    cell = _calls(os.path.join(kit, m["vmfb"]), devices, case, inputs, kit, call_timeout)
                bad += cell != "ok"
                rows.append((case["name"], build_name, runtime, cell))
    columns = (f"<{max(len(r[0]) for r in rows)}", "<31", "<15", "")
    for row in [("program", "model / staging", "runtime", "result"), *rows]:
        print(fixed(row, columns, sep="  "))
    print(f"{len(rows) - bad} of {len(rows)} ok")
    return 1 if bad else 0


def _calls(vmfb, devices, case, inputs, kit, call_timeout) -> str:
    from mdc.runtime_shim import load

    try:
        module = load(vmfb, devices, timeout_s=call_timeout)
    except Exception as e:
        return f"load failed: {str(e).splitlines()[0][:100]}"
    try:
        fn = module.function(case["function"])
        for call in range(CALLS):
            try:
                with watchdog(call_timeout):
                    got = as_list(fn(*inputs))
            except Exception as e:
                return f"call {call + 1} failed: {str(e).splitlines()[-1][:100]}"
            why = _compare(got, case, kit)
            if why:
                return f"call {call + 1}: {why}"
        return "ok"
    finally:
        module.close()


BUILD = Step(lambda a: build(a.kit, a.cpu_only), [
    option("--cpu-only", action="store_true", help="device_b a CPU too, every pair staged (no GPU needed)")])
RUN = Step(lambda a: run(a.kit, a.timeout),
           [option("--timeout", type=float, default=60, help="seconds a call may take")])


def main() -> int:
    return kit_main(__doc__, BUILD, RUN)


if __name__ == "__main__":
    sys.exit(main())
