"""The measured table cuda-matmul-configs reads, and the rule by which a
matmul finds its row (docs/DESIGN.md section 9).

matmul_table.json beside this file is written by ``python -m bench tune
pick`` (bench/tune_pick.py). A row covers one kind of op ("matmul", or
"batch_matmul": a row without ``op`` is a matmul's, as the first table's
rows are), one element type ("f16f32" and "bf16f32": f16 or bf16
operands accumulating in f32, matmul_ops.dtype_key), one layout, an M
bucket and the divisibility its tiles need; or, with ``m_dynamic``, a
matmul whose M is dynamic: that row was measured right and faster than
IREE's default at every M the tuner tried, multiples of its tiles and
not, so that it may stand for any M. ``--cuda-matmul-table=FILE`` names
another table of the same format.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os

TABLE_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "matmul_table.json")
FORMAT = 1


@dataclasses.dataclass(frozen=True)
class MatmulConfig:
    """One row of the table: the matmuls it covers (element type; layout,
    "nn" for a K x N weight and "nt" for N x K; M within [m_min, m_max];
    M, N and K multiples of the config's tiles; ``op``, "matmul" or
    "batch_matmul"; ``m_dynamic``: a row for a dynamic M, which the tuner
    measured at M from m_min to m_max) and the
    ``#iree_codegen.compilation_info`` it sets, as bench/tune.py measured
    it. ``measured``: per tuned shape, its kernel time beside IREE's
    default's and torch's in the same run, and the card."""

    dtype: str
    layout: str
    m_min: int
    m_max: int
    m_multiple: int
    n_multiple: int
    k_multiple: int
    candidate: str
    attribute: str | None  # None: the tuner measured the bucket and kept IREE's default
    measured: dict = dataclasses.field(default_factory=dict, compare=False, hash=False)
    op: str = "matmul"
    m_dynamic: bool = False

    def covers(self, dtype: str, layout: str, m: int, n: int, k: int, op: str = "matmul") -> bool:
        return (op == self.op and not self.m_dynamic and dtype == self.dtype and layout == self.layout
                and self.m_min <= m <= self.m_max and m % self.m_multiple == 0 and n % self.n_multiple == 0
                and k % self.k_multiple == 0)

    def attribute_text(self) -> str:
        """The ``#iree_codegen.compilation_info`` this row sets."""
        return self.attribute


class TableError(ValueError):
    """A table that cannot be read: the message names the file and
    ``why``, what is wrong with it."""

    def __init__(self, path: str, why: str):
        super().__init__(f"{path}: {why}")
        self.why = why


_FIELDS = {f.name for f in dataclasses.fields(MatmulConfig)}


def load_table(path: str = TABLE_PATH) -> tuple[MatmulConfig, ...]:
    """The rows of the table at ``path`` (default: the shipped one,
    passes/targets/cuda/matmul_table.json)."""
    try:
        with open(path) as f:
            data = json.load(f)
    except OSError as e:
        raise TableError(path, e.strerror) from None
    except ValueError as e:
        raise TableError(path, f"not JSON ({e})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise TableError(path, f"format {data.get('format') if isinstance(data, dict) else None!r}, "
                               f"expected {FORMAT}")
    rows = []
    for i, row in enumerate(data.get("rows", [])):
        unknown = set(row) - _FIELDS if isinstance(row, dict) else {"(not an object)"}
        try:
            if unknown:
                raise TypeError(f"unknown field {sorted(unknown)[0]}")
            rows.append(MatmulConfig(**row))
        except TypeError as e:
            raise TableError(path, f"row {i}: {e}") from None
    return tuple(rows)


def table_at(path: str | None) -> tuple[MatmulConfig, ...]:
    """The table at ``path`` (None: the shipped one), read again only
    when the file changed."""
    if path is None:
        return CONFIGS
    try:
        st = os.stat(path)
    except OSError as e:
        raise TableError(path, e.strerror) from None
    return _cached(path, st.st_mtime_ns, st.st_size)


@functools.lru_cache(maxsize=8)
def _cached(path: str, mtime_ns: int, size: int) -> tuple[MatmulConfig, ...]:
    return load_table(path)


CONFIGS = load_table()


# How far below M a bucket's row may come from where the row of M's own
# bucket does not tile M (a smaller M's config, unmeasured at this M).
FALLBACK_SPAN = 4


def config_for(dtype: str, layout: str, m: int | None, n: int, k: int, table=None,
               op: str = "matmul") -> MatmulConfig | None:
    """The row of ``table`` (default: the shipped one) for the ``op``
    (matmul or batch_matmul): the row whose M bucket holds ``m``, if its
    tiles divide the shape; else the row of the nearest bucket below,
    within a factor FALLBACK_SPAN of ``m``, whose tiles do (a smaller M's
    tiles still tile this M exactly: M = 12 takes M = 4's config, where
    M = 16's tiles do not divide it); None where no row fits, or where the
    row of M's bucket keeps IREE's default (the tuner measured it and
    nothing beat the default). ``m`` None (a dynamic M): the row measured
    for a dynamic M (``m_dynamic``) whose tiles divide N and K, else None."""
    rows = [c for c in (CONFIGS if table is None else table)
            if c.op == op and c.dtype == dtype and c.layout == layout and c.m_dynamic == (m is None)]
    if m is None:
        return next((c for c in rows if c.attribute is not None and n % c.n_multiple == 0
                     and k % c.k_multiple == 0), None)
    rows = [c for c in rows if c.m_min <= m and (m <= c.m_max or c.m_max * FALLBACK_SPAN >= m)]
    own = next((c for c in rows if c.m_min <= m <= c.m_max), None)
    if own is not None and own.attribute is None:
        return None  # measured: nothing beat IREE's default here
    rows.sort(key=lambda c: (c is not own, -c.m_max))
    return next((c for c in rows if c.attribute is not None and m % c.m_multiple == 0 and n % c.n_multiple == 0
                 and k % c.k_multiple == 0), None)
