"""The bytes of a tensor value on the input program, with every dynamic
dimension bounded: the work graph's edges and the budget need an upper
bound for each.

A dynamic dimension is bounded where it can be traced to a bound the
command line gives (``--max-dim=NAME=N``) or to a constant:

* dimension J of the function's argument I is named ``argI.dJ`` (both
  counted from 0: ``arg0.d1`` is the second dimension of the first
  argument; for IREE's coarse-fences ABI the argument is the tensor
  imported from the function's argument I);
* a value's dimension is traced through the op that makes it: a linalg
  op's result has its ``outs`` operand's dimensions, a ``tensor.empty``
  its size operands, an op whose operands and result have one shape
  (elementwise arith/math, ``flow.tensor.transfer``, ``tensor.cast``) its
  first operand's, a ``tensor.expand_shape`` its ``output_shape`` and a
  ``tensor.collapse_shape`` the product of its group, and a
  ``tensor.extract_slice`` (of unit strides, no dimension dropped) at most
  its source's dimension: a slice of a cache kept at its maximum context
  (the length read so far) is bounded by that context;
* an index is traced through ``arith.constant``, ``tensor.dim``,
  ``arith.addi``/``muli`` and ``arith.index_cast``;
* any other dimension is named ``uU.rR.dJ`` (dimension J of result R of
  unit U, as the report numbers units) and must be given.

Where no bound is found the error names the dimension and asks for
``--max-dim=NAME=N``.
"""

from __future__ import annotations

import math
from typing import Callable, Mapping

from iree.compiler import ir

from ..infra.diagnostics import MdcError
from ..ir import ir_adapter as irx

SAME_SHAPE_PREFIXES = ("arith.", "math.")
SAME_SHAPE_OPS = (irx.FLOW_TENSOR_TRANSFER, irx.TENSOR_CAST, irx.LINALG_FILL)


class UnboundedDimension(MdcError):
    """A dynamic dimension with no bound: the message names it and the
    flag that bounds it."""


def element_bytes(element_type) -> int:
    """Bytes one element of ``element_type`` takes (sub-byte types round up)."""
    if isinstance(element_type, ir.IndexType):
        return 8
    if isinstance(element_type, ir.ComplexType):
        return 2 * element_bytes(element_type.element_type)
    for kind in (ir.IntegerType, ir.FloatType):
        if isinstance(element_type, kind):
            return max(1, (element_type.width + 7) // 8)
    return 4


def is_tensor(value) -> bool:
    return isinstance(value.type, ir.RankedTensorType)


class Bounds:
    """Upper bounds of the dimensions of a function's tensor values.
    ``arguments``: each value that is an argument -> its number.
    ``name_of(value)``: the name the error gives a value that is not an
    argument (its unit's ``uU.rR``), or None."""

    def __init__(self, arguments: Mapping, max_dims: Mapping[str, int], name_of: Callable, location_of: Callable):
        self._args = dict(arguments)
        self._max_dims = dict(max_dims)
        self._name_of, self._location_of = name_of, location_of

    def dims(self, value) -> list[int]:
        """``value``'s shape, each dynamic dimension replaced by its bound."""
        shaped = ir.RankedTensorType(value.type)
        return [self.dim(value, j) if shaped.is_dynamic_dim(j) else shaped.get_dim_size(j)
                for j in range(shaped.rank)]

    def elements(self, value) -> int:
        return math.prod(self.dims(value))

    def bytes(self, value) -> int:
        return self.elements(value) * element_bytes(ir.RankedTensorType(value.type).element_type)

    def dim(self, value, j: int) -> int:
        shaped = ir.RankedTensorType(value.type)
        if not shaped.is_dynamic_dim(j):
            return shaped.get_dim_size(j)
        name = self._dim_name(value, j)
        if name is not None and name in self._max_dims:
            return self._max_dims[name]
        found = None if value in self._args or isinstance(value.owner, ir.Block) else self._traced(value, j)
        if found is None:
            where = self._location_of(value)
            raise UnboundedDimension(
                f"dimension {name or j} is dynamic and automatic placement needs a bound: "
                f"give --max-dim={name or 'NAME'}=N", location=where)
        return found

    def _dim_name(self, value, j: int) -> str | None:
        if value in self._args:
            return f"arg{self._args[value]}.d{j}"
        base = self._name_of(value)
        return None if base is None else f"{base}.d{j}"

    def _traced(self, value, j: int) -> int | None:
        op = value.owner.operation  # the Operation: an OpView's ``name`` may be an attribute of that name
        name = op.name
        operands = list(op.operands)
        if name == irx.TENSOR_EMPTY:
            shaped = ir.RankedTensorType(value.type)
            dynamic = [k for k in range(shaped.rank) if shaped.is_dynamic_dim(k)]
            return self.index(operands[dynamic.index(j)])
        if name.startswith("linalg.") and "operandSegmentSizes" in op.attributes:
            sizes = list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))
            outs = operands[sizes[0]:sizes[0] + sizes[1]]
            return self.dim(outs[value.result_number], j)
        if name == irx.TENSOR_EXPAND_SHAPE:
            return self._expanded(op, value, j)
        if name == irx.TENSOR_EXTRACT_SLICE and \
                ir.RankedTensorType(operands[0].type).rank == ir.RankedTensorType(value.type).rank:
            return self.dim(operands[0], j)
        if name == irx.TENSOR_COLLAPSE_SHAPE:
            groups = ir.ArrayAttr(op.attributes["reassociation"])
            return math.prod(self.dim(operands[0], ir.IntegerAttr(k).value) for k in ir.ArrayAttr(groups[j]))
        same = name in SAME_SHAPE_OPS or name.startswith(SAME_SHAPE_PREFIXES)
        tensors = [v for v in operands if is_tensor(v)]
        if same and tensors and ir.RankedTensorType(tensors[0].type).rank == ir.RankedTensorType(value.type).rank:
            return self.dim(tensors[0], j)
        return None

    def _expanded(self, op, value, j: int) -> int | None:
        shaped = ir.RankedTensorType(value.type)
        dynamic = [k for k in range(shaped.rank) if shaped.is_dynamic_dim(k)]
        sizes = list(op.operands)[1:]
        return self.index(sizes[dynamic.index(j)]) if len(sizes) == len(dynamic) else None

    def index(self, value) -> int | None:
        """An upper bound of an index value, or None where none is traced."""
        if isinstance(value.owner, ir.Block):
            return None
        op = value.owner.operation
        operands = list(op.operands)
        if op.name == irx.ARITH_CONSTANT:
            return ir.IntegerAttr(op.attributes["value"]).value
        if op.name == irx.TENSOR_DIM:
            j = self.index(operands[1])
            return None if j is None else self.dim(operands[0], j)
        if op.name == irx.ARITH_INDEX_CAST:
            return self.index(operands[0])
        if op.name in (irx.ARITH_ADDI, irx.ARITH_MULI):
            a, b = self.index(operands[0]), self.index(operands[1])
            if a is None or b is None:
                return None
            return a + b if op.name == irx.ARITH_ADDI else a * b
        return None
