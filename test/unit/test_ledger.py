"""The buffer ledger's seven give-back rules (runtime_shim/ledger.py's
docstring), one test each, on the ledger alone: fake buffers, views, held
values and queues stand in for IREE's, so no device is needed."""

from __future__ import annotations

import threading

from mdc.runtime_shim.ledger import BufferLedger


class Buffer:
    """A HalBuffer as cuda_free reads it: its repr names its place in its
    allocation; two are the same buffer only if they are one object."""

    def __init__(self, length: int = 64, offset: int = 0, allocation: int = None):
        self.length, self.offset = length, offset
        self.allocation = length if allocation is None else allocation

    def byte_length(self) -> int:
        return self.length

    def __repr__(self) -> str:
        return f"<HalBuffer {self.length} bytes (at offset {self.offset} into {self.allocation})>"


class View:
    def __init__(self, buffer: Buffer):
        self.buffer = buffer

    def get_buffer(self) -> Buffer:
        return self.buffer


class Held:
    """A Placed or DeviceValue as the ledger reads it (handles.py)."""

    def __init__(self, buffer: Buffer, device_index=0, *, sole: bool = True):
        self._hal_view = View(buffer)
        self.device_index = device_index
        self._uses = 0
        self._view_given = False
        self._sole = sole
        self.released = False

    def mark_view_given(self) -> None:
        self._view_given = True

    def release(self) -> None:
        self.released = True


class Queue:
    """A cuda_free.QueueFree that records what it was given back."""

    def __init__(self):
        self.given: list = []

    def give_back(self, buffer) -> bool:
        self.given.append(buffer)
        return True


def _ledger(devices=(0,)):
    queues = {i: Queue() for i in devices}
    return BufferLedger(queues), queues


def _resident(ledger, buffer, device_index=0, **kw) -> Held:
    value = Held(buffer, device_index, **kw)
    ledger.resident.add(value)
    return value


def _placed(ledger, buffer, device_index=0) -> Held:
    placed = Held(buffer, device_index)
    ledger.placed.add(placed)
    return placed


def test_rule_1_only_a_queue_freeing_device_and_a_whole_allocation():
    ledger, queues = _ledger(devices=(0,))
    assert ledger.gives_back(0) and not ledger.gives_back(1)
    ledger.give_back_read(1, View(Buffer()), [])  # a device with no queue free: left to IREE
    part = Buffer(length=16, offset=16, allocation=64)  # a part of an allocation
    ledger.give_back_read(0, View(part), [])
    assert queues[0].given == []
    whole = Buffer()
    ledger.give_back_read(0, View(whole), [])
    assert queues[0].given == [whole]


def test_rule_2_a_resident_result_goes_back_only_as_its_buffers_one_holder():
    ledger, queues = _ledger()
    for case in ("not sole", "view given", "in use", "shared", "view of a sharer"):
        buffer = Buffer()
        value = _resident(ledger, buffer, sole=case != "not sole")
        value._view_given = case == "view given"
        value._uses = 1 if case == "in use" else 0
        if case in ("shared", "view of a sharer"):
            other = _resident(ledger, buffer)
            if case == "view of a sharer":
                ledger.view_given(other)  # marks every live value sharing the buffer
                other.release()
                assert value._view_given
        ledger.give_back_resident(value, value._hal_view)
        assert queues[0].given == [], case
        value.release()
    buffer = Buffer()
    value = _resident(ledger, buffer)
    _placed(ledger, Buffer())  # another buffer of the same size: not this one
    ledger.give_back_resident(value, value._hal_view)
    assert queues[0].given == [buffer]


def test_rule_3_a_result_read_back_goes_back_unless_an_input_or_live_value_is_it():
    ledger, queues = _ledger()
    handed_back = Buffer()  # IREE hands an argument back as a result
    ledger.give_back_read(0, View(handed_back), [Held(handed_back)])
    live = Buffer()
    holder = _resident(ledger, live)  # kept: the ledger holds it weakly
    ledger.give_back_read(0, View(live), [])
    assert queues[0].given == [] and not holder.released
    read = Buffer()
    ledger.give_back_read(0, View(read), [Held(Buffer())])
    assert queues[0].given == [read]


def test_rule_4_a_calls_own_input_goes_back_unless_a_result_or_placed_input_may_hold_it():
    ledger, queues = _ledger(devices=(0, 1))
    # A result on the input's device in an allocation of its size may be a part of it.
    ledger.give_back_inputs([(0, View(Buffer(64)))], lambda i: [(Buffer(16, 0, 64), True)] if i == 0 else [])
    # A live value on that device likewise.
    live = _resident(ledger, Buffer(16, 16, 64))  # kept: the ledger holds it weakly
    ledger.give_back_inputs([(0, View(Buffer(64)))], lambda i: [])
    # A placed input that is the same buffer.
    shared = Buffer(32)
    placed = _placed(ledger, shared, device_index=1)
    ledger.give_back_inputs([(1, View(shared))], lambda i: [])
    # A result on another device holds it only if it is the same buffer.
    handed = Buffer(48)
    ledger.give_back_inputs([(1, View(handed))], lambda i: [(handed, False)])
    assert queues[0].given == [] and queues[1].given == []
    alone = Buffer(48)
    ledger.give_back_inputs([(1, View(alone))], lambda i: [(Buffer(48), False)])
    assert queues[1].given == [alone]
    assert live.device_index == 0 and placed.device_index == 1


def test_rule_5_a_placed_input_goes_back_when_released_unless_in_use_viewed_or_shared():
    ledger, queues = _ledger()
    for case in ("in use", "view given", "a live value may share it", "another placed input is it"):
        buffer = Buffer()
        placed = _placed(ledger, buffer)
        placed._uses = 1 if case == "in use" else 0
        if case == "view given":
            ledger.view_given(placed)
        sharer = _resident(ledger, Buffer(8, 8, 64)) if case == "a live value may share it" else None
        twin = _placed(ledger, buffer) if case == "another placed input is it" else None
        ledger.give_back_placed(placed, placed._hal_view)
        assert queues[0].given == [], case
        for held in (placed, sharer, twin):
            if held is not None:
                held.release()
    buffer = Buffer()
    placed = _placed(ledger, buffer)
    _placed(ledger, Buffer())  # another input of the same size: not this one
    ledger.give_back_placed(placed, placed._hal_view)
    assert queues[0].given == [buffer]


def test_rule_6_a_call_counts_its_inputs_use_until_it_is_done():
    ledger, queues = _ledger()
    buffer = Buffer()
    placed = _placed(ledger, buffer)
    value = _resident(ledger, Buffer(32))
    ledger.start_uses([placed, value])
    assert (placed._uses, value._uses) == (1, 1)
    ledger.give_back_placed(placed, placed._hal_view)
    ledger.give_back_resident(value, value._hal_view)
    assert queues[0].given == []
    ledger.end_uses([placed, value])
    assert (placed._uses, value._uses) == (0, 0)
    ledger.give_back_placed(placed, placed._hal_view)
    assert queues[0].given == [buffer]


def test_rule_7_a_give_back_never_waits_and_teardown_leaves_the_rest_to_iree():
    ledger, queues = _ledger()
    taken, go = threading.Event(), threading.Event()

    def hold_the_lock():
        with ledger.lock:
            taken.set()
            go.wait(10)

    holder = threading.Thread(target=hold_the_lock)
    holder.start()
    try:
        assert taken.wait(10)
        ledger.give_back_read(0, View(Buffer()), [])  # would block here if it waited
        assert queues[0].given == []
    finally:
        go.set()
        holder.join(10)

    class Changing:  # a set changing under another thread
        def get_buffer(self):
            raise RuntimeError("Set changed size during iteration")

    ledger.give_back_read(0, Changing(), [])  # no error: left to IREE
    assert queues[0].given == [] and not ledger.lock.locked()
    ledger.close()
    ledger.give_back_read(0, View(Buffer()), [])
    assert queues[0].given == []
    assert ledger.gives_back(0) is False
