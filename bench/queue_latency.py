"""``bench queue-latency``: what a chain of k dependent queue operations
costs until the host sees its last fence, on the GPU and on both CPU
drivers."""

from __future__ import annotations

from .common import Config, RawIree, gpu_or_none, median_time

TINY = 64  # bytes per copy


def _buffers(iree: RawIree, device):
    if device is iree.cuda:
        return iree.pinned(TINY), iree.device_buffer(TINY)
    rt = iree.rt
    host_type = int(rt.MemoryType.DEVICE_LOCAL) | int(rt.MemoryType.HOST_VISIBLE)
    usage = int(rt.BufferUsage.TRANSFER) | int(rt.BufferUsage.DISPATCH_STORAGE) | int(rt.BufferUsage.MAPPING)
    return tuple(device.allocator.allocate_buffer(memory_type=host_type, allowed_usage=usage,
                                                  allocation_size=TINY) for _ in range(2))


def _chain(rt, device, a, b, k, alloca=False, signaled_first=False) -> None:
    """k copies a -> b, each waiting on the previous one's fence; the
    host waits on the last. Each fence is a new semaphore, as in IREE's
    own programs: chaining three or more values of one semaphore failed
    on IREE 3.13's cuda (test/e2e/cuda_semaphore_chain.py)."""
    def fence():
        return rt.HalFence.create_at(device.create_semaphore(0), 1)

    wait = rt.HalFence(0)
    if signaled_first:
        sem = device.create_semaphore(0)
        sem.signal(1)
        wait = rt.HalFence.create_at(sem, 1)
    if alloca:
        signal = fence()
        b = device.queue_alloca(TINY, wait, signal)
        wait = signal
    for _ in range(k):
        signal = fence()
        device.queue_copy(a, b, wait, signal)
        wait = signal
    wait.wait()


ROWS = [*((f"{k} cop{'y' if k == 1 else 'ies'}", dict(k=k)) for k in (1, 2, 3, 4, 8)),
        ("1 copy after a signalled fence", dict(k=1, signaled_first=True)),
        ("queue_alloca, then 1 copy into it", dict(k=1, alloca=True)),
        ("queue_alloca, then 2 copies", dict(k=2, alloca=True))]


def queue_latency(config: Config, calls: int) -> int:
    """Each operation waits on the previous one's fence (as IREE's
    submissions within one call do). Tells how much of a small call's time
    is per submission and how much per host wait."""
    iree = gpu_or_none(config)
    if iree is None:
        return config.no_gpu_status()
    rt = iree.rt
    devices = {config.gpu: iree.cuda}
    for driver in ("local-task", "local-sync"):
        devices[driver] = rt.get_driver(driver).create_default_device()
    print(f"chains of dependent 64 B queue copies, each waiting on the previous one's fence;"
          f" the host waits on the last (median of {calls}), us")
    print(f"  {'':38} " + " ".join(f"{d:>12}" for d in devices))
    for name, kw in ROWS:
        cells = []
        for device in devices.values():
            a, b = _buffers(iree, device)
            try:
                cells.append(f"{median_time(lambda: _chain(rt, device, a, b, **kw), calls, warmup=20) * 1e6:12.1f}")
            except Exception as e:  # an operation this driver lacks
                cells.append(f"{'n/a':>12}")
                print(f"  ({name}: {str(e).splitlines()[0][:100]})")
        print(f"  {name:38} " + " ".join(cells))
    return 0
