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

Rows are kept apart by kind: a batch matmul's (``op`` "batch_matmul",
its buckets those of kernel_grid.ATTENTION_MS) and a dynamic M's
(``m_dynamic``: one row per (dtype, layout), chosen by the same rule over
every M it was timed at, multiples of its tiles or not, so that it may
stand for any M). A plain matmul's row names no ``op``, as the first
table's rows do. ``pick`` replaces in the table only the rows of the kinds
and element types RESULTS measured: a batch run picked into the shipped
table keeps its matmul rows, and a mixed run (``--ops mixed``: "f16f32"
and "bf16f32") its f32, f16 and bf16 rows.
"""

from __future__ import annotations

import json
import os

from .kernel_grid import ATTENTION_MS, MS
from .kernel_runner import results
from .kitframe import KitError
from .tune import FASTER, _groups, choose, default_compiles

TABLE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                     "passes", "targets", "cuda", "matmul_table.json")
M_LIMIT = 1 << 31


def bucket(m: int, ms: tuple = MS) -> tuple[int, int]:
    i = ms.index(m)
    low = ms[i - 1] + 1 if i else 1
    return low, (M_LIMIT if i == len(ms) - 1 else m)


# A row's fields by kind: its op, and whether it is a dynamic M's.
_KINDS = {"matmul": {}, "batch_matmul": {"op": "batch_matmul"}, "dynamic_matmul": {"m_dynamic": True}}


def _span(kind: str, m: int, by_shape: dict) -> tuple[int, int]:
    """The row's M range: its bucket's, or a dynamic M's, the Ms timed."""
    if kind == "dynamic_matmul":
        ms = [shape[0] for shape in by_shape]
        return min(ms), max(ms)
    return bucket(m, ATTENTION_MS if kind == "batch_matmul" else MS)


def _shape(shape: tuple) -> dict:
    m, k, n, batch = shape
    return dict(m=m, k=k, n=n, **({"batch": batch} if batch else {}))


def rows_from(rows: list[dict], device: str) -> tuple[list[dict], list[str]]:
    """(table rows, one line per (kind, dtype, layout, M) that ships nothing)."""
    table, none = [], []
    for (kind, dt, lay, m), by_shape in sorted(_groups(rows).items()):
        name = f"{dt} {lay} M={m}" if kind == "matmul" else f"{kind} {dt} {lay} " + ("any M" if not m else f"M={m}")
        card = device or _cards(by_shape)
        best, score = choose(by_shape)
        if best is None:
            none.append(f"{name}: no candidate right at every shape")
            continue
        compiles = default_compiles(by_shape)
        ratios = [c[best]["kernel_us"] / c["default"]["kernel_us"] for c in by_shape.values()] if compiles else [0]
        if max(ratios) > FASTER:
            none.append(f"{name}: best {best} at {score:.2f}x the default, but {max(ratios):.2f}x at worst")
            table.append(_default_row(kind, dt, lay, m, by_shape, card))
            continue
        any_row = next(iter(by_shape.values()))[best]
        low, high = _span(kind, m, by_shape)
        shapes = [dict(_shape(shape), kernel_us=round(c[best]["kernel_us"], 2),
                       default_us=round(c["default"]["kernel_us"], 2) if compiles else None,
                       torch_us=round(c[best]["torch_us"], 2) if c[best].get("torch_us") else None)
                  for shape, c in sorted(by_shape.items())]
        # A dynamic M's row holds for any M: M need not be a multiple of its tiles.
        m_multiple = 1 if kind == "dynamic_matmul" else any_row["m_multiple"]
        table.append(dict(dtype=dt, layout=lay, m_min=low, m_max=high, m_multiple=m_multiple,
                          n_multiple=any_row["n_multiple"], k_multiple=any_row["k_multiple"], candidate=best,
                          attribute=any_row["attribute"], measured=dict(device=card, shapes=shapes),
                          **_KINDS[kind]))
    return table, none


def _cards(by_shape: dict) -> str:
    """The cards the group's results were measured on (pick's --card)."""
    return ", ".join(sorted({r["card"] for c in by_shape.values() for r in c.values() if r.get("card")}))


def _default_row(kind: str, dt: str, lay: str, m: int, by_shape: dict, device: str) -> dict:
    """A row that keeps IREE's default for the bucket (no candidate beat it
    at every shape), so that no smaller bucket's row stands in for it."""
    low, high = _span(kind, m, by_shape)
    shapes = [dict(_shape(shape), default_us=round(c["default"]["kernel_us"], 2),
                   torch_us=round(c["default"]["torch_us"], 2) if c["default"].get("torch_us") else None)
              for shape, c in sorted(by_shape.items())]
    return dict(dtype=dt, layout=lay, m_min=low, m_max=high, m_multiple=1, n_multiple=1, k_multiple=1,
                candidate="default", attribute=None, measured=dict(device=device, shapes=shapes), **_KINDS[kind])


def _kind(row: dict) -> tuple[str, bool]:
    return row.get("op", "matmul"), bool(row.get("m_dynamic"))


def merged(old: list[dict], new: list[dict]) -> list[dict]:
    """``old``'s rows of the (kind, element type)s ``new`` has none of,
    then ``new``'s."""
    kinds = {(*_kind(r), r["dtype"]) for r in new}
    rows = [r for r in old if (*_kind(r), r["dtype"]) not in kinds] + new
    return sorted(rows, key=lambda r: (*_kind(r), r["dtype"], r["layout"], r["m_min"]))


def _rows_at(path: str) -> list[dict]:
    """The rows of the table at ``path`` (none where there is no file)."""
    if not os.path.exists(path):
        return []
    try:
        with open(path) as f:
            return json.load(f)["rows"]
    except (ValueError, KeyError, TypeError) as e:
        raise KitError(f"{path} is not a table to add rows to ({type(e).__name__}: {e}); "
                       "pick with -o NEW.json") from None


def pick(paths: list[str], output: str | None, device: str = "", cards: list[str] | None = None) -> int:
    """``cards``: the card each results file was measured on, in order
    (one name for all of them, or none), recorded in each row's
    ``measured.device``."""
    cards = cards or []
    if len(cards) not in (0, 1, len(paths)):
        raise KitError(f"--card given {len(cards)} times for {len(paths)} results files: give it once, or once a file")
    named = cards if len(cards) == len(paths) else cards * len(paths) if cards else [""] * len(paths)
    rows = [dict(r, card=card) if card else r for p, card in zip(paths, named) for r in results(p)]
    table, none = rows_from(rows, device)
    out = output or TABLE
    rows_out = merged(_rows_at(out), table)
    text = json.dumps(dict(format=1, rows=rows_out), indent=1) + "\n"
    tmp = out + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, out)
    kept = len(rows_out) - len(table)
    print(f"{len(table)} rows written to {out}" + (f" ({kept} rows of other kinds kept)" if kept else ""))
    for line in none:
        print("  no row:", line)
    return 0
