"""A picture-ready snapshot of where a program's work runs and where its data
crosses devices, taken by transfer-insertion after the residence analysis and before it
rewrites anything.

Nodes are the ops that do work or cross the ABI (dispatches, imports,
exports, splats, constants, global loads and stores), each with its device.
Edges follow resources from producer node to consumer node through casts,
transfers and control-flow arguments; an edge between two devices is a
crossing, labelled with its bytes and its strategy.
"""

from __future__ import annotations

import dataclasses
import re

from iree.compiler import ir

from ..ir import ir_adapter as irx
from ..infra.diagnostics import MdcError, format_location
from ..ir.ir_util import get_attr, is_resource, walk

_NODE_OPS = {
    irx.STREAM_TENSOR_DISPATCH: "dispatch",
    irx.STREAM_ASYNC_DISPATCH: "dispatch",
    irx.STREAM_TENSOR_IMPORT: "argument",
    irx.STREAM_TENSOR_EXPORT: "result",
    irx.STREAM_TENSOR_SPLAT: "splat",
    irx.STREAM_TENSOR_FILL: "fill",
    irx.STREAM_TENSOR_CONSTANT: "constant",
    irx.STREAM_ASYNC_CONSTANT: "constant",
    irx.STREAM_TENSOR_EMPTY: "empty",
    irx.UTIL_GLOBAL_LOAD: "global load",
    irx.UTIL_GLOBAL_STORE: "global store",
}
_THROUGH = {irx.STREAM_ASYNC_CAST, irx.STREAM_ASYNC_TRANSFER, irx.STREAM_TIMEPOINT_BARRIER,
            irx.STREAM_TIMEPOINT_AWAIT, irx.STREAM_ASYNC_CLONE, irx.UTIL_OPTIMIZATION_BARRIER}


@dataclasses.dataclass
class Node:
    id: int
    function: str
    kind: str
    label: str
    device: str | None
    location: str | None


@dataclasses.dataclass
class Edge:
    source: int
    target: int
    crossing: bool
    bytes: str | None = None
    strategy: str | None = None
    size: object = None  # sizes.TensorSize of a crossing's value


@dataclasses.dataclass
class ResidenceGraph:
    devices: dict  # name -> driver
    nodes: list
    edges: list


def _label(op: ir.Operation, kind: str) -> str:
    if kind == "dispatch":
        entries = get_attr(op, "entry_points")  # @executable::@function, ...
        paths = [ir.SymbolRefAttr(a).value for a in ir.ArrayAttr(entries)] if entries is not None else []
        name = next((path[1] for path in paths if len(path) > 1), "dispatch")
        # IREE names a dispatch function ``<function>_dispatch_<N>_<what>``.
        d = re.search(r"_dispatch_(\d+)_?(.*)$", name)
        return f"dispatch {d.group(1)}: {d.group(2)}" if d else name
    if kind in ("global load", "global store"):
        return f"{kind} @{get_attr(op, 'global').value}"
    return kind


def _enclosing_function(op: ir.Operation) -> str:
    parent = op.parent
    while parent is not None:
        if parent.name in (irx.UTIL_FUNC, irx.UTIL_INITIALIZER):
            if irx.is_initializer(parent):
                return "initializer"
            return parent.attributes["sym_name"].value
        parent = parent.parent
    return "?"


def snapshot(module, residence, model, describe) -> ResidenceGraph:
    """``describe(value) -> sizes.TensorSize`` labels crossings;
    ``residence`` says where things run (residence.Residence)."""
    nodes: list[Node] = []
    by_op: dict = {}
    for op in walk(module):
        kind = _NODE_OPS.get(op.name)
        if kind is None or _enclosing_function(op) == "?":
            continue
        if kind.startswith("global") and not any(is_resource(v) for v in [*op.operands, *op.results]):
            continue
        if op.name in (irx.STREAM_TENSOR_IMPORT,) and not op.results:
            continue
        device = residence.exec_device(op) if op.name != irx.UTIL_GLOBAL_LOAD else residence.home(op.results[0])
        node = Node(len(nodes), _enclosing_function(op), kind, _label(op, kind), device,
                    format_location(op.location))
        nodes.append(node)
        by_op[op] = node
    edges: list[Edge] = []
    for op, node in by_op.items():
        for value in op.operands:
            if not is_resource(value):
                continue
            producer = _producer(value, by_op)
            if producer is None:
                continue
            crossing = producer.device != node.device and None not in (producer.device, node.device)
            edge = Edge(producer.id, node.id, crossing)
            if crossing:
                edge.size = describe(value)
                edge.bytes = edge.size.bytes_text()
                try:
                    policy = model.policy(producer.device, node.device)
                    edge.strategy = policy.mode if policy.is_staged else "left to IREE"
                except MdcError:  # transfer-insertion reports it, with its location
                    edge.strategy = "impossible"
            edges.append(edge)
    devices = {name: d.kind for name, d in model.devices.items()}
    return ResidenceGraph(devices, nodes, edges)


def _producer(value: ir.Value, by_op: dict, depth: int = 0):
    if depth > 32:
        return None
    owner = value.owner
    if isinstance(owner, ir.Block):
        parent = owner.owner.operation if owner.owner is not None else None
        if parent is not None and parent.name == irx.SCF_FOR and value.arg_number >= 1:
            inits = list(parent.operands)[3:]
            if value.arg_number - 1 < len(inits):
                return _producer(inits[value.arg_number - 1], by_op, depth + 1)
        return None
    op = owner.operation
    if op in by_op:
        return by_op[op]
    if op.name in _THROUGH and op.operands:
        return _producer(op.operands[0], by_op, depth + 1)
    if op.name in (irx.SCF_FOR,):
        index = list(op.results).index(value)
        inits = list(op.operands)[3:]
        return _producer(inits[index], by_op, depth + 1) if index < len(inits) else None
    return None
