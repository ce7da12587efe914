"""The pool of CPU devices (runtime_shim/device_pool.py), on stand-in
devices: a device is handed out once per parking, and parked once however
often it is given back, so two modules never share one; parking works
while the pool's lock is held on the same thread, as when a collection
inside the lock collects a module never closed (session.py)."""

from __future__ import annotations

import pytest

from mdc.runtime_shim import device_pool

URI = "stand-in-for-tests"  # no real device is parked under it


class Device:
    pass


@pytest.fixture(autouse=True)
def empty():
    yield
    while device_pool.take(URI) is not None:
        pass


def test_a_parked_device_is_handed_out_once():
    a, b = Device(), Device()
    device_pool.park(URI, a)
    device_pool.park(URI, b)
    assert device_pool.parked_count(URI) == 2
    taken = {device_pool.take(URI), device_pool.take(URI)}
    assert taken == {a, b}
    assert device_pool.take(URI) is None
    assert device_pool.take("local-task " + URI) is None  # by exact URI only


def test_a_device_given_back_twice_is_parked_once():
    a = Device()
    device_pool.park(URI, a)
    device_pool.park(URI, a)
    assert device_pool.parked_count(URI) == 1
    assert device_pool.take(URI) is a
    assert device_pool.take(URI) is None  # not handed to a second module


def test_parking_while_the_pool_is_busy_on_this_thread_does_not_wait():
    a = Device()
    with device_pool._lock:  # as a collection inside take() or park() would find it
        assert device_pool._lock.acquire(blocking=False), "park would wait for itself here"
        device_pool._lock.release()
        device_pool.park(URI, a)
    assert device_pool.take(URI) is a


def test_only_cpu_devices_are_pooled():
    assert device_pool.pooled("local-task") and device_pool.pooled(" local-sync ")
    assert not any(device_pool.pooled(u) for u in ("cuda", "vulkan", "local-task://0", "hip"))
