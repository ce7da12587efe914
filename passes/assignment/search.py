"""The search: the assignment of least estimated time within the
accelerator budget, and the baselines it is compared with.

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

**The search** (``solve``) is a dynamic programme over the units in
program order. A partial assignment of the first k units is summarised by
its key (the device of unit k, the devices used so far, and for every
weight read both before and after unit k, the devices that read it so
far) and by a vector: the accelerator bytes counted so far (whole-call
bytes, the peak of the positions passed, the bytes live at the current
position, the bytes live at every later position) and its time so far
(latency: one number; throughput: each device's work plus the crossings).
Per key, only partial assignments that no other beats in every component
are kept (a Pareto front), and any over the budget is dropped: bytes
never go down as units are added. For a *chain* (every edge between units
joins consecutive units; arguments, results and weights may join any) the
key and the vector hold everything that the rest of the call's time and
bytes depend on, so the programme is exact: it finds an assignment of
least estimated time within the budget, as long as no more than
``MAX_OPEN_WEIGHTS`` weights are open at once and the fronts stay under
``MAX_FRONT`` per key and ``MAX_PARTIALS`` in all (past them, the best by
time so far are kept). On a
general DAG the same programme is a heuristic: an edge that skips units
is charged exactly, from the source's device on the partial assignment's
own path, but its bytes are counted against every position passed (an
upper bound), and the key forgets the devices of units whose values are
still to be read, so a front may drop the partial assignment that the
best one extends. Its answer is always within the budget.

The answer is the best of the programme's, all on the host, all on the
accelerator and greedy fill (those that fit), by (estimated time,
accelerator bytes, the devices in program order with the host first): the
same input gives the same assignment, and it is never slower than an
obvious placement.
"""

from __future__ import annotations

import dataclasses
from typing import Optional, Protocol

from ..diagnostics import MdcError
from .budget import accelerator_bytes, fits, format_bytes, positions, unit_bytes
from .work_graph import Assignment, Unit, WorkGraph

OBJECTIVES = ("latency", "throughput")

# The most partial assignments a front keeps per key.
MAX_FRONT = 128
# The most partial assignments kept over all keys after a unit.
MAX_PARTIALS = 2048
# The most weights read both before and after a unit that the key tells
# apart; past it, the readers of every open weight ride along in the
# partial assignment instead, and fronts compare partial assignments
# whose weights' readers differ.
MAX_OPEN_WEIGHTS = 4


class BudgetError(MdcError):
    """The accelerator budget fits no assignment that uses the accelerator."""


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


def _canonical_edges(graph: WorkGraph) -> list:
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
    for edge in _canonical_edges(graph):
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
    _check_objective(objective)
    work, crossings = _work_and_crossings(graph, assignment, cost)
    if objective == "latency":
        return sum(work[d] for d in sorted(work)) + crossings
    return crossings + max(work.values(), default=0.0)


def is_chain(graph: WorkGraph) -> bool:
    """Whether every edge between two units joins consecutive units (the
    graphs the search solves exactly)."""
    where = positions(graph)
    return all(where[e.target] == where[e.source] + 1 for e in graph.edges
               if isinstance(e.source, int) and isinstance(e.target, int))


def solve(graph: WorkGraph, cost: CostModel, budget_bytes: Optional[int],
          objective: str = "latency") -> Assignment:
    """The assignment of least estimated time whose accelerator bytes fit
    ``budget_bytes`` (None: no limit; 0: everything on the host).

    Raises BudgetError when the budget is above 0 and no assignment with a
    unit on the accelerator fits it (or when even the pinned units and
    the caller's values do not fit)."""
    _check_objective(objective)
    if budget_bytes is not None and budget_bytes < 0:
        raise MdcError(f"the accelerator budget must not be negative, not {budget_bytes} bytes")
    if budget_bytes == 0:
        chosen = all_on(graph, graph.host)
        if not fits(accelerator_bytes(graph, chosen), 0):
            raise BudgetError(_too_small(graph, cost, objective, 0))
        return chosen
    best = _programme(graph, cost, objective, budget_bytes).best
    candidates = [] if best is None else [best]
    candidates += [all_on(graph, graph.host), all_on(graph, graph.accelerator),
                   greedy_fill(graph, budget_bytes)]
    fitting = [a for a in candidates if fits(accelerator_bytes(graph, a), budget_bytes)]
    if not any(_uses_accelerator(graph, a) for a in fitting):
        fitting += [a for a in _single_units(graph)
                    if fits(accelerator_bytes(graph, a), budget_bytes)]
        if _could_use_accelerator(graph) and not any(_uses_accelerator(graph, a) for a in fitting):
            raise BudgetError(_too_small(graph, cost, objective, budget_bytes))
    if not fitting:
        raise BudgetError(_too_small(graph, cost, objective, budget_bytes))
    return min(fitting, key=lambda a: (estimate_seconds(graph, a, cost, objective),
                                       accelerator_bytes(graph, a).total, _rank(graph, a)))


def _check_objective(objective: str) -> None:
    if objective not in OBJECTIVES:
        raise MdcError(f"unknown placement objective '{objective}': it is one of {', '.join(OBJECTIVES)}")


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


def _too_small(graph: WorkGraph, cost: CostModel, objective: str, budget_bytes: int) -> str:
    """The one line of a BudgetError."""
    where = f"the accelerator budget of {format_bytes(budget_bytes)} fits no placement on '{graph.accelerator}'"
    parts = []
    if graph.units:
        unit = max(graph.units, key=lambda u: (unit_bytes(graph, u.id), -u.id))
        parts.append(f"the largest unit is '{unit.label}' (unit {unit.id}, "
                     f"{format_bytes(unit_bytes(graph, unit.id))} with its weights and values)")
    if graph.weights:
        weight = max(graph.weights, key=lambda w: (w.bytes, [-ord(c) for c in w.name]))
        parts.append(f"the largest weight is '{weight.name}' ({format_bytes(weight.bytes)})")
    needed = _smallest_budget(graph, cost, objective)
    if needed is not None:
        parts.append(f"a budget of {format_bytes(needed)} ({needed} bytes) would fit one")
    return where + (": " + "; ".join(parts) if parts else "")


def _smallest_budget(graph: WorkGraph, cost: CostModel, objective: str) -> Optional[int]:
    """The fewest accelerator bytes the search finds for an assignment
    that uses the accelerator (None: no unit can go there)."""
    sizes = [accelerator_bytes(graph, a).total for a in _single_units(graph)]
    found = _programme(graph, cost, objective, None).least_bytes_on_accelerator
    if found is not None:
        sizes.append(found)
    if not _could_use_accelerator(graph):
        return None
    if not sizes:  # every unit is pinned, some to the accelerator
        return accelerator_bytes(graph, all_on(graph, graph.host)).total
    return min(sizes)


# --- the dynamic programme ---------------------------------------------------


@dataclasses.dataclass(frozen=True)
class _Partial:
    """A partial assignment of units 0..k: bytes counted so far (see the
    module's doc), its time components and its devices as a number
    (``_rank``'s)."""

    whole: int
    peak: int
    current: int
    later: int
    times: tuple
    rank: int
    readers: tuple = ()

    def total(self) -> int:
        return self.whole + max(self.peak, self.current)


@dataclasses.dataclass(frozen=True)
class _Outcome:
    best: Optional[Assignment]
    least_bytes_on_accelerator: Optional[int]


@dataclasses.dataclass
class _Step:
    """What the programme needs to know of the unit at one position."""

    unit: Unit
    devices: tuple
    from_arguments: list  # (argument device, bytes)
    from_units: list  # (source position, bytes)
    to_results: list  # (result device, bytes)
    weights: list  # (weight, last reader's position)


class _Programme:
    """The dynamic programme of ``solve`` over one graph."""

    def __init__(self, graph: WorkGraph, cost: CostModel, objective: str):
        self.graph, self.cost, self.objective = graph, cost, objective
        self.acc = graph.accelerator
        self.devices = (graph.host, graph.accelerator)
        self.steps = self._steps()

    def _steps(self) -> list:
        graph = self.graph
        where = positions(graph)
        steps = [_Step(u, (u.pinned,) if u.pinned else self.devices, [], [], [], [])
                 for u in graph.units]
        for edge in _canonical_edges(graph):
            src, dst = edge.source, edge.target
            if isinstance(dst, int) and isinstance(src, int):
                if where[src] >= where[dst]:
                    raise ValueError(f"edge from unit {src} to unit {dst} is against program order")
                steps[where[dst]].from_units.append((where[src], edge.bytes))
            elif isinstance(dst, int):
                steps[where[dst]].from_arguments.append((graph.argument_devices[src[1]], edge.bytes))
            elif isinstance(src, int):
                steps[where[src]].to_results.append((graph.result_devices[dst[1]], edge.bytes))
        for weight in sorted(graph.weights, key=lambda w: w.name):
            readers = sorted({where[u] for u in weight.users})
            for position in readers:
                steps[position].weights.append((weight, readers[-1]))
        return steps

    def _start(self) -> tuple:
        """The key and partial assignment before unit 0: whole-call bytes
        and time that no unit's device changes."""
        graph, cost = self.graph, self.cost
        whole = sum(w.bytes for w in graph.weights if w.pinned == self.acc)
        crossing = 0.0
        for edge in _canonical_edges(graph):
            if isinstance(edge.source, int) or isinstance(edge.target, int):
                continue
            source = graph.argument_devices[edge.source[1]]
            target = graph.result_devices[edge.target[1]]
            if self.acc in (source, target):
                whole += edge.bytes
            if source != target:
                crossing += cost.crossing_seconds(edge.bytes, source, target)
        times = (crossing,) if self.objective == "latency" else (crossing, crossing)
        return (None, frozenset(), ()), _Partial(whole, 0, 0, 0, times, 0)

    def run(self, budget_bytes: Optional[int]) -> dict:
        """Key -> front after the last unit."""
        key, start = self._start()
        fronts = {key: [start]}
        for position, step in enumerate(self.steps):
            grown: dict = {}
            for key in sorted(fronts, key=_key_order):
                for partial in fronts[key]:
                    for device in step.devices:
                        new_key, new = self._extend(position, step, key, partial, device)
                        if budget_bytes is None or new.total() <= budget_bytes:
                            grown.setdefault(new_key, []).append(new)
            fronts = self._trim({k: self._front(v) for k, v in grown.items()})
        return fronts

    def _trim(self, fronts: dict) -> dict:
        """At most MAX_PARTIALS partial assignments over all keys: the
        best by time so far, then bytes, then rank."""
        if sum(len(front) for front in fronts.values()) <= MAX_PARTIALS:
            return fronts
        ranked = sorted(((self._objective(p.times), p.total(), p.rank, _key_order(k), k, p)
                         for k, front in fronts.items() for p in front), key=lambda r: r[:4])
        trimmed: dict = {}
        for *_, key, partial in ranked[:MAX_PARTIALS]:
            trimmed.setdefault(key, []).append(partial)
        return trimmed

    def _add(self, times: list, device: Optional[str], seconds: float) -> None:
        """Add work (``device``) or a crossing (None) to the time components."""
        if self.objective == "latency":
            times[0] += seconds
        elif device is None:
            times[0] += seconds
            times[1] += seconds
        else:
            times[self.devices.index(device)] += seconds

    def _extend(self, position: int, step: _Step, key: tuple, partial: _Partial, device: str):
        cost, acc = self.cost, self.acc
        used = key[1]
        times = list(partial.times)
        if device not in used:
            self._add(times, device, cost.call_seconds(device))
        self._add(times, device, cost.unit_seconds(step.unit, device))
        whole, peak, before, later = partial.whole, partial.peak, partial.current, partial.later
        current = later
        for source_device, nbytes in step.from_arguments:
            if source_device != device:
                self._add(times, None, cost.crossing_seconds(nbytes, source_device, device))
            if acc in (source_device, device):
                if position > 0:
                    peak += nbytes
                    before += nbytes
                current += nbytes
        for source, nbytes in step.from_units:
            source_device = self.devices[(partial.rank >> (position - 1 - source)) & 1]
            if source_device != device:
                self._add(times, None, cost.crossing_seconds(nbytes, source_device, device))
            if acc in (source_device, device):
                if source < position - 1:
                    peak += nbytes  # an upper bound: only positions source.. need it
                before += nbytes
                current += nbytes
        for target_device, nbytes in step.to_results:
            if target_device != device:
                self._add(times, None, cost.crossing_seconds(nbytes, device, target_device))
            if acc in (device, target_device):
                current += nbytes
                later += nbytes
        readers = dict(partial.readers)
        for weight, last in step.weights:
            seen = readers.pop(weight.name, frozenset())
            if device not in seen:
                whole += self._weight_bytes(weight, device, seen)
                seconds = self._weight_crossing(weight, device, seen)
                if seconds:
                    self._add(times, None, seconds)
            if last > position:
                readers[weight.name] = seen | {device}
        peak = max(peak, before) if position > 0 else 0
        readers = tuple(sorted(readers.items()))
        new = _Partial(whole, peak, current, later, tuple(times),
                       partial.rank * 2 + (device == acc), readers)
        told = readers if len(readers) <= MAX_OPEN_WEIGHTS else (("", frozenset()),)
        return (device, used | {device}, told), new

    def _weight_bytes(self, weight, device: str, seen: frozenset) -> int:
        """Bytes a weight adds when ``device`` first reads it: its bytes
        when the accelerator first reads a weight not pinned there."""
        return weight.bytes if device == self.acc and weight.pinned != self.acc else 0

    def _weight_crossing(self, weight, device: str, seen: frozenset) -> float:
        """Seconds a weight's crossing adds when ``device`` first reads it."""
        if weight.pinned:
            if device == weight.pinned:
                return 0.0
            return self.cost.crossing_seconds(weight.bytes, weight.pinned, device)
        if seen and device not in seen:  # now read on both devices: it stays on the host
            return self.cost.crossing_seconds(weight.bytes, self.graph.host, self.acc)
        return 0.0

    def _objective(self, times: tuple) -> float:
        return times[0] if self.objective == "latency" else max(times)

    def _front(self, partials: list) -> list:
        """The partial assignments no other beats in every component, best
        first, at most MAX_FRONT."""
        def vector(p: _Partial) -> tuple:
            return (p.whole, p.peak, p.current, p.later) + p.times

        ordered = sorted(partials, key=lambda p: (self._objective(p.times), p.total()) + vector(p) + (p.rank,))
        kept: list = []
        for candidate in ordered:
            mine = vector(candidate)
            if any(all(a <= b for a, b in zip(vector(k), mine)) for k in kept):
                continue
            kept.append(candidate)
            if len(kept) == MAX_FRONT:
                break
        return kept

    def assignment(self, rank: int) -> Assignment:
        count = len(self.steps)
        return assignment_of(self.graph, {
            step.unit.id: self.devices[(rank >> (count - 1 - position)) & 1]
            for position, step in enumerate(self.steps)})


def _key_order(key: tuple) -> tuple:
    device, used, readers = key
    return (device or "", sorted(used), [(name, sorted(seen)) for name, seen in readers])


def _programme(graph: WorkGraph, cost: CostModel, objective: str,
               budget_bytes: Optional[int]) -> _Outcome:
    """The programme's best assignment within the budget, and the fewest
    bytes of any it kept that uses the accelerator."""
    programme = _Programme(graph, cost, objective)
    finals = []
    for key, front in programme.run(budget_bytes).items():
        for partial in front:
            finals.append((programme._objective(partial.times), partial.total(), partial.rank,
                           graph.accelerator in key[1]))
    if not finals:
        return _Outcome(None, None)
    best = min(finals)
    on_accelerator = [total for _, total, _, uses in finals if uses]
    return _Outcome(programme.assignment(best[2]), min(on_accelerator) if on_accelerator else None)
