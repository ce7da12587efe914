"""The shipped CUDA matmul table (passes/targets/cuda/matmul_table.json):
every row parses as IREE's attribute, buckets of one (dtype, layout) do not
overlap, each row was measured faster than IREE's default at every shape
it was chosen on (the rule it shipped by), and config_for finds it."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from iree.compiler import ir  # noqa: E402

from mdc.passes.targets.cuda.cuda_matmul_configs import CONFIGS, config_for, load_table  # noqa: E402


def test_rows_parse_as_compilation_info():
    with ir.Context() as ctx:
        ctx.allow_unregistered_dialects = False
        for row in CONFIGS:
            if row.attribute is None:
                continue
            attr = ir.Attribute.parse(row.attribute_text())
            assert "compilation_info" in str(attr), row.candidate


def test_buckets_do_not_overlap():
    seen = {}
    for row in CONFIGS:
        key = (row.op, row.dtype, row.layout, row.m_dynamic)
        for other in seen.get(key, []):
            assert row.m_max < other.m_min or other.m_max < row.m_min, (row.candidate, other.candidate)
        seen.setdefault(key, []).append(row)


def test_every_row_names_a_kind_of_op_the_pass_knows():
    assert {row.op for row in CONFIGS} <= {"matmul", "batch_matmul"}
    # A dynamic M's row holds for any M: it may not ask M to be a multiple.
    assert all(row.m_multiple == 1 for row in CONFIGS if row.m_dynamic)


def test_each_row_beat_the_default_where_it_was_measured():
    for row in CONFIGS:
        if row.attribute is None:
            continue
        for shape in row.measured.get("shapes", []):
            # default_us is None where IREE's own configuration does not compile.
            assert shape["default_us"] is None or shape["kernel_us"] < shape["default_us"], (row.candidate, shape)


def test_config_for_finds_each_row_at_its_bucket_and_tiles():
    for row in CONFIGS:
        if row.attribute is None:
            assert config_for(row.dtype, row.layout, row.m_max if row.m_max < 1 << 20 else 4096, 4096, 4096) is None
            continue
        m = row.m_max if row.m_max < 1 << 20 else 4096
        m -= m % row.m_multiple
        n, k = row.n_multiple * 8, row.k_multiple * 4
        assert config_for(row.dtype, row.layout, m, n, k) == row
        other = config_for(row.dtype, row.layout, m, n + 1, k)  # N no longer a multiple of the row's tile
        assert other != row or row.n_multiple == 1
        assert other is None or ((n + 1) % other.n_multiple == 0 and m % other.m_multiple == 0
                                 and k % other.k_multiple == 0 and other.m_max <= row.m_max)
        assert config_for(row.dtype, "tn", m, n, k) is None


def test_a_table_of_another_format_is_refused(tmp_path):
    bad = tmp_path / "t.json"
    bad.write_text('{"format": 2, "rows": []}')
    try:
        load_table(str(bad))
    except ValueError as e:
        assert "format 2" in str(e)
    else:
        raise AssertionError("format 2 was read")


def _row(m_min, m_max, m_multiple, name, **kw):
    from mdc.passes.targets.cuda.cuda_matmul_configs import MatmulConfig
    return MatmulConfig("f32", "nn", m_min, m_max, m_multiple, 32, 32, name, None if name == "default" else f"#a<{name}>",
                        **kw)


def test_an_m_no_bucket_tiles_takes_the_nearest_smaller_bucket_that_does():
    table = (_row(1, 1, 1, "m1"), _row(3, 4, 4, "m4"), _row(9, 16, 16, "m16"), _row(17, 32, 32, "m32"))
    assert config_for("f32", "nn", 16, 64, 64, table).candidate == "m16"
    assert config_for("f32", "nn", 12, 64, 64, table).candidate == "m4"   # 16 does not divide 12
    assert config_for("f32", "nn", 28, 64, 64, table) is None             # 4 is too far below 28
    assert config_for("f32", "nn", 4, 64, 64, table).candidate == "m4"
    assert config_for("f32", "nn", 3, 64, 64, table).candidate == "m1"    # 4 does not divide 3
    assert config_for("f32", "nn", 5, 64, 64, table) is None              # nor 5; 1 is too far below
    assert config_for("f32", "nn", 2, 64, 64, table).candidate == "m1"    # no bucket holds 2; 1's below
    assert config_for("f32", "nn", 16, 48, 64, table) is None             # N = 48: no row's tiles divide it
    assert config_for("f16", "nn", 16, 64, 64, table) is None


def test_a_bucket_measured_to_keep_the_default_is_not_stood_in_for():
    table = (_row(3, 4, 4, "m4"), _row(5, 8, 1, "default"), _row(9, 16, 16, "m16"))
    assert config_for("f32", "nn", 8, 64, 64, table) is None
    assert config_for("f32", "nn", 12, 64, 64, table).candidate == "m4"
    assert config_for("f32", "nn", 16, 64, 64, table).candidate == "m16"


def test_a_row_applies_to_its_kind_of_op_alone():
    table = (_row(9, 16, 16, "mm16"), _row(9, 16, 16, "bmm16", op="batch_matmul"))
    assert config_for("f32", "nn", 16, 64, 64, table).candidate == "mm16"
    assert config_for("f32", "nn", 16, 64, 64, table, op="batch_matmul").candidate == "bmm16"
    assert config_for("f32", "nn", 16, 64, 64, table[:1], op="batch_matmul") is None
    assert config_for("f32", "nn", 16, 64, 64, table[1:]) is None
    # The fallback to a smaller bucket stays within the kind too.
    table = (_row(3, 4, 4, "mm4"), _row(9, 16, 16, "bmm16", op="batch_matmul"))
    assert config_for("f32", "nn", 12, 64, 64, table, op="batch_matmul") is None


def test_a_dynamic_m_takes_only_a_row_measured_for_any_m():
    static = (_row(1, 1 << 31, 1, "any_static"),)
    dynamic = (_row(1, 1024, 1, "any", m_dynamic=True),)
    assert config_for("f32", "nn", None, 64, 64, static) is None
    assert config_for("f32", "nn", None, 64, 64, dynamic).candidate == "any"
    assert config_for("f32", "nn", None, 48, 64, dynamic) is None  # N = 48: the row's tiles do not divide it
    assert config_for("f32", "nt", None, 64, 64, dynamic) is None
    assert config_for("f32", "nn", None, 64, 64, dynamic, op="batch_matmul") is None
    # ... and a static M never takes it.
    assert config_for("f32", "nn", 16, 64, 64, dynamic) is None
    assert config_for("f32", "nn", None, 64, 64, (_row(1, 1024, 1, "default", m_dynamic=True),)) is None


def test_rows_without_op_are_matmuls_and_unknown_fields_are_refused(tmp_path):
    import json
    from mdc.passes.targets.cuda.cuda_matmul_configs import TableError
    row = dict(dtype="f32", layout="nn", m_min=1, m_max=4, m_multiple=1, n_multiple=1, k_multiple=1,
               candidate="c", attribute="#a<c>")
    good = tmp_path / "good.json"
    good.write_text(json.dumps(dict(format=1, rows=[row, dict(row, op="batch_matmul", m_dynamic=True)])))
    first, second = load_table(str(good))
    assert (first.op, first.m_dynamic, second.op, second.m_dynamic) == ("matmul", False, "batch_matmul", True)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(dict(format=1, rows=[dict(row, tiles=4)])))
    try:
        load_table(str(bad))
    except TableError as e:
        assert e.why == "row 0: unknown field tiles"
    else:
        raise AssertionError("an unknown field was read")
