"""``bench pieces DIR``: CPU->GPU bandwidth of an argument by piece count
(``mdc-compile --staging-pieces``), beside the queue_copy limit."""

from __future__ import annotations

import os
import sys
import time

from .common import MIB, PIECE_COUNTS, Config, gbps, gpu_or_none
from .transfer import mdc_transfer_time


def pieces(config: Config, kit: str, sizes_mib) -> int:
    """CPU->GPU bandwidth of an argument by piece count, with the limit."""
    kit = os.path.abspath(kit)
    iree = gpu_or_none(config)
    if iree is None:
        return config.no_gpu_status()
    print("argument CPU->GPU by --staging-pieces, GB/s (median; whole program calls)")
    print("(auto: the default, one piece per 16 MiB up to 16; pN: --staging-pieces=N)")
    columns = {"auto": "to_gpu_emplace.vmfb", **{f"p{p}": f"to_gpu_pieces_{p}.vmfb" for p in PIECE_COUNTS}}
    print(f"{'MiB':>5} " + " ".join(f"{c:>7}" for c in columns) + f" {'limit':>7}  correct")
    for mib in sizes_mib:
        n = mib * MIB
        cells, ok = [], True
        for count, module in columns.items():
            began = time.perf_counter()
            t, good = mdc_transfer_time(config, kit, module, "to_gpu", n)
            cells.append(gbps(n, t))
            ok = ok and good
            print(f"  [{mib} MiB, {count}: {gbps(n, t):.2f} GB/s, {good}, "
                  f"{time.perf_counter() - began:.1f} s]", file=sys.stderr, flush=True)
        limit = gbps(n, iree.queue_copy_limit(n)[0])
        print(f"{mib:>5} " + " ".join(f"{c:7.2f}" for c in cells) + f" {limit:7.2f}  {ok}", flush=True)
    return 0
