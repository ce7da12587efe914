"""Measured times in the cost model (``--place-costs``): a costs file
(contract/place_costs.py) that ``mdc-profile --program`` wrote for this
program gives a unit's seconds on a device, a crossing's seconds for its
bytes, and a device's fixed cost of a call; whatever the file does not
have, the machine profile models (cost_model.py) as before.

The file is checked against each function's work graph before it is
used: the function must be in it with the same digest (``graph_digest``:
the units' labels, classes, flops and bytes, the weights they read and
the edges, which the --max-dim bounds size), and each unit's label must be
the graph's; otherwise a one-line error names the file and the function,
so that times measured for another program never place this one.

A compile's device is matched to the file's by name (``--device=NAME=``
of both tools), else to the one device of the file of its kind; a device
of neither is modelled.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from typing import Mapping, Optional

from mdc.contract.place_costs import CostsError, PlaceCosts

from .cost_model import CostModel
from .work_graph import Unit, WorkGraph


def graph_digest(graph: WorkGraph) -> str:
    """The sha256 of what a function's measurements depend on (see the
    module's doc); not the pins or what other functions hold, which
    placing changes."""
    def end(e):
        return list(e) if isinstance(e, tuple) else e

    doc = {"function": graph.function,
           "units": [[u.label, u.op_class, u.dtype, u.flops, u.bytes_moved, list(u.weights)] for u in graph.units],
           "weights": sorted([w.name, w.bytes] for w in graph.weights),
           "edges": [[end(e.source), end(e.target), e.bytes, e.value] for e in graph.edges]}
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()


def device_names(costs: PlaceCosts, kinds: Mapping[str, str]) -> dict[str, str]:
    """The compile's device name -> the file's device name (see the
    module's doc), for the devices the file has."""
    found = {}
    for name, kind in kinds.items():
        if name in costs.devices and costs.devices[name].kind == kind:
            found[name] = name
            continue
        same = [n for n, d in costs.devices.items() if d.kind == kind]
        if len(same) == 1:
            found[name] = same[0]
    return found


def check_graph(costs: PlaceCosts, graph: WorkGraph) -> None:
    """CostsError unless ``costs`` was measured for ``graph``'s function as it is."""
    digest = costs.functions.get(graph.function)
    again = f"measure this program again: mdc-profile --program (docs/mdc-profile.md)"
    if digest is None:
        raise CostsError(f"{costs.origin}: measured for another program (it has no function @{graph.function}; "
                         f"it has {', '.join('@' + f for f in sorted(costs.functions)) or 'none'}): {again}")
    if digest != graph_digest(graph):
        raise CostsError(f"{costs.origin}: measured for another program, or with other bounds for its dynamic "
                         f"dimensions (--max-dim): @{graph.function}'s work differs; {again}")
    for unit in costs.units_of(graph.function).values():
        if unit.id >= len(graph.units) or graph.units[unit.id].label != unit.label:
            raise CostsError(f"{costs.origin}: unit {unit.key} is not this program's: {again}")


def check_functions(costs: PlaceCosts, placed: list[str]) -> None:
    """CostsError where the file has a function the program has not (another program's)."""
    extra = sorted(set(costs.functions) - set(placed))
    if extra:
        raise CostsError(f"{costs.origin}: measured for another program (this one has no function "
                         f"{', '.join('@' + f for f in extra)})")


@dataclasses.dataclass(frozen=True)
class MeasuredCostModel(CostModel):
    """A CostModel that answers from measurements where it has them:
    ``units``, unit id -> {device: seconds}; ``crossing_times``, (source,
    target, bytes) -> seconds; ``calls``, device -> seconds of a call's
    fixed cost."""

    units: Mapping[int, Mapping[str, float]] = dataclasses.field(default_factory=dict)
    crossing_times: Mapping[tuple, float] = dataclasses.field(default_factory=dict)
    calls: Mapping[str, float] = dataclasses.field(default_factory=dict)
    at_bound: frozenset = frozenset()

    def unit_seconds(self, unit: Unit, device: str) -> float:
        seconds = self.units.get(unit.id, {}).get(device)
        return super().unit_seconds(unit, device) if seconds is None else seconds

    def unit_measured(self, unit: Unit, device: str) -> bool:
        return device in self.units.get(unit.id, {})

    def crossing_seconds(self, nbytes: int, source: str, target: str) -> float:
        seconds = self.crossing_times.get((source, target, nbytes))
        return super().crossing_seconds(nbytes, source, target) if seconds is None or source == target else seconds

    def crossing_measured(self, nbytes: int, source: str, target: str) -> bool:
        return (source, target, nbytes) in self.crossing_times

    def call_seconds(self, device: str) -> float:
        return self.calls.get(device, super().call_seconds(device))


def with_measurements(cost: CostModel, costs: Optional[PlaceCosts], graph: WorkGraph,
                      kinds: Mapping[str, str]) -> CostModel:
    """``cost`` for ``graph``, with what ``costs`` measured of it (checked:
    check_graph); ``cost`` itself without a costs file."""
    if costs is None:
        return cost
    check_graph(costs, graph)
    names = device_names(costs, kinds)
    units = {}
    for uid, unit in costs.units_of(graph.function).items():
        units[uid] = {ours: unit.seconds[theirs] for ours, theirs in names.items() if theirs in unit.seconds}
    crossing_times = {}
    back = {theirs: ours for ours, theirs in names.items()}
    for c in costs.crossings:
        if c.source in back and c.target in back:
            crossing_times[(back[c.source], back[c.target], c.bytes)] = c.seconds
    calls = {ours: costs.devices[theirs].seconds_per_call for ours, theirs in names.items()}
    at_bound = frozenset(uid for uid, u in costs.units_of(graph.function).items() if u.at_bound)
    return MeasuredCostModel(cost.costs, cost.crossings, units, crossing_times, calls, at_bound)


def unit_measured(cost: CostModel, unit: Unit, device: str) -> bool:
    """Whether ``cost`` measured ``unit`` on ``device`` (else it models it)."""
    return isinstance(cost, MeasuredCostModel) and cost.unit_measured(unit, device)


def crossing_measured(cost: CostModel, nbytes: int, source: str, target: str) -> bool:
    return isinstance(cost, MeasuredCostModel) and cost.crossing_measured(nbytes, source, target)
