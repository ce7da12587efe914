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

``matmul_shape`` gives each one's kind, element type, layout and sizes, M
None where M is dynamic (N, K and the batch must be static). Anything
else (mixed element types, such as torch's f16 matmuls, which accumulate
in f32; a transposed A; a dynamic N, K or batch) is None.
"""

from __future__ import annotations

import dataclasses

from iree.compiler import ir

from ...ir.ir_util import get_attr
from ...ir import ir_adapter as irx

MATMUL, BATCH_MATMUL = "matmul", "batch_matmul"

# The element types a row can name, by their bindings' type class.
_ELEMENT_TYPES = ((ir.F32Type, "f32"), (ir.F16Type, "f16"), (ir.BF16Type, "bf16"))

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
    BATCH_MATMUL), element type, layout ("nn" or "nt"), M (None: dynamic),
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


def _is_mul_add_body(op) -> bool:
    """The generic's body is ``out + a * b`` in floats, and nothing else."""
    block = op.regions[0].blocks[0]
    names = [o.name for o in block.operations]
    if names != [irx.ARITH_MULF, irx.ARITH_ADDF, irx.LINALG_YIELD]:
        return False
    mul, add = block.operations[0], block.operations[1]
    a, b, out = block.arguments
    return (_same(mul.operands, [a, b]) and _same(add.operands, [out, mul.results[0]])
            and block.operations[2].operands[0] == add.results[0])


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


def matmul_shape(op) -> MatmulShape | None:
    """The shape of a matmul this pass knows whose operands and result
    share one element type and whose sizes are static but for M, else
    None."""
    found = kind_and_layout(op)
    if found is None:
        return None
    kind, layout = found
    types = [v.type for v in op.operands if isinstance(v.type, ir.RankedTensorType)]
    if len(types) != 3:
        return None
    elements = {_element_name(t.element_type) for t in types}
    if len(elements) != 1 or None in elements:
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
    return MatmulShape(kind, next(iter(elements)), layout, m, n, k, batch[0] if batch else 0)
