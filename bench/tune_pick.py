"""``python -m bench tune pick RESULTS... [-o TABLE]``: the rows to ship.

For each (dtype, layout, M) of the tuning grid, bench/tune.py's ``choose``
gives the candidate with the smallest geometric mean of its kernel time
over IREE's default's across the tuned shapes. A row ships only where that
candidate was right and at least 3% faster than the default at every tuned
shape, or where IREE's default does not compile at some tuned shape (then
its ``default_us`` is null and the candidate is the one closest to torch).
Its M bucket runs from just above the grid's previous M to its own
M (the largest M covers every larger one); it applies where M, N and K are
multiples of the candidate's tiles. Where a candidate was measured but
none beat the default, a row with no attribute keeps IREE's default for
the bucket. Each row keeps, per shape, its kernel
time, the default's and torch's from the same run.
"""

from __future__ import annotations

import json
import os

from .kernel_grid import MS
from .kernel_runner import results
from .tune import FASTER, _groups, choose, default_compiles

TABLE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                     "passes", "targets", "cuda", "matmul_table.json")
M_LIMIT = 1 << 31


def bucket(m: int) -> tuple[int, int]:
    i = MS.index(m)
    low = MS[i - 1] + 1 if i else 1
    return low, (M_LIMIT if i == len(MS) - 1 else m)


def rows_from(rows: list[dict], device: str) -> tuple[list[dict], list[str]]:
    """(table rows, one line per (dtype, layout, M) that ships nothing)."""
    table, none = [], []
    for (dt, lay, m), by_shape in sorted(_groups(rows).items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][2])):
        best, score = choose(by_shape)
        if best is None:
            none.append(f"{dt} {lay} M={m}: no candidate right at every shape")
            continue
        compiles = default_compiles(by_shape)
        ratios = [c[best]["kernel_us"] / c["default"]["kernel_us"] for c in by_shape.values()] if compiles else [0]
        if max(ratios) > FASTER:
            none.append(f"{dt} {lay} M={m}: best {best} at {score:.2f}x the default, but {max(ratios):.2f}x at worst")
            table.append(_default_row(dt, lay, m, by_shape, device))
            continue
        any_row = next(iter(by_shape.values()))[best]
        low, high = bucket(m)
        shapes = [dict(m=m, k=k, n=n, kernel_us=round(c[best]["kernel_us"], 2),
                       default_us=round(c["default"]["kernel_us"], 2) if compiles else None,
                       torch_us=round(c[best]["torch_us"], 2) if c[best].get("torch_us") else None)
                  for (k, n), c in sorted(by_shape.items())]
        table.append(dict(dtype=dt, layout=lay, m_min=low, m_max=high, m_multiple=any_row["m_multiple"],
                          n_multiple=any_row["n_multiple"], k_multiple=any_row["k_multiple"], candidate=best,
                          attribute=any_row["attribute"], measured=dict(device=device, shapes=shapes)))
    return table, none


def _default_row(dt: str, lay: str, m: int, by_shape: dict, device: str) -> dict:
    """A row that keeps IREE's default for the bucket (no candidate beat it
    at every shape), so that no smaller bucket's row stands in for it."""
    low, high = bucket(m)
    shapes = [dict(m=m, k=k, n=n, default_us=round(c["default"]["kernel_us"], 2),
                   torch_us=round(c["default"]["torch_us"], 2) if c["default"].get("torch_us") else None)
              for (k, n), c in sorted(by_shape.items())]
    return dict(dtype=dt, layout=lay, m_min=low, m_max=high, m_multiple=1, n_multiple=1, k_multiple=1,
                candidate="default", attribute=None, measured=dict(device=device, shapes=shapes))


def pick(paths: list[str], output: str | None, device: str = "") -> int:
    rows = [r for p in paths for r in results(p)]
    table, none = rows_from(rows, device)
    text = json.dumps(dict(format=1, rows=table), indent=1) + "\n"
    out = output or TABLE
    tmp = out + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, out)
    print(f"{len(table)} rows written to {out}")
    for line in none:
        print("  no row:", line)
    return 0
