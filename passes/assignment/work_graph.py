"""The program as the device assignment sees it: units of work in program
order, the weights they read, and the values between them.

A *unit* is about one dispatch region of IREE's: one op that computes
(a linalg op, a gather, a call), with the ops that only give it storage
(tensor.empty, linalg.fill of its outs) folded in. A *weight* is a value
the program keeps between calls and the caller does not pass: a global
(inline constant, resource or named parameter). Function arguments and
results are not placed: they stay where the caller has them, on the
``host`` device unless an annotation says otherwise, so they appear as the
fixed ends of edges.

Everything here is plain data, so that the cost model, the search and the
budget can be tested on graphs written by hand.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Optional, Union

# Op classes the cost model knows a throughput for.
OP_CLASSES = ("matmul", "elementwise", "reduction", "gather", "copy", "view")


@dataclasses.dataclass(frozen=True)
class Unit:
    """One unit of work.

    ``id``: its index in ``WorkGraph.units`` (program order, which is a
    topological order). ``label``: a short human name (``matmul
    32x2048x2048 f32``). ``location``: the source location, as diagnostics
    print it, or None. ``op_class``: one of OP_CLASSES (``view``: a reshape
    or cast that moves no data and costs nothing). ``dtype``: the element
    type its arithmetic runs in (``f32``, ``f16``, ``i64``...). ``flops``:
    arithmetic operations of one call. ``bytes_moved``: bytes read and
    written from memory by one call (a gather counts the rows it reads,
    not its whole table). ``weights``: names of the weights it reads.
    ``pinned``: the device an annotation already in the program requires,
    or None (free)."""

    id: int
    label: str
    op_class: str
    dtype: str
    flops: int
    bytes_moved: int
    weights: tuple[str, ...] = ()
    location: Optional[str] = None
    pinned: Optional[str] = None


@dataclasses.dataclass(frozen=True)
class Weight:
    """A value kept between calls: ``name`` (the global's symbol without
    ``@``), ``bytes``, ``kind`` (``constant``, ``parameter``, or
    ``computed``: made at start-up from other weights, hoist.py), the ids
    of the ``users`` that read it, and ``pinned`` as for Unit."""

    name: str
    bytes: int
    kind: str = "constant"
    users: tuple[int, ...] = ()
    pinned: Optional[str] = None


# An edge's end: a unit id, ("argument", N) for the function's argument N,
# or ("result", N) for its result N.
End = Union[int, tuple[str, int]]


@dataclasses.dataclass(frozen=True)
class Edge:
    """A tensor value from ``source`` to ``target`` of ``bytes`` (its
    upper bound where a dimension is dynamic). ``value``: which of the
    source unit's results it is (0 for an argument). Edges with the same
    source and value carry one value: it crosses to a device once, however
    many of its readers run there (rewrite.py moves it once a device)."""

    source: End
    target: End
    bytes: int
    value: int = 0


@dataclasses.dataclass(frozen=True)
class Elsewhere:
    """What the module's other public functions, placed before this one,
    hold on the accelerator: ``weights``, the bytes of their weights there
    that this function does not read (resident, whatever runs), and
    ``working``, the most working memory (activations and staging) one
    call of theirs needs there. One budget holds the whole module: every
    weight once, and the working memory of one call at a time
    (DESIGN.md, section 11)."""

    weights: int = 0
    working: int = 0


@dataclasses.dataclass(frozen=True)
class WorkGraph:
    """One function's work. ``host``: the device the caller's arguments
    and results live on (CPU memory); ``accelerator``: the device under
    the memory budget. ``argument_devices``/``result_devices``: where each
    argument and result lives (``host`` unless annotated). ``elsewhere``:
    what the module's other functions hold on the accelerator beside it."""

    function: str
    host: str
    accelerator: str
    units: tuple[Unit, ...]
    weights: tuple[Weight, ...]
    edges: tuple[Edge, ...]
    argument_devices: tuple[str, ...] = ()
    result_devices: tuple[str, ...] = ()
    elsewhere: Elsewhere = Elsewhere()

    def weight(self, name: str) -> Weight:
        return self._weights_by_name[name]

    @functools.cached_property
    def _weights_by_name(self) -> dict:
        found: dict = {}
        for w in self.weights:
            found.setdefault(w.name, w)
        return found

    @functools.cached_property
    def positions(self) -> dict:
        """Unit id -> its position in program order (the search asks for
        it of every candidate; the graph never changes)."""
        return {unit.id: index for index, unit in enumerate(self.units)}

    def caller_device(self, end: End) -> str:
        """The device of an edge's end that is an argument or a result."""
        kind, index = end
        return (self.argument_devices if kind == "argument" else self.result_devices)[index]

    def derived(self, name: str, compute):
        """``compute(self)``, computed once per graph: what the search
        derives from a graph for every candidate it weighs (the graph
        never changes)."""
        memo = self._derived
        if name not in memo:
            memo[name] = compute(self)
        return memo[name]

    @functools.cached_property
    def _derived(self) -> dict:
        return {}


@dataclasses.dataclass(frozen=True)
class Assignment:
    """A device for every unit (by id) and every weight (by name)."""

    units: dict
    weights: dict

    def device_of(self, end: End, graph: WorkGraph) -> str:
        """The device an edge's end is on."""
        if isinstance(end, int):
            return self.units[end]
        return graph.caller_device(end)
