"""Which dimensions of a public function's arguments the program requires
to be equal ("tied" dimensions), read off the IR after IREE's input
conversion (linalg on tensors, before dispatch regions form).

An iree-turbine export whose arguments share one symbolic batch (torch's
``s0``) says so nowhere in its IR as such: after IREE's torch input
conversion each argument's batch is its own ``hal.buffer_view.dim``, and
the tie survives only as an op that needs the two sizes equal (the
elementwise ``linalg.generic`` of ``x * y``). Called with unequal sizes,
such a program reads past one argument and returns junk (stock IREE too);
the manifest lists the ties (pipeline/manifest.py) and the shim refuses the
call.

The rule is sound: two argument dimensions are tied only where every call
that returns needs them equal. Sizes are tracked as classes of equal
values (union-find) over

* facts, true wherever the op is: ``tensor.dim`` of a constant index is
  that dimension; ``tensor.empty``'s sizes, ``hal.buffer_view.dim``, and the
  shape operands of ``hal.tensor.import``/``export`` and
  ``flow.tensor.transfer`` are the dimensions they describe (the import
  checks the buffer view's shape); a ``hal.tensor.barrier`` result is its
  operand, a ``linalg.generic`` result its init; a static dimension is
  its constant;
* requirements, taken only from ops in the function's entry block (which
  every call that returns runs): each loop dimension of a
  ``linalg.generic`` (named linalg ops are generalized first, on a copy)
  has one size in every operand that indexes it by that dimension alone;
  the tensor operands and results of an ``arith``/``math`` op (elementwise)
  have one shape; a call of a function in the module requires what the
  callee's ties require of the values passed.

Two argument dimensions in one class are tied. Anything else (slices,
reshapes, ops in nested regions, dimensions tied only to a scalar
argument) ties nothing, so some ties go unlisted, never a false one; nor is
a class holding a constant listed (a dimension the program fixes is not a
tie between arguments).
"""

from __future__ import annotations

from iree.compiler import ir, passmanager

from ..ir import ir_adapter as irx
from ..ir.ir_util import top_level_ops, walk

FUNCTIONS = (irx.UTIL_FUNC, irx.FUNC_FUNC)
CALLS = (irx.UTIL_CALL, irx.FUNC_CALL)
# Ops whose index operands are, in order, the dynamic dimensions of their
# tensor (result, else operand), and whose results have their operand's shape.
SHAPED_BY_OPERANDS = (irx.HAL_TENSOR_IMPORT, irx.HAL_TENSOR_EXPORT, irx.FLOW_TENSOR_TRANSFER)

Group = list[tuple[int, int]]  # (argument index, dimension)


class _Sizes:
    """Union-find over sizes: (value, dimension) for a dimension of a
    tensor or buffer view, (value, None) for an index value, ("const", n)."""

    def __init__(self):
        self.parent: dict = {}

    def find(self, key):
        self.parent.setdefault(key, key)
        while self.parent[key] != key:
            self.parent[key] = self.parent[self.parent[key]]
            key = self.parent[key]
        return key

    def union(self, a, b) -> None:
        self.parent[self.find(a)] = self.find(b)

    def dim(self, value: ir.Value, i: int):
        """The key of dimension ``i`` of ``value``, tied to its constant
        where the type gives one."""
        key = (value, i)
        if key not in self.parent:
            self.find(key)
            t = value.type
            if isinstance(t, ir.RankedTensorType):
                if i < t.rank and not t.is_dynamic_dim(i):
                    self.union(key, ("const", t.get_dim_size(i)))
        return key

    def same_shape(self, a: ir.Value, b: ir.Value) -> None:
        for i in range(_rank(a) if _rank(a) is not None else _rank(b) or 0):
            self.union(self.dim(a, i), self.dim(b, i))


def _rank(value: ir.Value) -> int | None:
    return value.type.rank if isinstance(value.type, ir.RankedTensorType) else None


def _constant_index(value: ir.Value) -> int | None:
    owner = value.owner
    if isinstance(owner, ir.Block) or owner.name != irx.ARITH_CONSTANT:
        return None
    attr = owner.attributes["value"]
    return attr.value if isinstance(attr, ir.IntegerAttr) else None


def _dynamic_dims_are(sizes: _Sizes, tensor: ir.Value, dims: list[ir.Value]) -> None:
    t = tensor.type
    dynamic = [i for i in range(t.rank) if t.is_dynamic_dim(i)]
    for i, d in zip(dynamic, dims):
        sizes.union(sizes.dim(tensor, i), (d, None))


def _record_fact(op: ir.Operation, sizes: _Sizes) -> None:
    name = op.name
    if name == irx.TENSOR_DIM:
        index = _constant_index(op.operands[1])
        if index is not None:
            sizes.union((op.results[0], None), sizes.dim(op.operands[0], index))
    elif name == irx.TENSOR_EMPTY:
        _dynamic_dims_are(sizes, op.results[0], list(op.operands))
    elif name == irx.HAL_BUFFER_VIEW_DIM:
        index = ir.IntegerAttr(op.attributes["index"]).value
        sizes.union((op.results[0], None), sizes.dim(op.operands[0], index))
    elif name in SHAPED_BY_OPERANDS:
        source, result = op.operands[0], op.results[0]
        tensor = result if _rank(result) is not None else source
        _dynamic_dims_are(sizes, tensor, [v for v in list(op.operands)[1:] if irx.is_index_type(v.type)])
        sizes.same_shape(source, result)
    elif name == irx.HAL_TENSOR_BARRIER:
        for operand, result in zip(op.operands, op.results):
            sizes.same_shape(operand, result)
    elif name == irx.LINALG_GENERIC and len(op.results):
        inits = list(op.operands)[-len(op.results):]
        for init, result in zip(inits, op.results):
            sizes.same_shape(init, result)


class _Reader:
    def __init__(self, functions: dict[str, ir.Operation]):
        self.functions = functions
        self.done: dict[str, list[Group]] = {}
        self.busy: set[str] = set()

    def groups(self, name: str) -> list[Group]:
        """The tied groups of @name's arguments, each sorted, in order."""
        if name in self.done:
            return self.done[name]
        op = self.functions.get(name)
        if name in self.busy or op is None or not len(op.regions) or not len(op.regions[0].blocks):
            return []  # a call cycle, or not a function defined here
        self.busy.add(name)
        sizes = _Sizes()
        for inner in walk(op):
            _record_fact(inner, sizes)
        entry = op.regions[0].blocks[0]
        for inner in entry.operations:
            self._record_requirement(inner.operation, sizes)
        self.busy.discard(name)
        self.done[name] = _argument_groups(list(entry.arguments), sizes)
        return self.done[name]

    def _record_requirement(self, op: ir.Operation, sizes: _Sizes) -> None:
        if op.name == irx.LINALG_GENERIC:
            _loop_dims_agree(op, sizes)
        elif op.name.startswith(("arith.", "math.")):
            shaped = [v for v in [*op.operands, *op.results] if _rank(v) is not None]
            if shaped and len({_rank(v) for v in shaped}) == 1:
                for v in shaped[1:]:
                    sizes.same_shape(shaped[0], v)
        elif op.name in CALLS:
            operands = list(op.operands)
            for group in self.groups(ir.FlatSymbolRefAttr(op.attributes["callee"]).value):
                first = sizes.dim(operands[group[0][0]], group[0][1])
                for k, i in group[1:]:
                    sizes.union(first, sizes.dim(operands[k], i))


def _loop_dims_agree(op: ir.Operation, sizes: _Sizes) -> None:
    maps = [ir.AffineMapAttr(m).value for m in ir.ArrayAttr(op.attributes["indexing_maps"])]
    by_loop: dict[int, list] = {}
    for operand, amap in zip(op.operands, maps):
        if _rank(operand) is None:
            continue
        for i, expr in enumerate(amap.results):
            if isinstance(expr, ir.AffineDimExpr):
                by_loop.setdefault(expr.position, []).append(sizes.dim(operand, i))
    for keys in by_loop.values():
        for key in keys[1:]:
            sizes.union(keys[0], key)


def _argument_groups(arguments: list[ir.Value], sizes: _Sizes) -> list[Group]:
    """Each class of sizes with two argument dimensions or more and no
    constant, as sorted (argument, dimension) pairs."""
    by_root: dict = {}
    fixed = set()
    for key in list(sizes.parent):
        value, i = key
        if value == "const":
            fixed.add(sizes.find(key))
        elif i is not None and value in arguments:
            by_root.setdefault(sizes.find(key), []).append((arguments.index(value), i))
    return sorted(sorted(g) for root, g in by_root.items() if len(g) > 1 and root not in fixed)


def _is_public(op: ir.Operation) -> bool:
    return irx.is_public(op)


def tied_dims(module) -> dict[str, list[Group]]:
    """{public function: its groups of tied (argument, dimension)}, for the
    functions with any; read on a copy of ``module`` (in its context) with
    named linalg ops generalized."""
    copy = module.operation.clone()
    try:
        passmanager.PassManager.parse("builtin.module(linalg-generalize-named-ops)").run(copy)
    except ir.MLIRError:
        return {}  # no ties known: nothing is refused
    functions = {ir.StringAttr(op.attributes["sym_name"]).value: op for op in top_level_ops(copy)
                 if op.name in FUNCTIONS and "sym_name" in op.attributes}
    reader = _Reader(functions)
    found = {name: reader.groups(name) for name, op in functions.items() if _is_public(op)}
    return {name: groups for name, groups in found.items() if groups}
