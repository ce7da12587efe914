"""What one op of the input program costs as a unit of work: its op class
(work_graph.OP_CLASSES), the element type its arithmetic runs in, its
arithmetic operations and the bytes it reads and writes, from its shapes
(dynamic dimensions at their bounds, bounds.py).

* matmul: linalg's contractions (``linalg.matmul``, ``batch_matmul``,
  ``matvec``, ``vecmat``, their transposed forms, ``linalg.contract``,
  convolutions) and a ``linalg.generic`` that reduces a product of its two
  inputs: 2 operations per multiply-add;
* gather: a ``linalg.generic`` that reads a tensor with ``tensor.extract``
  (an embedding lookup): one operation per element made, and it reads only
  the elements it makes, not its whole table;
* reduction: ``linalg.reduce``, ``linalg.softmax`` and any other
  ``linalg.generic`` with a reduction loop: one operation per element read,
  times the arithmetic ops of its body;
* elementwise: every other op that computes (a ``linalg.generic`` with
  parallel loops, arith and math ops on tensors, ``linalg.fill`` into a
  value): one operation per element made, times its body's arithmetic ops;
* copy: ops that move data and compute nothing (``linalg.copy``,
  ``transpose``, ``broadcast``, slices, ``concat``, ``pad``, and
  ``flow.tensor.transfer``);
* view: reshapes and casts, which IREE folds into their users: no
  operations, no bytes.
"""

from __future__ import annotations

import dataclasses
import math

from iree.compiler import ir

from . import bounds as bnd
from ..ir import ir_adapter as irx

VIEW_OPS = (irx.TENSOR_COLLAPSE_SHAPE, irx.TENSOR_EXPAND_SHAPE, irx.TENSOR_CAST, irx.TENSOR_RESHAPE,
            irx.TENSOR_BITCAST, irx.FLOW_TENSOR_RESHAPE, irx.FLOW_TENSOR_BITCAST)
COPY_OPS = (irx.LINALG_COPY, irx.LINALG_TRANSPOSE, irx.LINALG_BROADCAST, irx.TENSOR_EXTRACT_SLICE, irx.TENSOR_INSERT_SLICE,
            irx.TENSOR_CONCAT, irx.TENSOR_PAD, irx.TENSOR_GATHER, irx.TENSOR_SCATTER, irx.FLOW_TENSOR_TRANSFER,
            irx.FLOW_TENSOR_SLICE, irx.FLOW_TENSOR_UPDATE)
REDUCTION_OPS = (irx.LINALG_REDUCE, irx.LINALG_SOFTMAX)
MATMUL_OPS = (irx.LINALG_MATMUL, irx.LINALG_BATCH_MATMUL, irx.LINALG_MATVEC, irx.LINALG_VECMAT, irx.LINALG_BATCH_MATVEC,
              irx.LINALG_BATCH_VECMAT, irx.LINALG_DOT, irx.LINALG_MATMUL_TRANSPOSE_B, irx.LINALG_BATCH_MATMUL_TRANSPOSE_B,
              irx.LINALG_CONTRACT, irx.LINALG_BATCH_REDUCE_MATMUL)
TRANSPOSED_A = (irx.LINALG_MATMUL_TRANSPOSE_A, irx.LINALG_BATCH_MATMUL_TRANSPOSE_A)
ARITHMETIC_PREFIXES = ("arith.", "math.")


@dataclasses.dataclass(frozen=True)
class OpCost:
    op_class: str
    dtype: str
    flops: int
    bytes_moved: int


def _inputs_outputs(op) -> tuple[list, list]:
    """A linalg op's ``ins`` and ``outs`` operands (all operands are ins
    for any other op)."""
    operands = list(op.operands)
    if "operandSegmentSizes" not in op.attributes:
        return operands, []
    sizes = list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))
    return operands[:sizes[0]], operands[sizes[0]:sizes[0] + sizes[1]]


def _body_ops(op) -> list:
    return [child.operation for region in op.regions for block in region.blocks
            for child in block.operations]


def _arithmetic(op) -> int:
    """The arithmetic ops of a linalg body (at least 1)."""
    return max(1, sum(1 for o in _body_ops(op) if o.name.startswith(ARITHMETIC_PREFIXES)
                      and o.name not in (irx.ARITH_CONSTANT, irx.ARITH_INDEX_CAST)))


def _domain(op, b: bnd.Bounds) -> int:
    """The number of iterations of a ``linalg.generic`` (its loop ranges
    read from its indexing maps and operand shapes)."""
    ranges: dict[int, int] = {}
    maps = [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(op.attributes["indexing_maps"])]
    for value, amap in zip(op.operands, maps):
        if not bnd.is_tensor(value):
            continue
        shape = b.dims(value)
        for k, expr in enumerate(amap.results):
            if isinstance(expr, ir.AffineDimExpr):
                ranges.setdefault(expr.position, shape[k])
    return math.prod(ranges.values())


def _generic_class(op) -> str:
    body = _body_ops(op)
    if any(o.name == irx.TENSOR_EXTRACT for o in body):
        return "gather"
    if "reduction" in irx.iterator_types(op):
        ins, _ = _inputs_outputs(op)
        multiplies = any(o.name in (irx.ARITH_MULF, irx.ARITH_MULI) for o in body)
        adds = any(o.name in (irx.ARITH_ADDF, irx.ARITH_ADDI) for o in body)
        return "matmul" if len(ins) == 2 and multiplies and adds else "reduction"
    return "elementwise"


def op_class(op) -> str:
    name = op.name
    if name in VIEW_OPS:
        return "view"
    if name in COPY_OPS:
        return "copy"
    if name in MATMUL_OPS or name in TRANSPOSED_A or name.startswith(irx.LINALG_CONV_PREFIXES):
        return "matmul"
    if name in REDUCTION_OPS:
        return "reduction"
    if name == irx.LINALG_GENERIC:
        return _generic_class(op)
    return "elementwise"


def _dtype(value) -> str:
    return str(ir.RankedTensorType(value.type).element_type)


def _contraction_flops(op, b: bnd.Bounds) -> int:
    ins, outs = _inputs_outputs(op)
    out = (outs or list(op.results))[0]
    lhs, rhs = b.dims(ins[0]), b.dims(ins[1])
    if op.name.startswith(irx.LINALG_CONV_PREFIXES):
        per_output = math.prod(rhs) // max(1, rhs[-1]) if rhs else 1
    elif op.name in TRANSPOSED_A:
        per_output = lhs[-2]
    else:
        per_output = lhs[-1] if lhs else 1
    return 2 * b.elements(out) * per_output


def op_cost(op, b: bnd.Bounds, reads: list) -> OpCost:
    """The cost of ``op`` as one unit. ``reads``: its operands that carry
    data it reads (not storage it only writes into, nor a table its body
    reads from outside: a gather reads only the rows it makes)."""
    kind = op_class(op)
    results = [r for r in op.results if bnd.is_tensor(r)]
    written = sum(b.bytes(r) for r in results)
    read = sum(b.bytes(v) for v in reads if bnd.is_tensor(v))
    ins, _ = _inputs_outputs(op)
    tensor_ins = [v for v in ins if bnd.is_tensor(v)]
    dtype = _dtype(tensor_ins[0] if kind == "matmul" and tensor_ins else (results or tensor_ins)[0])
    if kind == "view":
        return OpCost(kind, dtype, 0, 0)
    if kind == "copy":
        return OpCost(kind, dtype, 0, read + written)
    if kind == "gather":
        # Each element made reads one element of the table: the rows it reads.
        return OpCost(kind, dtype, sum(b.elements(r) for r in results), read + 2 * written)
    if op.name == irx.LINALG_GENERIC:
        domain = _domain(op, b)
        per = 2 if kind == "matmul" else _arithmetic(op)
        return OpCost(kind, dtype, domain * per, read + written)
    if kind == "matmul":
        return OpCost(kind, dtype, _contraction_flops(op, b), read + written)
    if kind == "reduction":
        biggest = max((b.elements(v) for v in tensor_ins), default=0)
        return OpCost(kind, dtype, biggest * _arithmetic(op), read + written)
    return OpCost(kind, dtype, sum(b.elements(r) for r in results) * _arithmetic(op), read + written)
