"""The machine profile: what a machine's devices and the crossings between
them cost, as mdc-profile (profiler/) measures it and the cost model of
automatic placement (passes/assignment/cost_model.py) reads it. The format
is described here once, for both.

A profile file is JSON::

    {"format": "mdc-machine-profile", "version": 1,
     "source": {"machine": "...", "date": "2026-12-06", "tool": "mdc-profile 0.1.0, iree-base-runtime 3.13.0"},
     "devices": {
       "local": {"matmul_flops_per_s": {"f32": 5e10, "f16": 2e10, "other": 2e10},
                 "bytes_per_s": {"matmul": 5e9, "elementwise": 5e9, "reduction": 5e9,
                                 "gather": 5e9, "copy": 5e9},
                 "seconds_per_dispatch": 2e-6, "seconds_per_call": 2e-5,
                 "memory_bytes": null, "free_bytes": null, "reserved_bytes": 0},
       "cuda": {...}, "gpu": {...}},
     "crossings": [{"source": "local", "target": "cuda", "latency_s": 3.5e-5, "bytes_per_s": 2.7e10}, ...]}

``devices`` is keyed by IREE device kind (``local``, ``cuda``, ``vulkan``,
``hip``) or by a compile's device name (``gpu`` for ``--device=gpu=...``);
a name's entry overrides its kind's, so that a test can make the second
CPU device of a CPU pair fast. ``crossings`` go one way each, between
kinds or names in the same way. ``memory_bytes`` (optional, null when
unknown) is the device's memory; ``free_bytes`` (optional, null when
unknown; profiles written before it have none) what was free of it when
the profile was measured, before mdc-profile opened the device:
``--gpu-memory=auto`` is that less a margin. ``reserved_bytes`` (optional,
0 when absent) is the device memory the runtime itself takes there once
a program runs any work (opening the device: a CUDA context, IREE's
pools and blocks, loaded kernels), beyond the program's own buffers:
``--gpu-memory`` must hold it too. Every number is finite, and rates are
positive; seconds may be 0. A field this version does not know is
ignored, so an older mdc reads a newer profile of the same version.

No IREE imports: mdc-compile reads profiles without the runtime, and
mdc-profile writes them without the compiler's passes.
"""

from __future__ import annotations

import dataclasses
import json
import math
from typing import Any, Iterable, Mapping, Optional

from .default_machine_profile import DOCUMENT
from .errors import MdcError, read_text_file

FORMAT = "mdc-machine-profile"
VERSION = 1

# The dtypes with a matmul rate of their own; any other dtype uses "other".
MATMUL_DTYPES = ("f32", "f16", "other")
# The op classes with a memory rate (bytes read plus written per second).
BYTE_CLASSES = ("matmul", "elementwise", "reduction", "gather", "copy")
# The kind whose memory is the host's: where arguments and results live.
HOST_KIND = "local"


class ProfileError(MdcError):
    """A machine profile that cannot be used: missing, not JSON, another
    format version, a field missing or out of range. One line that names
    the file (or where the profile came from) and what is wrong."""


@dataclasses.dataclass(frozen=True)
class DeviceCosts:
    """What work costs on one device: matmul arithmetic per second by
    dtype, bytes per second by op class, the fixed cost of each dispatch
    and of each call that uses the device, its memory and what was free of
    it when measured (None: unknown), and the memory the runtime takes
    there beside the program's buffers."""

    matmul_flops_per_s: Mapping[str, float]
    bytes_per_s: Mapping[str, float]
    seconds_per_dispatch: float
    seconds_per_call: float
    memory_bytes: Optional[int] = None
    reserved_bytes: int = 0
    free_bytes: Optional[int] = None

    def flops_rate(self, dtype: str) -> float:
        """Matmul operations per second in ``dtype`` (``other`` for any
        dtype without a rate of its own)."""
        return self.matmul_flops_per_s.get(dtype, self.matmul_flops_per_s["other"])

    def bytes_rate(self, op_class: str) -> float:
        """Bytes per second that ``op_class`` reads and writes."""
        return self.bytes_per_s[op_class]


@dataclasses.dataclass(frozen=True)
class CrossingCosts:
    """One direction between two devices: a fixed latency plus bytes over
    a bandwidth."""

    latency_s: float
    bytes_per_s: float


@dataclasses.dataclass(frozen=True)
class Provenance:
    """Where a profile's numbers came from."""

    machine: str
    date: str
    tool: str


@dataclasses.dataclass(frozen=True)
class MachineProfile:
    """Costs by device (kind or name) and by ordered pair of devices."""

    devices: Mapping[str, DeviceCosts]
    crossings: Mapping[tuple[str, str], CrossingCosts]
    source: Provenance

    def device(self, name: str, kind: str) -> Optional[DeviceCosts]:
        """The entry for device ``name`` of IREE kind ``kind``: the name's
        own, else the kind's, else None."""
        return self.devices.get(name) or self.devices.get(kind)

    def crossing(self, source: tuple[str, str], target: tuple[str, str]) -> Optional[CrossingCosts]:
        """The crossing from ``source`` to ``target``, each (name, kind):
        the most specific entry (names before kinds, the source's first),
        else None."""
        for s in source:
            for t in target:
                if (s, t) in self.crossings:
                    return self.crossings[(s, t)]
        return None

    def to_json(self) -> str:
        return json.dumps(_document(self), indent=2, sort_keys=False) + "\n"

    @classmethod
    def from_json(cls, text: str, origin: str = "machine profile") -> "MachineProfile":
        """The profile in ``text``; ``origin`` starts every error's message
        (``machine profile FILE``)."""
        try:
            document = json.loads(text)
        except json.JSONDecodeError as e:
            raise ProfileError(f"{origin}: not JSON (line {e.lineno}: {e.msg})") from None
        return _Reader(origin).profile(document)


def load_profile(path: str) -> MachineProfile:
    """The profile in the file ``path``; ProfileError names the file and
    what is wrong with it."""
    origin = f"machine profile {path}"
    text = read_text_file(path, origin, ProfileError)
    return MachineProfile.from_json(text, origin)


def _document(profile: MachineProfile) -> dict:
    return {
        "format": FORMAT,
        "version": VERSION,
        "source": dataclasses.asdict(profile.source),
        "devices": {key: {"matmul_flops_per_s": dict(d.matmul_flops_per_s),
                          "bytes_per_s": dict(d.bytes_per_s),
                          "seconds_per_dispatch": d.seconds_per_dispatch,
                          "seconds_per_call": d.seconds_per_call,
                          "memory_bytes": d.memory_bytes,
                          "free_bytes": d.free_bytes,
                          "reserved_bytes": d.reserved_bytes}
                    for key, d in profile.devices.items()},
        "crossings": [{"source": s, "target": t, "latency_s": c.latency_s, "bytes_per_s": c.bytes_per_s}
                      for (s, t), c in profile.crossings.items()],
    }


class _Reader:
    """Reads a parsed profile document, field by field, into a
    MachineProfile; the first problem raises ProfileError naming the
    field's path (``devices.cuda.seconds_per_call``)."""

    def __init__(self, origin: str):
        self.origin = origin

    def fail(self, what: str) -> ProfileError:
        return ProfileError(f"{self.origin}: {what}")

    def profile(self, doc: Any) -> MachineProfile:
        self.mapping(doc, "the profile")
        if doc.get("format") != FORMAT:
            raise self.fail(f"not a machine profile (format is {doc.get('format')!r}, expected {FORMAT!r})")
        if doc.get("version") != VERSION:
            raise self.fail(f"format version {doc.get('version')!r}, this mdc reads version {VERSION}")
        source = self.mapping(self.field(doc, "source", "source"), "source")
        provenance = Provenance(*(self.text(source, key, f"source.{key}") for key in ("machine", "date", "tool")))
        devices = self.mapping(self.field(doc, "devices", "devices"), "devices")
        return MachineProfile(devices={str(key): self.device(entry, f"devices.{key}") for key, entry in devices.items()},
                              crossings=dict(self.crossings(self.field(doc, "crossings", "crossings"))),
                              source=provenance)

    def device(self, entry: Any, where: str) -> DeviceCosts:
        self.mapping(entry, where)
        flops = self.mapping(self.field(entry, "matmul_flops_per_s", f"{where}.matmul_flops_per_s"),
                             f"{where}.matmul_flops_per_s")
        rates = self.mapping(self.field(entry, "bytes_per_s", f"{where}.bytes_per_s"), f"{where}.bytes_per_s")
        memory = entry.get("memory_bytes")
        if memory is not None:
            memory = int(self.number(entry, "memory_bytes", f"{where}.memory_bytes", positive=True))
        free = entry.get("free_bytes")
        if free is not None:
            free = int(self.number(entry, "free_bytes", f"{where}.free_bytes"))
            if memory is not None and free > memory:
                raise self.fail(f"{where}.free_bytes ({free}) is more than {where}.memory_bytes ({memory})")
        reserved = 0
        if entry.get("reserved_bytes") is not None:
            reserved = int(self.number(entry, "reserved_bytes", f"{where}.reserved_bytes"))
        return DeviceCosts(
            matmul_flops_per_s={d: self.number(flops, d, f"{where}.matmul_flops_per_s.{d}", positive=True)
                                for d in MATMUL_DTYPES},
            bytes_per_s={c: self.number(rates, c, f"{where}.bytes_per_s.{c}", positive=True) for c in BYTE_CLASSES},
            seconds_per_dispatch=self.number(entry, "seconds_per_dispatch", f"{where}.seconds_per_dispatch"),
            seconds_per_call=self.number(entry, "seconds_per_call", f"{where}.seconds_per_call"),
            memory_bytes=memory, reserved_bytes=reserved, free_bytes=free)

    def crossings(self, entries: Any) -> Iterable[tuple[tuple[str, str], CrossingCosts]]:
        if not isinstance(entries, list):
            raise self.fail("crossings is not a list")
        for i, entry in enumerate(entries):
            where = f"crossings[{i}]"
            self.mapping(entry, where)
            ends = (self.text(entry, "source", f"{where}.source"), self.text(entry, "target", f"{where}.target"))
            yield ends, CrossingCosts(latency_s=self.number(entry, "latency_s", f"{where}.latency_s"),
                                      bytes_per_s=self.number(entry, "bytes_per_s", f"{where}.bytes_per_s",
                                                              positive=True))

    def field(self, entry: Mapping, key: str, where: str) -> Any:
        """``entry[key]``; ``where``: the field's path, for the error."""
        if key not in entry:
            raise self.fail(f"missing field {where}")
        return entry[key]

    def mapping(self, value: Any, where: str) -> Mapping:
        if not isinstance(value, dict):
            raise self.fail(f"{where} is not a JSON object")
        return value

    def text(self, entry: Mapping, key: str, where: str) -> str:
        value = self.field(entry, key, where)
        if not isinstance(value, str):
            raise self.fail(f"{where} is not a string")
        return value

    def number(self, entry: Mapping, key: str, where: str, positive: bool = False) -> float:
        value = self.field(entry, key, where)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise self.fail(f"{where} is not a finite number ({value!r})")
        if value < 0:
            raise self.fail(f"{where} is negative ({value!r})")
        if positive and value == 0:
            raise self.fail(f"{where} is 0 (a rate must be positive)")
        return float(value)


def default_profile() -> MachineProfile:
    """mdc's built-in profile (default_machine_profile.py; docs/DESIGN.md,
    "The cost model", says where its numbers come from)."""
    return _Reader("mdc's default machine profile").profile(DOCUMENT)
