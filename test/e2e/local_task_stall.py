#!/usr/bin/env python3
"""A runtime-only reproducer attempt for the IREE 3.13 local-task stall
(docs/PERFORMANCE.md, "Why the pieces stalled"): no compiler, no mdc module.

Each iteration issues PIECES command buffers (one buffer copy each) on a
local-task device, execute k waiting on execute k-1's fence, the shape of
mdc's old chained pieces (cb5cff9); the host waits each fence in turn, and
after the first also starts a queue copy on a second local-task device, as
the old lowering started a GPU copy (--one-device: not). A host wait that passes its timeout is
a stall. Several processes run at once, as gpu_stall.py ran them.

    python test/e2e/local_task_stall.py [--processes 6] [--seconds 40] [--workers 16]

Needs many cores to show anything (run 23 stalled with 16 workers on a
16-core host, never with 2 workers); prints one line per process.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time


def child(workers: int, seconds: float, pieces: int, mib: int, timeout_s: float, second: bool) -> int:
    import iree.runtime as rt

    if workers:
        rt.flags.parse_flags(f"--task_topology_group_count={workers}")
    driver = rt.get_driver("local-task")
    a, b = driver.create_default_device(), driver.create_default_device()
    memory = int(rt.MemoryType.HOST_LOCAL | rt.MemoryType.DEVICE_VISIBLE)
    usage = int(rt.BufferUsage.DEFAULT | rt.BufferUsage.MAPPING)
    n = mib << 20
    src, pinned = (a.allocator.allocate_buffer(memory_type=memory, allowed_usage=usage, allocation_size=n)
                   for _ in range(2))
    dst = b.allocator.allocate_buffer(memory_type=memory, allowed_usage=usage, allocation_size=n)
    piece = n // pieces
    commands = []
    for k in range(pieces):
        cb = rt.HalCommandBuffer(a, begin=True)
        cb.copy(src, pinned, source_offset=k * piece, target_offset=k * piece, length=piece, end=True)
        commands.append(cb)
    wait_ns = int(timeout_s * 1e9)
    end = time.monotonic() + seconds
    calls = 0
    while time.monotonic() < end:
        sa, sb = a.create_semaphore(0), b.create_semaphore(0)
        for k in range(pieces):
            a.queue_execute(commands[k], rt.HalFence.create_at(sa, k), rt.HalFence.create_at(sa, k + 1))
        for k in range(pieces):
            if rt.HalFence.create_at(sa, k + 1).wait(timeout=wait_ns) is False:
                print(f"STALL after {calls} calls: execute {k} never signalled "
                      f"(semaphore at {sa.query()})", flush=True)
                return 1
            if k == 0 and second:
                b.queue_copy(pinned, dst, rt.HalFence(0), rt.HalFence.create_at(sb, 1))
        if second and rt.HalFence.create_at(sb, 1).wait(timeout=wait_ns) is False:
            print(f"STALL after {calls} calls: the copy on the second device", flush=True)
            return 1
        calls += 1
    print(f"ok: {calls} calls", flush=True)
    return 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--processes", type=int, default=6)
    p.add_argument("--seconds", type=float, default=40.0)
    p.add_argument("--workers", type=int, default=16, help="local-task workers (0: IREE's default)")
    p.add_argument("--pieces", type=int, default=4)
    p.add_argument("--mib", type=int, default=1)
    p.add_argument("--timeout", type=float, default=4.0, help="seconds a host wait may take")
    p.add_argument("--one-device", action="store_true", help="no copy on a second device")
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.child:
        return child(a.workers, a.seconds, a.pieces, a.mib, a.timeout, not a.one_device)
    args = [sys.executable, __file__, "--child", "--seconds", str(a.seconds), "--workers", str(a.workers),
            "--pieces", str(a.pieces), "--mib", str(a.mib), "--timeout", str(a.timeout),
            *(["--one-device"] if a.one_device else [])]
    procs = [subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for _ in range(a.processes)]
    stalled = 0
    for i, proc in enumerate(procs):
        try:
            out, _ = proc.communicate(timeout=a.seconds + 60)
        except subprocess.TimeoutExpired:
            proc.kill()
            out = "killed: no answer (hung outside a timed wait)"
        last = (out.strip().splitlines() or ["no output"])[-1]
        stalled += not last.startswith("ok")
        print(f"process {i}: {last}")
    devices = "one device" if a.one_device else "two devices"
    print(f"workers {a.workers}, {a.pieces} pieces of {a.mib} MiB, {devices}: "
          f"{stalled} of {a.processes} processes stalled")
    return 0


if __name__ == "__main__":
    sys.exit(main())
