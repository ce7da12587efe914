"""torch's CPU time for the grid's points, there, in a process of its own.

IREE's local-task workers spin a while after each call, on every core;
torch measured in a process beside them ran slow, and by how much varied
(a 16x768x3072 product once took 8 ms). So ``bench kernels run`` measures
torch's CPU matmuls before any IREE module is loaded, in a child process
that imports numpy and torch alone (kernel_timing, for the point's
inputs and the timing loop, imports no IREE), with the thread count
torch takes by default there. The child writes one JSON line per point,
flushed, so a child that dies keeps what it measured; the parent hands
each time to the IREE workers with the point's entries.

    python -m bench.kernel_torch_cpu POINTS.json SEED OUT.jsonl
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

from .kernel_grid import Point

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def key(point: dict) -> str:
    return Point(**point).key


def cpu_us(torch, point: dict, x, w) -> float:
    """torch's CPU time for x @ W (``F.linear`` for nt), us: the median call."""
    from .kernel_timing import _median_wall, as_float
    xt, wt = torch.from_numpy(as_float(x, point["dtype"])), torch.from_numpy(as_float(w, point["dtype"]))
    op = (lambda: torch.nn.functional.linear(xt, wt)) if point["layout"] == "nt" else (lambda: xt @ wt)
    with torch.no_grad():
        return _median_wall(op)


def child_main(argv: list[str]) -> int:
    points_path, seed, out = argv
    with open(points_path) as f:
        points = json.load(f)
    with open(out, "w") as f:
        try:
            import torch
        except ImportError:
            return 0
        from .kernel_timing import inputs
        threads = torch.get_num_threads()
        for p in points:
            x, w = inputs(p, int(seed))
            print(json.dumps(dict(key=key(p), torch_us=cpu_us(torch, p, x, w), threads=threads)), file=f, flush=True)
    return 0


def times(points: list[dict], seed: int, out: str) -> tuple[dict[str, float], int | None]:
    """torch's CPU time (us) by point key, and the thread count it ran
    with: measured in a child process into ``out`` (JSON lines). ({},
    None) without torch; a point the child did not reach has no time."""
    if not points or importlib.util.find_spec("torch") is None:
        return {}, None
    if os.path.exists(out):
        os.remove(out)
    points_path = out + ".points.json"
    with open(points_path, "w") as f:
        json.dump(points, f)
    cmd = [sys.executable, "-m", "bench.kernel_torch_cpu", points_path, str(seed), out]
    try:
        r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=60 + 5 * len(points))
        if r.returncode != 0:
            last = r.stderr.strip().splitlines()
            print(f"torch on the CPU: child exit {r.returncode}: {last[-1] if last else ''}", flush=True)
    except subprocess.TimeoutExpired:
        print("torch on the CPU: child timed out", flush=True)
    os.remove(points_path)
    from .kitframe import json_lines
    measured, threads = {}, None
    for row in json_lines(out):
        measured[row["key"]] = row["torch_us"]
        threads = row["threads"]
    return measured, threads


if __name__ == "__main__":
    sys.exit(child_main(sys.argv[1:]))
