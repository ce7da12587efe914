"""What opening a device costs, and its memory: the profile's
``reserved_bytes``, ``memory_bytes`` and ``free_bytes``, measured in a
process of their own (``python -m mdc.profiler.open_cost URI KIND VMFB``,
which prints them as JSON), before mdc-profile opens the device to time
it.

How: a counter of the device's memory (memory.py) is read before the
IREE device is created; then the device is created, the probe module
(the one mdc-profile times with) loaded, @tiny called once, its
arguments and result released, and the counter read again. The total
and free memory are the first reading's.

* On an NVIDIA GPU (cuda; vulkan on NVIDIA's driver) the counter is
  NVML's device-wide use, which needs no CUDA context of its own: the
  growth is the context IREE creates, its pools and blocks, the probe's
  kernels and what one small call leaves behind. Read through
  cuMemGetInfo instead, the reader's own context would already be there
  before the open, and the context, most of the cost, would go uncounted.
  Another process that allocates on the GPU meanwhile is counted too:
  profile an idle GPU.
* On the host (local; lavapipe, whose device memory is host memory) the
  counter is the process's anonymous resident memory, read before the
  driver's instance is made, plus what IREE's allocator holds (lavapipe's
  Vulkan device allocates a 64 MiB block on creation that nothing has
  touched yet, so it is not resident). In mdc-profile's own process the
  compiler has just freed memory that the driver's heap would reuse,
  hiding its growth: hence a process of its own, which has run nothing
  but the imports.
* Without a counter (another vendor's GPU; hip): what IREE's allocator
  holds, and the memory unknown.

A larger program's kernels and pools take more than the probe's (bench
placement measured 32 MiB beyond an all-CPU module on an H100): the
margin of ``--gpu-memory=auto`` is there for that.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import tempfile
from typing import Optional

from . import memory


@dataclasses.dataclass(frozen=True)
class MemoryCosts:
    """A device's memory as measured (see the module's doc): its total and
    free memory before it was opened (None: unknown), what opening it cost,
    and how that was read."""

    memory_bytes: Optional[int]
    free_bytes: Optional[int]
    reserved_bytes: int
    how: str


class OpenCostFailed(Exception):
    """The measuring process failed (its last line says why)."""


def measure_apart(uri: str, kind: str, vmfb: bytes) -> MemoryCosts:
    """``measure`` in a Python process of its own (see the module's doc)."""
    import mdc

    # The folder mdc is imported from, first on the child's path: a
    # checkout that a script put on sys.path (a GPU machine with only the
    # runtime wheel) is not installed, and the child would not find it.
    root = os.path.dirname(os.path.dirname(os.path.abspath(mdc.__file__)))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)}
    with tempfile.NamedTemporaryFile(suffix=".vmfb") as f:
        f.write(vmfb)
        f.flush()
        r = subprocess.run([sys.executable, "-m", "mdc.profiler.open_cost", uri, kind, f.name],
                           capture_output=True, text=True, timeout=600, env=env)
    if r.returncode != 0:
        lines = (r.stderr or r.stdout).strip().splitlines()
        raise OpenCostFailed(lines[-1] if lines else f"exit status {r.returncode}")
    return MemoryCosts(**json.loads(r.stdout.strip().splitlines()[-1]))


def measure(uri: str, kind: str, vmfb: bytes) -> MemoryCosts:
    """The memory of device ``uri`` (of IREE kind ``kind``), and what
    opening it and one small call of ``vmfb``'s @tiny cost (see the
    module's doc). Opens the device: call it in a process that has not."""
    import gc

    import numpy as np

    from mdc.runtime_shim.devices import open_device

    from . import probes
    from .measure import DeviceProbe, Timer

    early = memory.HostCounter().read()  # before the driver's instance: its heap is part of the cost
    name, path = device_info(uri)
    counter = memory.counter_for(kind, name, path)
    before = None if counter is None else early if counter.host_memory else counter.read()
    device = open_device(uri)
    probe = DeviceProbe(device, kind, probes.SMALL, Timer(0.0, 1), vmfb)
    probe.time_call("tiny", [np.full(probes.STEP_SHAPE, 0.25, np.float32)] * 2, once=True)
    gc.collect()  # the call's arguments and result released
    stats = device.allocator.statistics
    live = max(stats["device_bytes_allocated"] - stats["device_bytes_freed"], 0)
    if counter is None:
        return MemoryCosts(None, None, live, "IREE's allocator only (no counter of the device's memory here)")
    after = counter.read()
    return MemoryCosts(before.total, before.free, memory.open_cost(counter, before, after, live), counter.what)


def device_info(uri: str) -> tuple[str, str]:
    """(name, path) of the device ``uri`` opens, as its driver lists it
    (the first listed for a URI without a path, the Nth for ``driver://N``,
    the one whose path it names otherwise); ("", "") where none matches."""
    import iree.runtime as rt

    driver, _, path = uri.partition("://")
    try:
        listed = rt.get_driver(driver.split(":")[0]).query_available_devices()
    except (RuntimeError, ValueError):
        return "", ""
    if not path:
        chosen = listed[0] if listed else None
    elif path.isdigit():
        chosen = listed[int(path)] if int(path) < len(listed) else None
    else:
        wanted = memory.dashed_uuid(path) or path
        chosen = next((d for d in listed if (memory.dashed_uuid(d["path"]) or d["path"]) == wanted), None)
    return ("", "") if chosen is None else (chosen.get("name", ""), chosen.get("path", ""))


def main(argv: list[str]) -> int:
    """The measuring process: MemoryCosts as one line of JSON, or one line
    on stderr and exit status 1."""
    from mdc.runtime_shim.errors import ShimError, short

    uri, kind, path = argv
    with open(path, "rb") as f:
        vmfb = f.read()
    try:
        costs = measure(uri, kind, vmfb)
    except ShimError as e:
        print(str(e), file=sys.stderr)
        return 1
    except Exception as e:  # a runtime failure inside IREE: one line
        print(f"measuring the memory of device '{uri}' failed: {short(e)}", file=sys.stderr)
        return 1
    print(json.dumps(dataclasses.asdict(costs)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
