"""Random multi-device programs on a real GPU: build here, run there.

    python test/e2e/gpu_random.py build KIT --seed S --count N   # here: compiler + progen
    python test/e2e/gpu_random.py run KIT [--soak SECONDS]       # there: runtime only

``build`` generates N programs with progen.py, batches them into modules
(one per device count and execution model) and compiles each with
mdc-compile for a local CPU device (portable ``generic`` CPU) and a cuda
device: device_a = local[0], device_b = cuda[0], device_c = local[1]. It
stores every input and progen's float64 reference with its error bound.

``run`` loads each module with the runtime shim on local-task + cuda
(+ local-sync), calls every function, and compares each result with the
reference (floats within progen's rounding bound, integers exactly). With
``--soak``, it then calls all functions round-robin for that many seconds,
each call under a watchdog, checking every result, and reports host RSS and
GPU memory at the start and the end. With no cuda device it says so and
exits with status 2 (``--allow-no-gpu``: exit 0, a skip).
"""

from __future__ import annotations

import argparse
import faulthandler
import json
import os
import subprocess
import sys
import time
from collections import defaultdict

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, ROOT)

RUNTIME = {1: ["cuda"], 2: ["local-task", "cuda"], 3: ["local-task", "cuda", "local-sync"]}
NO_GPU_STATUS = 2  # run's exit status with no cuda device (a run that checked nothing)


def device_specs(devices: tuple, kind: str = "cuda") -> list[str]:
    """device_b (else the second device) is the GPU (a ``kind`` device);
    the others are CPUs."""
    gpu = "device_b" if "device_b" in devices else devices[1]
    specs, local = [], 0
    for d in devices:
        if d == gpu:
            specs.append(f"--device={d}={kind}[0]")
        else:
            specs.append(f"--device={d}=local[{local}]")
            local += 1
    return specs


def build(kit: str, seed: int, count: int, batch: int, mdc_flags=(), gpu: str = "cuda",
          indices=None, all_on_gpu: bool = False) -> int:
    import progen

    kit = os.path.abspath(kit)
    os.makedirs(kit, exist_ok=True)
    groups = defaultdict(list)
    for index in indices or range(count):
        prog = progen.generate(seed, index)
        groups[(tuple(prog.devices()), prog.model)].append(prog)
    modules, failed = [], []
    for (names, model), progs in sorted(groups.items()):
        ndev = len(names)
        units = []  # (module name, programs); a batch that fails is split into single programs
        for start in range(0, len(progs), batch):
            units.append((f"m{''.join(n[-1] for n in names)}_{model}_{start // batch}", progs[start:start + batch]))
        while units:
            name, chunk = units.pop(0)
            src = os.path.join(kit, f"{name}.mlir")
            with open(src, "w") as f:
                f.write(progen.module_text(chunk))
            devices = device_specs(names, gpu)
            # const-eval off: IREE 3.13.0's constant evaluator crashes or
            # loses device globals on several local+cuda programs (stock
            # iree-compile too).
            compile_cmd = ["mdc-compile", src, *devices, "--iree-llvmcpu-target-cpu=generic"]
            if all_on_gpu:  # stock IREE alone, every device the one GPU: no crossing at all
                compile_cmd = ["iree-compile", src, *[f"--iree-hal-target-device={n}={gpu}[0]" for n in names],
                               "--iree-cuda-target=sm_80"]
            r = subprocess.run([*compile_cmd, "--iree-opt-const-eval=false",
                                f"--iree-execution-model={model}", *mdc_flags, "-o", os.path.join(kit, f"{name}.vmfb")],
                               capture_output=True, text=True)
            if r.returncode and len(chunk) > 1:
                units[:0] = [(f"{name}_p{prog.index}", [prog]) for prog in chunk]
                continue
            if r.returncode:
                failed.append((name, r.stderr.strip().splitlines()[:1]))
                continue
            cases = []
            for prog in chunk:
                inputs = []
                for k, data in enumerate(prog.inputs()):
                    if isinstance(data, np.ndarray):
                        path = f"{prog.name}.in{k}.npy"
                        np.save(os.path.join(kit, path), data)
                        inputs.append(path)
                    else:
                        inputs.append(int(data))
                results = []
                for k, ((value, _), (ref, bound)) in enumerate(zip(prog.results, prog.reference())):
                    np.save(os.path.join(kit, f"{prog.name}.ref{k}.npy"), ref)
                    np.save(os.path.join(kit, f"{prog.name}.bound{k}.npy"), bound)
                    results.append({"dtype": value.dtype, "ref": f"{prog.name}.ref{k}.npy",
                                    "bound": f"{prog.name}.bound{k}.npy"})
                cases.append({"function": prog.name, "seed": prog.seed, "index": prog.index,
                              "inputs": inputs, "results": results})
            modules.append({"module": f"{name}.vmfb", "devices": 1 if all_on_gpu else ndev, "model": model,
                            "cases": cases})
    with open(os.path.join(kit, "random.json"), "w") as f:
        json.dump({"seed": seed, "gpu": gpu, "modules": modules}, f, indent=1)
    n = sum(len(m["cases"]) for m in modules)
    print(f"seed {seed}: {n} programs in {len(modules)} modules; {len(failed)} programs failed to compile (alone)")
    for name, why in failed:
        print(f"  {name}: {why}")
    return 0 if n else 1


def _rss_mib() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def _gpu_mib() -> str:
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,nounits"],
                             capture_output=True, text=True, timeout=20).stdout.strip()
        return out.splitlines()[0] + " MiB"
    except Exception:
        return "n/a"


def _one_device_module(path: str, devices: list, timeout_s: float):
    """A stock module whose devices IREE merged into one (their targets are
    equal), run by stock iree-run-module: its declarations still name every
    device, which the shim would refuse as undeclared."""
    import iree.runtime as rt
    from mdc.runtime_shim import native
    from mdc.runtime_shim.module import read_signatures

    signatures, _ = read_signatures(rt.VmModule.mmap(rt.VmInstance(), path))
    return native.NativeModule(path, devices, None, signatures, {}, "every device the one GPU",
                               timeout_s=timeout_s)


def check_results(outs: list, expected: list) -> str | None:
    """None if a call's results ``outs`` agree with ``expected``, one
    (reference, bound, dtype) per result the program returns; else why not.
    A call that returns fewer or more results than there are references
    fails: zip alone would pass a dropped result."""
    from progen import compare_reference

    if len(outs) != len(expected):
        return f"{len(outs)} results, {len(expected)} references"
    for k, (got, (ref, bound, dtype)) in enumerate(zip(outs, expected)):
        why = compare_reference(np.asarray(got), ref, bound, dtype)
        if why:
            return f"result {k}: {why}"
    return None


def run(kit: str, soak: float, call_timeout: float, cpu_driver: str = "local-task",
        allow_no_gpu: bool = False) -> int:
    import iree.runtime as rt
    from mdc.runtime_shim import load

    kit = os.path.abspath(kit)
    spec_path = os.path.join(kit, "random.json")
    spec = None
    if os.path.exists(spec_path):
        with open(spec_path) as f:
            spec = json.load(f)
    gpu = spec.get("gpu", "cuda") if spec else "cuda"
    try:
        rt.get_driver(gpu).create_default_device()
    except Exception as e:
        why = str(e).splitlines()[0][:80] if str(e) else type(e).__name__
        if allow_no_gpu:
            print(f"gpu_random: no {gpu} device here ({why}); skipping (--allow-no-gpu)")
            return 0
        print(f"gpu_random: error: no {gpu} device here ({why}); nothing was checked "
              "(--allow-no-gpu makes this a skip with exit status 0)", file=sys.stderr)
        return NO_GPU_STATUS
    if spec is None:
        print(f"gpu_random: error: {spec_path} is missing: build the kit first (gpu_random.py build {kit})",
              file=sys.stderr)
        return 1
    calls = []  # (label, function, inputs, expected)
    loaded = []
    load_failures = []
    for m in spec["modules"]:
        try:
            devices = [cpu_driver if d == "local-task" else gpu if d == "cuda" else d
                       for d in RUNTIME[m["devices"]]]
            path = os.path.join(kit, m["module"])
            if m["devices"] == 1:  # --all-on-gpu: IREE merged the devices into one; no manifest
                module = _one_device_module(path, devices, call_timeout)
            else:
                module = load(path, devices, timeout_s=call_timeout)
        except Exception as e:  # a module that does not load fails all its programs
            load_failures.append((m["module"], len(m["cases"]), str(e).splitlines()[0][:200]))
            continue
        loaded.append(module)
        for case in m["cases"]:
            inputs = [np.load(os.path.join(kit, x)) if isinstance(x, str) else x for x in case["inputs"]]
            expected = [(np.load(os.path.join(kit, r["ref"])), np.load(os.path.join(kit, r["bound"])), r["dtype"])
                        for r in case["results"]]
            label = f"seed={case['seed']} index={case['index']} @{case['function']} ({m['model']}, {m['devices']} devices)"
            calls.append((label, module.function(case["function"]), inputs, expected))

    def check(label, fn, inputs, expected) -> str | None:
        faulthandler.dump_traceback_later(call_timeout, exit=True)
        try:
            out = fn(*inputs)
        except Exception as e:  # a call that fails is one failure, not the end of the run
            return f"call failed: {type(e).__name__}: {str(e).splitlines()[-1][:200]}"
        finally:
            faulthandler.cancel_dump_traceback_later()
        outs = list(out) if isinstance(out, tuple) else ([] if out is None else [out])
        return check_results(outs, expected)

    mismatches = []
    for label, fn, inputs, expected in calls:
        why = check(label, fn, inputs, expected)
        if why:
            mismatches.append((label, why))
    for name, n, why in load_failures:
        mismatches.append((f"{name} ({n} programs)", f"does not load: {why}"))
    print(f"seed {spec['seed']}: {len(calls)} programs run on {cpu_driver} + {gpu}, {len(mismatches)} failures "
          f"({len(load_failures)} modules, {sum(n for _, n, _ in load_failures)} programs, did not load)")
    for label, why in mismatches[:20]:
        print(f"  FAIL {label}: {why}")
    if soak > 0:
        rss0, gpu0 = _rss_mib(), _gpu_mib()
        start, n, bad = time.monotonic(), 0, 0
        while time.monotonic() - start < soak:
            label, fn, inputs, expected = calls[n % len(calls)]
            bad += check(label, fn, inputs, expected) is not None
            n += 1
        elapsed = time.monotonic() - start
        print(f"soak: {n} calls over {elapsed:.0f} s mixing {len(calls)} programs, {bad} mismatches")
        print(f"  host RSS: start {rss0:.1f} MiB, end {_rss_mib():.1f} MiB")
        print(f"  GPU memory used: start {gpu0}, end {_gpu_mib()}")
        mismatches += [("soak", f"{bad} mismatches")] if bad else []
    for module in loaded:
        module.close()
    return 1 if mismatches else 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build")
    b.add_argument("kit")
    b.add_argument("--seed", type=int, default=20261130)
    b.add_argument("--count", type=int, default=120)
    b.add_argument("--batch", type=int, default=4)
    b.add_argument("--mdc-flag", action="append", default=[], help="extra mdc-compile flag, e.g. --staging=emplace")
    b.add_argument("--index", type=int, action="append", help="only these program indices (instead of --count)")
    b.add_argument("--all-on-gpu", action="store_true",
                   help="the oracle for a GPU-only failure: stock iree-compile, every device the GPU, no mdc")
    b.add_argument("--gpu", default="cuda", choices=["cuda", "vulkan"],
                   help="device_b's kind (vulkan: run goes through iree-run-module and the host entry "
                   "points, as mdc.runtime_shim.load does for Vulkan beside a CPU)")
    r = sub.add_parser("run")
    r.add_argument("kit")
    r.add_argument("--soak", type=float, default=0, help="seconds of round-robin calls after the check")
    r.add_argument("--timeout", type=float, default=60, help="seconds a call may take")
    r.add_argument("--cpu-driver", default="local-task", choices=["local-task", "local-sync"],
                   help="driver of the devices otherwise run on local-task")
    r.add_argument("--allow-no-gpu", action="store_true",
                   help=f"with no cuda device, say so and exit 0 (default: exit status {NO_GPU_STATUS})")
    a = p.parse_args()
    if a.cmd == "build":
        return build(a.kit, a.seed, a.count, a.batch, a.mdc_flag, a.gpu, a.index, a.all_on_gpu)
    return run(a.kit, a.soak, a.timeout, a.cpu_driver, a.allow_no_gpu)


if __name__ == "__main__":
    sys.exit(main())
