"""The movers (runtime_shim/movers.py): which one a device gets at load,
and that each places, reads back and lends as movers.py's docstring says.
The moves run on a local-sync device (a StagedMover on it takes the GPU's
path, as load's staged_transfers does), and on lavapipe's Vulkan device
for memory the host cannot map; no compiled program is needed."""

from __future__ import annotations

import gc

import numpy as np
import pytest
import iree.runtime as rt

from mdc.runtime_shim import device_pool, devices, movers, result_storage, staging, values
from mdc.runtime_shim.movers import SharedMover, StagedMover

F32 = int(rt.HalElementType.FLOAT_32)


@pytest.fixture(scope="module")
def device():
    """A local-sync device, taken from and parked in the shim's pool (never
    released: device_pool.py)."""
    found = device_pool.take("local-sync") or devices.open_device("local-sync")
    yield found
    device_pool.park("local-sync", found)


@pytest.fixture
def pool():
    made = result_storage.ResultPool()
    yield made
    made.close()


def shared(device, pool) -> movers.Mover:
    return movers.choose(0, "local-sync", device, pool, timeout_s=30)


def staged(device, pool, **options) -> movers.Mover:
    return movers.choose(1, "local-sync", device, pool, timeout_s=30, staged_transfers=True, **options)


def values_of(n: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(n).astype(np.float32)


def no_slab(*args, **kwargs):
    raise AssertionError("this move takes no slab of the pool")


def refused(*args, **kwargs):
    raise AssertionError("this move does not go this way")


class _Recording:
    """A device that counts its queue allocations and refuses its first
    ``refuse`` queue copies at submission."""

    def __init__(self, device, refuse: int = 0):
        self._device, self.allocas, self.refuse = device, 0, refuse

    def __getattr__(self, name):
        return getattr(self._device, name)

    def queue_alloca(self, *args, **kwargs):
        self.allocas += 1
        return self._device.queue_alloca(*args, **kwargs)

    def queue_copy(self, *args, **kwargs):
        if self.refuse:
            self.refuse -= 1
            raise RuntimeError("queue copy refused")
        return self._device.queue_copy(*args, **kwargs)


# -- the choice, at load ------------------------------------------------------


@pytest.mark.parametrize("uri,staged_transfers,kind,shares,every_read", [
    ("local-task", False, SharedMover, True, False),
    ("local-sync", False, SharedMover, True, False),
    ("local-task", True, StagedMover, True, True),
    ("cuda", False, StagedMover, False, False),
    ("cuda://1", False, StagedMover, False, False),
    ("hip:0", False, StagedMover, False, False),
    ("vulkan", True, StagedMover, False, True),
])
def test_a_device_gets_its_mover_by_its_kind(uri, staged_transfers, kind, shares, every_read):
    stand_in = object()  # chosen from the URI alone: the device is only kept
    mover = movers.choose(3, uri, stand_in, None, timeout_s=5, staged_transfers=staged_transfers)
    assert type(mover) is kind
    assert (mover.shares_host_memory, mover.stages_every_read) == (shares, every_read)
    assert (mover.index, mover.device, mover.timeout_s) == (3, stand_in, 5)


def test_one_mover_per_device_in_the_order_given(pool):
    found = movers.for_devices(["local-task", "cuda", "local-sync", "cuda://1"], ["a", "b", "c", "d"], pool,
                               timeout_s=7, staged_transfers=False, stream_ordered=(1,))
    assert [type(m) for m in found] == [SharedMover, StagedMover, SharedMover, StagedMover]
    assert [(m.index, m.device, m.pool, m.timeout_s) for m in found] == [
        (i, d, pool, 7) for i, d in enumerate("abcd")]
    assert [found[1].stream_ordered, found[3].stream_ordered] == [True, False]


# -- a CPU device: shared memory ----------------------------------------------


def test_a_shared_mover_imports_an_aligned_array(device, pool, monkeypatch):
    monkeypatch.setattr(pool, "lend", no_slab)
    mover = shared(device, pool)
    x = values.aligned_array(np.arange(64, dtype=np.float32))
    view = mover.place(x, F32)
    x[0] = 42  # visible through the view: it is the array's own memory
    got = mover.read(view)
    assert got[0] == 42
    np.testing.assert_array_equal(got[1:], np.arange(1, 64, dtype=np.float32))
    got[1] = -1  # the read is a copy
    assert x[1] == 1


def test_a_shared_mover_copies_an_array_it_cannot_import(device, pool, monkeypatch):
    monkeypatch.setattr(pool, "lend", no_slab)
    raw = values.aligned_array(np.arange(65, dtype=np.float32))
    x = raw[1:]  # 4 bytes past a 64-byte boundary
    view = shared(device, pool).place(x, F32)
    x[0] = 42  # a copy: the view does not change
    np.testing.assert_array_equal(shared(device, pool).read(view), np.arange(1, 65, dtype=np.float32))


@pytest.mark.parametrize("choose", [shared, staged])
def test_an_empty_array_is_placed_and_read_back(device, pool, choose):
    mover = choose(device, pool)
    view = mover.place(np.zeros((0, 3), np.float32), F32)
    assert list(view.shape) == [0, 3]
    got = mover.read(view)
    assert got.shape == (0, 3) and got.dtype == np.float32


def test_a_shared_mover_reads_memory_the_host_cannot_map_through_a_slab(device, pool, monkeypatch):
    mover = shared(device, pool)
    x = values_of(1000, 1)
    view = mover.place(x, F32)
    monkeypatch.setattr(values, "is_mappable", lambda buffer: False)  # as a GPU's own memory
    monkeypatch.setattr(values, "read_mapped", refused)
    monkeypatch.setattr(values, "read_through_pinned", refused)
    np.testing.assert_array_equal(mover.read(view), x)
    assert pool.idle_count(staging.pool_key(0)) == 1  # small: copied out, the slab back at once


# -- a device of memory of its own: staged ------------------------------------


def test_a_staged_mover_places_and_reads_through_a_slab_it_keeps(device, pool, monkeypatch):
    mover = staged(device, pool)
    monkeypatch.setattr(values, "place_through_pinned", refused)
    monkeypatch.setattr(values, "read_mapped", refused)  # every read staged, mappable or not
    monkeypatch.setattr(values, "read_through_pinned", refused)
    x = values_of(1000, 2)
    view = mover.place(x, F32)
    want, x[:] = x.copy(), 0  # a copy: the view does not change
    assert pool.idle_count(staging.pool_key(1)) == 1  # back once the copy was waited for
    np.testing.assert_array_equal(mover.read(view), want)
    again = mover.place(values_of(1000, 3), F32)
    assert pool.idle_count(staging.pool_key(1)) == 1  # the same slab each time
    np.testing.assert_array_equal(mover.read(again), values_of(1000, 3))


def test_a_large_read_back_holds_its_slab_while_the_array_lives(device, pool, monkeypatch):
    monkeypatch.setattr(staging, "COPY_OUT_BYTES", 0)
    mover = staged(device, pool)
    x = values_of(4096, 4)
    got = mover.read(mover.place(x, F32))  # in the slab the placement gave back
    assert pool.idle_count(staging.pool_key(1)) == 0
    part = got[10:20]
    del got
    gc.collect()
    assert pool.idle_count(staging.pool_key(1)) == 0  # a view of it keeps it
    np.testing.assert_array_equal(part, x[10:20])
    del part
    gc.collect()
    assert pool.idle_count(staging.pool_key(1)) == 1


@pytest.mark.parametrize("stream_ordered", [False, True])
def test_a_stream_ordered_mover_takes_its_buffers_from_the_queue(device, pool, stream_ordered):
    recording = _Recording(device)
    mover = staged(recording, pool, stream_ordered=stream_ordered)
    x = values_of(300, 5)
    view = mover.place(x, F32)
    assert recording.allocas == (1 if stream_ordered else 0)
    np.testing.assert_array_equal(mover.read(view), x)


def test_where_the_pool_lends_nothing_a_staged_mover_takes_the_allocators_path(device, pool, monkeypatch):
    taken = []
    for name in ("place_through_pinned", "read_through_pinned"):
        original = getattr(values, name)
        monkeypatch.setattr(values, name, lambda *a, _f=original, _n=name, **k: taken.append(_n) or _f(*a, **k))
    pool.close()  # lends nothing after
    mover = staged(device, pool)
    x = values_of(500, 6)
    np.testing.assert_array_equal(mover.read(mover.place(x, F32)), x)
    assert taken == ["place_through_pinned", "read_through_pinned"]


@pytest.mark.parametrize("move", ["place", "read"])
def test_a_copy_refused_at_submission_takes_the_allocators_path(device, pool, move):
    x = values_of(300, 7)
    view = staged(device, pool).place(x, F32)
    mover = staged(_Recording(device, refuse=1), pool)
    before = len(result_storage._QUARANTINED)
    got = mover.read(view) if move == "read" else staged(device, pool).read(mover.place(x, F32))
    np.testing.assert_array_equal(got, x)
    assert mover.device.refuse == 0
    assert len(result_storage._QUARANTINED) == before  # nothing was in flight
    assert pool.idle_count(staging.pool_key(1)) == 1  # the slab went back


@pytest.mark.parametrize("move", ["place", "read"])
def test_a_failed_wait_raises_and_quarantines_the_slab(device, pool, monkeypatch, move):
    mover = staged(device, pool)
    x = values_of(64, 8)
    view = mover.place(x, F32)
    idle = pool.idle_count()

    def times_out(*args):
        raise TimeoutError("timed out after 0 s waiting for a transfer")

    monkeypatch.setattr(values, "wait", times_out)
    before = len(result_storage._QUARANTINED)
    with pytest.raises(TimeoutError, match="waiting for a transfer"):
        mover.place(x, F32) if move == "place" else mover.read(view)
    assert len(result_storage._QUARANTINED) == before + 1
    assert pool.idle_count() == idle - 1  # the device may still write it: never lent again


# -- lending --------------------------------------------------------------------


def test_only_a_device_that_shares_host_memory_lends_result_storage(device, pool, monkeypatch):
    cpu, staged_cpu = shared(device, pool), staged(device, pool)
    gpu = movers.choose(2, "cuda", device, pool, timeout_s=30)  # the local-sync device stands in
    lent = [cpu.lend(100), staged_cpu.lend(100), cpu.lend(100, pinned=True), gpu.lend(100, pinned=True)]
    assert [slab.key for slab in lent] == [(staging.pool_key(0, False), 4096), (staging.pool_key(1, False), 4096),
                                           (staging.pool_key(0, True), 4096), (staging.pool_key(2, True), 4096)]
    monkeypatch.setattr(pool, "lend", no_slab)
    assert gpu.lend(100) is None  # a GPU's result is not stored in the shim's memory; the pool is not asked
    for slab in lent:
        pool.give_back(slab)


def test_a_pinned_placement_is_in_the_devices_pinned_memory(device, pool, monkeypatch):
    given = []
    to_pinned = values.to_pinned
    monkeypatch.setattr(values, "to_pinned", lambda d, *a, **k: given.append(d) or to_pinned(d, *a, **k))
    mover = staged(device, pool)
    x = values_of(100, 9)
    view = mover.place_pinned(x, F32, register=False)
    assert given == [device]
    assert view.get_buffer().memory_type() & int(rt.MemoryType.HOST_LOCAL)
    np.testing.assert_array_equal(mover.read(view), x)


def test_a_closed_mover_holds_no_device(device, pool):
    mover = shared(device, pool)
    mover.close()
    assert mover.device is None


# -- memory the host cannot map: lavapipe -------------------------------------


@pytest.mark.vulkan
def test_a_vulkan_device_moves_through_slabs(pool):
    gpu = devices.open_device("vulkan")
    mover = movers.choose(0, "vulkan", gpu, pool, timeout_s=30)
    assert type(mover) is StagedMover and not mover.stages_every_read
    x = values_of(5000, 10)
    view = mover.place(x, F32)
    assert not values.is_mappable(view.get_buffer())  # the device's own memory
    assert pool.idle_count(staging.pool_key(0)) == 1
    np.testing.assert_array_equal(mover.read(view), x)
    assert mover.lend(100) is None
    del view
    pool.close()
    mover.close()
    del gpu


def test_a_shared_mover_told_not_to_borrow_copies_an_aligned_array(device, pool, monkeypatch):
    monkeypatch.setattr(pool, "lend", no_slab)
    x = values.aligned_array(np.arange(64, dtype=np.float32))
    view = shared(device, pool).place(x, F32, borrow=False)
    x[0] = 42  # a copy: work that reads the view after the call sees the array as given
    np.testing.assert_array_equal(shared(device, pool).read(view), np.arange(64, dtype=np.float32))


def test_which_calls_may_leave_work_running_when_they_return():
    """Manifest.work_outlives_call: a function that refers to a mutable
    global, or whose state the manifest does not give; a twin as its
    function; a module without an mdc manifest always."""
    from mdc.contract.manifest_record import Device
    from mdc.runtime_shim.manifest import Manifest

    devices = (Device("a", "local"),)
    manifest = Manifest(devices, mutable_globals=("k",), state_by_function=(("step", ("k",)), ("pure", ())),
                        storage_twins=(("pure", "pure$into", (0,)), ("step", "step$into", (0,))),
                        host_entry_points=(("pure", "pure$host"),))
    assert manifest.work_outlives_call("step") and manifest.work_outlives_call("step$into")
    assert not any(manifest.work_outlives_call(f) for f in ("pure", "pure$into", "pure$host"))
    assert manifest.work_outlives_call("added_later")  # not in state_by_function: every global
    assert not Manifest(devices, mutable_globals=()).work_outlives_call("step")
    assert Manifest(devices).work_outlives_call("step")  # an older manifest: not said
    assert Manifest(devices, mutable_globals=(), source="module").work_outlives_call("step")
