"""Closing a module never waits on work left on a CPU device (issue 47).

IREE 3.13 releases a local-task device by waiting, with no deadline and
holding the GIL, for every operation queued on it; one that never runs (the
local-task stall of docs/performance-history.md, runs 20-35) hung
``Module.close``. Here an operation that can never run (it waits on a
semaphore nobody signals) is left on a module's device, the shape of that
stall: stock IREE's release hangs on it, and the module's close must not.
CPU devices are parked instead (runtime_shim/device_pool.py): reused by
later loads (one with stuck work too, which still computes right), never
multiplied, parked once when two threads close a module at once, parked
when a module never closed is collected, and left to the operating system
at exit without a leak report. Each case runs in a fresh process, bounded."""

from __future__ import annotations

import sys

import pytest

from harness.processes import HUNG, run_watched

PAIR = """
func.func public @f(%x: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>})
    -> (tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %y = flow.tensor.transfer %x : tensor<4xf32> to #hal.device.promise<@device_b>
  %z = arith.addf %y, %y : tensor<4xf32>
  %w = flow.tensor.transfer %z : tensor<4xf32> to #hal.device.promise<@device_a>
  return %w : tensor<4xf32>
}
"""

# A queue operation on `device` that never runs: a copy waiting on a
# semaphore nobody signals.
STUCK = """
import iree.runtime as rt
def leave_stuck_work(device):
    sem = device.create_semaphore(0)
    usage, memory = int(rt.BufferUsage.DEFAULT), int(rt.MemoryType.DEVICE_LOCAL)
    a, b = (device.allocator.allocate_buffer(memory_type=memory, allowed_usage=usage, allocation_size=64)
            for _ in range(2))
    device.queue_copy(a, b, wait_semaphores=rt.HalFence.create_at(sem, 1),
                      signal_semaphores=rt.HalFence.create_at(sem, 2))
"""


def _run(code: str, timeout: float = 60):
    r = run_watched([sys.executable, "-c", STUCK + code], timeout=timeout, quiet=None)
    assert r.returncode != HUNG, f"hung:\n{r.stdout}\n{r.stderr}"
    return r


@pytest.fixture(scope="module")
def pair(build_vmfb):
    return build_vmfb("close_pair", PAIR, ("a=local[0]", "b=local[1]"), links=("a:b=staged",))


def test_the_stock_release_hangs_on_work_that_never_runs():
    """The runtime's behaviour the shim works around (a canary: when a new
    IREE stops hanging here, device_pool.py can go)."""
    code = STUCK + """
device = rt.get_driver("local-task").create_default_device()
leave_stuck_work(device)
print("releasing", flush=True)
del device
print("released", flush=True)
"""
    r = run_watched([sys.executable, "-c", code], timeout=120, quiet=8)
    assert r.returncode == HUNG and r.stdout == "releasing\n", r
    line = code.splitlines().index("del device") + 1
    assert f'File "<string>", line {line} in <module>' in r.stderr, r.stderr


@pytest.mark.parametrize("devices", [["local-task", "local-sync"], ["local-task", "local-task"]])
def test_close_returns_with_work_left_on_a_cpu_device(pair, devices):
    r = _run(f"""
import numpy as np
from mdc.runtime_shim import load
m = load({str(pair)!r}, {devices!r})
assert list(m.f(np.arange(4, dtype=np.float32))) == [0, 2, 4, 6]
for uri, device in zip(m.uris, m.devices):
    if uri == "local-task":  # (local-sync runs a queue operation at once: it would wait right here)
        leave_stuck_work(device)
m.close()
print("closed", flush=True)
""")
    assert r.returncode == 0 and r.stdout == "closed\n", r
    assert r.stderr == "", r.stderr  # no leak report at exit


def test_cpu_devices_are_reused_distinct_and_not_multiplied(pair):
    r = _run(f"""
import numpy as np
from mdc.runtime_shim import load, device_pool
seen = set()
for i in range(20):
    with load({str(pair)!r}, ["local-task", "local-task"]) as m:
        a, b = m.devices
        assert a is not b
        seen |= {{id(a), id(b)}}
        assert list(m.f(np.ones(4, np.float32))) == [2] * 4
    assert device_pool.parked_count("local-task") == 2
with load({str(pair)!r}, ["local-task", "local-task"]) as m, load({str(pair)!r}, ["local-task", "local-sync"]) as n:
    assert device_pool.parked_count() == 0
print("devices", len(seen), "parked", device_pool.parked_count("local-task"), device_pool.parked_count("local-sync"))
""")
    assert r.returncode == 0, r
    assert r.stdout == "devices 2 parked 3 1\n", r.stdout
    assert r.stderr == "", r.stderr


def test_a_module_that_fails_to_load_gives_its_devices_back(tmp_path):
    bad = tmp_path / "bad.vmfb"
    bad.write_bytes(b"not a module")
    r = _run(f"""
from mdc.runtime_shim import load, device_pool
from mdc.runtime_shim.errors import ShimError
try:
    load({str(bad)!r}, ["local-task"])
except ShimError:
    pass
print("parked", device_pool.parked_count())
""")
    assert r.returncode == 0, r
    assert r.stdout in ("parked 0\n", "parked 1\n"), r.stdout


def test_a_device_with_stuck_work_is_handed_out_again_and_computes_right(pair):
    """What the pool does with such a device (device_pool.py's docstring):
    it parks it and the next load takes it, and the next module's work runs
    beside the stuck operation."""
    r = _run(f"""
import numpy as np
from mdc.runtime_shim import load, device_pool
m = load({str(pair)!r}, ["local-task", "local-task"])
first = [id(d) for d in m.devices]
for device in m.devices:
    leave_stuck_work(device)
m.close()
x = np.arange(4, dtype=np.float32)
for i in range(3):
    with load({str(pair)!r}, ["local-task", "local-task"]) as m:
        assert sorted(id(d) for d in m.devices) == sorted(first), "not the parked devices"
        assert list(m.f(x + i)) == list(2 * (x + i))
print("parked", device_pool.parked_count("local-task"), flush=True)
""")
    assert r.returncode == 0 and r.stdout == "parked 2\n", r
    assert r.stderr == "", r.stderr


def test_a_module_never_closed_gives_its_devices_back_when_collected(pair):
    """Dropped without close, with work stuck on its device: collected, it
    parks its devices (a release by the collector would hang on that work)."""
    r = _run(f"""
import gc
import numpy as np
from mdc.runtime_shim import load, device_pool
m = load({str(pair)!r}, ["local-task", "local-sync"])
assert list(m.f(np.ones(4, np.float32))) == [2] * 4
leave_stuck_work(m.devices[0])
devices = [id(d) for d in m.devices]
del m
gc.collect()
print("parked", device_pool.parked_count("local-task"), device_pool.parked_count("local-sync"), flush=True)
with load({str(pair)!r}, ["local-task", "local-sync"]) as m:
    assert [id(d) for d in m.devices] == devices
    assert list(m.f(np.ones(4, np.float32))) == [2] * 4
print("reused", flush=True)
""")
    assert r.returncode == 0 and r.stdout == "parked 1 1\nreused\n", r
    assert r.stderr == "", r.stderr


def test_two_threads_closing_at_once_close_it_once(pair):
    """Each close returns once the module is closed, its devices parked
    once each. The first close, parking a device, waits for the second
    close to come that far too (up to 5 s: with the close lock it cannot);
    without the lock the second returned at once, its devices not yet
    parked."""
    r = _run(f"""
import threading
import numpy as np
from mdc.runtime_shim import load, device_pool
m = load({str(pair)!r}, ["local-task", "local-task"])
assert list(m.f(np.ones(4, np.float32))) == [2] * 4
both_inside = threading.Barrier(2, timeout=5)
park = device_pool.park
def park_when_both_inside(uri, device):
    try:
        both_inside.wait()
    except threading.BrokenBarrierError:
        pass
    park(uri, device)
device_pool.park = park_when_both_inside
seen = []
def close():
    m.close()
    seen.append((m.closed, device_pool.parked_count("local-task")))
threads = [threading.Thread(target=close) for _ in range(2)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(seen, device_pool.parked_count("local-task"), flush=True)
""")
    assert r.returncode == 0, r
    assert r.stdout == "[(True, 2), (True, 2)] 2\n", r.stdout
    assert r.stderr == "", r.stderr
