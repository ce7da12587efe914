"""A device's memory as the machine sees it, without IREE: its total, what
is free, and what is in use, read from a counter that does not itself
take device memory, so that what opening an IREE device costs can be
measured as the counter's growth (measure.py says how mdc-profile does
it; bench placement samples a CUDA device's use with ``CudaMemory``).

The counters:

* ``NvmlCounter``: an NVIDIA GPU (cuda, and vulkan on NVIDIA's driver)
  through NVML (libnvidia-ml, through ctypes): device-wide total, free and
  used bytes, read without a CUDA context (a context costs hundreds of
  MiB on an H100: a counter that needs one would hide part of what it
  measures). The device is found by its UUID, which IREE's cuda driver
  gives as a device's path (``GPU-xxxxxxxx-xxxx-...``) and NVIDIA's Vulkan
  driver as its device UUID. Device-wide: another process that allocates
  meanwhile is counted too.
* ``HostCounter``: a device whose memory is the host's (local; lavapipe,
  Mesa's Vulkan on the CPU): the host's RAM (``os.sysconf``), the memory
  available (``MemAvailable`` of /proc/meminfo) and this process's
  anonymous resident memory (``RssAnon``), which is what a driver's own
  heap grows (shared libraries are file-backed, and shared).

No counter (another vendor's GPU, hip): memory unknown, and the open cost
is only what IREE's own allocator holds (measure.py).
"""

from __future__ import annotations

import ctypes
import dataclasses
import os
import threading
from typing import Optional

# Device kinds whose memory is the host's.
HOST_MEMORY_KINDS = ("local",)
# Words in a Vulkan device's name that say it runs on the CPU (its memory is the host's).
CPU_VULKAN_NAMES = ("llvmpipe", "lavapipe", "swiftshader")


@dataclasses.dataclass(frozen=True)
class Reading:
    """One read of a counter: the device's memory (None: unknown), what is
    free of it, and the counter's bytes in use (device-wide for NVML, this
    process's anonymous resident memory for the host)."""

    total: Optional[int]
    free: Optional[int]
    used: int


class HostCounter:
    """Memory of a device that is the host's (see the module's doc)."""

    what = "host memory: total RAM, MemAvailable, this process's anonymous resident memory (RssAnon)"
    host_memory = True

    def read(self) -> Reading:
        total, free = host_memory()
        return Reading(total, free, process_anonymous_bytes())


def host_memory() -> tuple[int, int]:
    """(the host's RAM, what is available of it): MemAvailable where
    /proc/meminfo has it (free pages and reclaimable caches), else free pages."""
    page = os.sysconf("SC_PAGE_SIZE")
    total = os.sysconf("SC_PHYS_PAGES") * page
    try:
        with open("/proc/meminfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return total, int(line.split()[1]) * 1024
    except OSError:
        pass
    return total, os.sysconf("SC_AVPHYS_PAGES") * page


def process_anonymous_bytes() -> int:
    """This process's anonymous resident memory (RssAnon), else all of its
    resident memory (VmRSS, on kernels without RssAnon)."""
    found = {}
    with open("/proc/self/status", encoding="utf-8") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("RssAnon", "VmRSS"):
                found[key] = int(value.split()[0]) * 1024
    return found.get("RssAnon", found.get("VmRSS", 0))


class _NvmlMemory(ctypes.Structure):
    _fields_ = [("total", ctypes.c_ulonglong), ("free", ctypes.c_ulonglong), ("used", ctypes.c_ulonglong)]


class NvmlCounter:
    """One NVIDIA GPU's memory through NVML (see the module's doc)."""

    what = "NVML (device-wide, no CUDA context)"
    host_memory = False

    def __init__(self, library: ctypes.CDLL, handle: ctypes.c_void_p):
        self.nvml = library
        self.handle = handle

    @classmethod
    def of_uuid(cls, uuid: str) -> Optional["NvmlCounter"]:
        """The counter of the GPU with ``uuid`` (``GPU-...``, dashed), or
        None where NVML is missing or knows no such GPU."""
        try:
            library = ctypes.CDLL("libnvidia-ml.so.1")
        except OSError:
            return None
        if library.nvmlInit_v2() != 0:
            return None
        handle = ctypes.c_void_p()
        if library.nvmlDeviceGetHandleByUUID(uuid.encode(), ctypes.byref(handle)) != 0:
            return None
        return cls(library, handle)

    def read(self) -> Reading:
        memory = _NvmlMemory()
        status = self.nvml.nvmlDeviceGetMemoryInfo(self.handle, ctypes.byref(memory))
        if status:
            raise RuntimeError(f"nvmlDeviceGetMemoryInfo failed with NVML status {status}")
        return Reading(memory.total, memory.free, memory.used)


def dashed_uuid(path: str) -> Optional[str]:
    """``GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`` of a device path that
    names a UUID, dashed or not (IREE's Vulkan driver writes 32 hex digits
    after ``GPU-``, its cuda driver the dashed form), else None."""
    if not path.startswith("GPU-"):
        return None
    digits = path[4:].replace("-", "").lower()
    if len(digits) != 32 or any(c not in "0123456789abcdef" for c in digits):
        return None
    return f"GPU-{digits[:8]}-{digits[8:12]}-{digits[12:16]}-{digits[16:20]}-{digits[20:]}"


def counter_for(kind: str, name: str, path: str):
    """The counter of a device of IREE kind ``kind`` whose driver names it
    ``name`` with path ``path`` (the runtime's device info), or None (see
    the module's doc)."""
    if kind in HOST_MEMORY_KINDS:
        return HostCounter()
    uuid = dashed_uuid(path)
    if kind in ("cuda", "vulkan") and uuid is not None:
        counter = NvmlCounter.of_uuid(uuid)
        if counter is not None:
            return counter
    if kind == "vulkan" and any(word in name.lower() for word in CPU_VULKAN_NAMES):
        return HostCounter()
    return None


def open_cost(counter, before: Reading, after: Reading, allocator_live: int) -> int:
    """What opening the device cost, from the counter's readings before the
    device was opened and after (measure.py says when) and the bytes IREE's
    allocator still holds there: on a GPU the counter's growth (which holds
    the allocator's bytes; never less than them); on the host the growth of
    the process's anonymous memory plus the allocator's bytes (a block IREE
    allocates but has not touched is not resident yet); without a counter
    (None), the allocator's bytes alone."""
    if counter is None:
        return allocator_live
    grown = max(after.used - before.used, 0)
    return grown + allocator_live if counter.host_memory else max(grown, allocator_live)


class CudaMemory:
    """CUDA device 0's memory in use (total less free, cuMemGetInfo through
    the CUDA driver), sampled in a thread while ``with`` lasts: ``peak``
    less ``before``. Retaining the device's primary context to read it
    costs memory of its own; ``idle``, read through NVML before that (None
    without NVML), is what the device used before this process opened it,
    so ``peak - idle`` is all this process holds there with the device
    open (the context and the runtime's own included)."""

    def __init__(self):
        self.cuda = ctypes.CDLL("libcuda.so.1")
        context = ctypes.c_void_p()
        device = ctypes.c_int()
        self._check(self.cuda.cuInit(0), "cuInit")
        self._check(self.cuda.cuDeviceGet(ctypes.byref(device), 0), "cuDeviceGet")
        nvml = self._nvml(device)
        self.idle = None if nvml is None else nvml.read().used
        self._check(self.cuda.cuDevicePrimaryCtxRetain(ctypes.byref(context), device), "cuDevicePrimaryCtxRetain")
        self.context = context
        self.cuda.cuCtxSetCurrent(context)
        # What cuMemGetInfo counts beyond NVML's used memory (the two may
        # differ by memory the driver reserves), read at one moment, so that
        # ``held`` compares like with like.
        self.offset = 0 if nvml is None else self.used() - nvml.read().used
        self.before = self.peak = 0
        self._stop = threading.Event()

    def _nvml(self, device: ctypes.c_int) -> Optional[NvmlCounter]:
        """NVML's counter of ``device`` (found by its UUID), or None."""
        uuid = (ctypes.c_ubyte * 16)()
        if self.cuda.cuDeviceGetUuid(uuid, device):
            return None
        return NvmlCounter.of_uuid(dashed_uuid("GPU-" + bytes(uuid).hex()) or "")

    @staticmethod
    def _check(status: int, what: str) -> None:
        if status:
            raise RuntimeError(f"{what} failed with CUDA status {status}")

    def used(self) -> int:
        free, total = ctypes.c_size_t(), ctypes.c_size_t()
        self._check(self.cuda.cuMemGetInfo_v2(ctypes.byref(free), ctypes.byref(total)), "cuMemGetInfo")
        return total.value - free.value

    def _sample(self) -> None:
        self.cuda.cuCtxSetCurrent(self.context)
        while not self._stop.wait(0.002):
            self.peak = max(self.peak, self.used())

    def __enter__(self) -> "CudaMemory":
        self.cuda.cuCtxSetCurrent(self.context)
        self.before = self.peak = self.used()
        self._stop.clear()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self.used())

    @property
    def grown(self) -> int:
        """The peak less what was in use when ``with`` began."""
        return self.peak - self.before

    @property
    def held(self) -> Optional[int]:
        """The peak less what the device used before this process opened it
        (None: unknown, without NVML)."""
        return None if self.idle is None else self.peak - self.offset - self.idle
