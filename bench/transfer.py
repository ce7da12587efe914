"""``bench run DIR``: effective bandwidth of mdc's staged transfers each way,
beside the references moving the same bytes, the seed call's latency, and
values computed on one device and returned on the other."""

from __future__ import annotations

import json
import os

import numpy as np

from .common import (MIB, STAGINGS, Config, RawIree, gbps, gpu_or_none, median_time, repeats, resident_call,
                     torch_rows, values_aligned)
from .latency import seed_latency


def mdc_transfer_time(config: Config, kit: str, module_name: str, function: str, nbytes: int) -> tuple[float, bool]:
    """Median seconds per call of an mdc program moving nbytes, the argument
    already resident on its device and the result left on its device; and
    whether one more call, fetched to the host, gave the argument back."""
    from mdc.runtime_shim import load

    m = load(os.path.join(kit, module_name), ["local-task", config.gpu])
    f = m.function(function)
    host = values_aligned(nbytes)
    t = median_time(resident_call(f, f.place(0, host)), repeats(nbytes))
    ok = bool(np.array_equal(f(host), host))
    m.close()
    return t, ok


def api_result_time(config: Config, kit: str, module_name: str, function: str, nbytes: int) -> tuple[float, bool]:
    """Median seconds per call of an mdc program moving nbytes to the CPU
    through the default API, ``f(x)``, numpy out, each result dropped
    before the next call (a loop over calls); and whether the results of
    three more calls, all held, were right."""
    from mdc.runtime_shim import load

    m = load(os.path.join(kit, module_name), ["local-task", config.gpu])
    f = m.function(function)
    host = values_aligned(nbytes)
    placed = f.place(0, host)
    t = median_time(lambda: f(placed), repeats(nbytes))
    held = [f(placed) for _ in range(3)]
    ok = all(np.array_equal(y, host) for y in held)
    del held
    m.close()
    return t, ok


def _op_time(config: Config, kit: str, name: str, devices: list[str], host: np.ndarray,
             want: np.ndarray) -> tuple[float, bool]:
    """Median seconds of @name (its _copy/_emplace suffix dropped) with its
    argument placed, and whether its result is ``want``."""
    from mdc.runtime_shim import load

    m = load(os.path.join(kit, f"{name}.vmfb"), devices)
    f = m.function(name.replace("_copy", "").replace("_emplace", ""))
    t = median_time(resident_call(f, f.place(0, host)), repeats(host.nbytes))
    ok = bool(np.array_equal(np.asarray(f(host)).view(np.int8), want))
    m.close()
    return t, ok


def compute_rows(config: Config, kit: str, sizes_mib) -> None:
    """A value computed on one device and returned on the other: per-call
    time of both lowerings against the op alone on its device (stock IREE);
    the difference is the transfer."""
    gpu = config.gpu
    directions = (("CPU", "GPU", "compute_on_cpu", "compute_to_gpu", ["local-task"]),
                  ("GPU", "CPU", "compute_on_gpu", "compute_to_cpu", [gpu]))
    for producer, consumer, alone, program, alone_devices in directions:
        print(f"\nvalue computed on the {producer}, returned on the {consumer} (x + 1, bytes), median ms per call")
        print(f"  {'MiB':>5} {producer.lower() + ' op alone':>13} {'mdc copy':>12} {'mdc emplace':>12}  correct")
        for mib in sizes_mib:
            host = values_aligned(mib * MIB)
            want = (host.astype(np.int16) + 1).astype(np.int8)
            times, ok = {}, True
            for name, devices in ((alone, alone_devices),
                                  *((f"{program}_{staging}", ["local-task", gpu]) for staging in STAGINGS)):
                times[name], good = _op_time(config, kit, name, devices, host, want)
                ok = ok and good
            print(f"  {mib:>5} {times[alone] * 1e3:13.2f} {times[f'{program}_copy'] * 1e3:12.2f} "
                  f"{times[f'{program}_emplace'] * 1e3:12.2f}  {ok}")


def _bandwidth_row(config: Config, kit: str, iree: RawIree, mib: int) -> dict:
    """One size's row: both lowerings each way, the limit, the manual
    route and torch, in GB/s."""
    n = mib * MIB
    row = {"MiB": mib, "ok": True}
    for staging in STAGINGS:
        up, up_ok = mdc_transfer_time(config, kit, f"to_gpu_{staging}.vmfb", "to_gpu", n)
        down, down_ok = mdc_transfer_time(config, kit, f"to_cpu_{staging}.vmfb", "to_cpu", n)
        row.update({f"{staging}_h2d": gbps(n, up), f"{staging}_d2h": gbps(n, down)})
        row["ok"] = row["ok"] and up_ok and down_ok
    api, api_ok = api_result_time(config, kit, "to_cpu_emplace.vmfb", "to_cpu", n)
    row["api_d2h"] = gbps(n, api)
    row["ok"] = row["ok"] and api_ok
    lim_up, lim_down = iree.queue_copy_limit(n)
    man_up, man_down = iree.manual(values_aligned(n))
    row.update({"limit_h2d": gbps(n, lim_up), "limit_d2h": gbps(n, lim_down),
                "manual_h2d": gbps(n, man_up), "manual_d2h": gbps(n, man_down)})
    torch = torch_rows(n)
    if torch:
        for kind, short in (("pinned", "pin"), ("pageable", "page"), ("new", "new")):
            row[f"torch_{short}_h2d"] = gbps(n, torch[kind][0])
            row[f"torch_{short}_d2h"] = gbps(n, torch[kind][1])
    return row


COLUMNS = ["copy_h2d", "copy_d2h", "emplace_h2d", "emplace_d2h", "api_d2h", "limit_h2d", "limit_d2h", "torch_pin_h2d",
           "torch_pin_d2h", "torch_page_h2d", "torch_page_d2h", "torch_new_h2d", "torch_new_d2h", "manual_h2d",
           "manual_d2h"]


def run(config: Config, kit: str, sizes_mib) -> int:
    kit = os.path.abspath(kit)
    iree = gpu_or_none(config)
    if iree is None:
        return config.no_gpu_status()
    gpu = config.gpu
    rows = []
    for mib in sizes_mib:
        rows.append(_bandwidth_row(config, kit, iree, mib))
        print(json.dumps(rows[-1]), flush=True)
    latency = {
        **{f"mdc local+cuda, {staging}": seed_latency(kit, f"seed_mdc_{staging}.vmfb", ["local-task", gpu])
           for staging in STAGINGS},
        "stock cuda+cuda": seed_latency(kit, "seed_cuda_cuda.vmfb", [gpu, gpu]),
        "stock local+local": seed_latency(kit, "seed_local_local.vmfb", ["local-task", "local-task"]),
    }
    print("\neffective bandwidth, GB/s (median; mdc rows are whole program calls; api_d2h: the default "
          "API, f(x) with numpy out, into the shim's pooled pinned memory)")
    print(f"{'MiB':>5} " + " ".join(f"{c:>14}" for c in COLUMNS) + "  correct")
    for r in rows:
        print(f"{r['MiB']:>5} " + " ".join(f"{r.get(c, float('nan')):>14.2f}" for c in COLUMNS) + f"  {r['ok']}")
    print("\nseed program (4xf32) per call, median of 300 calls")
    for name, t in latency.items():
        print(f"  {name:24} {t * 1e3:8.3f} ms")
    for r in rows:
        print(f"  {r['MiB']} MiB GPU->CPU through the default API: {r['api_d2h'] / r['limit_d2h']:.2f}x the "
              f"limit, {r['api_d2h'] / r['torch_page_d2h'] if 'torch_page_d2h' in r else float('nan'):.2f}x "
              "torch's copy_ into an existing pageable tensor")
    for staging in STAGINGS:
        ratio = latency[f"mdc local+cuda, {staging}"] / latency["stock cuda+cuda"]
        print(f"  ratio mdc ({staging}) / stock cuda+cuda: {ratio:.2f}x")
    compute_rows(config, kit, sizes_mib)
    return 0
