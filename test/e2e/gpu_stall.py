"""Build here, run on a GPU machine: does a CPU->GPU argument move ever stall?

    python test/e2e/gpu_stall.py build DIR         # here: needs the compiler
    python test/e2e/gpu_stall.py run DIR           # there: runtime only

``build`` compiles bench/programs/to_gpu.mlir (a byte argument on a local
device, returned on a cuda device) with mdc-compile: the default lowering,
``--staging=copy``, and ``--staging-pieces=4``. ``run`` calls each module
again and again, the argument resident on its device, in fresh processes of
``--seconds`` each; a call that takes longer than ``--stall`` seconds counts
as a stall and ends that process. It prints one row per module and size:
processes run, processes stalled, calls completed, and whether the last
result was right. ``--workers N`` sets local-task's worker threads. Exit status 1 when any process stalled or was wrong; 0 with
a message when no cuda device is available.

Found with its predecessor, the same call loop and stall rule (runs 20-22,
docs/PERFORMANCE.md): the piece-wise copy into pinned memory
(``--staging-pieces`` above 1) stalls within a few thousand calls under
IREE 3.13; one piece never did. This script itself has not yet run on a GPU.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PROGRAM = os.path.join(ROOT, "bench", "programs", "to_gpu.mlir")
VARIANTS = {"default": [], "copy": ["--staging=copy"], "pieces_4": ["--staging-pieces=4"]}


def build(out: str, cpu: str) -> int:
    os.makedirs(out, exist_ok=True)
    for name, flags in VARIANTS.items():
        cmd = ["mdc-compile", PROGRAM, "--device=a=local[0]", "--device=b=cuda[0]",
               f"--iree-llvmcpu-target-cpu={cpu}", *flags, "-o", os.path.join(out, f"{name}.vmfb")]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode:
            print(f"{name}: {' '.join(cmd)}\n{r.stderr}")
            return 1
    print(f"built {len(VARIANTS)} modules in {out}")
    return 0


def _child(path: str, mib: int, seconds: float, stall: float, workers: int) -> int:
    """One process: calls until ``seconds`` pass; exits 3 on a stall."""
    sys.path.insert(0, ROOT)
    import iree.runtime as rt
    import numpy as np

    if workers:  # before any device exists
        rt.flags.parse_flags(f"--task_topology_group_count={workers}")
    from bench.__main__ import _resident_call, values_aligned
    from runtime_shim import load

    m = load(path, ["local-task", "cuda"])
    f = m.function("to_gpu")
    host = values_aligned(mib << 20)
    call = _resident_call(m, f, host, 0)
    state = {"calls": 0, "last": time.monotonic()}

    def watchdog():
        while True:
            time.sleep(0.2)
            if time.monotonic() - state["last"] > stall:
                print(f"stalled calls={state['calls']}", flush=True)
                os._exit(3)

    threading.Thread(target=watchdog, daemon=True).start()
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        call()
        state["calls"] += 1
        state["last"] = time.monotonic()
    right = bool(np.array_equal(np.asarray(f(host)), host))
    print(f"done calls={state['calls']} right={right}", flush=True)
    os._exit(0 if right else 4)


def run(kit: str, sizes, processes: int, seconds: float, stall: float, workers: int) -> int:
    try:
        import iree.runtime as rt

        rt.get_driver("cuda").create_default_device()
    except Exception as e:
        print(f"gpu_stall: no cuda device here ({e}); skipping")
        return 0
    print(f"{'module':10} {'MiB':>5} {'processes':>9} {'stalled':>7} {'calls':>8}  right")
    bad = False
    for name in VARIANTS:
        for mib in sizes:
            stalled = calls = 0
            right = True
            for _ in range(processes):
                r = subprocess.run([sys.executable, __file__, "child", os.path.join(kit, f"{name}.vmfb"), str(mib),
                                    str(seconds), str(stall), str(workers)], capture_output=True, text=True,
                                   timeout=seconds + stall + 60)
                words = dict(w.split("=") for w in r.stdout.split() if "=" in w)
                calls += int(words.get("calls", 0))
                stalled += r.returncode == 3
                right = right and r.returncode in (0, 3)
            bad = bad or stalled > 0 or not right
            print(f"{name:10} {mib:>5} {processes:>9} {stalled:>7} {calls:>8}  {right}", flush=True)
    return 1 if bad else 0


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "child":
        return _child(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5]), int(sys.argv[6]))
    p = argparse.ArgumentParser(prog="gpu_stall.py", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build")
    b.add_argument("dir")
    b.add_argument("--cpu", default="generic")
    r = sub.add_parser("run")
    r.add_argument("dir")
    r.add_argument("--sizes", default="1,16", help="MiB, comma separated")
    r.add_argument("--processes", type=int, default=4)
    r.add_argument("--seconds", type=float, default=6)
    r.add_argument("--stall", type=float, default=5)
    r.add_argument("--only", help="comma separated module names (default: all)")
    r.add_argument("--workers", type=int, default=0,
                   help="local-task worker threads (IREE's --task_topology_group_count; 0: IREE's choice)")
    a = p.parse_args()
    if a.cmd == "build":
        return build(a.dir, a.cpu)
    if a.only:
        for name in list(VARIANTS):
            if name not in a.only.split(","):
                del VARIANTS[name]
    return run(os.path.abspath(a.dir), [int(s) for s in a.sizes.split(",")], a.processes, a.seconds, a.stall,
               a.workers)


if __name__ == "__main__":
    sys.exit(main())
