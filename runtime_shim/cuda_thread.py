"""Which CUDA context a thread that calls into a module has current.

IREE 3.13's CUDA HAL makes a device's primary context current on the
thread that creates the device, and on no other: its allocator
(cuMemAlloc, cuMemHostAlloc, cuMemHostRegister) and its queue run under
whatever context the calling thread has. A call of the module from any
other thread then fails with CUDA_ERROR_INVALID_CONTEXT ("failed to
allocate buffer"): measured on an H200, in the lanes of pipelined calls
(pipelined.py) and in a plain call from a new thread. gpu_kit keeps a
canary of the stock failure (iree.runtime alone). IREE's hip driver sets
its context around each operation itself, so only cuda devices need this.

Module records the context its loading thread has current once its
devices exist (``ThreadContext.of_this_thread``) and, on every entry that
reaches a device from another thread (``ThreadContext.bind``), makes it
current there when another (or none) is: any thread then sees the devices
as the loading thread does. The loading thread itself is left as IREE left
it (no cost on the common path). The context is left current afterwards; a
caller mixing other CUDA work on the same thread (PyTorch sets its device
before each of its own calls) is not affected by that. IREE frees memory
under whatever context is current and ignores a failure (the memory would
stay allocated, or stay registered), so what frees memory on another
thread (a released or collected result, a pool's slab) binds first too,
quietly (``bind_quietly``).

With two cuda devices in one module the loading thread ends with the
context of the device created last, for both; other threads get the same,
which is what the loading thread has in stock IREE.
"""

from __future__ import annotations

import ctypes
import threading
from typing import Optional

from .errors import ShimError

_CUDA_SUCCESS = 0
_libcuda: Optional[ctypes.CDLL] = None


def _cuda() -> Optional[ctypes.CDLL]:
    """The CUDA driver library IREE's cuda driver loaded (None without one)."""
    global _libcuda
    if _libcuda is None:
        try:
            lib = ctypes.CDLL("libcuda.so.1")
        except OSError:
            return None
        lib.cuCtxGetCurrent.argtypes = [ctypes.POINTER(ctypes.c_void_p)]
        lib.cuCtxGetCurrent.restype = ctypes.c_int
        lib.cuCtxSetCurrent.argtypes = [ctypes.c_void_p]
        lib.cuCtxSetCurrent.restype = ctypes.c_int
        _libcuda = lib
    return _libcuda


def current_context() -> Optional[int]:
    """The CUDA context current on the calling thread (its handle), or None."""
    lib = _cuda()
    if lib is None:
        return None
    handle = ctypes.c_void_p()
    if lib.cuCtxGetCurrent(ctypes.byref(handle)) != _CUDA_SUCCESS:
        return None
    return handle.value or None


class ThreadContext:
    """A CUDA context to make current on the threads that call a module."""

    __slots__ = ("handle", "loader")

    def __init__(self, handle: int):
        self.handle = handle
        self.loader = threading.get_ident()  # the thread it was found current on

    @classmethod
    def of_this_thread(cls) -> Optional["ThreadContext"]:
        """The context current on this thread, or None where it has none."""
        handle = current_context()
        return cls(handle) if handle else None

    def bind(self) -> None:
        """Make the context current on the calling thread, if it is another
        thread than the loading one and the context is not current there."""
        if threading.get_ident() == self.loader or current_context() == self.handle:
            return
        status = _cuda().cuCtxSetCurrent(self.handle)
        if status != _CUDA_SUCCESS:
            raise ShimError(f"cannot make the module's CUDA context current on this thread "
                            f"(cuCtxSetCurrent returned CUDA error {status})")

    def bind_quietly(self) -> None:
        """``bind`` before memory is freed: a failure (CUDA torn down at
        exit) leaves the thread as it was rather than stopping the free."""
        try:
            self.bind()
        except Exception:  # noqa: BLE001  (also at interpreter teardown)
            pass
