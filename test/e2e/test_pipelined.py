"""Pipelined calls (``f.map(xs, depth=...)``, runtime_shim/pipelined.py) on a
staged pair of CPU devices, both execution models, and through
iree-run-module.

What must hold: every result equals numpy's and what a plain call returns,
in input order, whatever the depth; results held by the caller stay right;
an error comes out at its own item; the lanes are freed however the
iteration ends; a program with state of its own, or without an mdc
manifest, is refused more than one lane, with words that say why; plain
calls while a map runs are still right.
"""

from __future__ import annotations

import os
import subprocess
import threading

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAMS = os.path.join(HERE, "programs")
DEVICES = ["local-task", "local-sync"]
W_A = np.full((128, 128), 0.015625, np.float32)
W_B = np.full((128, 128), -0.0078125, np.float32)


def _expected(x: np.ndarray) -> np.ndarray:
    t = np.tanh(x @ W_A)
    return t @ W_B + t


def _inputs(count: int, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((64, 128)).astype(np.float32) for _ in range(count)]


def _compile(tmp_path, program: str, *flags) -> str:
    out = str(tmp_path / (program.replace(".mlir", "") + ".vmfb"))
    subprocess.run(["mdc-compile", os.path.join(PROGRAMS, program), "--device=a=local[0]",
                    "--device=b=local[1]", "--link=a:b=staged", *flags, "-o", out],
                   check=True, capture_output=True, text=True)
    return out


@pytest.fixture(scope="module", params=["async-internal", "async-external"])
def stages_vmfb(request, tmp_path_factory):
    return _compile(tmp_path_factory.mktemp(request.param), "split_stages.mlir",
                    f"--iree-execution-model={request.param}")


@pytest.fixture
def module(stages_vmfb):
    from mdc.runtime_shim import load

    m = load(stages_vmfb, DEVICES)
    yield m
    m.close()


def _check(results, xs):
    assert len(results) == len(xs)
    for got, x in zip(results, xs):
        np.testing.assert_allclose(got, _expected(x), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_map_matches_numpy_and_plain_calls(module, depth):
    xs = _inputs(25)
    plain = [module.stages(x) for x in xs]
    got = list(module.stages.map(xs, depth=depth))  # all held at once
    _check(got, xs)
    for a, b in zip(got, plain):
        np.testing.assert_array_equal(a, b)


def test_map_is_lazy_and_in_order(module):
    xs = _inputs(7, seed=1)
    it = module.stages.map(iter(xs), depth=3)
    first = next(it)
    np.testing.assert_allclose(first, _expected(xs[0]), rtol=1e-5, atol=1e-5)
    _check([first, *it], xs)


def test_map_of_fewer_items_than_lanes_and_of_none(module):
    xs = _inputs(2, seed=2)
    _check(list(module.stages.map(xs, depth=4)), xs)
    assert list(module.stages.map([], depth=3)) == []


def test_map_zips_its_iterables(tmp_path):
    from mdc.runtime_shim import load

    m = load(_compile(tmp_path, "two_args.mlir"), DEVICES)
    try:
        rng = np.random.default_rng(3)
        xs = [rng.standard_normal((2, 3)).astype(np.float32) for _ in range(9)]
        ys = [rng.standard_normal((2, 3)).astype(np.float32) for _ in range(7)]  # the shorter one ends it
        got = list(m.add_across.map(xs, ys, depth=2))
        assert len(got) == 7
        for g, x, y in zip(got, xs, ys):
            np.testing.assert_array_equal(g, x + y)
    finally:
        m.close()


def test_an_error_comes_out_at_its_item_and_frees_the_lanes(module):
    from mdc.runtime_shim import ShimError

    xs = _inputs(6, seed=4)
    bad = [*xs[:3], np.zeros((3, 3), np.float32), *xs[3:]]
    it = module.stages.map(bad, depth=2)
    _check([next(it) for _ in range(3)], xs[:3])
    with pytest.raises(ShimError, match="shape mismatch"):
        next(it)
    _check(list(module.stages.map(xs, depth=2)), xs)  # lanes free again


def test_breaking_off_frees_the_lanes(module):
    xs = _inputs(8, seed=5)
    for i, _ in enumerate(module.stages.map(xs, depth=2)):
        if i == 2:
            break
    _check(list(module.stages.map(xs, depth=3)), xs)


def test_a_second_map_at_once_is_refused(module):
    from mdc.runtime_shim import ShimError

    xs = _inputs(4, seed=6)
    first = module.stages.map(xs, depth=2)
    next(first)
    with pytest.raises(ShimError, match="another map of .* is running"):
        next(module.stages.map(xs, depth=2))
    assert len(list(first)) == 3
    _check(list(module.stages.map(xs, depth=2)), xs)


def test_plain_calls_while_a_map_runs(module):
    xs = _inputs(12, seed=7)
    others = _inputs(12, seed=8)
    errors = []

    def plain():
        try:
            for x in others:
                np.testing.assert_allclose(module.stages(x), _expected(x), rtol=1e-5, atol=1e-5)
        except Exception as e:  # noqa: BLE001  (reported below)
            errors.append(e)

    thread = threading.Thread(target=plain)
    thread.start()
    got = list(module.stages.map(xs, depth=2))
    thread.join()
    assert not errors, errors
    _check(got, xs)


@pytest.mark.parametrize("depth", [0, -1, 1.5, "2", True, None])
def test_bad_depth_is_refused_at_once(module, depth):
    from mdc.runtime_shim import ShimError

    with pytest.raises(ShimError, match="depth must be a whole number of at least 1"):
        module.stages.map(_inputs(1), depth=depth)


def test_map_after_close_is_refused(stages_vmfb):
    from mdc.runtime_shim import ShimError, load

    m = load(stages_vmfb, DEVICES)
    f = m.stages
    list(f.map(_inputs(3), depth=2))
    m.close()
    with pytest.raises(ShimError, match="closed"):
        f.map(_inputs(1), depth=2)


def test_a_program_with_state_takes_one_lane(tmp_path):
    from mdc.runtime_shim import ShimError, load

    m = load(_compile(tmp_path, "running_sum.mlir"), DEVICES)
    try:
        assert m.manifest.mutable_globals == ("sum",)
        ones = [np.full(8, float(i), np.float32) for i in range(1, 6)]
        with pytest.raises(ShimError, match=r"keeps state between calls in mutable globals \(@sum\).*depth=1"):
            m.accumulate.map(ones)
        sums = list(m.accumulate.map(ones, depth=1))
        np.testing.assert_array_equal(np.stack(sums), np.cumsum(np.stack(ones), axis=0))
    finally:
        m.close()


def test_a_module_without_manifest_takes_one_lane(tmp_path):
    from mdc.runtime_shim import ShimError, load

    out = str(tmp_path / "stock.vmfb")
    subprocess.run(["mdc-compile", os.path.join(PROGRAMS, "split_stages.mlir"), "--device=a=local[0]",
                    "--device=b=local[1]", "--no-manifest", "-o", out], check=True, capture_output=True)
    m = load(out, ["local-task", "local-task"])
    try:
        with pytest.raises(ShimError, match="has no mdc manifest"):
            m.stages.map(_inputs(2), depth=2)
        xs = _inputs(3)
        _check(list(m.stages.map(xs, depth=1)), xs)
    finally:
        m.close()


def test_map_through_iree_run_module(stages_vmfb):
    """The NativeModule (each call a run of iree-run-module) pipelines its
    runs the same way."""
    from mdc.runtime_shim import NativeModule, module as shim_module
    from mdc.runtime_shim.program import open_program

    m = shim_module._native_module(open_program(stages_vmfb, DEVICES), "test", (), 120.0, dependencies=(),
                                   parameters=(), preload_parameters=False)
    assert isinstance(m, NativeModule)
    xs = _inputs(4, seed=9)
    _check(list(m.stages.map(xs, depth=2)), xs)


# -- what the review of the first version found ------------------------------------------


def test_an_item_is_read_only_when_a_lane_is_free(module):
    read = []

    def counted(xs):
        for i, x in enumerate(xs):
            read.append(i)
            yield x

    xs = _inputs(9, seed=10)
    it = module.stages.map(counted(xs), depth=3)
    np.testing.assert_allclose(next(it), _expected(xs[0]), rtol=1e-5, atol=1e-5)
    assert read == [0, 1, 2]  # items 0..2 in flight, nothing read ahead
    np.testing.assert_allclose(next(it), _expected(xs[1]), rtol=1e-5, atol=1e-5)
    assert read == [0, 1, 2, 3]
    _check(list(it), xs[2:])


def test_calls_run_in_the_lanes_contexts(module, monkeypatch):
    from mdc.runtime_shim.lanes import Lanes

    used = []
    real = Lanes.context

    def recording(self, main):
        context = real(self, main)
        used.append(context)
        return context

    monkeypatch.setattr(Lanes, "context", recording)
    xs = _inputs(6, seed=11)
    _check(list(module.stages.map(xs, depth=3)), xs)
    assert len(module._lanes.contexts) == 3
    assert {id(c) for c in used} == {id(c) for c in module._lanes.contexts}
    assert module._session.context not in used
    used.clear()
    module.stages(xs[0])
    assert used == [module._session.context]


@pytest.fixture(scope="module", params=["async-internal", "async-external"])
def results_vmfb(request, tmp_path_factory):
    return _compile(tmp_path_factory.mktemp("results-" + request.param), "results_from_b.mlir",
                    f"--iree-execution-model={request.param}")


def test_results_in_pool_memory_stay_right_under_map(results_vmfb):
    """Results the GPU writes into the shim's pooled memory (result-storage
    twins), static and dynamic shapes, every one held while later calls
    run in other lanes."""
    from mdc.runtime_shim import load, result_storage

    def pooled(array):
        base = array
        while isinstance(base, np.ndarray) and base.base is not None:
            base = base.base
        return isinstance(base, result_storage._Lease)

    m = load(results_vmfb, DEVICES)
    try:
        rng = np.random.default_rng(12)
        xs = [rng.standard_normal((512, 512)).astype(np.float32) for _ in range(10)]
        held = list(m.scaled.map(xs, depth=3))
        for got, x in zip(held, xs):
            np.testing.assert_array_equal(got, x * np.float32(3))
        assert all(pooled(y) for y in held)
        assert len({y.ctypes.data for y in held}) == len(held)
        vs = [rng.standard_normal(1000 + 8 * (i % 3)).astype(np.float32) for i in range(12)]
        negated = list(m.negated.map(vs, depth=2))
        for got, v in zip(negated, vs):
            np.testing.assert_array_equal(got, -v)
        assert sum(pooled(y) for y in negated) >= len(vs) - 3 * 2  # the first of each shape in each lane may copy
    finally:
        m.close()


def test_close_while_a_map_runs_waits_for_its_calls(stages_vmfb):
    from mdc.runtime_shim import ShimError, load

    m = load(stages_vmfb, DEVICES)
    xs = _inputs(40, seed=13)
    it = m.stages.map(xs, depth=2)
    got = [next(it) for _ in range(3)]
    closer = threading.Thread(target=m.close)
    closer.start()
    with pytest.raises(ShimError, match="closed"):
        for y in it:
            got.append(y)
    closer.join()
    _check(got, xs[:len(got)])
    assert m.closed and m._lanes.contexts == []  # the lanes' contexts were dropped


def test_close_of_a_paused_map_releases_the_lanes(stages_vmfb):
    from mdc.runtime_shim import ShimError, load

    m = load(stages_vmfb, DEVICES)
    xs = _inputs(6, seed=14)
    it = m.stages.map(xs, depth=2)
    next(it)
    m.close()
    assert m._lanes.contexts == []  # the lanes' contexts were dropped
    with pytest.raises(ShimError, match="closed"):
        list(it)


def test_state_not_known_or_in_dependencies_takes_one_lane(module):
    import dataclasses

    from mdc.runtime_shim import ShimError

    written = module.manifest
    module.manifest = dataclasses.replace(written, mutable_globals=None)
    with pytest.raises(ShimError, match="does not say whether the program keeps state.*older mdc-compile"):
        module.stages.map(_inputs(2), depth=2)
    module.manifest = written
    module.dependencies = ["other.vmfb"]
    with pytest.raises(ShimError, match="loaded with dependencies"):
        module.stages.map(_inputs(2), depth=2)
    module.dependencies = []
    xs = _inputs(2)
    _check(list(module.stages.map(xs, depth=2)), xs)


def test_calls_on_a_thread_other_than_the_loading_one(module, stages_vmfb):
    """A plain call, a call leaving its result on the devices brought to
    the host, and a Placed input, all on a new thread. (On CUDA these need
    the loading thread's context made current there: cuda_thread.py, and
    gpu_kit's other_thread cases on a GPU.)"""
    (x,) = _inputs(1, seed=11)
    got, errors = {}, []

    def calls():
        try:
            f = module.stages
            got["plain"] = np.array(f(x))
            got["on_devices"] = f.call_on_devices(x)[0].to_host()
            got["placed"] = np.array(f(f.place(0, x)))
        except Exception as e:  # noqa: BLE001  (reported below)
            errors.append(e)

    thread = threading.Thread(target=calls)
    thread.start()
    thread.join()
    assert not errors, errors
    assert set(got) == {"plain", "on_devices", "placed"}
    for y in got.values():
        np.testing.assert_allclose(y, _expected(x), rtol=1e-5, atol=1e-5)
    assert module._session.cuda_context is None  # no cuda device: nothing to bind


class _FakeCuda:
    """cuCtxGetCurrent / cuCtxSetCurrent with a current context per thread."""

    def __init__(self, fail_with: int = 0):
        self.current = threading.local()
        self.sets = 0
        self.fail_with = fail_with

    def cuCtxGetCurrent(self, out):
        out._obj.value = getattr(self.current, "handle", None)
        return 0

    def cuCtxSetCurrent(self, handle):
        self.sets += 1
        if self.fail_with:
            return self.fail_with
        self.current.handle = handle
        return 0


def test_thread_context_binds_where_another_or_none_is_current(monkeypatch):
    """bind: nothing on the loading thread (IREE made the context current
    there), and on another thread only where the context is not current
    already; a failing cuCtxSetCurrent is a ShimError, and quiet before a
    free."""
    from mdc.runtime_shim import ShimError, cuda_thread

    fake = _FakeCuda()
    monkeypatch.setattr(cuda_thread, "_libcuda", fake)
    fake.current.handle = 0x1234
    loader = cuda_thread.ThreadContext.of_this_thread()
    assert loader.handle == 0x1234
    loader.bind()
    assert fake.sets == 0  # the loading thread
    seen = []

    def other():
        seen.append(cuda_thread.current_context())
        loader.bind()
        seen.append(cuda_thread.current_context())
        loader.bind()  # current already
        fake.current.handle = 0x99  # the thread switched to another context
        loader.bind()
        seen.append(cuda_thread.current_context())

    thread = threading.Thread(target=other)
    thread.start()
    thread.join()
    assert seen == [None, 0x1234, 0x1234] and fake.sets == 2

    failing = _FakeCuda(fail_with=201)
    monkeypatch.setattr(cuda_thread, "_libcuda", failing)
    assert cuda_thread.ThreadContext.of_this_thread() is None
    errors = []

    def failing_bind():
        try:
            loader.bind()
        except ShimError as e:
            errors.append(str(e))
        loader.bind_quietly()

    thread = threading.Thread(target=failing_bind)
    thread.start()
    thread.join()
    assert len(errors) == 1 and "CUDA error 201" in errors[0], errors


def test_every_entry_from_another_thread_binds_the_context(stages_vmfb, monkeypatch):
    """Each entry that reaches a device, and each free, binds the module's
    CUDA context on a thread other than the loading one: here a CPU module
    given a stand-in context and a stand-in libcuda, counting the binds."""
    from mdc.runtime_shim import cuda_thread, load, result_storage

    fake = _FakeCuda()
    monkeypatch.setattr(cuda_thread, "_libcuda", fake)
    m = load(stages_vmfb, DEVICES)
    m._session.cuda_context = cuda_thread.ThreadContext(0x1234)
    m._pool = result_storage.ResultPool(before_free=m._session.free_binder())
    f = m.stages
    (x,) = _inputs(1, seed=12)
    binds = {}

    def on_new_thread(name, action):
        def run():
            before = fake.sets
            action()
            binds[name] = fake.sets - before
        thread = threading.Thread(target=run)
        thread.start()
        thread.join()

    kept = {}
    on_new_thread("call", lambda: f(x))
    on_new_thread("call_on_devices", lambda: kept.setdefault("value", f.call_on_devices(x)[0]))
    on_new_thread("to_host", lambda: kept["value"].to_host())
    on_new_thread("release", lambda: kept.pop("value").release())
    on_new_thread("place", lambda: kept.setdefault("placed", f.place(0, x)))
    on_new_thread("placed_release", lambda: kept.pop("placed").release())
    on_new_thread("statistics", m.statistics)
    on_new_thread("map", lambda: list(f.map([x, x], depth=2)))
    on_new_thread("close", m.close)
    assert all(n >= 1 for n in binds.values()), binds
    assert set(binds) == {"call", "call_on_devices", "to_host", "release", "place", "placed_release",
                          "statistics", "map", "close"}
    assert fake.sets == sum(binds.values())  # nothing bound on the loading thread


def test_state_of_a_function_from_the_manifest():
    """Manifest.state_of: per function where the manifest says, every
    mutable global for a function it does not list or without the entry,
    nothing for a program without state, None where the manifest does not
    say whether there is state; a malformed entry is a ShimError."""
    import json

    from mdc.runtime_shim import ShimError
    from mdc.runtime_shim.manifest import parse_manifest

    base = {"format": "mdc.manifest/1", "staging": [],
            "devices": [{"name": "device_a", "spec": "local[0]", "kind": "local", "ordinal": 0}]}
    m = parse_manifest(json.dumps({**base, "mutable_globals": ["sum", "count"],
                                   "state_by_function": {"step": ["sum"], "encode": []}}))
    assert (m.state_of("step"), m.state_of("encode"), m.state_of("other")) == (("sum",), (), ("sum", "count"))
    m = parse_manifest(json.dumps({**base, "mutable_globals": ["sum"]}))
    assert m.state_of("encode") == ("sum",)
    assert parse_manifest(json.dumps({**base, "mutable_globals": []})).state_of("encode") == ()
    assert parse_manifest(json.dumps(base)).state_of("encode") is None
    with pytest.raises(ShimError, match="malformed mdc.manifest.*state_by_function"):
        parse_manifest(json.dumps({**base, "mutable_globals": ["sum"], "state_by_function": {"step": "sum"}}))


def test_a_stateless_function_beside_state_is_pipelined(tmp_path):
    """running_sum.mlir's @doubled refers to no state: two lanes, right
    results; @accumulate beside it still takes one."""
    from mdc.runtime_shim import ShimError, load

    m = load(_compile(tmp_path, "running_sum.mlir"), DEVICES)
    try:
        xs = _inputs(6, seed=3)
        xs = [x[0, :8].copy() for x in xs]
        got = list(m.doubled.map(xs, depth=2))
        for y, x in zip(got, xs):
            np.testing.assert_array_equal(y, x + x)
        with pytest.raises(ShimError, match=r"@accumulate.map with depth 2: the function keeps state"):
            m.accumulate.map(xs)
    finally:
        m.close()
