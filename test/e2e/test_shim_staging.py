"""Moves the shim makes itself (runtime_shim/staging.py): a numpy array
placed on a device with its own memory, and a value read back from one,
go through slabs of the module's pool, kept between moves, not through a
new pinned buffer per move. A staged pair of CPUs (``staged_transfers``)
takes the GPU's path here; gpu_kit's shim and resident cases run it on a
GPU."""

from __future__ import annotations

import gc

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
    return m._result_pool.idle_count(staging.pool_key(device))


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


def test_a_read_back_reuses_the_memory_of_one_dropped(module):
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


def test_a_view_of_a_read_back_keeps_its_memory(module):
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

    monkeypatch.setattr(staging.values, "queue_copy", times_out)
    before = len(result_storage._QUARANTINED)
    with pytest.raises(TimeoutError):
        y.to_host()
    assert len(result_storage._QUARANTINED) == before + 1
    monkeypatch.undo()
    gc.collect()
    assert idle(module) == 0  # the device may still write it: never lent again
    np.testing.assert_array_equal(y.to_host(), values_of(64, 6) ** 2)


def test_a_pool_that_lends_nothing_leaves_the_allocators_path(module, monkeypatch):
    monkeypatch.setattr(module._result_pool, "lend", lambda *args: None)
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
