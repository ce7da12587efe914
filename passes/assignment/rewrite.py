"""An assignment written into the input program the way hand-placed
programs say where things go, so that IREE assigns the devices and mdc's
later passes stage every crossing as they do for those programs:

* each weight's global gets ``stream.affinity = #hal.device.promise<@D>``
  (stock IREE 3.13 honours it on a ``util.global``: the global is made and
  kept on D, and ``iree.abi.affinity`` there is ignored);
* each argument and result with no device named gets the one the graph
  says it lives on (the host), so that the caller keeps it where it is,
  whatever device reads it: an ``iree.abi.affinity``, or for IREE's
  coarse-fences ABI the ``hal.tensor.import``'s and ``hal.tensor.export``'s
  own ``on(...)`` (boundary.py);
* every value a unit reads from another device (an operand, a value its
  body reads from outside, a weight's load) is moved with
  ``flow.tensor.transfer %v : T to #hal.device.promise<@D>`` just before
  the first unit on D that reads it, and units on D after it read the
  moved value: a unit whose every input is on its device runs there;
* a value stored into a mutable global (the program's state) made on
  another device than the global's is moved there just before the store,
  whatever device the search gave the store's unit: the state never
  leaves its device, and a load, an update and a store on that device stay
  as they are (IREE makes them one update in place);
* a returned value made on another device than its result's is moved to
  the result's device before it leaves the body (the return, or the
  ABI's barrier or export).

A ``flow.tensor.transfer`` already in the program moves its own operand
and is left as it is. A unit that reads no value of any device (all its
inputs constants or storage) gets no transfer and runs where IREE puts it,
beside its users.
"""

from __future__ import annotations

from iree.compiler import ir

from ..ir import ir_adapter as irx
from .boundary import annotate, promise
from .extract import GLOBAL_AFFINITY, FunctionParts, global_bytes, weight_kind
from .work_graph import Assignment, WorkGraph


def _transfer(value, device: str, before) -> ir.Value:
    """``flow.tensor.transfer value to device``, inserted before ``before``."""
    shaped = value.type
    for dialect in ("arith", "tensor", "flow"):  # loaded, so that the ops below are theirs
        value.context.dialects[dialect]
    with ir.InsertionPoint(before), before.location:
        index = ir.IndexType.get()
        dims = []
        for j in range(shaped.rank):
            if shaped.is_dynamic_dim(j):
                c = ir.Operation.create(irx.ARITH_CONSTANT, results=[index],
                                        attributes={"value": ir.IntegerAttr.get(index, j)})
                dims.append(ir.Operation.create(irx.TENSOR_DIM, results=[index],
                                                operands=[value, c.results[0]]).results[0])
        op = ir.Operation.create(irx.FLOW_TENSOR_TRANSFER, results=[shaped], operands=[value, *dims],
                                 attributes={"target": promise(device)})
    return op.results[0]


def _replace_uses_in(op, old, new) -> None:
    """Makes ``op`` and the ops nested in it read ``new`` where they read ``old``."""
    for user in [op, *irx.walk(op)]:
        for i, value in enumerate(user.operands):
            if value == old:
                user.operands[i] = new


def place_globals(module, devices: dict) -> list:
    """Gives each global of ``devices`` (name -> device) that names no
    device its device, as ``apply_assignment`` gives a weight its; returns
    ``{"name", "bytes", "kind", "device"}`` of each (as the report gives a
    weight), the device it has now."""
    placed = []
    for op in irx.top_level_ops(module):
        name = irx.symbol_name(op)
        if op.name != irx.UTIL_GLOBAL or name not in devices:
            continue
        if GLOBAL_AFFINITY not in op.attributes:
            op.attributes[GLOBAL_AFFINITY] = promise(devices[name])
        placed.append({"name": name, "bytes": global_bytes(op), "kind": weight_kind(op),
                       "device": irx.affinity_of(op, GLOBAL_AFFINITY).single})
    return placed


def apply_assignment(module, parts: FunctionParts, graph: WorkGraph, assignment: Assignment) -> None:
    """Writes ``assignment`` of ``graph`` into ``module`` (the module
    docstring says how). ``parts``: what ``graph`` was read from
    (extract.read_function), whose ops it reaches each unit through, by
    the unit's id: the function is not read again, so an op added to it
    since, or an order other than the ids', cannot shift a device onto
    another unit's op."""
    if set(parts.units) != {unit.id for unit in graph.units}:
        raise ValueError(f"the work graph of @{graph.function} has units {sorted(u.id for u in graph.units)}, "
                         f"its function's parts {sorted(parts.units)}")
    table = {name: op for op in irx.top_level_ops(module) if (name := irx.symbol_name(op)) is not None}
    for name, device in sorted(assignment.weights.items()):
        table[name].attributes[GLOBAL_AFFINITY] = promise(device)

    def device_of(value) -> str | None:
        kind, key = parts.sources.get(value, ("free", None))
        if kind == "unit":
            return assignment.units[key]
        if kind == "argument":
            return graph.argument_devices[key]
        return assignment.weights.get(key) if kind == "weight" else None

    moved: dict = {}

    def on(value, device: str, before):
        if (value, device) not in moved:
            moved[(value, device)] = _transfer(value, device, before)
        return moved[(value, device)]

    for unit in graph.units:
        op, device = parts.units[unit.id], assignment.units[unit.id]
        if op.name == irx.FLOW_TENSOR_TRANSFER:
            continue
        if unit.id in parts.stores:  # the stored value goes where the state lives
            device = assignment.weights[parts.stores[unit.id]]
        for value in parts.reads[unit.id]:
            source = device_of(value)
            if source is not None and source != device:
                _replace_uses_in(op, value, on(value, device, op))
    for i, (value, (site, n)) in enumerate(zip(parts.returns, parts.boundary.sites)):
        source = device_of(value)
        if source is not None and source != graph.result_devices[i] and isinstance(value.type, ir.RankedTensorType):
            site.operands[n] = on(value, graph.result_devices[i], site)
    annotate(parts.function, parts.boundary, graph.argument_devices, graph.result_devices)
