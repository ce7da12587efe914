"""Running timing modules in worker processes that may crash or hang, there.

A config can make a kernel that faults or never ends. One worker
(bench/kernel_timing.py) takes the modules in turn and writes a line per
function; the parent watches the result file, and a worker that writes
nothing for ``STALL_S`` seconds is killed as hung. When a worker dies,
the function it had started is recorded as failed and a new worker takes
the functions after it. Results are JSON lines appended to one file, so a
run cut short keeps what it measured.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STALL_S = 40.0


def _read(path: str) -> tuple[dict[str, dict], str | None]:
    """(results by function, the function started last without a result)."""
    from .kitframe import json_lines
    done, started = {}, None
    for row in json_lines(path):
        if "start" in row:
            started = row["start"]
        else:
            done[row["function"]] = row
            if row["function"] == started:
                started = None
    return done, started


def _watch(cmd: list[str], out: str) -> str | None:
    """Runs the worker until it ends; None if it ended well, else why not."""
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    seen, last = -1, time.monotonic()
    while proc.poll() is None:
        time.sleep(0.5)
        size = os.path.getsize(out) if os.path.exists(out) else 0
        if size != seen:
            seen, last = size, time.monotonic()
        elif time.monotonic() - last > STALL_S:
            proc.kill()
            proc.wait()
            return f"no progress for {STALL_S:.0f} s (hung)"
    err = proc.stderr.read().strip()
    if proc.returncode == 0:
        return None
    return f"worker exit {proc.returncode}: {err.splitlines()[-1] if err else ''}"


def run_modules(modules: list[dict], kit: str, out: str, device: str, seed: int, floor: float) -> None:
    """Measures every entry of ``modules`` ({vmfb, entries}) into ``out``."""
    todo_path = out + ".todo.json"
    while True:
        done, _ = _read(out)
        todo = [dict(m, vmfb=os.path.join(kit, m["vmfb"]),
                     entries=[e for e in m["entries"] if e["function"] not in done]) for m in modules]
        todo = [m for m in todo if m["entries"]]
        if not todo:
            break
        with open(todo_path, "w") as f:
            json.dump(todo, f)
        why = _watch([sys.executable, "-m", "bench.kernel_timing", todo_path, device, str(seed), str(floor), out], out)
        if why is None:
            continue
        done, started = _read(out)
        flat = [e for m in todo for e in m["entries"]]
        victim = started if started not in (None, *done) else next(
            (e["function"] for e in flat if e["function"] not in done), None)
        if victim is None:
            break
        entry = next(e for e in flat if e["function"] == victim)
        with open(out, "a") as f:
            print(json.dumps(dict(entry, failed=why[:300])), file=f, flush=True)
        print(f"  {victim}: {why[:200]}", flush=True)
    if os.path.exists(todo_path):
        os.remove(todo_path)


def results(out: str) -> list[dict]:
    done, _ = _read(out)
    return list(done.values())
