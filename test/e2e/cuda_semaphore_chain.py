"""IREE 3.13's cuda driver fails a chain of queue copies that signal and wait
on successive values of one semaphore, once the chain has three or more.

    python test/e2e/cuda_semaphore_chain.py [--driver cuda] [--calls 200]

Each variant runs in its own process (a failure may be a crash): k 64-byte
copies, copy i waiting on copy i-1's fence, the host waiting on the last;
fences on one semaphore (values 1..k) or each on a new semaphore (as IREE's
compiled programs make them), the fence objects dropped as the chain goes or
all kept until the end. Prints, per variant and k, the median microseconds
per chain or the child's exit status.

Measured on the H200 (eighth session, 2026-12-01, run 49): one semaphore,
k >= 3: every process failed (exit 1, "synchronous fence failure ...
CUDA_ERROR_CONTEXT_IS_DESTROYED"; once a hang past 60 s, once, in the
bench, a segfault); a semaphore per fence: no failure, 24-26, 40-41,
59-61, 70-79 and 119-134 us for k = 1, 2, 3, 4, 8. mdc's programs make a
semaphore per fence (hal.fence.create), so this does not reach them; the
bench's queue-latency table does the same. Exit status 1 when any variant
failed (as it does on IREE 3.13's cuda)."""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

VARIANTS = ("one_semaphore_dropped", "one_semaphore_kept", "semaphore_per_fence_dropped",
            "semaphore_per_fence_kept")
CHAINS = (1, 2, 3, 4, 8)


def _child(driver: str, variant: str, k: int, calls: int) -> int:
    import iree.runtime as rt

    device = rt.get_driver(driver).create_default_device()
    m, u = rt.MemoryType, rt.BufferUsage
    a = device.allocator.allocate_buffer(memory_type=m.HOST_LOCAL | m.DEVICE_VISIBLE,
                                         allowed_usage=u.TRANSFER | u.MAPPING, allocation_size=64)
    b = device.allocator.allocate_buffer(memory_type=m.DEVICE_LOCAL,
                                         allowed_usage=u.TRANSFER | u.DISPATCH_STORAGE, allocation_size=64)

    def chain():
        kept = []
        shared = device.create_semaphore(0)
        wait = rt.HalFence(0)
        for i in range(k):
            if variant.startswith("semaphore_per_fence"):
                signal = rt.HalFence.create_at(device.create_semaphore(0), 1)
            else:
                signal = rt.HalFence.create_at(shared, i + 1)
            device.queue_copy(a, b, wait, signal)
            if variant.endswith("kept"):
                kept.append(signal)
            wait = signal
        wait.wait()

    times = []
    for _ in range(calls):
        start = time.perf_counter()
        chain()
        times.append(time.perf_counter() - start)
    print(f"{statistics.median(times) * 1e6:.1f}")
    return 0


def main() -> int:
    if len(sys.argv) == 6 and sys.argv[1] == "_child":
        return _child(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--driver", default="cuda")
    p.add_argument("--calls", type=int, default=200)
    a = p.parse_args()
    print(f"{'variant':30} " + " ".join(f"{'k=' + str(k):>12}" for k in CHAINS))
    failed = False
    for variant in VARIANTS:
        cells = []
        for k in CHAINS:
            try:
                r = subprocess.run([sys.executable, __file__, "_child", a.driver, variant, str(k), str(a.calls)],
                                   capture_output=True, text=True, timeout=60)
                cells.append(r.stdout.strip() if r.returncode == 0 else f"rc={r.returncode}")
                failed |= r.returncode != 0
            except subprocess.TimeoutExpired:
                cells.append("TIMEOUT")
                failed = True
        print(f"{variant:30} " + " ".join(f"{c:>12}" for c in cells))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
