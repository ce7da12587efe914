"""``bench pinned DIR``: arguments and output storage given in the GPU's
pinned memory (``mdc-compile --pinned-arguments``), beside the default, the
queue_copy limit and torch."""

from __future__ import annotations

import gc
import os

import numpy as np

from .common import MIB, Config, RawIree, gbps, gpu_or_none, median_time, repeats, resident_call, torch_rows
from .common import values_aligned
from .transfer import mdc_transfer_time


def _finish_row(iree: RawIree, mib: int, row: dict, cols, ok: bool, direction: int) -> None:
    """Adds the references (the queue_copy limit, torch pinned and
    pageable; ``direction`` 0: CPU->GPU, 1: GPU->CPU) to ``row`` and prints it."""
    n = mib * MIB
    row["limit"] = gbps(n, iree.queue_copy_limit(n)[direction])
    torch = torch_rows(n)
    if torch:
        row["torch_pin"] = gbps(n, torch["pinned"][direction])
        row["torch_page"] = gbps(n, torch["pageable"][direction])
    print(f"{mib:>5} " + " ".join(f"{row.get(c, float('nan')):>10.2f}" for c in cols) + f"  {ok}", flush=True)


def _pinned_argument_cells(config: Config, kit: str, host: np.ndarray, row: dict) -> bool | None:
    """The pinned, +copy and +register cells of ``row``; whether the
    result was right, or None if the module pins no argument."""
    from mdc.runtime_shim import load

    n = host.nbytes
    m = load(os.path.join(kit, "to_gpu_pinned.vmfb"), ["local-task", config.gpu])
    f = m.function("to_gpu")
    if 0 not in f.pinned_arguments:
        m.close()
        return None
    calls = (("pinned", resident_call(f, f.place(0, host))),  # placed once, reused
             ("+copy", lambda: f.call_on_devices(f.place(0, host))),  # a new pinned copy per call
             ("+register", lambda: f.call_on_devices(host)))  # placed by the call: its pages registered
    for name, call in calls:
        row[name] = gbps(n, median_time(call, repeats(n)))
        gc.collect()
    del calls
    ok = bool(np.array_equal(f(host), host))
    m.close()
    return ok


def _into_call(config: Config, kit: str, module_name: str, host: np.ndarray):
    """(module, call, correct) for to_cpu_into: the argument resident on the
    GPU, the output storage placed once (Function.place: in the GPU's pinned
    memory when the module pins it, else in the CPU's memory) and reused."""
    from mdc.runtime_shim import load

    m = load(os.path.join(kit, module_name), ["local-task", config.gpu])
    f = m.function("to_cpu_into")
    source, storage = f.place(0, host), f.place(1, np.zeros_like(host))

    def correct():
        storage.array[...] = 0
        return bool(np.array_equal(f(host, storage), host))

    return m, resident_call(f, source, storage), correct


def _h2d(config: Config, kit: str, iree: RawIree, sizes_mib) -> int:
    print("argument CPU->GPU, GB/s (median; whole program calls, result left on the GPU)")
    print("  default: the argument in the CPU's memory (host copy into pinned, in pieces)")
    print("  pinned: --pinned-arguments, the argument placed in the GPU's pinned memory once, reused")
    print("  +copy / +register: placed by the shim on every call, copied into a new pinned")
    print("  buffer / the array's own pages registered (cuMemHostRegister), counted in the call")
    cols = ["default", "pinned", "+copy", "+register", "limit", "torch_pin", "torch_page"]
    print(f"{'MiB':>5} " + " ".join(f"{c:>10}" for c in cols) + "  correct")
    for mib in sizes_mib:
        n = mib * MIB
        row = {}
        t, ok = mdc_transfer_time(config, kit, "to_gpu_emplace.vmfb", "to_gpu", n)
        row["default"] = gbps(n, t)
        good = _pinned_argument_cells(config, kit, values_aligned(n), row)
        if good is None:
            print("bench: to_gpu_pinned.vmfb pins no argument")
            return 1
        _finish_row(iree, mib, row, cols, ok and good, direction=0)
    return 0


def _d2h(config: Config, kit: str, iree: RawIree, sizes_mib) -> None:
    print("\nresult GPU->CPU, GB/s (median; whole program calls)")
    print("  default: a new result buffer each call; into: to_cpu_into.mlir, written into an output")
    print("  argument (iree.abi.output) placed once in the CPU's memory; pinned: the same with")
    print("  --pinned-arguments, the output placed once in the GPU's pinned memory")
    cols = ["default", "into", "pinned", "limit", "torch_pin", "torch_page"]
    print(f"{'MiB':>5} " + " ".join(f"{c:>10}" for c in cols) + "  correct")
    for mib in sizes_mib:
        n = mib * MIB
        host = values_aligned(n)
        row = {}
        t, ok = mdc_transfer_time(config, kit, "to_cpu_emplace.vmfb", "to_cpu", n)
        row["default"] = gbps(n, t)
        for name, module in (("into", "to_cpu_into.vmfb"), ("pinned", "to_cpu_into_pinned.vmfb")):
            m, call, correct = _into_call(config, kit, module, host)
            row[name] = gbps(n, median_time(call, repeats(n)))
            ok = ok and correct()
            # Both closures hold the GPU argument's Placed input; no HAL
            # object may outlive its module (runtime_shim Module.close).
            del call, correct
            m.close()
        _finish_row(iree, mib, row, cols, ok, direction=1)


def pinned(config: Config, kit: str, sizes_mib) -> int:
    """CPU->GPU bandwidth of an argument given in the GPU's pinned memory,
    then GPU->CPU of a result written into an output argument."""
    kit = os.path.abspath(kit)
    iree = gpu_or_none(config)
    if iree is None:
        return config.no_gpu_status()
    if _h2d(config, kit, iree, sizes_mib):
        return 1
    _d2h(config, kit, iree, sizes_mib)
    return 0
