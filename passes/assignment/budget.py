"""The accelerator bytes an assignment needs, counted statically.

Three parts, over the units in program order (a unit's *position* is its
index in ``WorkGraph.units``; a function argument is at position 0, a
result at the last position):

* **weights**: the bytes of every weight assigned to the accelerator, for
  the whole call;
* **activations**: every value (an edge) both of whose ends are on the
  accelerator, live on it from its producer's position to its user's;
* **staging**: every value crossing into or out of the accelerator, whose
  device-side buffer is live from its producer's position to its user's;
  and every weight kept elsewhere that a unit on the accelerator reads,
  for the whole call.

Activations and staging are summed per position and counted at their
peak; total = weights + that peak. The rule is conservative, never below
what the assignment needs: an edge is counted on its own, as if no other
edge shared its buffer (the work graph does not say whether two edges from
one unit carry one value); a crossing's buffer is counted from its
producer, wherever the transfer is scheduled; and a weight read across
devices is counted for the whole call, wherever its transfer is scheduled.
"""

from __future__ import annotations

import dataclasses
from typing import Optional

from .estimate import COPIES
from .work_graph import Assignment, End, Weight, WorkGraph

_UNITS = ("B", "KiB", "MiB", "GiB", "TiB")


@dataclasses.dataclass(frozen=True)
class BudgetBreakdown:
    """Accelerator bytes: ``weights`` + ``activations`` + ``staging`` =
    ``total``, the last two at the position where their sum peaks (the
    first such position)."""

    weights: int
    activations: int
    staging: int
    total: int


def positions(graph: WorkGraph) -> dict:
    """Unit id -> its position in program order."""
    return {unit.id: index for index, unit in enumerate(graph.units)}


def end_position(end: End, where: dict, last: int) -> int:
    """The position of an edge's end: a unit's own, 0 for an argument,
    the last position for a result."""
    if isinstance(end, int):
        return where[end]
    return 0 if end[0] == "argument" else last


def weight_users_on(graph: WorkGraph, assignment: Assignment, name: str) -> set:
    """The devices of the units that read weight ``name``."""
    return {assignment.units[user] for user in graph.weight(name).users}


def weight_bytes(weight: Weight, home: str, readers: set, accelerator: str) -> tuple[int, int]:
    """(weights, staging): the whole-call accelerator bytes of ``weight``
    living on ``home`` and read by units on ``readers`` (see the module's
    doc). The rule for a whole assignment (``accelerator_bytes``) and for
    the programme's partial ones."""
    if home == accelerator:
        return weight.bytes, 0
    return 0, weight.bytes if accelerator in readers else 0


def takes_accelerator_bytes(accelerator: str, source: str, target: str) -> bool:
    """Whether a value from ``source`` to ``target`` takes accelerator
    bytes: an activation where both are the accelerator, staging where one
    is (see the module's doc)."""
    return accelerator in (source, target)


def accelerator_bytes(graph: WorkGraph, assignment: Assignment) -> BudgetBreakdown:
    """The accelerator bytes ``assignment`` needs (see the module's doc)."""
    accelerator = graph.accelerator
    where = positions(graph)
    last = max(len(graph.units) - 1, 0)
    activations = [0] * (last + 1)
    staging = [0] * (last + 1)
    weights = 0
    whole_call_staging = 0
    for weight in graph.weights:
        resident, staged = weight_bytes(weight, assignment.weights[weight.name],
                                        weight_users_on(graph, assignment, weight.name), accelerator)
        weights += resident
        whole_call_staging += staged
    for edge in graph.edges:
        source = assignment.device_of(edge.source, graph)
        target = assignment.device_of(edge.target, graph)
        if not takes_accelerator_bytes(accelerator, source, target):
            continue
        into = activations if source == target else staging
        start = end_position(edge.source, where, last)
        stop = end_position(edge.target, where, last)
        for position in range(min(start, stop), max(start, stop) + 1):
            into[position] += edge.bytes
    live = [a + s for a, s in zip(activations, staging)]
    peak_at = live.index(max(live))
    peak_staging = staging[peak_at] + whole_call_staging
    total = weights + activations[peak_at] + peak_staging
    return BudgetBreakdown(weights, activations[peak_at], peak_staging, total)


def fits(breakdown: BudgetBreakdown, budget_bytes: Optional[int]) -> bool:
    """Whether ``breakdown`` is within the budget (None: no limit)."""
    return budget_bytes is None or breakdown.total <= budget_bytes


# The device's bytes and one copy's. ``--gpu-memory`` is what the device
# holds: the runtime's own ``reserved_bytes`` (the machine profile's, there
# once any work runs on it) and the program's bytes as many times as the
# objective's calls hold copies of it (estimate.COPIES). These two are the
# one rule both ways; the search, its error, the report and bench use them.

def program_budget(budget_bytes: int, reserved_bytes: int, objective: str) -> int:
    """The accelerator bytes one copy of the program may take: the budget
    less the runtime's reserved bytes, shared by the copies the
    objective's calls hold (estimate.COPIES: under throughput, Function.map's
    lanes and the module's own VM context, each with its own weights)."""
    return (budget_bytes - reserved_bytes) // COPIES[objective]


def device_bytes(program_bytes: int, reserved_bytes: int, objective: str) -> int:
    """The device's bytes that hold ``program_bytes`` a copy: the copies
    the objective's calls hold, and the runtime's ``reserved_bytes``
    (``program_budget``'s inverse: the least budget it gives
    ``program_bytes``)."""
    return program_bytes * COPIES[objective] + reserved_bytes


def format_bytes(nbytes: Optional[int]) -> str:
    """``8 GiB``, ``7.9 GiB``, ``512 B``: binary units, at most one
    decimal, the decimal dropped where it is 0 (None: ``no limit``)."""
    if nbytes is None:
        return "no limit"
    value = float(nbytes)
    for unit in _UNITS:
        if abs(value) < 1024 or unit == _UNITS[-1]:
            break
        value /= 1024
    if unit == "B":
        return f"{nbytes} B"
    text = f"{value:.1f}"
    return f"{text[:-2] if text.endswith('.0') else text} {unit}"


def unit_bytes(graph: WorkGraph, unit_id: int) -> int:
    """The bytes a unit needs on the device it runs on, alone: its
    weights and every value it reads or writes."""
    unit = graph.units[positions(graph)[unit_id]]
    weights = sum(graph.weight(name).bytes for name in set(unit.weights))
    values = sum(e.bytes for e in graph.edges if unit_id in (e.source, e.target))
    return weights + values
