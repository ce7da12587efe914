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


def _kind_rows(times, point_extra, ms=(16,)):
    """Rows of a batch or dynamic point at each M of ``ms`` and two shapes."""
    rows = []
    for m in ms:
        for r in _shapes(times, m=m):
            r["point"].update(point_extra)
            r["function"] += f"_{m}"
            rows.append(r)
    return rows


def test_a_batch_matmul_row_names_its_op_and_takes_attentions_buckets():
    rows = _kind_rows([{"default": 100, "a": 50}, {"default": 100, "a": 60}], {"batch": 32}, ms=(128,))
    rows += _shapes([{"default": 100, "b": 50}, {"default": 100, "b": 50}], m=128)  # a plain matmul's
    table, none = rows_from(rows, "")
    assert none == []
    batch, plain = table
    assert (batch["op"], batch["candidate"], batch["m_min"], batch["m_max"]) == ("batch_matmul", "a", 17, 128)
    assert [s["batch"] for s in batch["measured"]["shapes"]] == [32, 32]
    assert "op" not in plain and (plain["m_min"], plain["m_max"]) == bucket(128) == (65, 128)


def test_a_dynamic_m_row_is_chosen_over_every_m_and_holds_for_any_m():
    ms = (1, 7, 1024)
    rows = _kind_rows([{"default": 100, "a": 50, "b": 40}, {"default": 100, "a": 50, "b": 40}], {"dynamic": True},
                      ms=ms)
    # b is faster, but wrong at M = 7 (not a multiple of its tiles): a ships.
    for r in rows:
        if r["candidate"] == "b" and r["point"]["m"] == 7:
            r["error"] = 0.5
    table, none = rows_from(rows, "")
    (row,) = table
    assert (row["candidate"], row["m_dynamic"], row["m_min"], row["m_max"], row["m_multiple"]) == ("a", True, 1, 1024, 1)
    assert sorted({s["m"] for s in row["measured"]["shapes"]}) == list(ms)
    # Slower than the default at one M: the default stays, for any M.
    for r in rows:
        if r["candidate"] == "a" and r["point"]["m"] == 1:
            r["kernel_us"] = 120
    table, none = rows_from(rows, "")
    assert [(r["candidate"], r["attribute"], r["m_dynamic"]) for r in table] == [("default", None, True)]
    assert "any M" in none[0]


def test_pick_replaces_only_the_kinds_it_measured(tmp_path):
    import json
    from bench.tune_pick import pick
    old = [dict(dtype="f32", layout="nn", m_min=9, m_max=16, m_multiple=1, n_multiple=1, k_multiple=1,
                candidate="old_matmul", attribute="#a<old>"),
           dict(dtype="f32", layout="nn", m_min=9, m_max=16, m_multiple=1, n_multiple=1, k_multiple=1,
                candidate="old_batch", attribute="#a<b>", op="batch_matmul")]
    table = tmp_path / "table.json"
    table.write_text(json.dumps(dict(format=1, rows=old)))
    results = tmp_path / "results.jsonl"
    rows = _kind_rows([{"default": 100, "a": 50}, {"default": 100, "a": 50}], {"batch": 32}, ms=(16,))
    results.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert pick([str(results)], str(table)) == 0
    got = json.loads(table.read_text())["rows"]
    assert [(r.get("op", "matmul"), r["candidate"]) for r in got] == [("batch_matmul", "a"), ("matmul", "old_matmul")]


def test_pick_records_the_card_each_results_file_was_measured_on(tmp_path):
    import json
    import pytest
    from bench.kitframe import KitError
    from bench.tune_pick import pick
    files = []
    for name, dtype in (("a.jsonl", "f32"), ("b.jsonl", "bf16")):
        rows = [dict(r, point=dict(r["point"], dtype=dtype))
                for r in _shapes([{"default": 100, "x": 50}, {"default": 100, "x": 50}])]
        (tmp_path / name).write_text("".join(json.dumps(r) + "\n" for r in rows))
        files.append(str(tmp_path / name))
    table = tmp_path / "table.json"
    assert pick(files, str(table), cards=["H100", "H200"]) == 0
    got = {r["dtype"]: r["measured"]["device"] for r in json.loads(table.read_text())["rows"]}
    assert got == {"f32": "H100", "bf16": "H200"}
    with pytest.raises(KitError, match="--card given 3 times for 2 results files"):
        pick(files, str(table), cards=["a", "b", "c"])


def test_a_mixed_run_keeps_the_rows_of_the_other_element_types(tmp_path):
    """f16 operands accumulating in f32 (bench tune --ops mixed) are rows of
    their own key, "f16f32": picking them into a table keeps its f16 and
    f32 matmul rows, and replaces its f16f32 ones."""
    import json
    from bench.tune_pick import pick
    base = dict(layout="nn", m_min=9, m_max=16, m_multiple=1, n_multiple=1, k_multiple=1)
    old = [dict(base, dtype="f16", candidate="old_f16", attribute="#a<f16>"),
           dict(base, dtype="f32", candidate="old_f32", attribute="#a<f32>"),
           dict(base, dtype="f16f32", candidate="old_mixed", attribute="#a<old>")]
    table = tmp_path / "table.json"
    table.write_text(json.dumps(dict(format=1, rows=old)))
    results = tmp_path / "results.jsonl"
    rows = [_row(c, 16, k, 2048, us, dtype="f16f32") for k in (2048, 4096) for c, us in (("default", 100), ("a", 50))]
    results.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert pick([str(results)], str(table)) == 0
    got = json.loads(table.read_text())["rows"]
    assert sorted((r["dtype"], r["candidate"]) for r in got) == [("f16", "old_f16"), ("f16f32", "a"), ("f32", "old_f32")]
