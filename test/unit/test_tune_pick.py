"""The tuner's choice (bench/tune.py choose, bench/tune_pick.py rows_from)
on made-up measurements: the rule that decides what ships."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from bench.tune_pick import bucket, rows_from  # noqa: E402


def _row(cand, m, k, n, us, error=1e-7, dtype="f32", layout="nn"):
    r = dict(function=f"{cand}_{m}_{k}_{n}", candidate=cand, point=dict(dtype=dtype, layout=layout, m=m, k=k, n=n),
             kernel_us=us, error=error, torch_us=us / 2)
    if cand != "default":
        r.update(attribute=f"#attr<{cand}>", m_multiple=1, n_multiple=32, k_multiple=64)
    return r


def _shapes(times, m=16, error=None):
    rows = []
    for (k, n), by_cand in zip(((2048, 2048), (2048, 5632)), times):
        for cand, us in by_cand.items():
            rows.append(_row(cand, m, k, n, us, **({"error": error[cand]} if error and cand in error else {})))
    return rows


def test_the_best_geometric_mean_ships_with_what_it_measured():
    rows = _shapes([{"default": 100, "a": 50, "b": 40}, {"default": 100, "a": 50, "b": 60}])
    table, none = rows_from(rows, "H100")
    assert none == []
    (row,) = table
    assert row["candidate"] == "b"  # sqrt(0.4 * 0.6) < 0.5
    assert (row["m_min"], row["m_max"]) == bucket(16) == (9, 16)
    assert [s["kernel_us"] for s in row["measured"]["shapes"]] == [40, 60]
    assert [s["default_us"] for s in row["measured"]["shapes"]] == [100, 100]
    assert row["measured"]["device"] == "H100"


def test_no_row_where_the_best_is_slower_than_the_default_at_one_shape():
    rows = _shapes([{"default": 100, "a": 20}, {"default": 100, "a": 120}])
    table, none = rows_from(rows, "")
    assert len(none) == 1 and "1.20x at worst" in none[0]
    # A row keeps IREE's default for the bucket, with what was measured.
    assert [(r["candidate"], r["attribute"]) for r in table] == [("default", None)]
    assert [s["default_us"] for s in table[0]["measured"]["shapes"]] == [100, 100]


def test_a_wrong_candidate_is_never_chosen():
    rows = _shapes([{"default": 100, "a": 50, "b": 10}, {"default": 100, "a": 50, "b": 10}],
                   error={"b": 0.5})
    table, _ = rows_from(rows, "")
    assert [r["candidate"] for r in table] == ["a"]


def test_a_candidate_missing_at_one_shape_is_not_chosen():
    rows = _shapes([{"default": 100, "a": 50, "b": 10}, {"default": 100, "a": 50}])
    table, _ = rows_from(rows, "")
    assert [r["candidate"] for r in table] == ["a"]


def test_buckets_cover_every_m_once():
    from bench.kernel_grid import MS
    covered = []
    for m in MS:
        low, high = bucket(m)
        covered.append((low, min(high, 4096)))
    assert covered[0][0] == 1
    assert all(a[1] + 1 == b[0] for a, b in zip(covered, covered[1:]))
    assert bucket(MS[-1])[1] >= 1 << 31


def test_where_the_default_does_not_compile_the_candidate_nearest_torch_ships():
    rows = [r for r in _shapes([{"default": 100, "a": 50, "b": 40}, {"default": 100, "a": 50, "b": 60}])
            if not (r["candidate"] == "default" and r["point"]["n"] == 5632)]
    for r in rows:
        r["torch_us"] = 10.0
    table, none = rows_from(rows, "")
    (row,) = table
    assert row["candidate"] == "b"  # against torch: sqrt(4 * 6) < sqrt(5 * 5)
    assert [s["default_us"] for s in row["measured"]["shapes"]] == [None, None]
    # A candidate far from the reference does not ship, though nothing else compiles.
    for r in rows:
        if r["candidate"] != "default":
            r["error"] = 0.5
    assert rows_from(rows, "")[0] == []
