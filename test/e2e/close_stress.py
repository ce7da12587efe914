#!/usr/bin/env python3
"""Build here, run anywhere: does closing a loaded module ever hang?

    python test/e2e/close_stress.py build DIR                  # here: needs the compiler
    python test/e2e/close_stress.py run DIR                    # the CPU cases (and lavapipe if any)
    python test/e2e/close_stress.py run DIR --device local-task --device cuda   # a GPU machine

Issue 47: a gpu_place_wide.py run on a staged CPU pair (local-task +
local-sync) hung once in ``Module.close``, in the runtime's release of a
device. This script loads a module, calls it, checks its result and closes
it, again and again, in fresh processes, and counts the processes that
hang, fail or compute a wrong answer.

``build`` compiles test/e2e/programs/matmul_chain.mlir (a matmul on device
a, one on device b, the result back on a) for a staged CPU pair
(``--link=a:b=staged``) and for local + cuda, each in both execution models
(the default and ``--iree-execution-model=async-external``, whose calls
end on a fence the shim waits for), and a one-device matmul for a CPU and
for Vulkan (IREE 3.13's Python runtime cannot open Vulkan beside another
device, so the local + Vulkan case loads one module on each, side by side).

``run`` runs cases, each ``--processes`` fresh processes (``--jobs`` at a
time) of ``--loads`` cycles: load, ``--calls`` calls, check, close, the two
execution models in turn. With no ``--device``: the CPU pair as local-task
+ local-sync (the devices of the hang) and as local-task + local-task, and
local-task + vulkan where a Vulkan device answers (lavapipe on a CPU-only
machine). ``--device A --device B`` runs that one case: two CPU devices,
``local-task`` beside ``cuda`` (the kit's cuda modules) or beside
``vulkan``. A cycle that takes longer than ``--hang`` seconds is a hang:
the child writes every thread's Python stack (faulthandler) and exits; the
first few are printed under the table. It prints one row per case: runs
(processes), hangs, failures (including wrong results), cycles completed,
seconds. Exit status 1 on any hang or failure, 2 when a case's device is
not here (cuda without a GPU, vulkan without a driver). ``--workers N``
sets local-task's worker threads: IREE 3.13's local-task stall, an
operation whose wait was satisfied that never runs, needed many workers
(docs/performance-history.md, runs 20-35), so run it with ``--workers 16``
on a many-core host too.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import _harness_path  # noqa: F401  (test/ and the checkout on sys.path)
from bench.kitframe import (NO_GPU_STATUS, ROOT, Step, checkout_env, close, device_missing, kit_main,  # noqa: E402
                            markdown, option, run_timed, watchdog, write_manifest)
from harness.processes import HUNG, run_watched  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
PAIR_SOURCE = os.path.join(HERE, "programs", "matmul_chain.mlir")
HANG_MARK = "Timeout ("  # how faulthandler.dump_traceback_later starts its report

ONE_DEVICE = """// One matmul on one device: the close stress's module for a device the
// Python runtime cannot open beside another (Vulkan).
func.func public @step(%x: tensor<32x64xf32>, %w: tensor<64x48xf32>) -> tensor<32x48xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x48xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<32x48xf32>) -> tensor<32x48xf32>
  %h = linalg.matmul ins(%x, %w : tensor<32x64xf32>, tensor<64x48xf32>) outs(%z : tensor<32x48xf32>) -> tensor<32x48xf32>
  return %h : tensor<32x48xf32>
}
"""

MODELS = {"sync": [], "async": ["--iree-execution-model=async-external"]}


def _modules(cpu: str, cuda_target: str) -> dict[str, list[str]]:
    """module name -> (source, mdc-compile flags)."""
    local = [f"--iree-llvmcpu-target-cpu={cpu}"]
    found = {}
    for model, flags in MODELS.items():
        found[f"pair_local_{model}"] = [PAIR_SOURCE, "--device=a=local[0]", "--device=b=local[1]",
                                        "--link=a:b=staged", *local, *flags]
        found[f"pair_cuda_{model}"] = [PAIR_SOURCE, "--device=a=local[0]", "--device=b=cuda[0]",
                                       f"--iree-cuda-target={cuda_target}", *local, *flags]
    found["one_local"] = ["one.mlir", "--device=a=local[0]", *local]
    found["one_vulkan"] = ["one.mlir", "--device=a=vulkan[0]"]
    return found


def build(out: str, cpu: str, cuda_target: str) -> int:
    out = os.path.abspath(out)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "one.mlir"), "w") as f:
        f.write(ONE_DEVICE)
    for name, (source, *flags) in _modules(cpu, cuda_target).items():
        source = os.path.join(out, source) if source == "one.mlir" else source
        cmd = [sys.executable, "-m", "mdc.pipeline", source, *flags, "-o", os.path.join(out, f"{name}.vmfb")]
        r = run_timed(cmd, 600, env=checkout_env(), cwd=ROOT)
        if not r.ok:
            print(f"close_stress: {name}: {' '.join(cmd)}\n{r.stderr.strip()[-2000:]}", file=sys.stderr)
            return 1
        print(f"built {name}", flush=True)
    write_manifest(out, "kit.json", {"cpu": cpu, "cuda_target": cuda_target})
    print(f"close_stress: built {len(_modules(cpu, cuda_target))} modules in {out}")
    return 0


# ---------------------------------------------------------------- a case

def case_of(devices: list[str]) -> dict:
    """What one cycle loads for ``devices``: {"label", "loads": [[module
    stem, [devices]], ...]} (stems without _sync/_async take the two models
    in turn). ValueError for a set the kit has no module for."""
    if len(devices) != 2:
        raise ValueError(f"two devices, please (got {len(devices)})")
    a, b = devices
    kinds = [d.split(":", 1)[0] for d in devices]
    label = " + ".join(devices)
    if all(k.startswith("local-") for k in kinds):
        return {"label": label, "loads": [["pair_local", devices]]}
    if kinds[0].startswith("local-") and kinds[1] == "cuda":
        return {"label": label, "loads": [["pair_cuda", devices]]}
    if kinds[0].startswith("local-") and kinds[1] == "vulkan":
        return {"label": label, "loads": [["one_local", [a]], ["one_vulkan", [b]]]}
    raise ValueError(f"no module for {label}: give two local-* devices, or local-* and cuda, or local-* and vulkan")


def _device_missing(case: dict) -> str:
    """'' when every device of ``case`` opens here, else why not."""
    drivers = sorted({d.split(":", 1)[0] for _, devs in case["loads"] for d in devs if not d.startswith("local-")})
    return next((why for why in (device_missing(d, child_timeout=120, width=200) for d in drivers) if why), "")


def child(kit: str, case: dict, loads: int, calls: int, hang: float, workers: int) -> int:
    """``loads`` cycles of ``case``; exits 0 after printing ``done cycles=N``,
    5 on a failure or wrong result; a hung cycle ends the process through
    faulthandler (exit 1, HANG_MARK and the stacks on stderr)."""
    import numpy as np
    import iree.runtime as rt

    if workers:  # before any device exists
        rt.flags.parse_flags(f"--task_topology_group_count={workers}")
    from mdc.runtime_shim import load

    rng = np.random.default_rng(47)
    x, w1, w2 = (rng.standard_normal(s, dtype=np.float32) for s in ((32, 64), (64, 48), (48, 16)))
    want_pair = np.maximum((x @ w1) @ w2, 0)
    want_one = x @ w1
    done = 0
    try:
        for cycle in range(loads):
            model = ("sync", "async")[cycle % 2]
            opened = []
            with watchdog(hang):
                try:
                    for stem, devices in case["loads"]:
                        name = f"{stem}_{model}" if stem.startswith("pair") else stem
                        opened.append(load(os.path.join(kit, f"{name}.vmfb"), devices))
                    for _ in range(calls):
                        for m in opened:
                            got, want = ((m.matmul_chain(x, w1, w2), want_pair) if "matmul_chain" in m.signatures
                                         else (m.step(x, w1), want_one))
                            right, err = close(got, want, 1e-4, 1e-4, dtype=False)
                            if not right:
                                print(f"WRONG cycles={done}: {m.path} gave max error {err:.3g}", flush=True)
                                return 5
                finally:
                    for m in reversed(opened):
                        m.close()
            done += 1
    except Exception as e:  # noqa: BLE001  (a failure is a row, not a traceback)
        print(f"FAILED cycles={done}: {type(e).__name__}: {str(e).splitlines()[0][:200]}", flush=True)
        return 5
    print(f"done cycles={done}", flush=True)
    return 0


def run_case(kit: str, case: dict, processes: int, jobs: int, loads: int, calls: int, hang: float,
             workers: int):
    """-> (row dict, details of the bad processes)."""
    cmd = [sys.executable, os.path.abspath(__file__), "child", kit, json.dumps(case), str(loads), str(calls),
           str(hang), str(workers)]
    # The child's own watchdog ends a hung cycle; this bound is for a hang it cannot see.
    bound = loads * (hang + 5) + 60

    def one(_):
        return run_watched(cmd, timeout=bound, quiet=None, env=checkout_env(), cwd=ROOT)

    began = time.monotonic()
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        results = list(pool.map(one, range(processes)))
    seconds = time.monotonic() - began
    row = {"case": case["label"], "runs": processes, "hangs": 0, "failures": 0, "cycles": 0, "seconds": seconds}
    details = []
    for r in results:
        counted = re.search(r"\bcycles=(\d+)", r.stdout)
        row["cycles"] += int(counted.group(1)) if counted else 0
        hung = r.returncode == HUNG or HANG_MARK in r.stderr
        if hung:
            row["hangs"] += 1
        elif r.returncode != 0 or "done" not in r.stdout:
            row["failures"] += 1
        if hung or r.returncode != 0:
            details.append(f"{case['label']}: {'HANG' if hung else f'exit {r.returncode}'}\n"
                           f"{r.stdout.strip()[-1000:]}\n{r.stderr.strip()[-4000:]}")
    return row, details


DEFAULT_CASES = [["local-task", "local-sync"], ["local-task", "local-task"], ["local-task", "vulkan"]]


def run(kit: str, device_sets: list[list[str]], processes: int, jobs: int, loads: int, calls: int,
        hang: float, workers: int, explicit: bool) -> int:
    kit = os.path.abspath(kit)
    if not os.path.isfile(os.path.join(kit, "kit.json")):
        print(f"close_stress: error: {kit} is not a kit (run build first)", file=sys.stderr)
        return 1
    rows, details, missing = [], [], []
    for devices in device_sets:
        try:
            case = case_of(devices)
        except ValueError as e:
            print(f"close_stress: error: {e}", file=sys.stderr)
            return 1
        why = _device_missing(case)
        if why:
            missing.append(f"{case['label']}: skipped, a device is not here ({why})")
            continue
        print(f"{case['label']}: {processes} processes of {loads} cycles ...", flush=True)
        row, bad = run_case(kit, case, processes, jobs, loads, calls, hang, workers)
        rows.append(row)
        details += bad
    print()
    print(markdown(("case", "runs", "hangs", "failures", "cycles", "seconds"), "lrrrrr",
                   [(*(r[k] for k in ("case", "runs", "hangs", "failures", "cycles")), f"{r['seconds']:.1f}")
                    for r in rows]))
    for m in missing:
        print(m)
    for d in details[:3]:
        print(f"\n{d}")
    bad = any(r["hangs"] or r["failures"] for r in rows)
    print(f"\nclose_stress: {'HANGS OR FAILURES above' if bad else 'no hang, no failure'} "
          f"(a cycle: load, {calls} calls, check, close; a hang: a cycle over {hang:g} s)")
    if bad:
        return 1
    if explicit and missing:
        print("close_stress: error: the asked devices are not here; nothing was run", file=sys.stderr)
        return NO_GPU_STATUS
    return 0


def _run(a) -> int:
    sets = [a.device] if a.device else DEFAULT_CASES
    return run(a.dir, sets, a.processes, a.jobs, a.loads, a.calls, a.hang, a.workers, explicit=bool(a.device))


BUILD = Step(lambda a: build(a.dir, a.cpu, a.cuda_target), [
    option("--cpu", default="generic", help="--iree-llvmcpu-target-cpu (generic: runs on any x86-64)"),
    option("--cuda-target", default="sm_80")], help="compile the kit (here)")
RUN = Step(_run, [
    option("--device", action="append", help="a device of the one case to run (twice: a pair)"),
    option("--processes", type=int, default=20),
    option("--jobs", type=int, default=2, help="processes at a time"),
    option("--loads", type=int, default=100, help="cycles a process"),
    option("--calls", type=int, default=2, help="calls a cycle"),
    option("--hang", type=float, default=30.0, help="seconds a cycle may take before it counts as a hang"),
    option("--workers", type=int, default=0,
           help="local-task worker threads (IREE's --task_topology_group_count; 0: IREE's choice)")],
    help="load, call and close, again and again")
# A process of the run: child KIT CASE_JSON LOADS CALLS HANG WORKERS.
CHILDREN = {"child": lambda v: child(v[0], json.loads(v[1]), int(v[2]), int(v[3]), float(v[4]), int(v[5]))}


def main() -> int:
    return kit_main(__doc__, BUILD, RUN, children=CHILDREN, prog="close_stress.py", dest="dir")


if __name__ == "__main__":
    sys.exit(main())
