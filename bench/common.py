"""What the measurements share: the run's configuration, timing, the raw
IREE references (queue copies, the manual route), torch's rows, and the
host settings a table was measured under."""

from __future__ import annotations

import dataclasses
import gc
import os
import statistics
import sys
import time
from typing import Callable, Optional

import numpy as np

from .kitframe import NO_GPU_STATUS, no_device

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
if ROOT not in sys.path:  # mdc.runtime_shim from this checkout (mdc/__init__.py finds the folders)
    sys.path.insert(0, ROOT)

MIB = 1 << 20
SEED = os.path.join(ROOT, "examples", "multi_device_mul.mlir")
SEED_DYNAMIC = os.path.join(HERE, "programs", "seed_dynamic.mlir")  # the seed, its size known at run time
STAGINGS = ("copy", "emplace")  # mdc-compile --staging=...
PIECE_COUNTS = (1, 2, 4, 8, 16)  # mdc-compile --staging-pieces=...


@dataclasses.dataclass(frozen=True)
class Config:
    """How a measurement runs. ``gpu``: the runtime driver playing the GPU
    ("cuda"; "local-sync" with --smoke). ``allow_no_gpu``: with no such
    device, say so and exit 0 (a skip), not NO_GPU_STATUS."""

    gpu: str = "cuda"
    allow_no_gpu: bool = False

    def no_gpu_status(self) -> int:
        return 0 if self.allow_no_gpu else NO_GPU_STATUS


def gpu_or_none(config: Config) -> Optional["RawIree"]:
    """The GPU for the references, or None (said) where there is none; the
    caller then returns config.no_gpu_status()."""
    try:
        return RawIree(config.gpu)
    except Exception as e:  # no cuda driver or device
        no_device("bench", config.gpu, why=str(e).splitlines()[0][:120] if str(e) else type(e).__name__,
                  allow=config.allow_no_gpu, nothing="measured")
        return None


# -- timing ---------------------------------------------------------------------


def size_name(nbytes: int) -> str:
    """``4K``, ``1M``, ``1G``: a size in whole KiB, MiB or GiB (else bytes)."""
    for unit, scale in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if nbytes % scale == 0:
            return f"{nbytes // scale}{unit}"
    return str(nbytes)


def median_time(fn: Callable[[], object], repeat: int, warmup: int = 2) -> float:
    """Median seconds of ``repeat`` calls of ``fn`` after ``warmup`` calls,
    host clock around each (synchronous) call."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def repeats(nbytes: int) -> int:
    return 30 if nbytes <= 16 * MIB else 5


def gbps(nbytes: int, seconds: float) -> float:
    return nbytes / seconds / 1e9


def values_aligned(nbytes: int) -> np.ndarray:
    """``nbytes`` of a byte pattern, 64-byte aligned (used in place on a CPU)."""
    from mdc.runtime_shim import aligned_array

    pattern = (np.arange(nbytes, dtype=np.int64) % 251).astype(np.int8)
    return aligned_array(pattern)


def resident_call(function, *inputs) -> Callable[[], None]:
    """A call of ``function`` on ``inputs`` (Placed inputs: already on their
    devices) whose results are left where they end and dropped: the
    program's own work alone."""
    def call():
        function.call_on_devices(*inputs)

    return call


# -- the raw IREE references ------------------------------------------------------


class RawIree:
    """The GPU driven with iree.runtime alone: the queue_copy limit and the
    manual route, with no mdc program in between."""

    def __init__(self, gpu: str):
        import iree.runtime as rt

        self.rt = rt
        self.cuda = rt.get_driver(gpu).create_default_device()

    def fence_wait(self, fn, device) -> None:
        rt = self.rt
        sem = device.create_semaphore(0)
        fn(rt.HalFence.create_at(sem, 1))
        rt.HalFence.create_at(sem, 1).wait()

    def pinned(self, nbytes: int):
        rt = self.rt
        return self.cuda.allocator.allocate_buffer(
            memory_type=rt.MemoryType.HOST_LOCAL | rt.MemoryType.DEVICE_VISIBLE,
            allowed_usage=rt.BufferUsage.TRANSFER | rt.BufferUsage.MAPPING, allocation_size=nbytes)

    def device_buffer(self, nbytes: int):
        rt = self.rt
        return self.cuda.allocator.allocate_buffer(
            memory_type=rt.MemoryType.DEVICE_LOCAL,
            allowed_usage=rt.BufferUsage.TRANSFER | rt.BufferUsage.DISPATCH_STORAGE,
            allocation_size=nbytes)

    def copy_waited(self, source, target) -> None:
        """One queue_copy on the GPU, waited for on the host."""
        self.fence_wait(lambda f: self.cuda.queue_copy(source, target, self.rt.HalFence(0), f), self.cuda)

    def queue_copy_limit(self, nbytes: int) -> tuple[float, float]:
        """Seconds of a queue_copy pinned -> device and device -> pinned."""
        pinned, dev = self.pinned(nbytes), self.device_buffer(nbytes)
        h2d = median_time(lambda: self.copy_waited(pinned, dev), repeats(nbytes))
        d2h = median_time(lambda: self.copy_waited(dev, pinned), repeats(nbytes))
        return h2d, d2h

    def manual(self, host: np.ndarray) -> tuple[float, float]:
        """What a user writes today between two single-device modules: the
        numpy array uploaded to the cuda device, and a device array read
        back to numpy."""
        rt = self.rt
        reps = repeats(host.nbytes)
        h2d = median_time(lambda: rt.asdevicearray(self.cuda, host), reps)
        view = rt.asdevicearray(self.cuda, host)._buffer_view

        def d2h_once():
            rt.DeviceArray(self.cuda, view).to_host()
            # to_host registers its numpy result with CUDA; an unreleased
            # registration at a reused address fails the next call
            # (CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED), so release it now.
            gc.collect()

        try:
            d2h = median_time(d2h_once, reps)
        except RuntimeError as e:
            print(f"manual d2h failed: {str(e).splitlines()[0][:160]}", flush=True)
            d2h = float("nan")
        return h2d, d2h


class LocalDevice:
    """A local-task device and host-visible buffers of its allocator."""

    def __init__(self, rt):
        self.rt = rt
        self.device = rt.get_driver("local-task").create_default_device()
        self.host_type = int(rt.MemoryType.DEVICE_LOCAL) | int(rt.MemoryType.HOST_VISIBLE)
        self.usage = (int(rt.BufferUsage.TRANSFER) | int(rt.BufferUsage.DISPATCH_STORAGE)
                      | int(rt.BufferUsage.MAPPING))

    def buffer(self, nbytes: int):
        return self.device.allocator.allocate_buffer(memory_type=self.host_type, allowed_usage=self.usage,
                                                     allocation_size=nbytes)

    def fence(self):
        return self.rt.HalFence.create_at(self.device.create_semaphore(0), 1)

    def copy(self, a, b) -> None:
        fence = self.fence()
        self.device.queue_copy(a, b, self.rt.HalFence(0), fence)
        fence.wait()


# -- torch ------------------------------------------------------------------------


def torch_cuda():
    """(torch, None) when torch with a CUDA device is importable, else
    (None, why not)."""
    try:
        import torch
    except ImportError as e:
        return None, f"torch is not importable ({e})"
    if not torch.cuda.is_available():
        return None, f"torch {torch.__version__} has no CUDA device here"
    return torch, None


def torch_rows(nbytes: int, reps: Optional[int] = None) -> Optional[dict]:
    """Seconds of torch's transfers of ``nbytes``, (h2d, d2h) by kind:
    ``pinned`` and ``pageable`` (copy_ between existing tensors) and
    ``new`` (x.cuda() / y.cpu()), each the median of ``reps`` calls
    (default: ``repeats(nbytes)``); None without torch and CUDA."""
    torch, _ = torch_cuda()
    if torch is None:
        return None
    reps = reps or repeats(nbytes)
    out = {}
    for kind, pin in (("pinned", True), ("pageable", False)):
        host = torch.empty(nbytes, dtype=torch.uint8, pin_memory=pin)
        dev = torch.empty(nbytes, dtype=torch.uint8, device="cuda")

        def h2d():
            dev.copy_(host, non_blocking=pin)
            torch.cuda.synchronize()

        def d2h():
            host.copy_(dev, non_blocking=pin)
            torch.cuda.synchronize()

        out[kind] = (median_time(h2d, reps), median_time(d2h, reps))
    # What a user writes most often, x.cuda() and y.cpu(): each call makes a
    # new tensor, as an mdc call makes a new result (host memory from the C
    # heap; device memory from torch's caching allocator).
    host = torch.empty(nbytes, dtype=torch.uint8)
    dev = torch.empty(nbytes, dtype=torch.uint8, device="cuda")

    def h2d_new():
        host.cuda()
        torch.cuda.synchronize()

    def d2h_new():
        dev.cpu()

    out["new"] = (median_time(h2d_new, reps), median_time(d2h_new, reps))
    return out


# -- host settings ------------------------------------------------------------------


def configure_host(workers: int, retain: bool, runtime_flags: tuple[str, ...] = ()) -> None:
    """Process-wide runtime settings, before any device exists; printed, so
    every table says what it was measured under. Without the runtime there
    is nothing to configure: the measurement then says there is no GPU.
    runtime_flags: more of IREE's runtime flags (--task_worker_spin_us=...)."""
    try:
        import iree.runtime as rt
    except ImportError:
        return

    if workers:
        rt.flags.parse_flags(f"--task_topology_group_count={workers}")
    if runtime_flags:
        rt.flags.parse_flags(*runtime_flags)
    retained = False
    if retain:
        from mdc.runtime_shim.host_memory import retain_freed_memory

        retained = retain_freed_memory()
    try:
        thp = open("/sys/kernel/mm/transparent_hugepage/enabled").read().strip()
    except OSError:
        thp = "?"
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"host: {cpus} cpus usable, local-task workers {workers or 'IREE default'}, "
          f"freed host memory retained: {retained}, transparent huge pages: {thp}, "
          f"GLIBC_TUNABLES={os.environ.get('GLIBC_TUNABLES', '')!r}"
          + (f", runtime flags: {' '.join(runtime_flags)}" if runtime_flags else ""), flush=True)
