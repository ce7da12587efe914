"""The dynamic programme behind ``search.solve``.

It runs over the units in program order. A partial assignment of the
first k units is summarised by its key (the device of unit k, the
devices used so far, and for every weight read both before and after
unit k, the devices that read it so far) and by a vector: the
accelerator bytes counted so far (whole-call bytes: the weights on the
accelerator apart from the rest, since what the module's other
functions hold, ``WorkGraph.elsewhere``, sits beside the first and under
the second; the peak of the positions passed, the bytes live at the
current position, the bytes live at every later position) and its time
so far (latency: one number;
throughput: the latency sum and each device's units alone, the
objective's max of estimate.py). Per key, a partial
assignment is dropped where another kept one is as good in every
component (a Pareto front; of equal ones, the one with the host earlier
in program order stays), and any that no completion can bring within the
budget is dropped (its floor, _Partial.floor: bytes never go down as units
are added, but for a weight the accelerator alone has read so far, which a
later reader on the host turns from resident bytes into staging, and
staging shares the other functions' working memory). For a *chain* (every edge between units
joins consecutive units; arguments, results and weights may join any)
the key and the vector hold everything that the rest of the call's time
and bytes depend on, so the programme is exact: it finds an assignment
of least estimated time within the budget (``search.is_chain`` also asks
that no argument have two readers, since whether the second pays the
argument's crossing depends on where the first ran, which the key does
not hold), as long as no more than
``MAX_OPEN_WEIGHTS`` weights are open at once and the fronts stay under
``MAX_FRONT`` per key and ``MAX_PARTIALS`` in all (past them, the best
by time so far are kept); the outcome says whether any of these bounds
cut the search (``Outcome.exhaustive``). On a general DAG the same programme is a
heuristic: an edge that skips units is charged exactly, from the
source's device on the partial assignment's own path, but its bytes are
counted against every position passed (an upper bound), and the key
forgets the devices of units whose values are still to be read, so a
front may drop the partial assignment that the best one extends. Its
answer is always within the budget.

What one unit adds to a partial assignment is estimate.py's and budget.py's
rules, applied to the devices the partial assignment has so far: how the
time's parts make the objective's seconds (estimate.objective_seconds),
where a weight lives and what crossings it makes (estimate.weight_home,
estimate.weight_crossings), the accelerator bytes of a weight
(budget.weight_bytes) and of a value (budget.takes_accelerator_bytes).
"""

from __future__ import annotations

import dataclasses
from typing import Optional

import numpy

from .budget import others_bytes, takes_accelerator_bytes, weight_bytes
from .cost_model import CostModel
from .estimate import (assignment_of, canonical_edges, crossing_edges, objective_seconds, weight_crossings,
                       weight_home)
from .work_graph import Assignment, Elsewhere, Unit, WorkGraph

# The most partial assignments a front keeps per key.
MAX_FRONT = 128
# The most partial assignments kept over all keys after a unit.
MAX_PARTIALS = 2048
# The most weights read both before and after a unit that the key tells
# apart; past it, the readers of every open weight ride along in the
# partial assignment instead, and fronts compare partial assignments
# whose weights' readers differ.
MAX_OPEN_WEIGHTS = 4


@dataclasses.dataclass(frozen=True)
class _Partial:
    """A partial assignment of units 0..k: bytes counted so far (see the
    module's doc; ``resident``, the weights on the accelerator, and
    ``whole``, the rest of the whole-call bytes), its time components, its
    devices as a number (unit 0 the highest bit, 1 for the accelerator)
    and, for every weight read both before and after it, the devices that
    read it so far."""

    resident: int
    whole: int
    peak: int
    current: int
    later: int
    times: tuple
    rank: int
    readers: tuple = ()

    @property
    def working(self) -> int:
        """Its working memory: whole-call bytes and the peak so far."""
        return self.whole + max(self.peak, self.current)

    def total(self, elsewhere: Elsewhere) -> int:
        """The module's bytes with it (budget.accelerator_bytes' total)."""
        return self.resident + self.working + others_bytes(elsewhere, self.working)

    def floor(self, elsewhere: Elsewhere, movable: int) -> int:
        """The least ``total`` any completion of it can have. ``movable``:
        the bytes of the open weights only the accelerator has read so far
        (and not pinned), which a later reader on the host would move to the
        host, their bytes then staging (``whole``): working memory, which
        shares the other functions' calls' (others_bytes), so the total can
        go down by up to ``movable``. Without them it is ``total``."""
        return self.resident + self.working + others_bytes(elsewhere, self.working + movable)


@dataclasses.dataclass(frozen=True)
class Outcome:
    """The programme's best assignment, the fewest bytes of any it kept
    that uses the accelerator, and whether it was ``exhaustive``: no bound
    (MAX_FRONT, MAX_PARTIALS, MAX_OPEN_WEIGHTS) dropped or merged a
    partial assignment that its rule alone would have kept apart."""

    best: Optional[Assignment]
    least_bytes_on_accelerator: Optional[int]
    exhaustive: bool = True


@dataclasses.dataclass(frozen=True)
class _Moved:
    """A value a unit reads: its bytes, the positions of its readers before
    this one, the devices of the results it is, and whether this is the
    unit's first edge from it. The value crosses to the unit's device only
    where none of these has already brought it there (a value moves to a
    device once, as estimate.crossing_edges counts it)."""

    bytes: int
    earlier: tuple
    result_devices: frozenset
    first_here: bool


@dataclasses.dataclass
class _Step:
    """What the programme needs to know of the unit at one position."""

    unit: Unit
    devices: tuple
    from_arguments: list  # (argument device, _Moved)
    from_units: list  # (source position, _Moved)
    to_results: list  # (result device, bytes, the value's first edge to that device)
    weights: list  # (weight, last reader's position)


class Programme:
    """The dynamic programme of ``solve`` over one graph."""

    def __init__(self, graph: WorkGraph, cost: CostModel, objective: str):
        self.graph, self.cost, self.objective = graph, cost, objective
        self.acc = graph.accelerator
        self.devices = (graph.host, graph.accelerator)
        self.steps = self._steps()
        # Whether a bound has cut the search (Outcome.exhaustive).
        self.cut = False

    def _steps(self) -> list:
        graph = self.graph
        where = graph.positions
        steps = [_Step(u, (u.pinned,) if u.pinned else self.devices, [], [], [], [])
                 for u in graph.units]
        edges = canonical_edges(graph)
        # Per value (source, Edge.value): its readers' positions and its results' devices.
        readers: dict = {}
        result_devices: dict = {}
        for edge in edges:
            value = (edge.source, edge.value)
            if isinstance(edge.target, int):
                readers.setdefault(value, []).append(where[edge.target])
            else:
                result_devices.setdefault(value, set()).add(graph.result_devices[edge.target[1]])
        seen = set()  # (value, reader position or result device) already met
        for edge in edges:
            src, dst = edge.source, edge.target
            value = (src, edge.value)
            if isinstance(dst, int):
                at = where[dst]
                moved = _Moved(edge.bytes, tuple(sorted({p for p in readers[value] if p < at})),
                               frozenset(result_devices.get(value, ())), (value, at) not in seen)
                seen.add((value, at))
            if isinstance(dst, int) and isinstance(src, int):
                if where[src] >= where[dst]:
                    raise ValueError(f"edge from unit {src} to unit {dst} is against program order")
                steps[where[dst]].from_units.append((where[src], moved))
            elif isinstance(dst, int):
                steps[where[dst]].from_arguments.append((graph.argument_devices[src[1]], moved))
            elif isinstance(src, int):
                target = graph.result_devices[dst[1]]
                steps[where[src]].to_results.append((target, edge.bytes, (value, target) not in seen))
                seen.add((value, target))
        for weight in sorted(graph.weights, key=lambda w: w.name):
            readers_of = sorted({where[u] for u in weight.users})
            for position in readers_of:
                steps[position].weights.append((weight, readers_of[-1]))
        return steps

    def _start(self) -> tuple:
        """The key and partial assignment before unit 0: whole-call bytes
        and time that no unit's device changes."""
        graph, cost = self.graph, self.cost
        resident = sum(self._weight_bytes(w, frozenset())[0] for w in graph.weights)
        whole = sum(self._weight_bytes(w, frozenset())[1] for w in graph.weights)
        # Edges from an argument to a result: both ends are the caller's, no
        # unit's device changes them (so no assignment's units are needed).
        fixed = [e for e in canonical_edges(graph) if not isinstance(e.source, int) and not isinstance(e.target, int)]
        whole += sum(e.bytes for e in fixed
                     if takes_accelerator_bytes(self.acc, graph.argument_devices[e.source[1]],
                                                graph.result_devices[e.target[1]]))
        crossing = 0.0
        for edge, source, target in crossing_edges(graph, Assignment({}, {}), fixed):
            crossing += cost.crossing_seconds(edge.bytes, source, target)
        times = (crossing,) if self.objective == "latency" else (0.0, 0.0, crossing)
        return (None, frozenset(), ()), _Partial(resident, whole, 0, 0, 0, times, 0)

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
                        if budget_bytes is None or self._floor(new) <= budget_bytes:
                            grown.setdefault(new_key, []).append(new)
            fronts = self._trim({k: self._front(v) for k, v in grown.items()})
        return fronts

    def _floor(self, partial: _Partial) -> int:
        """``partial``'s floor (_Partial.floor): what the budget is held to
        while its open weights may still move."""
        graph = self.graph
        movable = sum(graph.weight(name).bytes for name, seen in partial.readers
                      if seen == {self.acc} and not graph.weight(name).pinned)
        return partial.floor(graph.elsewhere, movable)

    def _trim(self, fronts: dict) -> dict:
        """At most MAX_PARTIALS partial assignments over all keys: the
        best by time so far, then bytes, then rank."""
        if sum(len(front) for front in fronts.values()) <= MAX_PARTIALS:
            return fronts
        self.cut = True
        ranked = sorted(((self.objective_seconds(p.times), p.total(self.graph.elsewhere), p.rank, _key_order(k), k, p)
                         for k, front in fronts.items() for p in front), key=lambda r: r[:4])
        trimmed: dict = {}
        for *_, key, partial in ranked[:MAX_PARTIALS]:
            trimmed.setdefault(key, []).append(partial)
        return trimmed

    def _add(self, times: list, device: Optional[str], seconds: float, unit: bool = False) -> None:
        """Add a device's call or ``unit`` work (``device``), or a crossing
        (None), to the time components: under latency their sum; under
        throughput the calls' and units' sum, the host's units alone, and
        the crossings (estimate.objective_seconds' parts)."""
        if self.objective == "latency":
            times[0] += seconds
        elif device is None:
            times[2] += seconds
        else:
            times[0] += seconds
            if unit and device == self.graph.host:
                times[1] += seconds

    def _extend(self, position: int, step: _Step, key: tuple, partial: _Partial, device: str):
        cost, acc = self.cost, self.acc
        used = key[1]
        times = list(partial.times)
        if device not in used:
            self._add(times, device, cost.call_seconds(device))
        self._add(times, device, cost.unit_seconds(step.unit, device), unit=True)
        resident, whole = partial.resident, partial.whole
        peak, before, later = partial.peak, partial.current, partial.later
        current = later
        for source_device, moved in step.from_arguments:
            nbytes = moved.bytes
            if self._crosses(position, partial.rank, moved, source_device, device):
                self._add(times, None, cost.crossing_seconds(nbytes, source_device, device))
            if takes_accelerator_bytes(acc, source_device, device):
                if position > 0:
                    peak += nbytes
                    before += nbytes
                current += nbytes
        for source, moved in step.from_units:
            nbytes = moved.bytes
            source_device = self._device_at(position, partial.rank, source)
            if self._crosses(position, partial.rank, moved, source_device, device):
                self._add(times, None, cost.crossing_seconds(nbytes, source_device, device))
            if takes_accelerator_bytes(acc, source_device, device):
                if source < position - 1:
                    peak += nbytes  # an upper bound: only positions source.. need it
                before += nbytes
                current += nbytes
        for target_device, nbytes, first in step.to_results:
            if target_device != device and first:
                self._add(times, None, cost.crossing_seconds(nbytes, device, target_device))
            if takes_accelerator_bytes(acc, device, target_device):
                current += nbytes
                later += nbytes
        readers = dict(partial.readers)
        for weight, last in step.weights:
            seen = readers.pop(weight.name, frozenset())
            if device not in seen:
                now = seen | {device}
                (r_now, w_now), (r_seen, w_seen) = self._weight_bytes(weight, now), self._weight_bytes(weight, seen)
                resident += r_now - r_seen
                whole += w_now - w_seen
                for home, reader in self._new_weight_crossings(weight, seen, now):
                    self._add(times, None, cost.crossing_seconds(weight.bytes, home, reader))
            if last > position:
                readers[weight.name] = seen | {device}
        peak = max(peak, before) if position > 0 else 0
        readers = tuple(sorted(readers.items()))
        new = _Partial(resident, whole, peak, current, later, tuple(times),
                       partial.rank * 2 + (device == acc), readers)
        if len(readers) <= MAX_OPEN_WEIGHTS:
            told = readers
        else:
            told = (("", frozenset()),)
            self.cut = True
        return (device, used | {device}, told), new

    def _device_at(self, position: int, rank: int, earlier: int) -> str:
        """The device of the unit at position ``earlier`` on the path
        ``rank`` of the units before ``position``."""
        return self.devices[(rank >> (position - 1 - earlier)) & 1]

    def _crosses(self, position: int, rank: int, moved: _Moved, source_device: str, device: str) -> bool:
        """Whether a value ``moved`` from ``source_device`` makes a crossing
        to the unit at ``position`` on ``device``: not where it is already
        there (its own device, an earlier reader's, a result's)."""
        if source_device == device or not moved.first_here or device in moved.result_devices:
            return False
        return all(self._device_at(position, rank, p) != device for p in moved.earlier)

    def _home(self, weight, readers: frozenset) -> str:
        return weight_home(weight, readers, self.graph.host, self.acc)

    def _weight_bytes(self, weight, readers: frozenset) -> tuple[int, int]:
        """A weight's whole-call accelerator bytes while ``readers`` read it
        (budget.weight_bytes: resident, staged)."""
        return weight_bytes(weight, self._home(weight, readers), readers, self.acc)

    def _new_weight_crossings(self, weight, seen: frozenset, now: frozenset) -> list:
        """The weight's crossings (estimate.weight_crossings) read by ``now``
        that it did not make read by ``seen``: a weight read on both devices
        moves to the host, and the accelerator then reads it across."""
        before = set(weight_crossings(self._home(weight, seen), seen))
        return [c for c in weight_crossings(self._home(weight, now), now) if c not in before]

    def objective_seconds(self, times: tuple) -> float:
        """The objective's seconds of a partial assignment's time components
        (latency: their sum so far; throughput: the three parts)."""
        if self.objective == "latency":
            return objective_seconds(self.objective, times[0], 0.0, 0.0)
        return objective_seconds(self.objective, *times)

    def _front(self, partials: list) -> list:
        """The partial assignments no other beats in every component, best
        first, at most MAX_FRONT."""
        def vector(p: _Partial) -> tuple:
            return (p.resident, p.whole, p.peak, p.current, p.later) + p.times

        ordered = sorted(((self.objective_seconds(p.times), p.total(self.graph.elsewhere)) + vector(p) + (p.rank,), p)
                         for p in partials)
        kept: list = []
        # Bytes are below 2**53, so float64 holds them exactly.
        vectors = numpy.empty((MAX_FRONT, len(ordered[0][0]) - 3)) if ordered else None
        for order, candidate in ordered:
            mine = numpy.array(order[2:-1], dtype=numpy.float64)
            if kept and (vectors[:len(kept)] <= mine).all(axis=1).any():
                continue
            if len(kept) == MAX_FRONT:  # one more that the front would keep
                self.cut = True
                break
            vectors[len(kept)] = mine
            kept.append(candidate)
        return kept

    def assignment(self, rank: int) -> Assignment:
        """The assignment a partial assignment's rank stands for."""
        count = len(self.steps)
        return assignment_of(self.graph, {
            step.unit.id: step.unit.pinned or self.devices[(rank >> (count - 1 - position)) & 1]
            for position, step in enumerate(self.steps)})


def _key_order(key: tuple) -> tuple:
    device, used, readers = key
    return (device or "", sorted(used), [(name, sorted(seen)) for name, seen in readers])


def run_programme(graph: WorkGraph, cost: CostModel, objective: str,
                  budget_bytes: Optional[int]) -> Outcome:
    """The programme's best assignment within the budget, and the fewest
    bytes of any it kept that uses the accelerator."""
    programme = Programme(graph, cost, objective)
    finals = []
    fronts = programme.run(budget_bytes)
    exhaustive = not programme.cut
    for key, front in fronts.items():
        for partial in front:
            finals.append((programme.objective_seconds(partial.times), partial.total(graph.elsewhere), partial.rank,
                           graph.accelerator in key[1]))
    if not finals:
        return Outcome(None, None, exhaustive)
    best = min(finals)
    on_accelerator = [total for _, total, _, uses in finals if uses]
    return Outcome(programme.assignment(best[2]), min(on_accelerator) if on_accelerator else None, exhaustive)
