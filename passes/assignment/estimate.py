"""The time model: the estimated seconds of one call of an assignment,
and where weights go given where their readers run.

**The time of one call** (``estimate_seconds``). Per device d, its *work*
is the seconds of the units on d plus ``call_seconds(d)`` where d runs at
least one unit. *Crossings* are the seconds of every edge whose ends are
on different devices, plus, for every weight, one crossing of its bytes
for each device other than its own that a unit reading it runs on.

* ``latency``: work(host) + work(accelerator) + crossings.
* ``throughput`` (two calls in flight, as ``Function.map`` pipelines them):
  crossings + max(work(host), work(accelerator)). A crossing occupies both
  devices (one side writes or reads pinned memory, the other copies), so
  it counts on both; the busier device sets the pace.

**Weights** follow their users: a pinned weight stays where it is pinned;
a free weight all of whose readers run on the accelerator lives there;
every other free weight (read on both devices, or by none) lives on the
host, and the accelerator reads it through one crossing a call.
"""

from __future__ import annotations

from typing import Protocol

from ..diagnostics import MdcError
from .work_graph import Assignment, Unit, WorkGraph

OBJECTIVES = ("latency", "throughput")


class CostModel(Protocol):
    """What the search asks of a cost model (cost_model.CostModel)."""

    def unit_seconds(self, unit: Unit, device: str) -> float: ...

    def crossing_seconds(self, nbytes: int, source: str, target: str) -> float: ...

    def call_seconds(self, device: str) -> float: ...


def weight_devices(graph: WorkGraph, units: dict) -> dict:
    """Each weight's device, given the units' (see the module's doc)."""
    devices = {}
    for weight in graph.weights:
        readers = {units[user] for user in weight.users}
        if weight.pinned:
            devices[weight.name] = weight.pinned
        elif readers == {graph.accelerator}:
            devices[weight.name] = graph.accelerator
        else:
            devices[weight.name] = graph.host
    return devices


def assignment_of(graph: WorkGraph, units: dict) -> Assignment:
    """The assignment of ``units`` (id -> device), weights by their rule."""
    return Assignment(dict(units), weight_devices(graph, units))


def all_on(graph: WorkGraph, device: str) -> Assignment:
    """Every unit on ``device`` but the pinned ones."""
    return assignment_of(graph, {u.id: u.pinned or device for u in graph.units})


def canonical_edges(graph: WorkGraph) -> list:
    def end_key(end):
        return (0, "", end) if isinstance(end, int) else (1, end[0], end[1])

    return sorted(graph.edges, key=lambda e: (end_key(e.source), end_key(e.target), e.bytes))


def _work_and_crossings(graph: WorkGraph, assignment: Assignment, cost: CostModel):
    work: dict = {}
    for unit in graph.units:
        device = assignment.units[unit.id]
        work[device] = work.get(device, 0.0) + cost.unit_seconds(unit, device)
    for device in sorted(work):
        work[device] += cost.call_seconds(device)
    crossings = 0.0
    for edge in canonical_edges(graph):
        source = assignment.device_of(edge.source, graph)
        target = assignment.device_of(edge.target, graph)
        if source != target:
            crossings += cost.crossing_seconds(edge.bytes, source, target)
    for weight in sorted(graph.weights, key=lambda w: w.name):
        home = assignment.weights[weight.name]
        for reader in sorted({assignment.units[u] for u in weight.users} - {home}):
            crossings += cost.crossing_seconds(weight.bytes, home, reader)
    return work, crossings


def estimate_seconds(graph: WorkGraph, assignment: Assignment, cost: CostModel,
                     objective: str = "latency") -> float:
    """The estimated seconds of one call (see the module's doc)."""
    check_objective(objective)
    work, crossings = _work_and_crossings(graph, assignment, cost)
    if objective == "latency":
        return sum(work[d] for d in sorted(work)) + crossings
    return crossings + max(work.values(), default=0.0)


def check_objective(objective: str) -> None:
    if objective not in OBJECTIVES:
        raise MdcError(f"unknown placement objective '{objective}': it is one of {', '.join(OBJECTIVES)}")
