"""The runners of gpu_kit's own, each in a child process
(``gpu_kit.py _NAME ...``): the shim's placed, lent, resident, pipelined,
other-thread and given-back calls."""

from __future__ import annotations

import numpy as np


def _runner_arguments(argv) -> tuple[dict, list[str], list[np.ndarray]]:
    """A runner's flags as iree-run-module's: (--flag -> value, the
    --device values in order, the --input=@file arrays in order)."""
    flags = dict(a.split("=", 1) for a in argv)
    devices = [a.split("=", 1)[1] for a in argv if a.startswith("--device=")]
    inputs = [np.load(a.split("=@", 1)[1]) for a in argv if a.startswith("--input=@")]
    return flags, devices, inputs


def _in_pool_memory(array: np.ndarray) -> bool:
    """The array is over the shim's pooled memory (a result-storage twin's
    result), not a copy."""
    from mdc.runtime_shim import result_storage

    base = array
    while isinstance(base, np.ndarray) and base.base is not None:
        base = base.base
    return isinstance(base, result_storage._Lease)


def _placed(argv) -> int:
    """Runner ``placed``: each input placed once (runtime_shim's
    Function.place), a call with input 0's bytes overwritten in place (its
    result must differ from the first call's), then with them restored (its
    result, which must equal the first call's, is the output)."""
    from mdc.runtime_shim import load

    flags, devices, inputs = _runner_arguments(argv)
    m = load(flags["--module"], devices)
    try:
        f = m.function(flags["--function"])
        placed = [f.place(i, x) for i, x in enumerate(inputs)]
        first = np.asarray(f(*placed))
        kept = placed[0].array.copy()
        placed[0].array[...] = 0
        other = np.asarray(f(*placed))
        placed[0].array[...] = kept
        again = np.asarray(f(*placed))
        np.save(flags["--output"].lstrip("@"), again)
    finally:
        m.close()
    if np.array_equal(other, first):
        print("a call after overwriting input 0 in place gave the first call's result")
        return 1
    if not np.array_equal(again, first):
        print("a call after restoring input 0 differs from the first call")
        return 1
    return 0


def _lent(argv) -> int:
    """Runner ``lent``: a linear function of one input called on it scaled
    by 1, 2, 4 and 8, every result held: each must be an array over the
    shim's pooled memory (after the first call, which learns a dynamic
    shape), none may share memory with another, and each must be its scale
    times the first (exact: powers of two). The first is the output."""
    from mdc.runtime_shim import load

    flags, devices, (x,) = _runner_arguments(argv)
    m = load(flags["--module"], devices)
    try:
        f = m.function(flags["--function"])
        held = [f(x * np.float32(2 ** k)) for k in range(4)]
        np.save(flags["--output"].lstrip("@"), held[0])
        for k, y in enumerate(held[1:], 1):
            if not _in_pool_memory(y):
                print(f"call {k}: the result is a copy, not the shim's pooled memory")
                return 1
            if not np.array_equal(y, held[0] * np.float32(2 ** k)):
                print(f"call {k}: a held result is not {2 ** k} times the first")
                return 1
        if len({y.ctypes.data for y in held}) != len(held):
            print("two held results share memory")
            return 1
    finally:
        m.close()
    return 0


def _resident(argv) -> int:
    """Runner ``resident``: 16 calls on input 0 plus k, each result left on
    the GPU (call_on_devices), every other one dropped at once (its memory
    goes back through the device's queue, runtime_shim/cuda_free.py, and the next
    calls reuse it): each held result, read back at the end, must equal a
    plain call's on the same input. The first is the output."""
    from mdc.runtime_shim import load

    flags, devices, (x,) = _runner_arguments(argv)
    m = load(flags["--module"], devices)
    try:
        f = m.function(flags["--function"])
        xs = [x + x.dtype.type(k) for k in range(16)]
        held = {}
        for k, v in enumerate(xs):
            (result,) = f.call_on_devices(v)
            if k % 2 == 0:
                held[k] = result
            del result
        got = {k: r.to_host() for k, r in held.items()}
        np.save(flags["--output"].lstrip("@"), got[0])
        for k, y in got.items():
            if not np.array_equal(y, np.asarray(f(xs[k]))):
                print(f"call {k}: the held result differs from a plain call's on the same input")
                return 1
    finally:
        m.close()
    return 0


def _pipelined(argv) -> int:
    """Runner ``pipelined``: the function called on 12 inputs (input 0
    scaled by 1 + k/8), first one call after another, then through
    Function.map with 3 calls in flight, every result held: each pipelined
    result must equal its plain call's, and be an array over the shim's
    pooled memory where the function has a result-storage twin. The first
    is the output."""
    from mdc.runtime_shim import load

    flags, devices, (x,) = _runner_arguments(argv)
    m = load(flags["--module"], devices)
    try:
        f = m.function(flags["--function"])
        xs = [x * np.float32(1 + k / 8) for k in range(12)]
        plain = [np.array(f(v)) for v in xs]
        piped = list(f.map(xs, depth=3))
        np.save(flags["--output"].lstrip("@"), piped[0])
        for k, (a, b) in enumerate(zip(piped, plain)):
            if not np.array_equal(a, b):
                print(f"item {k}: the pipelined result differs from the plain call's")
                return 1
        if len(piped) != len(xs):
            print(f"map gave {len(piped)} results for {len(xs)} inputs")
            return 1
        if m.manifest.storage_twin(f.name) is not None:
            for k, y in enumerate(piped):
                if not _in_pool_memory(y):
                    print(f"item {k}: the pipelined result is a copy, not the shim's pooled memory")
                    return 1
    finally:
        m.close()
    return 0


def _other_thread(argv) -> int:
    """Runner ``other_thread``: the module loaded on this thread, then
    called on a new one (a plain call, a call leaving its results on the
    devices brought to the host there, and a Placed input), each result
    equal to the plain call's on the loading thread. The new thread's
    result is the output."""
    import threading

    from mdc.runtime_shim import load

    flags, devices, (x,) = _runner_arguments(argv)
    m = load(flags["--module"], devices)
    got, errors = {}, []

    def calls():
        try:
            got["plain"] = np.array(f(x))
            got["on_devices"] = f.call_on_devices(x)[0].to_host()
            got["placed"] = np.array(f(f.place(0, x)))
        except Exception as e:  # the thread's error is the runner's
            errors.append(e)

    try:
        f = m.function(flags["--function"])
        here = np.array(f(x))
        t = threading.Thread(target=calls)
        t.start()
        t.join()
        if errors:
            print(f"a call on another thread failed: {type(errors[0]).__name__}: {errors[0]}"[:400])
            return 1
        np.save(flags["--output"].lstrip("@"), got["plain"])
        for how, y in got.items():
            if not np.array_equal(y, here):
                print(f"{how} on another thread differs from the call on the loading thread")
                return 1
    finally:
        m.close()
    return 0


def _given_back(argv) -> int:
    """Runner ``given_back`` (argument_stored_on_gpu.mlir): input 0 given
    to @keep as an array, which the shim places on the GPU for that call
    and gives back through the GPU's queue once it is done, then as a
    Placed input, given back when released; after each, eight placements
    of other values reuse the memory given back, and @kept must still read
    what @keep stored (IREE copies an argument it stores in a global). The
    first read is the output; the run fails unless each of the two steps
    gave exactly one buffer back."""
    from mdc.runtime_shim import load

    flags, devices, (x,) = _runner_arguments(argv)
    m = load(flags["--module"], devices)
    try:
        keep, kept = m.function("keep"), m.function("kept")
        free = m._ledger.queue_free[keep._arg_devices[0]]
        counts = []

        def given_back_by(step) -> None:
            before = free._value  # queue deallocas asked so far
            step()
            counts.append(free._value - before)

        given_back_by(lambda: keep(x))
        reused = [keep.place(0, -x - np.float32(k)) for k in range(8)]
        first = np.asarray(kept())
        np.save(flags["--output"].lstrip("@"), first)
        del reused
        placed = keep.place(0, 2 * x)
        keep(placed)
        given_back_by(placed.release)
        reused = [keep.place(0, -x - np.float32(k)) for k in range(8)]
        second = np.asarray(kept())
        del reused
        if counts != [1, 1]:
            print(f"buffers given back by the call and by the release: {counts}, expected [1, 1]")
            return 1
        if not np.array_equal(second, 2 * x):
            print("@kept after a Placed input was stored and released differs from it")
            return 1
    finally:
        m.close()
    return 0


# The runners of this file's own (each a subprocess: `gpu_kit.py _NAME ...`).
RUNNERS = {"placed": _placed, "lent": _lent, "resident": _resident, "pipelined": _pipelined,
            "other_thread": _other_thread, "given_back": _given_back}
