"""The work graph of one function of the input program (IR after IREE's
input phase: ``util.func`` bodies of linalg, tensor, arith and math ops on
tensors, ``util.global`` for weights).

The ops of the function's body, in program order, are read as:

* a *unit* (work_graph.Unit): each op that makes a tensor, with the
  ``tensor.empty`` and ``linalg.fill`` that only give it storage folded in
  (op_costs.py says its class and cost); reshapes and casts are ``view``
  units, and a ``flow.tensor.transfer`` already in the program is a
  ``copy`` unit pinned to the device it names;
* a *weight* (work_graph.Weight): a ``util.global`` the function loads (an
  inline or resource constant, or a ``#flow.parameter.named``), pinned
  where the global has a ``stream.affinity``; a mutable one is the
  program's *state* (a KV cache), a weight of kind ``state``, which its
  loads read like any weight;
* a *store* of a tensor into a mutable global: a unit of class ``view``
  (it costs nothing) that reads the stored value and the state, so that
  the state lives where its loads and stores run (a state read or written
  on two devices lives on the host, as any weight read on two does), and
  rewrite.py moves the stored value to the state's device where it is
  made elsewhere. A store of a scalar is not work;
* *free*: ``tensor.empty``, tensor ``arith.constant`` and a ``linalg.fill``
  of a ``tensor.empty``: storage or constants IREE makes where they are
  used, so no edge starts at them;
* *a view of a weight*: an op that reads one weight and free values alone
  and hands its result to units only (what hoist.py leaves of such work:
  a broadcast of a weight over a batch, larger than the weight): IREE
  fuses it into its reader where both are on one device, and hoists it
  into a global, moved every call, where they are not; so it is no unit,
  and its readers read the weight, which lives with them;
* scalar ops (index arithmetic, ``tensor.dim``): not work, not placed.

Edges run from the unit, argument or weight that makes each tensor a unit
reads (an operand, or a value its body reads from outside, like a gather's
table) to that unit, and from the maker of each returned value to the
result; a weight read by a unit is not an edge but one of the unit's
``weights``. The function's arguments and results, and the devices they
live on, are its boundary's (boundary.py): the block's arguments and the
return's operands, or, for IREE's coarse-fences ABI, the tensors
``hal.tensor.import`` makes and those a ``hal.tensor.export`` hands back
(the imports, barriers and exports are the boundary, not units).

What the graph cannot model is refused with a one-line error naming the op
and its location, so that ``--place`` never guesses: control flow (more
than one block, ``scf``, ``cf`` and ``affine`` loops and conditionals),
and calls. Such a function is placed in the program itself (its
transfers and affinities), without ``--place``: an assignment file goes
through this same graph, so it cannot place it either.
"""

from __future__ import annotations

import dataclasses
from typing import Mapping

from iree.compiler import ir

from ..ir import ir_adapter as irx
from ..ir import ir_util as iru
from ..infra.diagnostics import MdcError, format_location
from . import bounds as bnd
from .boundary import Boundary, argument_devices, boundary_of, result_devices
from .op_costs import OpCost, op_cost
from .work_graph import Edge, Unit, Weight, WorkGraph

FREE_OPS = (irx.TENSOR_EMPTY, irx.ARITH_CONSTANT)
BOUNDARY_OPS = (irx.HAL_TENSOR_IMPORT, irx.HAL_TENSOR_BARRIER, irx.HAL_TENSOR_EXPORT)
CONTROL_FLOW_PREFIXES = ("scf.", "cf.", "affine.for", "affine.if", "affine.parallel")
GLOBAL_AFFINITY = "stream.affinity"


class CannotModel(MdcError):
    """An op automatic placement cannot model (control flow, a call)."""


@dataclasses.dataclass
class FunctionParts:
    """A function's body as the work graph reads it: ``units``, unit id ->
    the op that is that unit, in program order; ``sources``, for
    each tensor value the body defines or takes, where it comes from:
    ``("unit", id)``, ``("argument", n)``, ``("weight", name)`` or
    ``("free", None)``; ``reads``, unit id -> the values it reads that have
    a source other than free, in first-use order (operands, then values
    its body reads from outside); ``returns``, the values returned (for
    the ABI shape, the tensors exported); ``boundary``: boundary.py's;
    ``origins``: for a value a ``hal.tensor.barrier`` passes on, the value
    it passes on (whose result number is the unit's); ``stores``: unit id
    -> the name of the mutable global a store unit writes."""

    function: ir.Operation
    units: dict
    sources: dict
    reads: dict
    returns: list
    boundary: Boundary
    origins: dict = dataclasses.field(default_factory=dict)
    stores: dict = dataclasses.field(default_factory=dict)


def _global_table(function) -> dict:
    module = function.parent
    return {name: op for op in irx.top_level_ops(module) if (name := irx.symbol_name(op)) is not None}


def _refuse(op, why: str) -> None:
    # --place=FILE.json goes through the same work graph as auto, so the
    # message holds for both: the way out is the program's own annotations.
    raise CannotModel(f"--place cannot model '{op.name}' ({why}), automatically or from a file: place this "
                      "function in the program itself (flow.tensor.transfer, iree.abi.affinity, stream.affinity; "
                      "docs/mdc-compile.md) and compile without --place",
                      location=format_location(op.location))


def _is_tensor_result(op) -> bool:
    return any(bnd.is_tensor(r) for r in op.results)


def _captured(op, sources: dict) -> list:
    """Values defined outside ``op`` that ops nested in it read."""
    seen = []
    for nested in irx.walk(op):
        for value in nested.operands:
            if value in sources and value not in seen:
                seen.append(value)
    return seen


def function_parts(function) -> FunctionParts:
    """Reads ``function``'s body (the module docstring says how)."""
    blocks = list(function.regions[0].blocks)
    if len(blocks) != 1:
        _refuse(function, "a function of more than one block: control flow")
    block = blocks[0]
    boundary = boundary_of(function)
    sources: dict = {value: ("argument", n) for value, n in boundary.arguments.items()}
    origins: dict = {}
    units, reads, stores = {}, {}, {}
    for op in block.operations:
        op = op.operation
        if op.name == irx.HAL_TENSOR_BARRIER:
            for source, joined in zip(op.operands, op.results):
                sources[joined] = sources.get(source, ("free", None))
                origins[joined] = origins.get(source, source)
        elif op.name == irx.HAL_TENSOR_IMPORT and op.results[0] not in boundary.arguments:
            _refuse(op, "an import of a value that is not one of the function's arguments")
        elif irx.is_return(op) or op.name in BOUNDARY_OPS:
            continue
        elif irx.is_call(op):
            _refuse(op, "a call")
        elif op.name == irx.UTIL_GLOBAL_STORE:
            if bnd.is_tensor(op.operands[0]):
                uid = len(units)
                stored = op.operands[0]
                reads[uid] = [stored] if sources.get(stored, ("free", None))[0] != "free" else []
                units[uid], stores[uid] = op, global_name(op)
        elif op.name.startswith(CONTROL_FLOW_PREFIXES):
            _refuse(op, "control flow")
        elif op.name == irx.UTIL_GLOBAL_LOAD and _is_tensor_result(op):
            sources[op.results[0]] = ("weight", global_name(op))
        elif not _is_tensor_result(op):
            continue
        elif op.name in FREE_OPS or _fills_storage(op, sources):
            for r in op.results:
                sources[r] = ("free", None)
        elif (viewed := _weight_viewed(op, sources)) is not None:
            for r in op.results:
                sources[r] = ("weight", viewed)
        else:
            used = [v for v in op.operands if v in sources] + _captured(op, sources)
            uid = len(units)
            reads[uid] = [v for i, v in enumerate(used) if v not in used[:i] and sources[v][0] != "free"]
            for r in op.results:
                sources[r] = ("unit", uid)
            units[uid] = op
    return FunctionParts(function, units, sources, reads, list(boundary.results), boundary, origins, stores)


global_name = iru.global_name


def _weight_viewed(op, sources: dict) -> str | None:
    """The weight ``op`` is a view of (see the module's doc), or None."""
    if op.name == irx.FLOW_TENSOR_TRANSFER:
        return None
    read = {sources[v] for v in [*op.operands, *_captured(op, sources)] if v in sources} - {("free", None)}
    if len(read) != 1 or next(iter(read))[0] != "weight":
        return None
    for r in op.results:
        for use in r.uses:
            owner = use.owner.operation
            if irx.is_return(owner) or owner.name in BOUNDARY_OPS:
                return None
    return next(iter(read))[1]


def _fills_storage(op, sources: dict) -> bool:
    """A ``linalg.fill`` of a ``tensor.empty``: storage for its user."""
    if op.name != irx.LINALG_FILL:
        return False
    outs = list(op.operands)[-1]
    return sources.get(outs, ("", None))[0] == "free"


def weight_kind(global_op) -> str:
    """``state`` (a mutable global), ``parameter``, ``constant``, or
    ``computed``: a global with no value of its own, which an initializer
    computes at start-up (hoist.py's)."""
    if "is_mutable" in global_op.attributes:
        return "state"
    initial = irx.get_attr(global_op, "initial_value")
    if initial is None:
        return "computed"
    return "parameter" if irx.is_named_parameter(initial) else "constant"


@dataclasses.dataclass(frozen=True)
class ReadFunction:
    """A function's ``graph`` and the ``parts`` it was read from, whose
    unit ids are the graph's: what rewrite.apply_assignment writes an
    assignment of the graph through."""

    graph: WorkGraph
    parts: FunctionParts


def work_graph_of(func_op, host: str, accelerator: str, max_dims: Mapping[str, int]) -> WorkGraph:
    """The work graph of ``func_op`` (``read_function``'s graph)."""
    return read_function(func_op, host, accelerator, max_dims).graph


def read_function(func_op, host: str, accelerator: str, max_dims: Mapping[str, int]) -> ReadFunction:
    """The work graph of ``func_op`` (a public function of the input
    program) between the ``host`` and the ``accelerator`` device symbols,
    with the parts it was read from. ``max_dims``: the bounds of dynamic
    dimensions by name (bounds.py). Raises CannotModel or
    bounds.UnboundedDimension."""
    parts = function_parts(func_op)
    sources = parts.sources

    def name_of(value):
        kind, key = sources.get(value, ("", None))
        return f"u{key}.r{value.result_number}" if kind == "unit" else None

    def location_of(value):
        owner = value.owner
        return format_location((func_op if isinstance(owner, ir.Block) else owner).location)

    b = bnd.Bounds(parts.boundary.arguments, max_dims, name_of, location_of)
    globals_ = _global_table(func_op)
    units, edges, users = [], [], {}
    for uid, op in parts.units.items():
        reads = parts.reads[uid]
        direct = [v for v in op.operands if v in reads]
        if uid in parts.stores:  # the value becomes the state: no dispatch, no bytes
            cost = OpCost("view", str(ir.RankedTensorType(op.operands[0].type).element_type), 0, 0)
        else:
            cost = op_cost(op, b, [v for i, v in enumerate(direct) if v not in direct[:i]])
        weights = []
        if uid in parts.stores:  # a store reads the state it writes: they live together
            weights.append(parts.stores[uid])
            users.setdefault(parts.stores[uid], []).append(uid)
        for value in reads:
            kind, key = sources[value]
            if kind == "weight" and key in weights:
                continue
            if kind == "weight":
                weights.append(key)
                users.setdefault(key, []).append(uid)
            else:
                edges.append(Edge(key if kind == "unit" else (kind, key), uid, b.bytes(value),
                                  _value_number(kind, parts.origins.get(value, value))))
        units.append(Unit(uid, _label(op, cost.dtype, parts.stores.get(uid)), cost.op_class, cost.dtype, cost.flops, cost.bytes_moved,
                          tuple(weights), format_location(op.location), _pinned(op)))
    for i, value in enumerate(parts.returns):
        kind, key = sources.get(value, ("free", None))
        if kind in ("unit", "argument") and bnd.is_tensor(value):
            edges.append(Edge(key if kind == "unit" else (kind, key), ("result", i), b.bytes(value),
                              _value_number(kind, parts.origins.get(value, value))))
    weights = tuple(Weight(name, global_bytes(globals_[name]), weight_kind(globals_[name]), tuple(ids),
                           irx.affinity_of(globals_[name], GLOBAL_AFFINITY).single)
                    for name, ids in users.items())
    graph = WorkGraph(irx.symbol_name(func_op), host, accelerator, tuple(units), weights, tuple(edges),
                      argument_devices(func_op, parts.boundary, host), result_devices(func_op, parts.boundary, host))
    return ReadFunction(graph, parts)


def global_bytes(global_op) -> int:
    shaped = ir.RankedTensorType(ir.TypeAttr(global_op.attributes["type"]).value)
    if not shaped.has_static_shape:
        raise CannotModel(f"the global @{irx.symbol_name(global_op)} has a dynamic shape",
                          location=format_location(global_op.location))
    count = 1
    for d in shaped.shape:
        count *= d
    return count * bnd.element_bytes(shaped.element_type)


def _value_number(kind: str, value) -> int:
    """An edge's ``value``: the result number of a unit's value, 0 for an
    argument's."""
    return value.result_number if kind == "unit" else 0


def _pinned(op) -> str | None:
    """The device a ``flow.tensor.transfer`` in the program moves to."""
    if op.name == irx.FLOW_TENSOR_TRANSFER:
        return irx.Affinity.of_attr(irx.get_attr(op, "target")).single
    return None


def _label(op, dtype: str, stored: str | None = None) -> str:
    if stored is not None:
        shape = "x".join("?" if d < 0 else str(d) for d in ir.RankedTensorType(op.operands[0].type).shape)
        return f"store @{stored} {shape} {ir.RankedTensorType(op.operands[0].type).element_type}"
    results = [r for r in op.results if bnd.is_tensor(r)]
    shape = "x".join("?" if d < 0 else str(d) for d in ir.RankedTensorType(results[0].type).shape) \
        if results else ""
    return f"{op.name.split('.', 1)[-1]} {shape} {dtype}".strip()
