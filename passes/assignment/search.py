"""The search: the assignment of least estimated time within the
accelerator budget (``solve``), and the baselines it is compared with.
The time model is estimate.py's, the dynamic programme programme.py's.

The answer is the best of the programme's, all on the host, all on the
accelerator, greedy fill and the contiguous cuts (``cuts``: the units
from one position on, up to one, or between two near the end, on the
accelerator, as llama.cpp's ``-ngl`` offloads the last layers), those that
fit, by (estimated time, accelerator bytes, the devices in program order
with the host first), then improved one unit's device at a time while that
lowers the estimate (``improve``): the same input gives the same
assignment, and it is never slower than an obvious placement. On a DAG
(residual connections) the programme alone is a heuristic that misses
such cuts; the cuts keep the answer at or below every hand split of the
``-ngl`` kind. Where none of them puts a unit on the accelerator, each
assignment with one free unit alone there is tried too, before the budget
is called too small.
"""

from __future__ import annotations

import dataclasses
from typing import Optional

from ..infra.diagnostics import MdcError
from .budget import accelerator_bytes, device_bytes, fits, format_bytes, program_budget, unit_bytes
from .cost_model import CostModel
from .estimate import (CALLS_IN_FLIGHT, COPIES, OBJECTIVES, all_on, assignment_of, check_objective,
                       estimate_seconds, weight_devices)
from .programme import run_programme
from .work_graph import Assignment, Elsewhere, WorkGraph

__all__ = ["OBJECTIVES", "BudgetError", "Found", "all_on", "assignment_of", "estimate_seconds",
           "find_assignment", "greedy_fill", "is_chain", "solve", "weight_devices"]


class BudgetError(MdcError):
    """The accelerator budget fits no assignment that uses the accelerator."""


@dataclasses.dataclass(frozen=True)
class Found:
    """The search's answer: ``assignment``, and whether it is ``exact``
    (proven of least estimated time within the budget): the graph is a
    chain (``is_chain``) and the programme kept every partial assignment
    its rule keeps, no bound of programme.py cut it (``Outcome.exhaustive``).
    ``too_small``: where a budget above 0 fits no work on the accelerator,
    so everything stays on the host, the one line that says so (a warning:
    the largest unit and weight, the least budget any work fits in and
    whether auto puts work there at that budget); else None.
    ``crowded``: everything is on the host because the module's other
    functions hold the budget (``WorkGraph.elsewhere``), not by choice;
    ``too_small`` is then None (the budget would hold work without them)."""

    assignment: Assignment
    exact: bool
    too_small: Optional[str] = None
    crowded: bool = False


def greedy_fill(graph: WorkGraph, budget_bytes: Optional[int]) -> Assignment:
    """Accelerate's ``device_map="auto"``: free units in program order go
    to the accelerator while the accelerator bytes (weights counted as
    their first reader comes) fit the budget; the first that does not fit
    and every unit after it stay on the host."""
    units = {u.id: u.pinned or graph.host for u in graph.units}
    chosen = assignment_of(graph, units)
    for unit in graph.units:
        if unit.pinned:
            continue
        trial = dict(units)
        trial[unit.id] = graph.accelerator
        candidate = assignment_of(graph, trial)
        if not fits(accelerator_bytes(graph, candidate), budget_bytes):
            break
        units, chosen = trial, candidate
    return chosen


def is_chain(graph: WorkGraph) -> bool:
    """Whether every edge between two units joins consecutive units, and no
    argument is read by two units (the graphs the search solves exactly:
    where an argument has two readers, whether the second pays its crossing
    depends on where the first ran, which the programme's key forgets)."""
    where = graph.positions
    readers: dict = {}
    for e in graph.edges:
        if isinstance(e.target, int) and not isinstance(e.source, int):
            readers.setdefault((e.source, e.value), set()).add(e.target)
    return (all(where[e.target] == where[e.source] + 1 for e in graph.edges
                if isinstance(e.source, int) and isinstance(e.target, int))
            and all(len(units) == 1 for units in readers.values()))


def solve(graph: WorkGraph, cost: CostModel, budget_bytes: Optional[int],
          objective: str = "latency", reserved_bytes: int = 0) -> Assignment:
    """``find_assignment``'s assignment."""
    return find_assignment(graph, cost, budget_bytes, objective, reserved_bytes).assignment


def find_assignment(graph: WorkGraph, cost: CostModel, budget_bytes: Optional[int],
                    objective: str = "latency", reserved_bytes: int = 0) -> Found:
    """The assignment of least estimated time whose accelerator bytes fit
    ``budget_bytes`` (None: no limit; 0: everything on the host) less
    ``reserved_bytes``, what the runtime itself takes on the accelerator
    once any work runs there (the machine profile's reserved_bytes), as
    many times as the objective's calls hold copies of the program
    (budget.program_budget), and whether it is proven least (Found.exact;
    a budget of 0 asks for everything on the host, which no bound cuts).

    Where the budget is above 0 and no assignment with a unit on the
    accelerator fits it, everything stays on the host, as with a budget of
    0: Found.crowded where the module's other functions hold the budget
    (``graph.elsewhere``; without them work would fit), else
    Found.too_small says why. Raises BudgetError only where not even that
    fits: units pinned to the accelerator, or the caller's values there."""
    return _find(graph, cost, budget_bytes, objective, reserved_bytes, explain=True)


def _find(graph: WorkGraph, cost: CostModel, budget_bytes: Optional[int], objective: str, reserved_bytes: int,
          explain: bool) -> Found:
    """``find_assignment``; ``explain``: whether Found.too_small says why
    (False: the search it runs for that says nothing, so it never recurses)."""
    check_objective(objective)
    if budget_bytes is not None and budget_bytes < 0:
        raise MdcError(f"the accelerator budget must not be negative, not {budget_bytes} bytes")
    if budget_bytes == 0:
        chosen = all_on(graph, graph.host)
        if not fits(accelerator_bytes(graph, chosen), 0):
            raise BudgetError(_too_small(graph, cost, objective, 0, reserved_bytes))
        return Found(chosen, is_chain(graph))
    user_budget = budget_bytes
    if budget_bytes is not None:
        budget_bytes = program_budget(budget_bytes, reserved_bytes, objective)
        if budget_bytes <= 0:  # the runtime's own bytes leave none: any work is over the budget
            return _all_on_host(graph, cost, objective, user_budget, reserved_bytes, True, explain, budget_bytes)
    outcome = run_programme(graph, cost, objective, budget_bytes)
    best = outcome.best
    candidates = [] if best is None else [best]
    candidates += [all_on(graph, graph.host), all_on(graph, graph.accelerator),
                   greedy_fill(graph, budget_bytes), *cuts(graph)]
    fitting = [a for a in candidates if fits(accelerator_bytes(graph, a), budget_bytes)]
    if not any(_uses_accelerator(graph, a) for a in fitting):
        fitting += [a for a in _single_units(graph)
                    if fits(accelerator_bytes(graph, a), budget_bytes)]
        if _could_use_accelerator(graph) and not any(_uses_accelerator(graph, a) for a in fitting):
            return _all_on_host(graph, cost, objective, user_budget, reserved_bytes,
                                is_chain(graph) and outcome.exhaustive, explain, budget_bytes)
    if not fitting:
        raise BudgetError(_too_small(graph, cost, objective, user_budget, reserved_bytes))
    def key(a: Assignment):
        return (estimate_seconds(graph, a, cost, objective), accelerator_bytes(graph, a).total, _rank(graph, a))

    return Found(improve(graph, min(fitting, key=key), key, budget_bytes), is_chain(graph) and outcome.exhaustive)


# Cuts between two positions end this near the last unit (a model's head).
TAIL = 8
# Rounds of one-unit changes ``improve`` makes at most.
ROUNDS = 3


def cuts(graph: WorkGraph) -> list:
    """The contiguous placements: for every position i, the free units from
    i on (a suffix), and the free units before i (a prefix), on the
    accelerator; and the free units from i up to each of the last TAIL
    positions (the layers without the head). The rest, and pinned units,
    as for all_on."""
    order = [u for u in graph.units]
    n = len(order)
    spans = {(i, n) for i in range(n)} | {(0, j) for j in range(1, n + 1)}
    spans |= {(i, j) for j in range(max(1, n - TAIL), n) for i in range(j)}
    found = []
    for start, end in sorted(spans):
        units = {u.id: u.pinned or (graph.accelerator if start <= k < end else graph.host)
                 for k, u in enumerate(order)}
        found.append(assignment_of(graph, units))
    return found


def improve(graph: WorkGraph, assignment: Assignment, key, budget_bytes: Optional[int]) -> Assignment:
    """``assignment`` changed one free unit's device at a time, in program
    order, wherever the change fits and lowers ``key``; at most ROUNDS
    passes over the units."""
    best, best_key = assignment, key(assignment)
    for _ in range(ROUNDS):
        changed = False
        for unit in graph.units:
            if unit.pinned:
                continue
            other = graph.host if best.units[unit.id] == graph.accelerator else graph.accelerator
            trial = assignment_of(graph, {**best.units, unit.id: other})
            if not fits(accelerator_bytes(graph, trial), budget_bytes):
                continue
            trial_key = key(trial)
            if trial_key < best_key:
                best, best_key, changed = trial, trial_key, True
        if not changed:
            break
    return best


def _uses_accelerator(graph: WorkGraph, assignment: Assignment) -> bool:
    return graph.accelerator in assignment.units.values()


def _could_use_accelerator(graph: WorkGraph) -> bool:
    return any(u.pinned in (None, graph.accelerator) for u in graph.units)


def _single_units(graph: WorkGraph) -> list:
    """For each free unit, the assignment with it alone (and the pinned
    ones) on the accelerator."""
    base = {u.id: u.pinned or graph.host for u in graph.units}
    return [assignment_of(graph, {**base, unit.id: graph.accelerator})
            for unit in graph.units if unit.pinned is None]


def _rank(graph: WorkGraph, assignment: Assignment) -> int:
    """The devices in program order as a number, host 0 and unit 0 first."""
    rank = 0
    for unit in graph.units:
        rank = rank * 2 + (assignment.units[unit.id] == graph.accelerator)
    return rank


def _all_on_host(graph: WorkGraph, cost: CostModel, objective: str, budget_bytes: int, reserved_bytes: int,
                 exact: bool, explain: bool, room: int) -> Found:
    """Everything on the host, for a budget above 0 that fits no work on
    the accelerator (``budget_bytes``: the user's; ``room``: what it leaves
    one copy of the program, budget.program_budget). Crowded where the
    module's other functions hold it (``graph.elsewhere``: alone, some work
    would fit ``room``); else with the warning that says the budget is too
    small. BudgetError where not even everything on the host fits
    (``_too_small``): units pinned to the accelerator, or the caller's
    values there beyond ``room`` (beside the other functions' bytes)."""
    chosen = all_on(graph, graph.host)
    alone = dataclasses.replace(graph, elsewhere=Elsewhere())
    if _uses_accelerator(graph, chosen) or not fits(accelerator_bytes(graph, chosen), max(room, 0)):
        raise BudgetError(_too_small(graph, cost, objective, budget_bytes, reserved_bytes))
    if graph.elsewhere != Elsewhere():
        needed = _smallest_budget(alone, cost, objective)
        if needed is not None and needed <= room:  # the functions placed before this one hold the budget
            return Found(chosen, exact, crowded=True)
    if not explain:
        return Found(chosen, exact, "")
    return Found(chosen, exact, _too_small(graph, cost, objective, budget_bytes, reserved_bytes, warning=True))


def _too_small(graph: WorkGraph, cost: CostModel, objective: str, budget_bytes: int, reserved_bytes: int = 0,
               warning: bool = False) -> str:
    """The one line of a BudgetError, or with ``warning`` of Found.too_small
    (``budget_bytes``: the user's, the runtime's ``reserved_bytes``
    included)."""
    where = (f"--gpu-memory={budget_bytes} ({format_bytes(budget_bytes)}) fits no work on '{graph.accelerator}'"
             if warning else
             f"the accelerator budget of {format_bytes(budget_bytes)} fits no placement on '{graph.accelerator}'")
    if reserved_bytes:
        where += (f" beside the {format_bytes(reserved_bytes)} the runtime itself takes there "
                  f"(the machine profile's reserved_bytes)")
    if graph.elsewhere.weights or graph.elsewhere.working:
        where += (f" beside what the module's other public functions hold there ({format_bytes(graph.elsewhere.weights)}"
                  f" of weights, calls of up to {format_bytes(graph.elsewhere.working)})")
    copies = COPIES[objective]
    if copies > 1:
        where += (f" with {CALLS_IN_FLIGHT[objective]} calls in flight (--place-objective={objective}), which hold "
                  f"the program {copies} times (Function.map's lanes and the module's own VM context)")
    parts = []
    if graph.units:
        unit = max(graph.units, key=lambda u: (unit_bytes(graph, u.id), -u.id))
        parts.append(f"the largest unit is '{unit.label}' (unit {unit.id}, "
                     f"{format_bytes(unit_bytes(graph, unit.id))} with its weights and values)")
    if graph.weights:
        weight = max(graph.weights, key=lambda w: (w.bytes, [-ord(c) for c in w.name]))
        parts.append(f"the largest weight is '{weight.name}' ({format_bytes(weight.bytes)})")
    needed = _smallest_budget(graph, cost, objective)
    pinned_there = accelerator_bytes(dataclasses.replace(graph, elsewhere=Elsewhere()), all_on(graph, graph.host)).total
    if not warning and pinned_there and (needed is None or pinned_there < needed):
        needed = pinned_there  # the caller's values (or pinned units) there, everything else on the host
    if needed is not None:
        needed = device_bytes(needed, reserved_bytes, objective)
        if warning:
            parts.append(_least_budget(graph, cost, objective, reserved_bytes, needed))
        else:
            # An error: the program's own transfers or affinities keep work or values there.
            parts.append(f"--gpu-memory={needed} ({format_bytes(needed)}) is the least that holds what the "
                         f"program itself puts on '{graph.accelerator}'")
    if warning:  # (all on the host, no unit is pinned there: pinned_there is the caller's values)
        where += f", so everything stays on '{graph.host}', " + (
            f"but for the caller's values there ({format_bytes(pinned_there)} of staging)" if pinned_there else
            "as with --gpu-memory=0")
    return where + (": " + "; ".join(parts) if parts else "")


def _least_budget(graph: WorkGraph, cost: CostModel, objective: str, reserved_bytes: int, needed: int) -> str:
    """The warning's last part: the least budget ``needed`` in which any
    work fits on the accelerator, and whether auto puts work there at that
    budget; where it does not (the host is faster there), what it does
    with no budget at all."""
    acc, host = graph.accelerator, graph.host
    at_least = _find(graph, cost, needed, objective, reserved_bytes, explain=False).assignment
    if _uses_accelerator(graph, at_least):
        return f"--gpu-memory={needed} ({format_bytes(needed)}) is the least that puts work on '{acc}'"
    text = (f"--gpu-memory={needed} ({format_bytes(needed)}) is the least in which any unit fits on '{acc}', "
            f"but auto's estimate keeps everything on '{host}' at that budget")
    unlimited = _find(graph, cost, None, objective, reserved_bytes, explain=False).assignment
    if not _uses_accelerator(graph, unlimited):
        return text + f" and with none ('{host}' is faster for this program)"
    count = sum(1 for device in unlimited.units.values() if device == acc)
    total = device_bytes(accelerator_bytes(graph, unlimited).total, reserved_bytes, objective)
    return text + (f"; with no budget it puts {count} of {len(graph.units)} units on '{acc}', in "
                   f"--gpu-memory={total} ({format_bytes(total)})")


def _smallest_budget(graph: WorkGraph, cost: CostModel, objective: str) -> Optional[int]:
    """The fewest accelerator bytes the search finds for an assignment
    that uses the accelerator (None: no unit can go there)."""
    sizes = [accelerator_bytes(graph, a).total for a in _single_units(graph)]
    found = run_programme(graph, cost, objective, None).least_bytes_on_accelerator
    if found is not None:
        sizes.append(found)
    if not _could_use_accelerator(graph):
        return None
    if not sizes:  # every unit is pinned, some to the accelerator
        return accelerator_bytes(graph, all_on(graph, graph.host)).total
    return min(sizes)
