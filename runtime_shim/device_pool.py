"""CPU devices are never released: a closed module parks them, a later load
takes them again, and at exit they are left to the operating system.

Why. IREE 3.13 releases a local-task device by waiting, with no deadline
and holding the GIL, until every operation ever queued on it has finished
(the task queue's deinitialisation waits for its scope to go idle). A call
returns once its results are ready, but the program may still have work
queued behind them (the deallocations of its transients, for one). If any
such operation never runs, the release never returns, and nothing in the
process can act any more, not even a Python watchdog thread: issue 47's
hang, in ``Module.close``, with the main thread in a futex inside the
device release and every worker idle. IREE 3.13's local-task has such a
stall, an operation whose wait was satisfied that is never run
(docs/performance-history.md, runs 20-35); test/e2e/test_close_teardown.py
shows a release hanging on an operation left waiting.

So a module's close never destroys a CPU device. The devices go back to a
pool, one list per device URI, and ``open_devices`` takes from it before it
creates one: a process holds at most as many CPU devices as it ever had
open at once, each used by one open module at a time (a device is parked
at most once, however many times it is given back). A module dropped
without ``close`` gives its devices back too, when it is collected
(session.py), rather than have the collector release them. At exit the
parked devices are kept alive on purpose (never deallocated, with the
binding's leak report off), since releasing them then could hang the exit
instead.

A device with an operation stuck on it is parked and handed out again
like any other: the pool does not know, and does not ask, what is queued
on a device. The stuck operation keeps what it holds (its buffers and
semaphores) for the life of the process, and the next module's work on
that device runs beside it (an operation that waits on a semaphore
nobody signals holds up only the work that waits on it;
test/e2e/test_close_teardown.py shows a later load computing right on
such a device). A stall that stopped the device's workers altogether
would stop the next module's work too; nothing here tells such a device
apart.

Only ``local-task`` and ``local-sync`` devices are pooled: a GPU device
(its CUDA context is made current on the thread that created it,
cuda_thread.py) and a Vulkan device (which joins one device group only,
devices.py) are released as before.
"""

from __future__ import annotations

import atexit
import ctypes
import threading
from typing import Optional

import iree.runtime as rt

POOLED_DRIVERS = ("local-task", "local-sync")

# Reentrant: a garbage collection inside the lock may collect a module
# never closed, which parks its devices on the same thread (session.py).
_lock = threading.RLock()
_parked: dict[str, list[rt.HalDevice]] = {}


def pooled(uri: str) -> bool:
    """Whether devices of ``uri`` are parked rather than released."""
    return uri.strip() in POOLED_DRIVERS


def take(uri: str) -> Optional[rt.HalDevice]:
    """A parked device of exactly ``uri``, or None (then create one)."""
    with _lock:
        found = _parked.get(uri)
        return found.pop() if found else None


def park(uri: str, device: rt.HalDevice) -> None:
    """``device``, of ``uri``, no longer used by any module: kept for the
    next load (once: a device parked already is not parked again, so it is
    never handed to two modules)."""
    with _lock:
        found = _parked.setdefault(uri, [])
        if not any(d is device for d in found):
            found.append(device)


def parked_count(uri: Optional[str] = None) -> int:
    with _lock:
        return sum(len(v) for k, v in _parked.items() if uri is None or k == uri)


@atexit.register  # registered before module.py's, so it runs after every module has closed
def _keep_at_exit() -> None:
    """Leave the parked devices to the operating system: one more reference
    each, so that interpreter teardown never releases them."""
    with _lock:
        devices = [d for found in _parked.values() for d in found]
    if not devices:
        return
    for device in devices:
        ctypes.pythonapi.Py_IncRef(ctypes.py_object(device))
    try:  # the binding would list every one of them as a leak
        from iree._runtime_libs import _runtime
        _runtime.disable_leak_checker()
    except (ImportError, AttributeError):
        pass
