"""``bench kernels run``'s table: one row per grid point, then the targets.

Every column comes from the same run. cuda rows: IREE's default kernel,
mdc's, torch's, the weight-read floor (the point's bytes over the GPU's
copy bandwidth), and mdc / torch against the target. CPU rows: stock
IREE's default CPU code, mdc's, torch's CPU time. A (target, dtype) row of
the summary is met only if every one of its points is.
"""

from __future__ import annotations

import math

from .kernel_grid import Point
from .kernel_timing import ERROR_LIMIT
from .kernels import TARGETS


def _points(rows: list[dict]) -> dict[tuple, dict[str, dict]]:
    g: dict = {}
    for r in rows:
        p = r["point"]
        g.setdefault((r["target"], p["dtype"], p["layout"], p["m"], p["k"], p["n"]), {})[r["variant"]] = r
    return g


def _us(row: dict | None) -> float:
    return row["kernel_us"] if row and "failed" not in row else math.nan


def _geo(values: list[float]) -> float:
    good = [v for v in values if v == v and v > 0]
    return math.exp(sum(map(math.log, good)) / len(good)) if good else math.nan


def report(rows: list[dict], bandwidth: float | None) -> int:
    wrong, ratios = [], {}
    print(f"{'target':6} {'dtype':7} {'lay':3} {'M':>5} {'K':>6} {'N':>6} | {'floor':>8} {'default':>9} {'mdc':>9} "
          f"{'torch':>9} | {'mdc/torch':>9} {'dflt/torch':>10} | target")
    for key, v in sorted(_points(rows).items()):
        target, dt, lay, m, k, n = key
        mdc, default = v.get("mdc"), v.get("default")
        torch_time = next((r.get("torch_us") for r in v.values() if r.get("torch_us")), None)
        for name, r in v.items():
            if "failed" in r or r["error"] > ERROR_LIMIT[dt]:
                wrong.append(f"{target} {name} {dt} {lay} {m}x{k}x{n}: {r.get('failed') or 'error %.2e' % r['error']}")
        floor = Point(dt, lay, m, k, n).bytes / bandwidth * 1e6 if bandwidth and target == "cuda" else math.nan
        ratio = _us(mdc) / torch_time if torch_time else math.nan
        dratio = _us(default) / torch_time if torch_time else math.nan
        limit = TARGETS.get((target, dt))
        ratios.setdefault((target, dt), []).append((ratio, dratio, key))
        verdict = "-" if limit is None or ratio != ratio else ("met" if ratio <= limit else f"> {limit}")
        print(f"{target:6} {dt:7} {lay:3} {m:5} {k:6} {n:6} | {floor:8.1f} {_us(default):9.1f} {_us(mdc):9.1f} "
              f"{(torch_time or math.nan):9.1f} | {ratio:9.2f} {dratio:10.2f} | {verdict}")
    print()
    print(f"{'target':6} {'dtype':7} | {'points':>6} {'met':>5} | {'mdc/torch: geo':>14} {'worst':>7} | "
          f"{'default/torch: geo':>18} | worst point")
    for (target, dt), rs in sorted(ratios.items()):
        limit = TARGETS.get((target, dt))
        met = sum(1 for r, _, _ in rs if limit and r == r and r <= limit)
        worst = max(rs, key=lambda t: t[0] if t[0] == t[0] else math.inf)
        print(f"{target:6} {dt:7} | {len(rs):6} {met:5} | {_geo([r for r, _, _ in rs]):14.2f} {worst[0]:7.2f} | "
              f"{_geo([d for _, d, _ in rs]):18.2f} | {' '.join(map(str, worst[2][2:]))}"
              + ("  (target met at every point)" if met == len(rs) else f"  (target <= {limit}x: not met)"))
    for line in wrong:
        print("WRONG:", line)
    return 1 if wrong else 0
