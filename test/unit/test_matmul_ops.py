"""matmul_ops.matmul_shape on each form of contraction IREE 3.13's stream
IR holds (passes/targets/cuda/matmul_ops.py, docs/DESIGN.md section 9):
one element type, and f16 or bf16 operands accumulating in f32 as torch's
f16 and bf16 matmuls do (named ops with mixed types; generics that widen
with arith.extf in their body); and the mixes that are none of them."""

from __future__ import annotations

import pytest

from mdc.passes.ir.ir_util import walk
from mdc.passes.targets.cuda.matmul_ops import MatmulShape, dtype_key, matmul_shape
from mdc.pipeline.ireec import Compiler

_NT = ("indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, "
       "affine_map<(d0, d1, d2) -> (d0, d1)>] ")
_BNT = ("indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>, "
        "affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>] ")
_GEN = {
    "nn": ("[affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, "
           "affine_map<(d0, d1, d2) -> (d0, d1)>]", '["parallel", "parallel", "reduction"]'),
    "bnn": ("[affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>, "
            "affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>]", '["parallel", "parallel", "parallel", "reduction"]'),
}


def _named(op: str, maps: str, a: str, b: str, out: str) -> str:
    return f"""func.func @f(%a: {a}, %b: {b}, %c: {out}) -> {out} {{
  %r = {op} {maps}ins(%a, %b : {a}, {b}) outs(%c : {out}) -> {out}
  return %r : {out}
}}"""


def _generic(kind: str, a: str, b: str, out: str, body: str, types: tuple[str, str, str]) -> str:
    maps, loops = _GEN[kind]
    ta, tb, to = types
    return f"""func.func @f(%a: {a}, %b: {b}, %c: {out}) -> {out} {{
  %r = linalg.generic {{indexing_maps = {maps}, iterator_types = {loops}}} ins(%a, %b : {a}, {b}) outs(%c : {out}) {{
  ^bb0(%p: {ta}, %q: {tb}, %o: {to}):
{body}
  }} -> {out}
  return %r : {out}
}}"""


_WIDEN = """    %pe = arith.extf %p : {t} to f32
    %qe = arith.extf %q : {t} to f32
    %m = arith.mulf %pe, %qe : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32"""
_PLAIN = """    %m = arith.mulf %p, %q : {t}
    %s = arith.addf %o, %m : {t}
    linalg.yield %s : {t}"""
# One operand widened, the other multiplied as it is: not a form torch exports.
_HALF = """    %pe = arith.extf %p : f16 to f32
    %m = arith.mulf %pe, %pe : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32"""


def _t(dims: str, dt: str) -> str:
    return f"tensor<{dims}x{dt}>"


CASES = {
    # One element type, as before.
    "matmul f32 nn": (_named("linalg.matmul", "", _t("16x64", "f32"), _t("64x128", "f32"), _t("16x128", "f32")),
                      MatmulShape("matmul", "f32", "nn", 16, 128, 64)),
    "generic f16 nn": (_generic("nn", _t("8x64", "f16"), _t("64x32", "f16"), _t("8x32", "f16"), _PLAIN.format(t="f16"),
                                ("f16", "f16", "f16")), MatmulShape("matmul", "f16", "nn", 8, 32, 64)),
    # torch's linear in f16 and bf16: the named op, maps reading W as (n, k), f32 result.
    "matmul f16->f32 nt": (_named("linalg.matmul", _NT, _t("16x64", "f16"), _t("128x64", "f16"), _t("16x128", "f32")),
                           MatmulShape("matmul", "f16f32", "nt", 16, 128, 64)),
    "matmul bf16->f32 nn": (_named("linalg.matmul", "", _t("4x64", "bf16"), _t("64x32", "bf16"), _t("4x32", "f32")),
                            MatmulShape("matmul", "bf16f32", "nn", 4, 32, 64)),
    "matmul bf16->f32 dynamic M": (_named("linalg.matmul", _NT, _t("?x64", "bf16"), _t("32x64", "bf16"),
                                          _t("?x32", "f32")), MatmulShape("matmul", "bf16f32", "nt", None, 32, 64)),
    # torch's bmm (P x V) and bmm of a transposed operand (Q x K^T).
    "batch_matmul f16->f32 nn": (_named("linalg.batch_matmul", "", _t("4x16x64", "f16"), _t("4x64x32", "f16"),
                                        _t("4x16x32", "f32")), MatmulShape("batch_matmul", "f16f32", "nn", 16, 32, 64, 4)),
    "batch_matmul bf16->f32 nt": (_named("linalg.batch_matmul", _BNT, _t("4x16x64", "bf16"), _t("4x32x64", "bf16"),
                                         _t("4x16x32", "f32")),
                                  MatmulShape("batch_matmul", "bf16f32", "nt", 16, 32, 64, 4)),
    # Hand-written generics that widen in their body, 3 loops and 4.
    "generic f16->f32 extf": (_generic("nn", _t("16x64", "f16"), _t("64x32", "f16"), _t("16x32", "f32"),
                                       _WIDEN.format(t="f16"), ("f16", "f16", "f32")),
                              MatmulShape("matmul", "f16f32", "nn", 16, 32, 64)),
    "generic bf16->f32 extf, batch": (_generic("bnn", _t("2x8x64", "bf16"), _t("2x64x32", "bf16"), _t("2x8x32", "f32"),
                                               _WIDEN.format(t="bf16"), ("bf16", "bf16", "f32")),
                                      MatmulShape("batch_matmul", "bf16f32", "nn", 8, 32, 64, 2)),
    # Mixes with no key: f16 into bf16, f32 into f16, f16 with bf16, one operand widened.
    "matmul f16->bf16": (_named("linalg.matmul", "", _t("16x64", "f16"), _t("64x32", "f16"), _t("16x32", "bf16")), None),
    "matmul f32->f16": (_named("linalg.matmul", "", _t("16x64", "f32"), _t("64x32", "f32"), _t("16x32", "f16")), None),
    "matmul f16 x bf16": (_named("linalg.matmul", "", _t("16x64", "f16"), _t("64x32", "bf16"), _t("16x32", "f32")),
                          None),
    "generic one extf": (_generic("nn", _t("16x64", "f16"), _t("64x32", "f16"), _t("16x32", "f32"), _HALF,
                                  ("f16", "f16", "f32")), None),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_matmul_shape(name):
    text, expected = CASES[name]
    compiler = Compiler([])
    module = compiler.parse_text(text, "matmul_ops.mlir")
    ops = [op for op in walk(module) if op.name in ("linalg.matmul", "linalg.batch_matmul", "linalg.generic")]
    assert len(ops) == 1
    assert matmul_shape(ops[0]) == expected


def test_dtype_key():
    assert [dtype_key("f32", "f32", "f32"), dtype_key("f16", "f16", "f16"), dtype_key("bf16", "bf16", "bf16")] == [
        "f32", "f16", "bf16"]
    assert dtype_key("f16", "f16", "f32") == "f16f32"
    assert dtype_key("bf16", "bf16", "f32") == "bf16f32"
    for mix in (("f32", "f32", "f16"), ("f16", "bf16", "f32"), ("f16", "f16", "bf16"), (None, None, "f32"),
                ("f32", None, "f32")):
        assert dtype_key(*mix) is None, mix
