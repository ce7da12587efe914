"""How this process's C allocator treats large host buffers.

A value that arrives on a local (CPU) device is a fresh host buffer on every
call: IREE's local allocator is the C heap, with no pool. glibc serves a
request above its mmap threshold (at most 32 MiB) with a new mmap and gives
it back with munmap when freed, so every call pays first-touch page faults
on the whole buffer again. On the H200 machine that cost 151-217 ms for
256 MiB, against 41-72 ms to copy into an existing buffer (bench
components, 2026-11-30).

``retain_freed_memory()`` makes glibc serve large requests from its heap and
keep freed memory there, so the next call's buffer reuses pages already
touched. The price: the process keeps its peak host memory until exit
(what a caching allocator does). It changes the whole process, so it is
opt-in (``mdc-run --retain-host-memory``, or a call from the embedding
program), never done on import.
"""

from __future__ import annotations

import ctypes
import ctypes.util

# mallopt parameters (glibc <malloc.h>).
_M_TRIM_THRESHOLD = -1
_M_MMAP_MAX = -4

_applied = False


def retain_freed_memory() -> bool:
    """Keeps freed host memory in this process for reuse. Returns whether
    the C library accepted it (False off glibc)."""
    global _applied
    if _applied:
        return True
    name = ctypes.util.find_library("c")
    if not name:
        return False
    try:
        libc = ctypes.CDLL(name)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    # No new mmap-served chunks: large requests come from the heap. The trim
    # threshold is the largest a C int holds: freed heap memory is kept.
    _applied = bool(mallopt(_M_MMAP_MAX, 0)) and bool(mallopt(_M_TRIM_THRESHOLD, 2**31 - 1))
    return _applied
