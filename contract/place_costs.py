"""The costs file: a program's own units and crossings, timed on a
machine by ``mdc-profile --program`` (profiler/program*.py), read by
``mdc-compile --place=auto --place-costs=FILE`` (the cost model takes a
measured time where the file has one, the machine profile's model
otherwise: passes/assignment/measured.py). The format is described here
once, for both. A costs file is JSON::

    {"format": "mdc-place-costs", "version": 1,
     "source": {"machine": "...", "date": "2026-12-06T22:40Z", "tool": "mdc-profile 0.1.0, ..."},
     "functions": {"main": "<sha256 of the function's work graph>"},
     "devices": {"cpu": {"kind": "local", "seconds_per_call": 2e-5, "seconds_per_dispatch": 2e-6},
                 "gpu": {"kind": "cuda", ...}},
     "units": [{"function": "main", "id": 3, "op": "linalg.matmul", "label": "matmul 16x2048 f32",
                "at_bound": false, "seconds": {"cpu": 1.2e-4, "gpu": 3e-5}}],
     "crossings": [{"source": "cpu", "target": "gpu", "bytes": 8192, "seconds": 4e-5}]}

``functions``: a digest of each placed function's work graph (its units'
labels, classes and sizes, its weights and edges:
passes/assignment/measured.graph_digest), so that the file for another
program, or for this one at other ``--max-dim`` bounds, is refused rather
than used. ``devices``: by the compile's device name (``--device=NAME=...``
of both tools), each with its kind and the fixed costs of a call and of a
dispatch measured beside the units. A unit is known by its function, its
index in the work graph (program order), its op and label (op, shape,
dtype); ``seconds``: its time on each named device, per call, less the
call's fixed cost (what cost_model.unit_seconds models); ``at_bound``:
a dynamic shape timed at its ``--max-dim`` bound. ``crossings``: the
seconds of moving ``bytes`` from one named device to the other, for the
sizes the program's values and weights have. A unit or device absent from
the file is modelled. Every number is finite and not negative.

No IREE imports: mdc-compile reads it without the runtime.
"""

from __future__ import annotations

import dataclasses
import json
import math
from typing import Any, Mapping

from .errors import MdcError, read_text_file

FORMAT = "mdc-place-costs"
VERSION = 1


class CostsError(MdcError):
    """A costs file that cannot be used: missing, not JSON, another format,
    a field wrong, or measured for another program. One line naming the file."""


@dataclasses.dataclass(frozen=True)
class MeasuredDevice:
    kind: str
    seconds_per_call: float
    seconds_per_dispatch: float


@dataclasses.dataclass(frozen=True)
class MeasuredUnit:
    function: str
    id: int
    op: str
    label: str
    seconds: Mapping[str, float]
    at_bound: bool = False

    @property
    def key(self) -> str:
        """``@main#3 matmul 16x2048 f32``: the unit's identity."""
        return f"@{self.function}#{self.id} {self.label}"


@dataclasses.dataclass(frozen=True)
class MeasuredCrossing:
    source: str
    target: str
    bytes: int
    seconds: float


@dataclasses.dataclass(frozen=True)
class PlaceCosts:
    functions: Mapping[str, str]
    devices: Mapping[str, MeasuredDevice]
    units: tuple[MeasuredUnit, ...]
    crossings: tuple[MeasuredCrossing, ...] = ()
    source: Mapping[str, str] = dataclasses.field(default_factory=dict)
    origin: str = "costs file"

    def to_json(self) -> str:
        return json.dumps({
            "format": FORMAT, "version": VERSION, "source": dict(self.source),
            "functions": dict(self.functions),
            "devices": {name: dataclasses.asdict(d) for name, d in self.devices.items()},
            "units": [{"function": u.function, "id": u.id, "op": u.op, "label": u.label, "at_bound": u.at_bound,
                       "seconds": dict(u.seconds)} for u in self.units],
            "crossings": [dataclasses.asdict(c) for c in self.crossings],
        }, indent=1) + "\n"

    @classmethod
    def from_json(cls, text: str, origin: str) -> "PlaceCosts":
        try:
            doc = json.loads(text)
        except ValueError as e:
            raise CostsError(f"{origin}: not JSON ({e})") from None
        return _Reader(origin).read(doc)

    def units_of(self, function: str) -> dict[int, MeasuredUnit]:
        return {u.id: u for u in self.units if u.function == function}


def load_costs(path: str) -> PlaceCosts:
    """The costs in the file ``path``; CostsError names the file and what is wrong."""
    origin = f"costs file {path}"
    text = read_text_file(path, origin, CostsError)
    return dataclasses.replace(PlaceCosts.from_json(text, origin), origin=origin)


class _Reader:
    def __init__(self, origin: str):
        self.origin = origin

    def fail(self, what: str):
        raise CostsError(f"{self.origin}: {what}")

    def field(self, obj: Any, key: str, kind, where: str):
        if not isinstance(obj, dict) or key not in obj:
            self.fail(f"{where} has no '{key}'")
        value = obj[key]
        if kind is float:
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
                    or value < 0:
                self.fail(f"{where}.{key} is {value!r}: expected a finite number, not negative")
            return float(value)
        if kind is int and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
            self.fail(f"{where}.{key} is {value!r}: expected a whole number, not negative")
        if kind is not int and not isinstance(value, kind):
            self.fail(f"{where}.{key} is {value!r}: expected {kind.__name__}")
        return value

    def read(self, doc: Any) -> PlaceCosts:
        if not isinstance(doc, dict) or doc.get("format") != FORMAT:
            self.fail(f"not a costs file (no \"format\": \"{FORMAT}\"; mdc-profile --program writes one)")
        if doc.get("version") != VERSION:
            self.fail(f"version {doc.get('version')!r}: this mdc reads version {VERSION}")
        functions = self.field(doc, "functions", dict, "the file")
        for name, digest in functions.items():
            if not isinstance(digest, str):
                self.fail(f"functions.{name} is {digest!r}: expected a digest")
        devices = {name: MeasuredDevice(self.field(d, "kind", str, f"devices.{name}"),
                                        self.field(d, "seconds_per_call", float, f"devices.{name}"),
                                        self.field(d, "seconds_per_dispatch", float, f"devices.{name}"))
                   for name, d in self.field(doc, "devices", dict, "the file").items()}
        units = tuple(self.unit(u, i, devices) for i, u in enumerate(self.field(doc, "units", list, "the file")))
        crossings = []
        for i, c in enumerate(self.field(doc, "crossings", list, "the file")):
            where = f"crossings[{i}]"
            ends = [self.field(c, k, str, where) for k in ("source", "target")]
            for end in ends:
                if end not in devices:
                    self.fail(f"{where} names device '{end}', which 'devices' does not have")
            crossings.append(MeasuredCrossing(*ends, self.field(c, "bytes", int, where),
                                              self.field(c, "seconds", float, where)))
        source = doc.get("source") if isinstance(doc.get("source"), dict) else {}
        return PlaceCosts(dict(functions), devices, units, tuple(crossings), source, self.origin)

    def unit(self, u: Any, i: int, devices: Mapping) -> MeasuredUnit:
        where = f"units[{i}]"
        seconds = self.field(u, "seconds", dict, where)
        for name in seconds:
            if name not in devices:
                self.fail(f"{where}.seconds names device '{name}', which 'devices' does not have")
            self.field(seconds, name, float, f"{where}.seconds")
        return MeasuredUnit(self.field(u, "function", str, where), self.field(u, "id", int, where),
                            self.field(u, "op", str, where), self.field(u, "label", str, where),
                            {k: float(v) for k, v in seconds.items()}, bool(u.get("at_bound", False)))
