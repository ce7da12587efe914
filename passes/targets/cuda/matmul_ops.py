"""Which ops cuda-matmul-configs treats as matmuls, and their shapes.

At the stream level, where the pass runs, IREE 3.13 holds a program's
contractions in these forms (*measured*: torch exports and hand-written
linalg through ``mdc-compile --compile-to=stream``, docs/DESIGN.md
section 9):

* ``linalg.matmul``, with no indexing maps ((m, k) x (k, n), "nn") or
  with maps that read B as (n, k) ("nt": torch.nn.Linear's weight);
  a 3-D activation times a 2-D weight (torch's linear on [B, S, D]) is
  one of these, IREE having collapsed B and S into M;
* the ``linalg.generic`` of the same maps whose body is a multiply and
  an add;
* ``linalg.batch_matmul``, with no maps ((b, m, k) x (b, k, n): torch's
  ``bmm`` and ``matmul`` of 3-D and 4-D tensors, attention's P x V) or
  with maps that read B as (b, n, k) (``bmm(q, k.transpose(1, 2))``,
  attention's Q x K^T, the transpose folded into the op);
* the 4-loop ``linalg.generic`` (batch, m, n parallel, k reduction) of
  the same maps and body.

torch's f16 and bf16 matmuls accumulate in f32. At this level each of
them is one of the named forms above with f16 (or bf16) operands and an
f32 result, its init a ``linalg.fill`` of f32 (the named op widens its
operands itself), followed in the same dispatch by an elementwise
``linalg.generic`` whose body is ``arith.truncf`` back to f16 (with a
bias, the truncation then the bias's ``arith.addf``): linear,
``bmm``, ``bmm`` of a transposed operand and ``matmul`` of 3-D and 4-D
tensors alike. A hand-written ``linalg.generic`` that widens in its body
(``arith.extf`` of each operand, then the multiply and the add in f32)
stays such a generic, 3 loops or 4.

``matmul_shape`` gives each one's kind, element type, layout and sizes, M
None where M is dynamic (N, K and the batch must be static). The element
type is the operands' where the result has it too ("f32", "f16", "bf16"),
and names both where f16 or bf16 operands accumulate in f32 ("f16f32",
"bf16f32": MIXED): a table row names one or the other, never both.
Anything else (other mixes; a transposed A; a dynamic N, K or batch) is
None.
"""

from __future__ import annotations

import dataclasses

from iree.compiler import ir

from ...ir.ir_util import get_attr
from ...ir import ir_adapter as irx

MATMUL, BATCH_MATMUL = "matmul", "batch_matmul"

# The element types a row can name, by their bindings' type class.
_ELEMENT_TYPES = ((ir.F32Type, "f32"), (ir.F16Type, "f16"), (ir.BF16Type, "bf16"))
# The operands' element type -> the key of its matmuls that accumulate in f32.
MIXED = {"f16": "f16f32", "bf16": "bf16f32"}

# The contraction's operand maps, by layout: B as (k, n) or as (n, k).
_NN = ["(d0, d1, d2) -> (d0, d2)", "(d0, d1, d2) -> (d2, d1)", "(d0, d1, d2) -> (d0, d1)"]
_NT = ["(d0, d1, d2) -> (d0, d2)", "(d0, d1, d2) -> (d1, d2)", "(d0, d1, d2) -> (d0, d1)"]
# The same with a batch loop first: (b, m, n, k).
_BNN = ["(d0, d1, d2, d3) -> (d0, d1, d3)", "(d0, d1, d2, d3) -> (d0, d3, d2)", "(d0, d1, d2, d3) -> (d0, d1, d2)"]
_BNT = ["(d0, d1, d2, d3) -> (d0, d1, d3)", "(d0, d1, d2, d3) -> (d0, d2, d3)", "(d0, d1, d2, d3) -> (d0, d1, d2)"]

# Per kind: its named op, its generic's loops, and its maps by layout.
_KINDS = {
    MATMUL: (irx.LINALG_MATMUL, ["parallel", "parallel", "reduction"], (("nn", _NN), ("nt", _NT))),
    BATCH_MATMUL: (irx.LINALG_BATCH_MATMUL, ["parallel", "parallel", "parallel", "reduction"],
                   (("nn", _BNN), ("nt", _BNT))),
}


@dataclasses.dataclass(frozen=True)
class MatmulShape:
    """One matmul as a row of the table is chosen for: ``op`` (MATMUL or
    BATCH_MATMUL), element type (``dtype_key``), layout ("nn" or "nt"), M (None: dynamic),
    N, K and the batch (0 for a plain matmul)."""

    op: str
    dtype: str
    layout: str
    m: int | None
    n: int
    k: int
    batch: int = 0


def _element_name(t: ir.Type) -> str | None:
    return next((name for cls, name in _ELEMENT_TYPES if t.typeid == cls.static_typeid), None)


def _maps(op) -> list[str] | None:
    attr = get_attr(op, "indexing_maps")
    if attr is None:
        return None
    return [str(ir.AffineMapAttr(a).value) for a in ir.ArrayAttr(attr)]


_MUL_ADD = [irx.ARITH_MULF, irx.ARITH_ADDF, irx.LINALG_YIELD]


def _is_mul_add_body(op) -> bool:
    """The generic's body is ``out + a * b`` in floats, or ``out +
    extf(a) * extf(b)`` (operands widened to the accumulator's type), and
    nothing else."""
    block = op.regions[0].blocks[0]
    ops = list(block.operations)
    names = [o.name for o in ops]
    a, b, out = block.arguments
    if names == _MUL_ADD:
        factors = [a, b]
    elif names == [irx.ARITH_EXTF, irx.ARITH_EXTF, *_MUL_ADD]:
        if not _same([ops[0].operands[0], ops[1].operands[0]], [a, b]):
            return False
        factors, ops = [ops[0].results[0], ops[1].results[0]], ops[2:]
    else:
        return False
    mul, add, yield_ = ops
    return (_same(mul.operands, factors) and _same(add.operands, [out, mul.results[0]])
            and yield_.operands[0] == add.results[0])


def _same(operands, values) -> bool:
    """``operands`` are ``values`` in either order."""
    ops = list(operands)
    return len(ops) == 2 and (ops == values or ops == values[::-1])


def kind_and_layout(op) -> tuple[str, str] | None:
    """(MATMUL or BATCH_MATMUL, "nn" or "nt") for a contraction this pass
    knows, else None."""
    if len(op.results) != 1 or len(op.operands) != 3:
        return None
    for kind, (named, loops, layouts) in _KINDS.items():
        if op.name == named:
            maps = _maps(op)
            return (kind, "nn") if maps is None else next(((kind, lay) for lay, m in layouts if maps == m), None)
        if op.name == irx.LINALG_GENERIC and irx.iterator_types(op) == loops:
            if not _is_mul_add_body(op):
                return None
            maps = _maps(op)
            return next(((kind, lay) for lay, m in layouts if maps == m), None)
    return None


def _dims(t: ir.RankedTensorType) -> list[int | None]:
    return [None if t.is_dynamic_dim(i) else t.get_dim_size(i) for i in range(t.rank)]


def dtype_key(a: str | None, b: str | None, out: str | None) -> str | None:
    """The element-type key of a contraction of operands ``a`` and ``b``
    into ``out``: their one type, or MIXED's for f16 or bf16 operands
    accumulating in f32; None for any other mix."""
    if a is None or a != b:
        return None
    return a if out == a else MIXED.get(a) if out == "f32" else None


def matmul_shape(op) -> MatmulShape | None:
    """The shape of a matmul this pass knows whose element types have a
    key (``dtype_key``) and whose sizes are static but for M, else None."""
    found = kind_and_layout(op)
    if found is None:
        return None
    kind, layout = found
    types = [v.type for v in op.operands if isinstance(v.type, ir.RankedTensorType)]
    if len(types) != 3:
        return None
    dtype = dtype_key(*(_element_name(t.element_type) for t in types))
    if dtype is None:
        return None
    a, b, out = (_dims(t) for t in types)
    batch = []
    if kind == BATCH_MATMUL:
        batch, a, b, out = [a[0], b[0], out[0]], a[1:], b[1:], out[1:]
    (m, k), n = a, (b[1] if layout == "nn" else b[0])
    k_of_b = b[0] if layout == "nn" else b[1]
    static = [k, n, k_of_b, *batch]
    if None in static or out != [m, n] or k_of_b != k or len(set(batch)) > 1:
        return None
    return MatmulShape(kind, dtype, layout, m, n, k, batch[0] if batch else 0)
