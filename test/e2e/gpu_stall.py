"""Build here, run on a GPU machine: does a CPU->GPU argument move ever stall?

    python test/e2e/gpu_stall.py build DIR         # here: needs the compiler
    python test/e2e/gpu_stall.py run DIR           # there: runtime only

``build`` compiles bench/programs/to_gpu.mlir (a byte argument on a local
device, returned on device b) with mdc-compile, one module per variant
(VARIANTS): the default lowering (pieces by size: one up to 16 MiB, four at
64 MiB), ``--staging=copy``, ``--staging-pieces=4``;
the pieces again with every host wait of the staging helpers polled
(``pieces_4_poll``: 50 ms at a time, failing with the wait's name after 80
timeouts, so a wait whose fence is reached but whose waiter was never woken
recovers, and one whose fence never is names itself); and the pieces between
two CPU devices (``cpu_pieces_4``, ``--link=a:b=staged``: no cuda at all).
``run`` calls each module again and again, the argument resident on its
device, in fresh processes of ``--seconds`` each; a call that takes longer
than ``--stall`` seconds counts as a stall and ends that process, after it
prints each thread's name, kernel wait channel and system call
(/proc/self/task). It prints one row per module and size: processes run,
processes stalled, processes failed, calls completed, calls slower than
``--slow`` seconds, and whether the last result was right. ``--workers N``
sets local-task's worker threads. Exit status 1 when any process stalled,
failed or was wrong; variants that need cuda are skipped (with a message)
where there is none.

The first lowering of pieces, whose CPU executes waited on each other's
fences, stalled within a few thousand calls under IREE 3.13's local-task
(runs 20-24, docs/PERFORMANCE.md), also between two CPUs; run 23 of this
script showed the missing fence was an execute's that never ran. The
lowering now has the host start each piece: no stall in runs 24-25.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import threading
import time

import _harness_path  # noqa: F401  (the checkout on sys.path: mdc and bench in the child processes)
from bench.kitframe import ROOT, Step, device_missing, fixed, kit_main, option, run_timed

PROGRAM = os.path.join(ROOT, "bench", "programs", "to_gpu.mlir")
GPU_PAIR = (["--device=a=local[0]", "--device=b=cuda[0]"], ["local-task", "cuda"])
COLUMNS = ("14", ">5", ">9", ">7", ">6", ">8", ">5", "")  # module, MiB, ... slow, right
CPU_PAIR = (["--device=a=local[0]", "--device=b=local[1]", "--link=a:b=staged"], ["local-task", "local-task"])


@dataclasses.dataclass(frozen=True)
class Variant:
    flags: list
    pair: tuple = GPU_PAIR
    poll: tuple | None = None  # staging_template.HOST_WAIT_POLL at build time

    @property
    def needs_cuda(self) -> bool:
        return "cuda" in self.pair[1]


VARIANTS = {
    "default": Variant([]),
    "copy": Variant(["--staging=copy"]),
    "pieces_4": Variant(["--staging-pieces=4"]),
    "pieces_4_poll": Variant(["--staging-pieces=4"], poll=(50, 80)),
    "cpu_pieces_4": Variant(["--staging-pieces=4"], pair=CPU_PAIR),
}

# Compiles in a fresh interpreter, so HOST_WAIT_POLL applies to that one build.
_BUILD = """import sys
from mdc.passes.lowering import staging_template
staging_template.HOST_WAIT_POLL = {poll!r}
from mdc.pipeline.cli import compile_main
sys.exit(compile_main({argv!r}))
"""


def build(out: str, cpu: str) -> int:
    os.makedirs(out, exist_ok=True)
    for name, v in VARIANTS.items():
        argv = [PROGRAM, *v.pair[0], f"--iree-llvmcpu-target-cpu={cpu}", *v.flags,
                "-o", os.path.join(out, f"{name}.vmfb")]
        r = subprocess.run([sys.executable, "-c", _BUILD.format(poll=v.poll, argv=argv)], cwd=ROOT,
                           capture_output=True, text=True)
        if r.returncode:
            print(f"{name}: mdc-compile {' '.join(argv)} (HOST_WAIT_POLL={v.poll})\n{r.stderr}")
            return 1
    print(f"built {len(VARIANTS)} modules in {out}")
    return 0


def _threads() -> str:
    """Each thread of this process: name, kernel wait channel, system call."""
    rows = []
    for tid in sorted(os.listdir("/proc/self/task"), key=int):
        fields = []
        for what in ("comm", "wchan", "syscall"):
            try:
                with open(f"/proc/self/task/{tid}/{what}") as f:
                    text = f.read().strip()
            except OSError as e:
                text = f"({e.strerror})"
            fields.append(text.split()[0] if what == "syscall" and text else text)
        rows.append(f"  thread {tid} {fields[0]!r} wchan={fields[1]} syscall={fields[2]}")
    return "\n".join(rows)


def _child(name: str, path: str, mib: int, seconds: float, stall: float, slow: float, workers: int) -> int:
    """One process: calls until ``seconds`` pass; exits 3 on a stall, 5 when
    a call fails."""
    import iree.runtime as rt
    import numpy as np

    if workers:  # before any device exists
        rt.flags.parse_flags(f"--task_topology_group_count={workers}")
    from bench.common import resident_call, values_aligned
    from mdc.runtime_shim import load

    m = load(path, list(VARIANTS[name].pair[1]))
    f = m.function("to_gpu")
    host = values_aligned(mib << 20)
    call = resident_call(f, f.place(0, host))
    state = {"calls": 0, "slow": 0, "last": time.monotonic()}

    def watchdog():
        while True:
            time.sleep(0.2)
            if time.monotonic() - state["last"] > stall:
                print(f"stalled calls={state['calls']} slow={state['slow']}\n{_threads()}", flush=True)
                os._exit(3)

    threading.Thread(target=watchdog, daemon=True).start()
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            call()
        except Exception as e:  # a polled wait that gave up names itself
            print(f"failed calls={state['calls']} slow={state['slow']}\n  {str(e).splitlines()[0]}", flush=True)
            os._exit(5)
        now = time.monotonic()
        state["calls"] += 1
        state["slow"] += now - state["last"] > slow
        state["last"] = now
    right = bool(np.array_equal(np.asarray(f(host)), host))
    print(f"done calls={state['calls']} slow={state['slow']} right={right}", flush=True)
    os._exit(0 if right else 4)


def run(kit: str, sizes, processes: int, seconds: float, stall: float, slow: float, workers: int) -> int:
    why = device_missing("cuda", width=None)
    if why:
        print(f"gpu_stall: no cuda device here ({why}); skipping the variants that need one")
    print(fixed(("module", "MiB", "processes", "stalled", "failed", "calls", "slow", " right"), COLUMNS))
    bad = False
    details = []
    for name, v in VARIANTS.items():
        if v.needs_cuda and why:
            continue
        for mib in sizes:
            stalled = failed = calls = slow_calls = 0
            right = True
            for _ in range(processes):
                r = run_timed([sys.executable, __file__, "child", name, os.path.join(kit, f"{name}.vmfb"), mib, seconds,
                               stall, slow, workers], seconds + stall + 60)
                words = dict(w.split("=", 1) for w in r.stdout.split() if w.count("=") == 1 and "(" not in w)
                calls += int(words.get("calls", 0))
                slow_calls += int(words.get("slow", 0))
                stalled += r.returncode == 3
                failed += r.returncode == 5
                right = right and r.returncode in (0, 3, 5)
                if r.returncode != 0 and len(details) < 4:
                    ended = r.status if r.returncode is None else r.returncode  # TIMEOUT: no exit status
                    details.append(f"{name} {mib} MiB, exit {ended}:\n{r.stdout.strip()}\n{r.stderr[-2000:]}")
            bad = bad or stalled > 0 or failed > 0 or not right
            print(fixed((name, mib, processes, stalled, failed, calls, slow_calls, f" {right}"), COLUMNS), flush=True)
    for d in details:
        print(d)
    return 1 if bad else 0


def _run(a) -> int:
    if a.only:
        for name in list(VARIANTS):
            if name not in a.only.split(","):
                del VARIANTS[name]
    return run(os.path.abspath(a.dir), [int(s) for s in a.sizes.split(",")], a.processes, a.seconds, a.stall,
               a.slow, a.workers)


BUILD = Step(lambda a: build(a.dir, a.cpu), [option("--cpu", default="generic")])
RUN = Step(_run, [
    option("--sizes", default="1,16", help="MiB, comma separated"),
    option("--processes", type=int, default=4),
    option("--seconds", type=float, default=6),
    option("--stall", type=float, default=5),
    option("--slow", type=float, default=0.04, help="seconds; calls slower count as slow"),
    option("--only", help="comma separated module names (default: all)"),
    option("--workers", type=int, default=0,
           help="local-task worker threads (IREE's --task_topology_group_count; 0: IREE's choice)")])
# A process of the run: child NAME VMFB MIB SECONDS STALL SLOW WORKERS.
CHILDREN = {"child": lambda v: _child(v[0], v[1], int(v[2]), float(v[3]), float(v[4]), float(v[5]), int(v[6]))}


def main() -> int:
    return kit_main(__doc__, BUILD, RUN, children=CHILDREN, prog="gpu_stall.py", dest="dir")


if __name__ == "__main__":
    sys.exit(main())
