"""The size of a crossing value, with its dynamic dimensions named by what
they are, for reports.

A dynamic dimension is an SSA ``index`` value. Where it comes from decides
its identity (``Dim.key``): dimension ``k`` of a public function's argument
``N`` (``hal.buffer_view.dim`` of the argument at the stream level,
``tensor.dim`` of it before IREE's ABI) is the same dimension at every level
and in every crossing; any other size is its own dimension. IREE collapses
dispatches (a ``?x8`` tensor moves as ``?`` of ``d0 * 8`` elements), so an
extent is a product of a constant and dimensions (``Extent``), and bytes are
one too. Names (``d0``, ``d1``, ...) are given once per report, in the order
the report meets them (pipeline/report.py).

At the stream level a crossing value's tensor type is the one IREE gives the
bytes that move (a collapsed dispatch result: ``tensor<?xf16>``). The
program's own type is on the ``flow.tensor.transfer`` before IREE's
phases: ``source_types`` records those by location, and ``real_size`` takes
the one at a crossing's location that holds the same bytes.
"""

from __future__ import annotations

import dataclasses

from iree.compiler import ir

from ..ir import ir_adapter as irx
from ..infra.diagnostics import format_location
from ..ir.ir_util import get_attr, walk

_FUNCTIONS = (irx.UTIL_FUNC, irx.FUNC_FUNC)


@dataclasses.dataclass(frozen=True)
class Dim:
    """One dynamic dimension: ``key`` identifies it across the module,
    ``what`` says what it is."""

    key: tuple
    what: str


@dataclasses.dataclass(frozen=True)
class Extent:
    """``static`` times the product of ``dims`` (sorted by key)."""

    static: int
    dims: tuple[Dim, ...] = ()

    def times(self, other: "Extent") -> "Extent":
        return Extent(self.static * other.static, tuple(sorted(self.dims + other.dims, key=repr)))

    def text(self, names: dict | None = None) -> str:
        """``16*d0*d1``; ``names`` maps a Dim's key to its name (default:
        d0, d1... in this extent's own order)."""
        own = {}
        for d in self.dims:
            own.setdefault(d.key, f"d{len(own)}")
        symbols = [(names or own).get(d.key, own[d.key]) for d in self.dims]
        if not symbols:
            return str(self.static)
        return "*".join(([str(self.static)] if self.static != 1 else []) + symbols)


@dataclasses.dataclass(frozen=True)
class TensorSize:
    """A value's tensor type as text, each dimension's extent, and its bytes
    (None where unknown)."""

    encoding: str | None
    dims: tuple[Extent, ...] | None = None
    bytes: Extent | None = None

    def bytes_text(self, names: dict | None = None) -> str:
        return "?" if self.bytes is None else self.bytes.text(names)


UNKNOWN = TensorSize(None)


def _function_of(op: ir.Operation) -> ir.Operation | None:
    parent = op
    while parent is not None and parent.name not in (*_FUNCTIONS, irx.UTIL_INITIALIZER):
        parent = parent.parent
    return parent


def _function_name(function) -> str:
    if function is None or "sym_name" not in function.attributes:
        return "an initializer"
    return "@" + ir.StringAttr(function.attributes["sym_name"]).value


def _argument_dim(value: ir.Value, k: int) -> Extent | None:
    """Dimension ``k`` of argument ``value`` of a function's entry block."""
    if not isinstance(value.owner, ir.Block):
        return None
    function = value.owner.owner
    if function is None or function.name not in _FUNCTIONS or value.owner != function.regions[0].blocks[0]:
        return None
    n, name = ir.BlockArgument(value).arg_number, _function_name(function)
    return Extent(1, (Dim(("argument", name, n, k), f"dimension {k} of input {n} of {name}"),))


def _call_result_dim(view: ir.Value, k: int) -> Extent | None:
    """Dimension ``k`` of a view a ``util.call`` returns."""
    if isinstance(view.owner, ir.Block) or view.owner.operation.name != irx.UTIL_CALL:
        return None
    callee = "@" + ir.FlatSymbolRefAttr(view.owner.operation.attributes["callee"]).value
    j = ir.OpResult(view).result_number
    return Extent(1, (Dim(("result", callee, j, k), f"dimension {k} of output {j} of {callee}"),))


def _opaque(value: ir.Value) -> Extent:
    owner = value.owner
    if isinstance(owner, ir.Block):
        parent = owner.owner
        n = ir.BlockArgument(value).arg_number
        if parent is not None and parent.name in _FUNCTIONS and owner == parent.regions[0].blocks[0]:
            what = f"argument {n} of {_function_name(parent)}"
        else:
            where = format_location(parent.location) if parent is not None else None
            what = f"block argument {n} of {parent.name if parent is not None else 'a block'} at {where or 'an unknown location'}"
        return Extent(1, (Dim(("value", what), what),))
    op = owner.operation
    where = format_location(op.location) or "an unknown location"
    result = ir.OpResult(value).result_number
    what = f"a size computed by {op.name} in {_function_name(_function_of(op))} at {where}"
    return Extent(1, (Dim(("value", what, result), what),))


def index_extent(value: ir.Value, depth: int = 0) -> Extent:
    """An ``index`` value as a constant times dimensions."""
    owner = value.owner
    if depth > 16 or isinstance(owner, ir.Block):
        return _opaque(value)
    op = owner.operation
    if op.name == irx.ARITH_CONSTANT:
        constant = irx.index_constant(op.attributes["value"])
        if constant is not None:
            return Extent(constant)
    elif op.name == irx.ARITH_MULI:
        return index_extent(op.operands[0], depth + 1).times(index_extent(op.operands[1], depth + 1))
    elif op.name == irx.HAL_BUFFER_VIEW_DIM:
        k = ir.IntegerAttr(op.attributes["index"]).value
        found = _argument_dim(op.operands[0], k) or _call_result_dim(op.operands[0], k)
        if found is not None:
            return found
    elif op.name == irx.TENSOR_DIM:
        k = index_extent(op.operands[1], depth + 1)
        if not k.dims:
            return tensor_dim(op.operands[0], k.static, depth + 1)
    return _opaque(value)


def tensor_dim(value: ir.Value, k: int, depth: int = 0) -> Extent:
    """Dimension ``k`` of a tensor value before IREE's phases, followed back
    to a function argument where the IR says where it comes from."""
    t = ir.RankedTensorType(value.type)
    if not t.is_dynamic_dim(k):
        return Extent(t.get_dim_size(k))
    found = _argument_dim(value, k)
    if found is not None or isinstance(value.owner, ir.Block) or depth > 32:
        return found or _opaque(value)
    op = value.owner.operation
    dynamic = [i for i in range(t.rank) if t.is_dynamic_dim(i)]
    sizes = [o for o in op.operands if irx.is_index_type(o.type)]
    tensors = [o for o in op.operands if irx.is_tensor_type(o.type)]
    if len(op.results) == 1 and len(sizes) == len(dynamic) and not any(o.type == t for o in tensors):
        return index_extent(sizes[dynamic.index(k)], depth + 1)  # tensor.empty, hal.tensor.import, ...
    result = ir.OpResult(value).result_number
    if op.name.startswith("linalg.") and len(op.operands) >= len(op.results):
        init = op.operands[len(op.operands) - len(op.results) + result]
        return tensor_dim(init, k, depth + 1)
    same = [o for o in tensors if o.type == t]
    if same:  # elementwise ops, moves, barriers: the first operand's shape
        return tensor_dim(same[0], k, depth + 1)
    return _opaque(value)


def _element_bits(type_: ir.Type) -> int | None:
    """The bits of one element of a ranked tensor type of integers or
    floats (tf32 is stored in 32: its width, 19, is its precision), else
    None (an index, a complex, another dialect's element, not a tensor)."""
    if not isinstance(type_, ir.RankedTensorType):
        return None
    element = type_.element_type
    if isinstance(element, ir.FloatTF32Type):
        return 32
    return element.width if isinstance(element, (ir.IntegerType, ir.FloatType)) else None


def _dynamic_dims(type_: ir.Type) -> int:
    """How many dynamic dimensions an encoding type has (each an operand of
    the op that names it)."""
    if not isinstance(type_, ir.RankedTensorType):
        return 0
    return sum(1 for k in range(type_.rank) if type_.is_dynamic_dim(k))


def _size_of(type_: ir.Type, dims: list[Extent] | None) -> TensorSize:
    text = str(type_)  # the reports' spelling of the type
    bits = _element_bits(type_)
    if bits is None:
        return TensorSize(text)
    dynamic = iter(dims or [])
    extents = [next(dynamic, None) if type_.is_dynamic_dim(k) else Extent(type_.get_dim_size(k))
               for k in range(type_.rank)]
    if any(e is None for e in extents):
        return TensorSize(text)
    total = Extent(max(bits, 8) // 8)
    for e in extents:
        total = total.times(e)
    return TensorSize(text, tuple(extents), total)


def static_bytes(type_: ir.Type) -> int | None:
    """The bytes of a tensor type (``tensor<4x8xf32>``: 128); None for a
    dynamic shape or what is not a tensor type."""
    size = _size_of(type_, None)
    return None if size.bytes is None or size.bytes.dims else size.bytes.static


def _encoded(op: ir.Operation, candidate: ir.Value) -> TensorSize | None:
    """The size a stream op's encoding attribute gives ``candidate``."""
    view = op.opview
    if op.name == irx.STREAM_TENSOR_SIZEOF:
        return _size_of(get_attr(op, "encoding").value, [index_extent(v) for v in view.encoding_dims])
    encodings = get_attr(op, "result_encodings")
    if encodings is not None:
        results = list(op.results)
        index = results.index(candidate) if candidate in results else 0
        if index >= len(encodings):
            return UNKNOWN
        types = [ir.TypeAttr(encodings[i]).value for i in range(len(encodings))]
        skip = sum(_dynamic_dims(t) for t in types[:index])
        dims = list(view.result_encoding_dims)[skip:skip + _dynamic_dims(types[index])]
        return _size_of(types[index], [index_extent(v) for v in dims])
    for name in ("result_encoding", "target_encoding"):
        attr = get_attr(op, name)
        if attr is not None:
            dims = getattr(view, f"{name}_dims", None)
            return _size_of(attr.value, None if dims is None else [index_extent(v) for v in dims])
    return None


def measure(value: ir.Value, size: ir.Value | None = None) -> TensorSize:
    """A stream-level resource's tensor type and size, from its size
    computation or its producer."""
    for candidate in (size, value):
        owner = candidate.owner if candidate is not None else None
        if owner is None or isinstance(owner, ir.Block):
            continue
        op = owner.operation
        if op.name in (irx.STREAM_ASYNC_CAST, irx.STREAM_ASYNC_TRANSFER, irx.STREAM_TIMEPOINT_BARRIER):
            return measure(op.operands[0], None)
        found = _encoded(op, candidate)
        if found is not None:
            return found
    return UNKNOWN


def source_types(module) -> dict[str, list[TensorSize]]:
    """Before IREE's phases: each ``flow.tensor.transfer``'s tensor type and
    size, by source location."""
    found: dict[str, list[TensorSize]] = {}
    for op in walk(module):
        if op.name != irx.FLOW_TENSOR_TRANSFER:
            continue
        where = format_location(op.location)
        value = op.results[0]
        if where is None or not irx.is_tensor_type(value.type):
            continue
        t = ir.RankedTensorType(value.type)
        dims = [tensor_dim(op.operands[0], k) for k in range(t.rank) if t.is_dynamic_dim(k)]
        found.setdefault(where, []).append(_size_of(value.type, dims))
    return found


def real_size(measured: TensorSize, location: str | None, sources: dict) -> TensorSize:
    """The program's own type for a crossing at ``location``: the source
    transfer there that holds the same bytes, else what was measured."""
    if measured.bytes is None:
        return measured
    same = [s for s in sources.get(location, []) if s.bytes == measured.bytes]
    return same[0] if same else measured
