"""``bench components``: the parts a staged transfer is made of, timed with
the runtime API (host copies, queue copies, allocations, host round trips),
and the host copy and the GPU's DMA from pinned memory alone and at once."""

from __future__ import annotations

import concurrent.futures
import statistics
import subprocess
import sys
import time

import numpy as np

from .common import MIB, ROOT, Config, LocalDevice, RawIree, gpu_or_none, median_time


def numpy_copy(src: np.ndarray, dst: np.ndarray, threads: int):
    """A host memcpy of ``src`` into ``dst`` split over ``threads`` numpy
    threads: the host's own memory bandwidth, which bounds any staging copy."""
    step = src.size // threads

    def copy():
        if threads == 1:
            np.copyto(dst, src)
            return
        with concurrent.futures.ThreadPoolExecutor(threads) as pool:
            list(pool.map(lambda i: np.copyto(dst[i * step:(i + 1) * step], src[i * step:(i + 1) * step]),
                          range(threads)))

    return copy


def _rows(iree: RawIree, local: LocalDevice, host_a: np.ndarray, host_b: np.ndarray, pinned, dev) -> list:
    n = host_a.nbytes
    src, host_other = local.buffer(n), local.buffer(n)
    # The staging copy into pinned memory is issued as several concurrent
    # queue copies; this shows whether local-task runs them in parallel.
    eighths = [(local.buffer(n // 8), iree.pinned(n // 8)) for _ in range(8)]

    def local_copies_concurrent():
        fences = []
        for a, b in eighths:
            fence = local.fence()
            local.device.queue_copy(a, b, iree.rt.HalFence(0), fence)
            fences.append(fence)
        for fence in fences:
            fence.wait()

    return [
        ("host memcpy, 1 thread (numpy)", numpy_copy(host_a, host_b, 1)),
        ("host memcpy, 8 threads (numpy)", numpy_copy(host_a, host_b, 8)),
        ("host memcpy, 16 threads (numpy)", numpy_copy(host_a, host_b, 16)),
        ("local queue_copy host->pinned", lambda: local.copy(src, pinned)),
        ("local queue_copy host->pinned, 8 at once", local_copies_concurrent),
        ("local queue_copy pinned->host", lambda: local.copy(pinned, src)),
        ("local queue_copy host->host", lambda: local.copy(src, host_other)),
        ("cuda queue_copy pinned->device", lambda: iree.copy_waited(pinned, dev)),
        ("cuda allocate device buffer", lambda: iree.device_buffer(n)),
        ("cuda allocate pinned buffer", lambda: iree.pinned(n)),
        ("local allocate buffer", lambda: local.buffer(n)),
        ("local allocate + copy pinned->new", lambda: local.copy(pinned, local.buffer(n))),
    ]


def _round_trips(iree: RawIree, local: LocalDevice) -> None:
    """What one host round trip costs: the floor of a crossing, which waits
    on the host at least once per queue it uses."""
    tiny = 64
    tiny_pinned, tiny_dev = iree.pinned(tiny), iree.device_buffer(tiny)
    tiny_a, tiny_b = local.buffer(tiny), local.buffer(tiny)
    round_trips = [
        ("cuda queue_copy 64 B + host wait", lambda: iree.copy_waited(tiny_pinned, tiny_dev)),
        ("local-task queue_copy 64 B + host wait", lambda: local.copy(tiny_a, tiny_b)),
    ]
    print("host round trips, median of 200")
    for name, fn in round_trips:
        t = median_time(fn, 200, warmup=20)
        print(f"  {name:40} {t * 1e6:9.1f} us")


def components(config: Config, mib: int) -> int:
    """Times the pieces a staged transfer is made of, with the runtime API,
    to show where a call's time goes."""
    iree = gpu_or_none(config)
    if iree is None:
        return config.no_gpu_status()
    n = mib * MIB
    local = LocalDevice(iree.rt)
    pinned, dev = iree.pinned(n), iree.device_buffer(n)
    host_a, host_b = np.ones(n, np.uint8), np.empty(n, np.uint8)
    np.copyto(host_b, host_a)
    print(f"components of a {mib} MiB staged transfer, median ms")
    for name, fn in _rows(iree, local, host_a, host_b, pinned, dev):
        try:
            t = median_time(fn, 5)
            print(f"  {name:40} {t * 1e3:9.2f} ms  {n / t / 1e9:7.2f} GB/s")
        except Exception as e:  # an API this runtime lacks
            print(f"  {name:40} n/a ({str(e).splitlines()[0][:80]})")
    contention(config, iree, pinned, dev, n, numpy_copy(host_a, host_b, 16))
    _round_trips(iree, local)
    return 0


def dma_loop(config: Config, nbytes: int, seconds: float) -> int:
    """The other process of ``contention``: once told to go (a line on
    stdin), copies pinned -> device on the GPU for ``seconds``, then prints
    its GB/s and how many copies it made."""
    iree = RawIree(config.gpu)
    pinned, dev = iree.pinned(nbytes), iree.device_buffer(nbytes)
    iree.copy_waited(pinned, dev)
    print("ready", flush=True)
    sys.stdin.readline()
    count, began = 0, time.perf_counter()
    while time.perf_counter() - began < seconds:
        iree.copy_waited(pinned, dev)
        count += 1
    print(f"{count * nbytes / (time.perf_counter() - began) / 1e9:.2f} {count}", flush=True)
    return 0


def _together(config: Config, n: int, host_copy, seconds: float) -> tuple[list[float], str, str]:
    """Host copies timed while a second process runs the DMA loop; ->
    (the copies' seconds, the DMA's GB/s, its copy count)."""
    child = subprocess.Popen([sys.executable, "-m", "bench", "_dma_loop", str(n), str(seconds), config.gpu],
                             cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        if child.stdout.readline().strip() != "ready":
            raise RuntimeError("the DMA process did not start")
        child.stdin.write("go\n")
        child.stdin.flush()
        times, began = [], time.perf_counter()
        while time.perf_counter() - began < seconds:
            t = time.perf_counter()
            host_copy()
            times.append(time.perf_counter() - t)
        rate, copies = child.communicate(timeout=seconds + 60)[0].split()
    finally:
        if child.poll() is None:
            child.kill()
    return times, rate, copies


def contention(config: Config, iree: RawIree, pinned, dev, n: int, host_copy, seconds: float = 3.0) -> None:
    """The host copy and the GPU's DMA from pinned memory, each alone and
    then both at once (the DMA from another process, so neither waits on
    Python's lock): overlapped pieces can only reach the slower of the two
    rates they get together, which shared host memory bandwidth may lower."""
    dma_alone = n / median_time(lambda: iree.copy_waited(pinned, dev), 5)
    host_alone = n / median_time(host_copy, 5)
    times, rate, copies = _together(config, n, host_copy, seconds)
    host_together = n / statistics.median(times)
    print("host copy (numpy, 16 threads) and GPU DMA from pinned memory: alone, then at once, GB/s")
    print(f"  {'host copy':32} alone {host_alone / 1e9:7.2f}   with the DMA running  {host_together / 1e9:7.2f}"
          f" ({len(times)} copies)")
    print(f"  {'queue_copy pinned->device':32} alone {dma_alone / 1e9:7.2f}   with the host copying "
          f"{float(rate):7.2f} ({copies} copies)")
