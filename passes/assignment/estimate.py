"""The time model: the estimated seconds of one call of an assignment,
and where weights go given where their readers run.

**The time of one call** (``estimate_seconds``). Per device d, its *work*
is the seconds of the units on d plus ``call_seconds(d)`` where d runs at
least one unit. *Crossings* are the seconds of every value that moves to
a device other than its producer's, once per such device however many of
its readers run there (``crossing_edges``), plus, for every weight, one
crossing of its bytes for each device other than its own that a unit
reading it runs on.

* ``latency``: work(host) + work(accelerator) + crossings.
* ``throughput`` (CALLS_IN_FLIGHT calls at once, as ``Function.map``
  pipelines them, each in a lane of its own): the seconds per call of a
  steady stream, max((work(host) + work(accelerator)) / CALLS_IN_FLIGHT,
  units(host)) + crossings, units(host) being the seconds of the host's
  units alone. The fixed cost of a call is mostly waiting, and one call's
  kernels seldom fill a GPU, so the lanes overlap both; the CPU's task
  system spreads each dispatch over every core, so the host's units are
  busy time no other call shares; crossings are paid in full. Measured on
  an H100 (docs/PERFORMANCE.md, runs P4 to P6): a call that runs
  everything on cuda took 1.03 ms alone and 0.49 ms a call with two in
  flight; 24 more crossings a call cost 3.3 ms a call in the stream, more
  than alone; the CPU's share at batch 32 did not speed up at all. Models
  that counted the accelerator's units or call as busy time, or halved the
  crossings, chose placements 1.1x to 2.8x slower in a stream than the
  latency objective's.

**Weights** follow their users: a pinned weight stays where it is pinned;
a free weight all of whose readers run on the accelerator lives there;
every other free weight (read on both devices, or by none) lives on the
host, and the accelerator reads it through one crossing a call.
"""

from __future__ import annotations

from mdc.contract.place_options import OBJECTIVES

from ..infra.diagnostics import MdcError
from .cost_model import CostModel
from .work_graph import Assignment, Weight, WorkGraph

# Calls in flight at once under each objective.
CALLS_IN_FLIGHT = {"latency": 1, "throughput": 2}
# Copies of the program's accelerator bytes each objective's calls hold
# (budget.py counts one; budget.program_budget and budget.device_bytes
# divide and multiply). Function.map runs each
# call in flight in a lane of its own, a VM context with its own globals,
# beside the module's own context: every weight on the accelerator is there
# three times with two lanes (measured on an H100: 3 x 256 MiB of weights
# plus the runtime's 32 MiB). Working memory is there once a call in
# flight, but is counted three times too: conservative, and one rule.
COPIES = {"latency": 1, "throughput": 1 + CALLS_IN_FLIGHT["throughput"]}


def weight_home(weight: Weight, readers: set, host: str, accelerator: str) -> str:
    """The device of ``weight`` read by units on ``readers`` (see the
    module's doc): where it is pinned, else the accelerator where only
    units there read it, else the host. The rule for a whole assignment
    (``weight_devices``) and for the programme's partial ones."""
    if weight.pinned:
        return weight.pinned
    return accelerator if readers == {accelerator} else host


def weight_crossings(home: str, readers: set) -> list:
    """(home, reader) for each device other than ``home`` that reads a
    weight living on ``home``: one crossing of its bytes a call each."""
    return [(home, reader) for reader in sorted(set(readers) - {home})]


def weight_devices(graph: WorkGraph, units: dict) -> dict:
    """Each weight's device, given the units' (see the module's doc)."""
    return {weight.name: weight_home(weight, {units[user] for user in weight.users}, graph.host, graph.accelerator)
            for weight in graph.weights}


def assignment_of(graph: WorkGraph, units: dict) -> Assignment:
    """The assignment of ``units`` (id -> device), weights by their rule."""
    return Assignment(dict(units), weight_devices(graph, units))


def all_on(graph: WorkGraph, device: str) -> Assignment:
    """Every unit on ``device`` but the pinned ones."""
    return assignment_of(graph, {u.id: u.pinned or device for u in graph.units})


def canonical_edges(graph: WorkGraph) -> list:
    """The graph's edges in an order independent of how it was built
    (computed once per graph)."""
    return graph.derived("canonical_edges", _sorted_edges)


def _sorted_edges(graph: WorkGraph) -> list:
    def end_key(end):
        return (0, "", end) if isinstance(end, int) else (1, end[0], end[1])

    return sorted(graph.edges, key=lambda e: (end_key(e.source), e.value, end_key(e.target), e.bytes))


def crossing_edges(graph: WorkGraph, assignment: Assignment, edges=None) -> list:
    """(edge, source device, target device) for each value's move between
    devices: of the edges (``edges``, or the graph's in its order) whose
    ends are on different devices, the first per value (source and
    ``Edge.value``) and target device, since a value moves to a device
    once, however many of its readers run there."""
    moved, found = set(), []
    for edge in graph.edges if edges is None else edges:
        source = assignment.device_of(edge.source, graph)
        target = assignment.device_of(edge.target, graph)
        if source != target and (edge.source, edge.value, target) not in moved:
            moved.add((edge.source, edge.value, target))
            found.append((edge, source, target))
    return found


def _work_and_crossings(graph: WorkGraph, assignment: Assignment, cost: CostModel):
    """(seconds of each device's units, of each device's calls, of the crossings)."""
    work: dict = {}
    for unit in graph.units:
        device = assignment.units[unit.id]
        work[device] = work.get(device, 0.0) + cost.unit_seconds(unit, device)
    calls = {device: cost.call_seconds(device) for device in sorted(work)}
    crossings = 0.0
    for edge, source, target in crossing_edges(graph, assignment, canonical_edges(graph)):
        crossings += cost.crossing_seconds(edge.bytes, source, target)
    for weight in sorted(graph.weights, key=lambda w: w.name):
        readers = {assignment.units[u] for u in weight.users}
        for home, reader in weight_crossings(assignment.weights[weight.name], readers):
            crossings += cost.crossing_seconds(weight.bytes, home, reader)
    return work, calls, crossings


def estimate_seconds(graph: WorkGraph, assignment: Assignment, cost: CostModel,
                     objective: str = "latency") -> float:
    """The estimated seconds of one call (see the module's doc)."""
    check_objective(objective)
    work, calls, crossings = _work_and_crossings(graph, assignment, cost)
    waits = sum(work[d] + calls[d] for d in sorted(work))
    return objective_seconds(objective, waits, work.get(graph.host, 0.0), crossings)


def objective_seconds(objective: str, waits: float, host_units: float, crossings: float) -> float:
    """The seconds of one call from its parts (see the module's doc):
    ``waits``, the seconds of every device's units and calls;
    ``host_units``, of the host's units alone (only throughput reads it);
    ``crossings``. The rule for a whole assignment (``estimate_seconds``)
    and for the programme's partial ones."""
    if objective == "latency":
        return waits + crossings
    return max(waits / CALLS_IN_FLIGHT[objective], host_units) + crossings


def check_objective(objective: str) -> None:
    if objective not in OBJECTIVES:
        raise MdcError(f"unknown placement objective '{objective}': it is one of {', '.join(OBJECTIVES)}")
