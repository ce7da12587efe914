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
peak; total = weights + that peak. One budget holds the whole module
(``WorkGraph.elsewhere``): the total also counts ``others``, what the
module's other functions hold beside this one's (their weights this one
does not read, and the working memory of their calls beyond this one's),
so total = every weight once + the working memory of the hungriest call
(``module_bytes``, the same sum over placed functions). The rule is
conservative, never below
what the assignment needs: an edge is counted on its own, as if no other
edge shared its buffer (the work graph does not say whether two edges from
one unit carry one value); a crossing's buffer is counted from its
producer, wherever the transfer is scheduled; and a weight read across
devices is counted for the whole call, wherever its transfer is scheduled.
"""

from __future__ import annotations

import dataclasses
import itertools
from typing import Optional

from .estimate import COPIES
from .work_graph import Assignment, Elsewhere, End, Weight, WorkGraph

_UNITS = ("B", "KiB", "MiB", "GiB", "TiB")


@dataclasses.dataclass(frozen=True)
class BudgetBreakdown:
    """Accelerator bytes: ``weights`` + ``activations`` + ``staging`` +
    ``others`` = ``total``, activations and staging at the position where
    their sum peaks (the first such position); ``others``: the module's
    other functions' (see the module's doc)."""

    weights: int
    activations: int
    staging: int
    total: int
    others: int = 0

    @property
    def working(self) -> int:
        """The working memory of one call: activations and staging."""
        return self.activations + self.staging


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


def edge_spans(graph: WorkGraph) -> list[tuple]:
    """Per edge: (source unit id or None, the source's device where it is
    not a unit, the same two for the target, the first position it is
    live at, the position past its last, its bytes). What
    ``accelerator_bytes`` reads of an edge, once per graph."""
    where = graph.positions
    last = max(len(graph.units) - 1, 0)
    spans = []
    for edge in graph.edges:
        start = end_position(edge.source, where, last)
        stop = end_position(edge.target, where, last)
        ends = []
        for end in (edge.source, edge.target):
            ends += [end, None] if isinstance(end, int) else [None, graph.caller_device(end)]
        spans.append((*ends, min(start, stop), max(start, stop) + 1, edge.bytes))
    return spans


def accelerator_bytes(graph: WorkGraph, assignment: Assignment) -> BudgetBreakdown:
    """The accelerator bytes ``assignment`` needs (see the module's doc)."""
    accelerator = graph.accelerator
    last = max(len(graph.units) - 1, 0)
    weights = 0
    whole_call_staging = 0
    for weight in graph.weights:
        resident, staged = weight_bytes(weight, assignment.weights[weight.name],
                                        weight_users_on(graph, assignment, weight.name), accelerator)
        weights += resident
        whole_call_staging += staged
    # Each edge adds its bytes at every position from one end to the other:
    # kept as differences (+bytes at the first, -bytes past the last) and
    # summed once, so an edge costs the same however long it lives.
    activations = [0] * (last + 2)
    staging = [0] * (last + 2)
    units = assignment.units
    for source_unit, source, target_unit, target, first, past, size in graph.derived("edge_spans", edge_spans):
        source = units[source_unit] if source is None else source
        target = units[target_unit] if target is None else target
        if not takes_accelerator_bytes(accelerator, source, target):
            continue
        into = activations if source == target else staging
        into[first] += size
        into[past] -= size
    activations = list(itertools.accumulate(activations[:-1]))
    staging = list(itertools.accumulate(staging[:-1]))
    live = [a + s for a, s in zip(activations, staging)]
    peak_at = live.index(max(live))
    peak_staging = staging[peak_at] + whole_call_staging
    others = others_bytes(graph.elsewhere, activations[peak_at] + peak_staging)
    total = weights + activations[peak_at] + peak_staging + others
    return BudgetBreakdown(weights, activations[peak_at], peak_staging, total, others)


def others_bytes(elsewhere: Elsewhere, working: int) -> int:
    """What the module's other functions add to a function's ``working``
    bytes: their weights it does not read, and their calls' working memory
    beyond its own (calls run one at a time: DESIGN.md, section 11)."""
    return elsewhere.weights + max(elsewhere.working - working, 0)


@dataclasses.dataclass(frozen=True)
class ModuleBytes:
    """The accelerator bytes of a whole module's placement: ``weights``,
    every weight any function keeps there, once; ``working``, the most
    one call of any function needs beside them; ``total`` = the two."""

    weights: int
    working: int
    total: int


def module_bytes(placed) -> ModuleBytes:
    """The module's accelerator bytes (see the module's doc) of
    ``placed``, (graph, assignment) of each public function (weights of
    one name are one weight)."""
    resident: dict = {}
    working = 0
    for graph, assignment in placed:
        alone = accelerator_bytes(dataclasses.replace(graph, elsewhere=Elsewhere()), assignment)
        working = max(working, alone.working)
        for weight in graph.weights:
            if assignment.weights[weight.name] == graph.accelerator:
                resident[weight.name] = weight.bytes
    weights = sum(resident.values())
    return ModuleBytes(weights, working, weights + working)


def elsewhere_of(graph: WorkGraph, placed) -> Elsewhere:
    """What the functions ``placed`` before ``graph``'s, (graph,
    assignment) each, hold on the accelerator beside it: their weights
    there that ``graph`` does not read, and their hungriest call."""
    reads = {w.name for w in graph.weights}
    module = module_bytes(placed)
    shared = {w.name: w.bytes for g, a in placed for w in g.weights
              if w.name in reads and a.weights[w.name] == g.accelerator}
    return Elsewhere(module.weights - sum(shared.values()), module.working)


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
    unit = graph.units[graph.positions[unit_id]]
    weights = sum(graph.weight(name).bytes for name in set(unit.weights))
    values = sum(e.bytes for e in graph.edges if unit_id in (e.source, e.target))
    return weights + values
