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

VIEW_OPS = ("tensor.collapse_shape", "tensor.expand_shape", "tensor.cast", "tensor.reshape",
            "tensor.bitcast", "flow.tensor.reshape", "flow.tensor.bitcast")
COPY_OPS = ("linalg.copy", "linalg.transpose", "linalg.broadcast", "tensor.extract_slice", "tensor.insert_slice",
            "tensor.concat", "tensor.pad", "tensor.gather", "tensor.scatter", "flow.tensor.transfer",
            "flow.tensor.slice", "flow.tensor.update")
REDUCTION_OPS = ("linalg.reduce", "linalg.softmax")
MATMUL_OPS = ("linalg.matmul", "linalg.batch_matmul", "linalg.matvec", "linalg.vecmat", "linalg.batch_matvec",
              "linalg.batch_vecmat", "linalg.dot", "linalg.matmul_transpose_b", "linalg.batch_matmul_transpose_b",
              "linalg.contract", "linalg.batch_reduce_matmul")
TRANSPOSED_A = ("linalg.matmul_transpose_a", "linalg.batch_matmul_transpose_a")
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
                      and o.name not in ("arith.constant", "arith.index_cast")))


def _iterators(op) -> list[str]:
    if "iterator_types" not in op.attributes:
        return []
    return [str(a) for a in ir.ArrayAttr(op.attributes["iterator_types"])]


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
    if any(o.name == "tensor.extract" for o in body):
        return "gather"
    if any("reduction" in it for it in _iterators(op)):
        ins, _ = _inputs_outputs(op)
        multiplies = any(o.name in ("arith.mulf", "arith.muli") for o in body)
        adds = any(o.name in ("arith.addf", "arith.addi") for o in body)
        return "matmul" if len(ins) == 2 and multiplies and adds else "reduction"
    return "elementwise"


def op_class(op) -> str:
    name = op.name
    if name in VIEW_OPS:
        return "view"
    if name in COPY_OPS:
        return "copy"
    if name in MATMUL_OPS or name in TRANSPOSED_A or name.startswith("linalg.conv") \
            or name.startswith("linalg.depthwise_conv"):
        return "matmul"
    if name in REDUCTION_OPS:
        return "reduction"
    if name == "linalg.generic":
        return _generic_class(op)
    return "elementwise"


def _dtype(value) -> str:
    return str(ir.RankedTensorType(value.type).element_type)


def _contraction_flops(op, b: bnd.Bounds) -> int:
    ins, outs = _inputs_outputs(op)
    out = (outs or list(op.results))[0]
    lhs, rhs = b.dims(ins[0]), b.dims(ins[1])
    if op.name.startswith(("linalg.conv", "linalg.depthwise_conv")):
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
    if op.name == "linalg.generic":
        domain = _domain(op, b)
        per = 2 if kind == "matmul" else _arithmetic(op)
        return OpCost(kind, dtype, domain * per, read + written)
    if kind == "matmul":
        return OpCost(kind, dtype, _contraction_flops(op, b), read + written)
    if kind == "reduction":
        biggest = max((b.elements(v) for v in tensor_ins), default=0)
        return OpCost(kind, dtype, biggest * _arithmetic(op), read + written)
    return OpCost(kind, dtype, sum(b.elements(r) for r in results) * _arithmetic(op), read + written)
