"""Which GPU results the shim gives back through the device's queue
(runtime_shim/cuda_free.py): a result whose Python owner goes, where it is
the module's one holder of that memory. On a GPU the queue dealloca saves
a synchronous cuMemFree (bench sizes measures it; gpu_kit's
results_left_on_gpu cases check held results stay right while others are
given back). Here a staged pair of CPUs stands in, with the second
device's queue free replaced by a recorder, so the rule itself is what is
tested: which buffers would be given back, and which must not be."""

from __future__ import annotations

import gc

import numpy as np
import pytest

import iree.runtime as rt
from mdc.runtime_shim import ShimError, load

PROGRAM = """
func.func public @square_on_b(%x: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>})
    -> (tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>}) {
  %sq = arith.mulf %x, %x : tensor<4xf32>
  %on_b = flow.tensor.transfer %sq : tensor<4xf32> to #hal.device.promise<@device_b>
  return %on_b : tensor<4xf32>
}
func.func public @same_on_b(%x: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>})
    -> (tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>}) {
  return %x : tensor<4xf32>
}
func.func public @twice_on_b(%x: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>})
    -> (tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>},
        tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>}) {
  %sq = arith.mulf %x, %x : tensor<4xf32>
  %on_b = flow.tensor.transfer %sq : tensor<4xf32> to #hal.device.promise<@device_b>
  return %on_b, %on_b : tensor<4xf32>, tensor<4xf32>
}
func.func public @two_on_b(%x: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>})
    -> (tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>},
        tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>}) {
  %sq = arith.mulf %x, %x : tensor<4xf32>
  %sum = arith.addf %x, %x : tensor<4xf32>
  %sq_b = flow.tensor.transfer %sq : tensor<4xf32> to #hal.device.promise<@device_b>
  %sum_b = flow.tensor.transfer %sum : tensor<4xf32> to #hal.device.promise<@device_b>
  return %sq_b, %sum_b : tensor<4xf32>, tensor<4xf32>
}
func.func public @square_b_to_a(%x: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>})
    -> (tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %sq = arith.mulf %x, %x : tensor<4xf32>
  %on_a = flow.tensor.transfer %sq : tensor<4xf32> to #hal.device.promise<@device_a>
  return %on_a : tensor<4xf32>
}
"""
X = np.array([1.0, -2.0, 3.0, 0.5], np.float32)


class _Recorder:
    """Stands in for cuda_free.QueueFree: records what would be given back."""

    def __init__(self):
        self.given: list[rt.HalBuffer] = []

    def give_back(self, buffer: rt.HalBuffer) -> bool:
        self.given.append(buffer)
        return True


@pytest.fixture
def module(build_vmfb):
    path = build_vmfb("result_free", PROGRAM, ("a=local[0]", "b=local[1]"), links=("a:b=staged",))
    m = load(str(path), ["local-task", "local-task"])
    recorder = _Recorder()
    m._ledger.queue_free = {1: recorder}
    yield m, recorder
    recorder.given.clear()  # no HAL object may outlive the module (Module.close says why)
    m.close()


def test_a_dropped_result_is_given_back_once(module):
    m, recorder = module
    f = m.function("square_on_b")
    (y,) = f.call_on_devices(X)
    buffer = y.view.get_buffer()
    y._view_given = False  # the test took the view only to know the buffer
    del y
    gc.collect()
    assert len(recorder.given) == 1 and recorder.given[0] == buffer
    (z,) = f.call_on_devices(X)
    z.release()
    z.release()
    assert len(recorder.given) == 2


def test_a_result_whose_view_the_caller_took_is_left_to_iree(module):
    m, recorder = module
    (y,) = m.function("square_on_b").call_on_devices(X)
    view = y.view
    y.release()
    assert recorder.given == []
    assert np.array_equal(view.map().asarray([4], np.dtype(np.float32)), X * X)


def test_a_buffer_two_results_hold_goes_back_with_the_last(module):
    m, recorder = module
    (y,) = m.function("square_on_b").call_on_devices(X)
    (same,) = m.function("same_on_b").call_on_devices(y)  # IREE hands the argument back
    assert same._hal_view.get_buffer() == y._hal_view.get_buffer()
    y.release()
    assert recorder.given == []
    assert np.array_equal(same.to_host(), X * X)
    same.release()
    assert len(recorder.given) == 1


def test_a_result_read_back_is_given_back_unless_another_holds_it(module):
    m, recorder = module
    assert np.array_equal(m.function("square_on_b")(X), X * X)
    assert len(recorder.given) == 1
    # One buffer returned twice: neither read-back gives it back.
    a, b = m.function("twice_on_b")(X)
    assert np.array_equal(a, X * X) and np.array_equal(b, X * X)
    assert len(recorder.given) == 1
    # Read back while a live result holds the same buffer: kept.
    (y,) = m.function("square_on_b").call_on_devices(X)
    assert np.array_equal(m.function("same_on_b")(y), X * X)
    assert len(recorder.given) == 1
    y.release()
    assert len(recorder.given) == 2


def test_a_view_taken_of_one_value_keeps_every_value_sharing_its_buffer(module):
    m, recorder = module
    sq, same = m.function("square_on_b"), m.function("same_on_b")
    # The view taken first, then the buffer handed back as another value.
    (a,) = sq.call_on_devices(X)
    view = a.view
    (b,) = same.call_on_devices(a)
    a.release()
    b.release()
    # The buffer handed back first, then the view taken of the new value.
    (c,) = sq.call_on_devices(X)
    (d,) = same.call_on_devices(c)
    other_view = d.view
    d.release()
    c.release()
    assert recorder.given == []
    assert np.array_equal(view.map().asarray([4], np.dtype(np.float32)), X * X)
    assert np.array_equal(other_view.map().asarray([4], np.dtype(np.float32)), X * X)


def test_results_that_may_share_an_allocation_are_left_to_iree(module):
    """IREE packs a call's results on one device into one allocation and
    hands out parts of it: a part is no allocation to give back."""
    m, recorder = module
    y, z = m.function("two_on_b").call_on_devices(X)
    assert np.array_equal(y.to_host(), X * X) and np.array_equal(z.to_host(), X + X)
    y.release()
    z.release()
    a, b = m.function("two_on_b")(X)
    assert np.array_equal(a, X * X) and np.array_equal(b, X + X)
    assert recorder.given == []


def _two_parts(build_stock_vmfb, device):
    """Two results of one call on ``device`` (stock IREE packs them into
    one allocation, and hands out parts of it); -> (their buffers, the
    result list and the context, to be dropped before the buffers' checks
    end)."""
    path = build_stock_vmfb("two_results", """
func.func @two(%x: tensor<1024xf32>) -> (tensor<1024xf32>, tensor<1024xf32>) {
  %a = arith.mulf %x, %x : tensor<1024xf32>
  %b = arith.addf %x, %x : tensor<1024xf32>
  return %a, %b : tensor<1024xf32>, tensor<1024xf32>
}""", {"device_a": "local[0]"})
    instance = rt.VmInstance()
    module = rt.VmModule.mmap(instance, str(path))
    context = rt.VmContext(instance, [rt.create_hal_module(instance, devices=[device]), module])
    x = device.allocator.allocate_buffer_copy(memory_type=rt.MemoryType.DEVICE_LOCAL,
                                              allowed_usage=rt.BufferUsage.DEFAULT, device=device,
                                              buffer=np.ones(1024, np.float32),
                                              element_type=rt.HalElementType.FLOAT_32)
    args, results = rt.VmVariantList(1), rt.VmVariantList(2)
    args.push_ref(x)
    context.invoke(module.lookup_function("two"), args, results)
    return [results.get_as_object(i, rt.HalBufferView).get_buffer() for i in range(2)], results, context


def test_a_part_of_an_allocation_is_told_from_a_whole_one(build_stock_vmfb):
    """cuda_free.is_whole_allocation reads iree.runtime's account of where a
    buffer lies in its allocation: two results of one call on one device
    (stock IREE packs them into one allocation) are parts, an allocation
    made by the allocator is whole. Fails if iree.runtime stops saying."""
    from mdc.runtime_shim import cuda_free

    device = rt.get_driver("local-task").create_default_device()
    parts, results, context = _two_parts(build_stock_vmfb, device)
    whole = device.allocator.allocate_buffer(memory_type=int(rt.MemoryType.DEVICE_LOCAL),
                                             allowed_usage=int(rt.BufferUsage.DEFAULT), allocation_size=4096)
    verdicts = [cuda_free.is_whole_allocation(b) for b in parts] + [cuda_free.is_whole_allocation(whole)]
    del parts, results, context
    assert verdicts == [False, False, True]


def test_no_device_of_another_driver_gives_back(build_vmfb):
    path = build_vmfb("result_free", PROGRAM, ("a=local[0]", "b=local[1]"), links=("a:b=staged",))
    m = load(str(path), ["local-task", "local-task"])
    try:
        assert m._ledger.queue_free == {}
    finally:
        m.close()


# -- the shim's own placements (staging.place through the queue) -----------


@pytest.fixture
def staged(build_vmfb):
    """The module with every move the shim makes through its pool
    (staged_transfers), so its placements on device_b take the queue's
    memory as they do on a GPU (staging.place, stream-ordered)."""
    path = build_vmfb("result_free", PROGRAM, ("a=local[0]", "b=local[1]"), links=("a:b=staged",))
    m = load(str(path), ["local-task", "local-task"], staged_transfers=True)
    recorder = _Recorder()
    m._ledger.queue_free = {1: recorder}
    yield m, recorder
    recorder.given.clear()
    m.close()


def test_an_input_placed_for_a_call_is_given_back_once_the_call_is_done(staged):
    m, recorder = staged
    f = m.function("square_b_to_a")
    for k in range(3):
        assert np.array_equal(f(X + k), (X + k) ** 2)
        assert len(recorder.given) == k + 1
    assert all(b.byte_length() >= X.nbytes for b in recorder.given)


def test_an_input_handed_back_as_a_result_is_given_back_once(staged):
    m, recorder = staged
    f = m.function("same_on_b")
    assert np.array_equal(f(X), X)  # the result is the input: one give-back, the read-back's
    assert len(recorder.given) == 1
    (y,) = f.call_on_devices(X)  # a live result holds the input: none until it goes
    assert len(recorder.given) == 1
    assert np.array_equal(y.to_host(), X)
    y.release()
    assert len(recorder.given) == 2


def test_a_placed_input_goes_back_when_released_or_collected(staged):
    m, recorder = staged
    f = m.function("square_b_to_a")
    p = f.place(0, X)
    assert np.array_equal(f(p), X * X) and np.array_equal(f(p), X * X)
    assert recorder.given == []  # placed, not given back by its calls
    buffer = p._hal_view.get_buffer()
    p.release()
    p.release()
    assert len(recorder.given) == 1 and recorder.given[0] == buffer
    q = f.place(0, X)
    del q
    gc.collect()
    assert len(recorder.given) == 2


def test_placed_inputs_of_one_size_go_back_each_on_its_own(staged):
    """Placed inputs are the shim's own whole allocations: one of the same
    size still held does not keep another's memory."""
    m, recorder = staged
    f = m.function("square_b_to_a")
    kept, dropped = f.place(0, X), f.place(0, X + 1)
    dropped.release()
    assert len(recorder.given) == 1
    assert np.array_equal(f(kept), X * X)


def test_a_placed_input_a_result_holds_goes_back_with_the_result(staged):
    m, recorder = staged
    f = m.function("same_on_b")
    p = f.place(0, X)
    (y,) = f.call_on_devices(p)  # IREE hands the argument back
    p.release()
    assert recorder.given == []
    assert np.array_equal(y.to_host(), X)
    y.release()
    assert len(recorder.given) == 1


def test_a_placed_input_whose_view_the_caller_took_is_left_to_iree(staged):
    m, recorder = staged
    f, same = m.function("square_b_to_a"), m.function("same_on_b")
    view = f.place(0, X).view  # the Placed goes at once; its view stays
    gc.collect()
    # A result sharing a placed input's buffer, the input's view taken.
    p = same.place(0, X)
    (y,) = same.call_on_devices(p)
    other_view = p.view
    p.release()
    y.release()
    # The result's view taken, then both released.
    q = same.place(0, X)
    (z,) = same.call_on_devices(q)
    z_view = z.view
    z.release()
    q.release()
    assert recorder.given == []
    for v in (view, other_view, z_view):
        assert np.array_equal(v.map().asarray([4], np.dtype(np.float32)), X)


def test_a_call_counts_its_use_of_a_placed_input(staged):
    """A Placed input is not given back while a call reads it: the call
    counts its use (Function._run), and a release then leaves it to IREE."""
    m, recorder = staged
    f = m.function("square_b_to_a")
    p = f.place(0, X)
    seen = []
    run = f._run_counted

    def run_and_release(inputs):
        seen.append(p._uses)
        p.release()  # as another thread may, while the call runs
        return run(inputs)

    f._run_counted = run_and_release
    with pytest.raises(ShimError, match="released"):
        f.call_on_devices(p)
    assert seen == [1] and recorder.given == [] and p._uses == 0


def test_a_released_placed_input_is_refused(staged):
    m, _ = staged
    f = m.function("square_b_to_a")
    p = f.place(0, X)
    p.release()
    with pytest.raises(ShimError, match="released"):
        f(p)


def test_buffers_that_may_share_memory(build_stock_vmfb):
    """cuda_free.may_share_memory, asked of a whole allocation: the same
    buffer, any buffer in an allocation of the same size (a part of it may
    be one: a program can return a part of an input), a part of an
    allocation of that size; not a buffer of another allocation size."""
    from mdc.runtime_shim import cuda_free

    device = rt.get_driver("local-task").create_default_device()

    def whole(n):
        return device.allocator.allocate_buffer(memory_type=int(rt.MemoryType.DEVICE_LOCAL),
                                                allowed_usage=int(rt.BufferUsage.DEFAULT), allocation_size=n)

    parts, results, context = _two_parts(build_stock_vmfb, device)
    allocation = int(cuda_free._PLACE.search(repr(parts[0])).group(2))
    a, same_size, other_size = whole(allocation), whole(allocation), whole(allocation + 4096)
    verdicts = [cuda_free.may_share_memory(a, a), cuda_free.may_share_memory(a, same_size),
                cuda_free.may_share_memory(a, parts[0]), cuda_free.may_share_memory(a, other_size),
                cuda_free.may_share_memory(other_size, parts[1])]
    del parts, results, context
    assert verdicts == [True, True, True, False, False]
