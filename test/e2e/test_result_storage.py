"""Results returned in the shim's own memory (result-storage twins,
runtime_shim/result_storage.py), on a staged pair of CPU devices (the GPU
code path: device_b's queue copies into memory the shim registered with it).

What must hold: every result equals numpy's; a result is an array over pool
memory, not a copy of a HAL buffer; results the caller still holds stay
right while later calls run; memory comes back to the pool once its arrays
are gone, and is then reused; a module closed under held results leaves
them readable, and the process exits cleanly; without the twins the same
calls give the same numbers, as copies.
"""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAM = os.path.join(HERE, "programs", "results_from_b.mlir")
DEVICES = ["local-task", "local-sync"]


def _compile(tmp_path, *flags) -> str:
    out = str(tmp_path / "m.vmfb")
    subprocess.run(["mdc-compile", PROGRAM, "--device=a=local[0]", "--device=b=local[1]", "--link=a:b=staged",
                    *flags, "-o", out], check=True, capture_output=True, text=True)
    return out


def _squares_expected(x):
    sq = x * x
    cube = sq * x
    return sq, cube, np.stack([sq, cube])


def _owned_by_pool(array: np.ndarray) -> bool:
    """The array's memory is lent by a result pool (its base chain ends in
    the pool's lease, not in an ndarray owning its data)."""
    from mdc.runtime_shim import result_storage

    base = array
    while isinstance(base, np.ndarray) and base.base is not None:
        base = base.base
    return isinstance(base, result_storage._Lease)


@pytest.fixture(params=["async-internal", "async-external"])
def module(request, tmp_path):
    from mdc.runtime_shim import load

    m = load(_compile(tmp_path, f"--iree-execution-model={request.param}"), DEVICES)
    yield m
    m.close()


def test_static_results_in_pool_memory_stay_right_while_held(module):
    assert module.manifest.storage_twin("squares") == ("squares$into", (0, 2))
    assert "squares$into" not in module.function_names
    held = []
    for step in range(6):
        x = np.linspace(-2, 2, 4096, dtype=np.float32) + step
        sq, cube, pair = module.squares(x)
        want = _squares_expected(x)
        np.testing.assert_array_equal(sq, want[0])
        np.testing.assert_array_equal(cube, want[1])
        np.testing.assert_array_equal(pair, want[2])
        assert _owned_by_pool(sq) and _owned_by_pool(pair), "a CPU result was copied, not lent"
        assert not _owned_by_pool(cube), "a result left on device_b came out of the CPU pool"
        held.append((x, sq, pair))
    # Six calls' results all held: none was overwritten by a later call.
    for x, sq, pair in held:
        want = _squares_expected(x)
        np.testing.assert_array_equal(sq, want[0])
        np.testing.assert_array_equal(pair, want[2])
    addresses = {a.ctypes.data for _, sq, pair in held for a in (sq, pair)}
    assert len(addresses) == 12, "two held results share memory"


def test_static_result_written_by_device_b_is_the_storage(module):
    """The GPU's copy goes straight into the storage and the result is that
    storage: IREE's clone between the update and the export is elided (it
    was not, for a static shape, until the storage was imported as
    consumed), so the result is lent, not copied."""
    x = np.linspace(-1, 1, 512 * 512, dtype=np.float32).reshape(512, 512)
    held = [module.scaled(x * np.float32(2 ** k)) for k in range(3)]
    for k, y in enumerate(held):
        np.testing.assert_array_equal(y, x * np.float32(3 * 2 ** k))
        assert _owned_by_pool(y), f"call {k}: the result was copied"


def test_memory_returns_to_the_pool_and_is_reused(module):
    x = np.arange(4096, dtype=np.float32)
    sq, _, pair = module.squares(x)
    first = {sq.ctypes.data, pair.ctypes.data}
    view = sq[10:20]  # a view keeps the memory lent
    del sq, pair
    gc.collect()
    assert module._pool.idle_count() == 1
    np.testing.assert_array_equal(view, x[10:20] ** 2)
    del view
    gc.collect()
    assert module._pool.idle_count() == 2
    again = module.squares(x + 1)
    assert {again[0].ctypes.data, again[2].ctypes.data} == first
    np.testing.assert_array_equal(again[0], (x + 1) ** 2)


def test_dynamic_result_lent_once_its_shape_is_known(module):
    f = module.negated
    for n in (1000, 1, (1 << 18) + 3):
        x = np.linspace(-3, 3, n, dtype=np.float32)
        first = f(x)  # the shape is learnt from this call
        np.testing.assert_array_equal(first, -x)
        assert not _owned_by_pool(first)
        second = f(x + 1)
        np.testing.assert_array_equal(second, -(x + 1))
        assert _owned_by_pool(second)
        np.testing.assert_array_equal(first, -x)


def test_storage_too_small_runs_the_function_itself(module):
    """Shapes remembered for these inputs that the call does not make (as a
    result whose size depends on values would): the twin refuses the
    storage before writing it, and the call is made again without it."""
    f = module.negated
    x = np.linspace(-1, 1, 5000, dtype=np.float32)
    np.testing.assert_array_equal(f(x), -x)
    key = next(iter(f._storage.shapes))
    f._storage.shapes[key] = ((10,),)
    y = f(x)
    np.testing.assert_array_equal(y, -x)
    assert key not in f._storage.shapes or f._storage.shapes[key] == ((5000,),)
    np.testing.assert_array_equal(f(x), -x)


def test_without_twins_the_same_numbers_as_copies(tmp_path):
    from mdc.runtime_shim import load

    m = load(_compile(tmp_path, "--no-result-storage-twins"), DEVICES)
    try:
        assert m.manifest.storage_twin("squares") is None
        x = np.linspace(-2, 2, 4096, dtype=np.float32)
        for got, want in zip(m.squares(x), _squares_expected(x)):
            np.testing.assert_array_equal(got, want)
            assert not _owned_by_pool(got)
        np.testing.assert_array_equal(m.negated(x), -x)
    finally:
        m.close()


def test_results_held_past_close_and_exit(tmp_path):
    """The caller keeps results after the module is closed and until the
    interpreter exits: they stay readable (numpy owns the memory), and the
    process exits 0 (a live HAL object at exit crashed IREE 3.13)."""
    vmfb = _compile(tmp_path)
    script = textwrap.dedent(f"""
        import numpy as np
        from mdc.runtime_shim import load
        m = load({vmfb!r}, {DEVICES!r})
        x = np.arange(4096, dtype=np.float32)
        kept = [m.squares(x + k) for k in range(3)]
        m.close()
        for k, (sq, _, pair) in enumerate(kept):
            assert np.array_equal(sq, (x + k) ** 2), k
            assert np.array_equal(pair[1], (x + k) * (x + k) * (x + k)), k
        again = load({vmfb!r}, {DEVICES!r})
        late = again.squares(x)
        print("ok", float(late[0][3]))
    """)
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ok 9.0"


def test_module_dropped_without_close_while_results_are_held(tmp_path):
    """A module never closed and dropped (only its function kept, then not
    even that) while a result is held: the result stays right, and the
    process exits 0 (the pool's registrations are released at exit)."""
    vmfb = _compile(tmp_path)
    script = textwrap.dedent(f"""
        import gc
        import numpy as np
        from mdc.runtime_shim import load
        f = load({vmfb!r}, {DEVICES!r}).squares
        x = np.arange(4096, dtype=np.float32)
        kept = [f(x + k)[0] for k in range(3)]
        del f
        gc.collect()
        assert all(np.array_equal(y, (x + k) ** 2) for k, y in enumerate(kept))
        print("ok")
    """)
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ok"


def test_own_output_argument_gets_no_twin(tmp_path):
    """A function with an output argument of its own (the caller's storage,
    placed where it chose) gets no twin: a twin's output arguments are all
    pinned storage, which would refuse the caller's."""
    from mdc.runtime_shim import load

    out = str(tmp_path / "o.vmfb")
    subprocess.run(["mdc-compile", os.path.join(HERE, "programs", "pinned_output.mlir"), "--device=a=local[0]",
                    "--device=b=local[1]", "--link=a:b=staged", "-o", out], check=True, capture_output=True)
    m = load(out, DEVICES)
    try:
        assert m.manifest.storage_twin("square_into") is None
        assert m.manifest.pinned("square_into") == {}
    finally:
        m.close()


@pytest.mark.parametrize("retry_fails", [False, True])
def test_compile_retries_without_twins_when_they_fail(retry_fails, tmp_path, monkeypatch, capfd):
    """A compile that fails once twins were added is made again without
    them: with a warning naming the twins and the error when that works;
    with the first error, and no warning, when it fails too (the error was
    the program's)."""
    from mdc.passes.infra.diagnostics import MdcError
    from mdc.pipeline import cli, stages

    real = stages.run

    def failing_with_twins(compiler, path, ctx, compile_to):
        if ctx.settings.result_storage_twins:
            ctx.report.storage_twins.append(("squares", "squares$into", (0,)))
            raise MdcError("the twin went wrong", location="results_from_b.mlir:5:1")
        if retry_fails:
            raise MdcError("the program went wrong")
        return real(compiler, path, ctx, compile_to)

    monkeypatch.setattr(stages, "run", failing_with_twins)
    out = tmp_path / "m.vmfb"
    rc = cli.compile_main([PROGRAM, "--device=a=local[0]", "--device=b=local[1]", "--link=a:b=staged", "-o", str(out)])
    err = capfd.readouterr().err  # mdc-compile runs in a forked child
    if retry_fails:
        assert rc == 1 and not out.exists()
        assert "the twin went wrong" in err and "warning" not in err
        return
    assert rc == 0, err
    assert ("mdc-compile: warning: mdc could not compile the result-storage twins (@squares$into): "
            "results_from_b.mlir:5:1: the twin went wrong; compiled without them") in err
    from mdc.runtime_shim import load

    m = load(str(out), DEVICES)
    try:
        assert m.manifest.storage_twins == ()
        x = np.arange(4096, dtype=np.float32)
        np.testing.assert_array_equal(m.squares(x)[0], x * x)
    finally:
        m.close()
