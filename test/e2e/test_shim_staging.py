"""Moves the shim makes itself (runtime_shim/staging.py): a numpy array
placed on a device with its own memory, and a value read back from one,
go through slabs of the module's pool, kept between moves, not through a
new pinned buffer per move. A staged pair of CPUs (``staged_transfers``)
takes the GPU's path here; gpu_kit's shim and resident cases run it on a
GPU."""

from __future__ import annotations

import gc
import os
import signal

import numpy as np
import pytest

from mdc.runtime_shim import load, result_storage, staging

PROGRAM = """
func.func public @square_on_b(%x: tensor<?xf32> {iree.abi.affinity = #hal.device.promise<@device_a>})
    -> (tensor<?xf32> {iree.abi.affinity = #hal.device.promise<@device_b>}) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  %sq = arith.mulf %x, %x : tensor<?xf32>
  %on_b = flow.tensor.transfer %sq : tensor<?xf32>{%n} to #hal.device.promise<@device_b>
  return %on_b : tensor<?xf32>
}
func.func public @negate_on_b(%x: tensor<?xf32> {iree.abi.affinity = #hal.device.promise<@device_b>})
    -> (tensor<?xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  %neg = arith.negf %x : tensor<?xf32>
  %on_a = flow.tensor.transfer %neg : tensor<?xf32>{%n} to #hal.device.promise<@device_a>
  return %on_a : tensor<?xf32>
}
"""


def values_of(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(n).astype(np.float32)


@pytest.fixture
def module(build_vmfb):
    path = build_vmfb("shim_staging", PROGRAM, ("a=local[0]", "b=local[1]"), links=("a:b=staged",))
    m = load(str(path), ["local-task", "local-task"], staged_transfers=True)
    yield m
    m.close()


def idle(m, device: int = 1) -> int:
    """Idle slabs registered with device ``device`` (b: 1)."""
    return m._pool.idle_count(staging.pool_key(device))


@pytest.mark.parametrize("n", [1, 1000, 300_000])
def test_values_read_back_stay_right_while_held(module, n):
    f = module.function("square_on_b")
    inputs = [values_of(n, seed) for seed in range(4)]
    results = [f.call_on_devices(x)[0] for x in inputs]
    held = [r.to_host() for r in results]  # each in a slab of its own while held
    addresses = {h.ctypes.data for h in held}
    assert len(addresses) == len(held)
    for x, h in zip(inputs, held):
        np.testing.assert_array_equal(h, x * x)
    del results
    gc.collect()
    for x, h in zip(inputs, held):
        np.testing.assert_array_equal(h, x * x)


@pytest.fixture
def over_slabs(monkeypatch):
    """Every read back returned over its slab, however small."""
    monkeypatch.setattr(staging, "COPY_OUT_BYTES", 0)


def test_a_read_back_reuses_the_memory_of_one_dropped(module, over_slabs):
    f = module.function("square_on_b")
    (y,) = f.call_on_devices(values_of(4096, 0))
    first = y.to_host()
    address = first.ctypes.data
    assert idle(module) == 0
    del first
    gc.collect()
    assert idle(module) == 1
    x = values_of(4096, 1)
    (y,) = f.call_on_devices(x)
    second = y.to_host()
    assert second.ctypes.data == address
    np.testing.assert_array_equal(second, x * x)


def test_a_view_of_a_read_back_keeps_its_memory(module, over_slabs):
    f = module.function("square_on_b")
    x = values_of(1024, 2)
    (y,) = f.call_on_devices(x)
    part = y.to_host()[10:20]
    gc.collect()
    assert idle(module) == 0
    (y,) = f.call_on_devices(values_of(1024, 3))
    y.to_host()
    np.testing.assert_array_equal(part, (x * x)[10:20])


@pytest.mark.parametrize("n", [3, 1024, 100_000])
def test_an_array_placed_on_the_device_goes_through_a_slab(module, n):
    f = module.function("negate_on_b")
    x = values_of(n, 4)
    assert idle(module) == 0
    np.testing.assert_array_equal(f(x), -x)
    assert idle(module) == 1  # the slab went back as soon as the copy was done
    placed = f.place(0, values_of(n, 5))
    assert idle(module) == 1  # the same slab again
    np.testing.assert_array_equal(f(placed), -values_of(n, 5))
    placed.release()


def test_a_failed_copy_quarantines_its_slab(module, monkeypatch):
    f = module.function("square_on_b")
    (y,) = f.call_on_devices(values_of(64, 6))

    def times_out(*args):
        raise TimeoutError("timed out after 0 s waiting for a transfer")

    monkeypatch.setattr(staging.values, "wait", times_out)
    before = len(result_storage._QUARANTINED)
    with pytest.raises(TimeoutError):
        y.to_host()
    assert len(result_storage._QUARANTINED) == before + 1
    monkeypatch.undo()
    gc.collect()
    assert idle(module) == 0  # the device may still write it: never lent again
    np.testing.assert_array_equal(y.to_host(), values_of(64, 6) ** 2)


def test_a_pool_that_lends_nothing_leaves_the_allocators_path(module, monkeypatch):
    monkeypatch.setattr(module._pool, "lend", lambda *args: None)
    x = values_of(500, 7)
    (y,) = module.function("square_on_b").call_on_devices(x)
    np.testing.assert_array_equal(y.to_host(), x * x)
    np.testing.assert_array_equal(module.function("negate_on_b")(x), -x)


@pytest.mark.parametrize("n", [0, 1, 4095, 4096, 5 * 4096 + 7, 1 << 16])
@pytest.mark.parametrize("threshold", [0, 1 << 40])
def test_copy_bytes_copies_every_byte(monkeypatch, n, threshold):
    """On several threads (a threshold of 0, parts of one page) or on one."""
    monkeypatch.setattr(staging, "PARALLEL_COPY_BYTES", threshold)
    monkeypatch.setattr(staging, "COPY_PART", 4096)
    monkeypatch.setattr(staging, "_usable_cpus", lambda: 8)
    source = np.random.default_rng(n).integers(0, 256, n, dtype=np.uint8)
    target = np.full(n + 100, 7, np.uint8)
    staging.copy_bytes(target, source)
    np.testing.assert_array_equal(target[:n], source)
    assert (target[n:] == 7).all()


def test_a_large_array_is_placed_right(module, monkeypatch):
    """Placed through a copy split over threads."""
    monkeypatch.setattr(staging, "PARALLEL_COPY_BYTES", 1 << 16)
    monkeypatch.setattr(staging, "COPY_PART", 1 << 14)
    monkeypatch.setattr(staging, "_usable_cpus", lambda: 4)
    x = values_of(123_457, 8)
    np.testing.assert_array_equal(module.function("negate_on_b")(x), -x)


def test_a_small_read_back_holds_no_slab(module):
    """At most COPY_OUT_BYTES: copied out, its slab back at once."""
    x = values_of(1000, 9)
    (y,) = module.function("square_on_b").call_on_devices(x)
    held = y.to_host()
    assert idle(module) == 1
    assert held.flags.writeable
    np.testing.assert_array_equal(held, x * x)


def test_a_placement_never_takes_the_memory_of_a_held_read_back(module, over_slabs):
    x = values_of(2048, 10)
    (y,) = module.function("square_on_b").call_on_devices(x)
    held = y.to_host()
    other = values_of(2048, 11)
    np.testing.assert_array_equal(module.function("negate_on_b")(other), -other)  # placed on b, same size
    np.testing.assert_array_equal(held, x * x)


class _RefusesFirstCopy:
    """A device whose first queue copy is refused at submission."""

    def __init__(self, device):
        self._device, self.refused = device, 0

    def __getattr__(self, name):
        return getattr(self._device, name)

    def queue_copy(self, *args, **kwargs):
        if not self.refused:
            self.refused += 1
            raise RuntimeError("queue copy refused")
        return self._device.queue_copy(*args, **kwargs)


@pytest.mark.parametrize("move", ["read_back", "place"])
def test_a_copy_refused_at_submission_takes_the_allocators_path(module, move):
    mover = module._movers[1]
    device = _RefusesFirstCopy(mover.device)
    mover.device = device
    try:
        before = len(result_storage._QUARANTINED)
        x = values_of(300, 12)
        if move == "read_back":
            (y,) = module.function("square_on_b").call_on_devices(x)
            np.testing.assert_array_equal(y.to_host(), x * x)
        else:
            np.testing.assert_array_equal(module.function("negate_on_b")(x), -x)
        assert device.refused == 1
        assert len(result_storage._QUARANTINED) == before  # nothing was in flight
        assert idle(module) == 1  # the slab went back
    finally:
        mover.device = device._device


def test_a_key_is_written_off_only_if_its_first_import_is_refused():
    pool = result_storage.ResultPool()
    answers = iter([object(), None, object()])
    assert pool.lend("imports", 10, lambda memory: next(answers)) is not None
    assert pool.lend("imports", 1 << 20, lambda memory: next(answers)) is None  # refused once
    assert pool.lend("imports", 1 << 20, lambda memory: next(answers)) is not None  # asked again
    assert pool.lend("never", 10, lambda memory: None) is None
    assert pool.lend("never", 10, lambda memory: object()) is None  # written off
    pool.close()


def test_a_forked_child_copies_on_threads_of_its_own(monkeypatch):
    monkeypatch.setattr(staging, "PARALLEL_COPY_BYTES", 1 << 16)
    monkeypatch.setattr(staging, "COPY_PART", 1 << 14)
    monkeypatch.setattr(staging, "_usable_cpus", lambda: 4)
    source = np.arange(1 << 17, dtype=np.uint8)
    target = np.empty_like(source)
    staging.copy_bytes(target, source)  # the parent's threads exist now
    pid = os.fork()
    if pid == 0:  # the child: a hang ends in SIGALRM
        signal.alarm(30)
        child_target = np.zeros_like(source)
        staging.copy_bytes(child_target, source)
        os._exit(0 if np.array_equal(child_target, source) else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def test_close_lets_go_of_every_movers_device(build_vmfb):
    """A module's movers (movers.py), one per device, chosen at load, hold
    no device once it closes: its session releases them."""
    path = build_vmfb("shim_staging", PROGRAM, ("a=local[0]", "b=local[1]"), links=("a:b=staged",))
    m = load(str(path), ["local-task", "local-sync"])
    chosen = m._movers
    assert [type(x).__name__ for x in chosen] == ["SharedMover", "SharedMover"]
    assert [x.device for x in chosen] == list(m.devices)
    m.close()
    assert [x.device for x in chosen] == [None, None]
