"""The manifest as typed records, the one form both sides use: mdc-compile
builds a ``Manifest`` and writes ``to_json()`` into the vmfb; the runtime
shim reads it back with ``Manifest.from_json``, which validates it.
contract/manifest.py describes the format and names every key.

Every validation error is a ``ManifestError``: one line that names the key
at fault. No IREE import.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Optional

from .manifest import (ARGUMENT_BOUNDS, DEFAULT, DEVICE_KIND, DEVICE_NAME, DEVICE_ORDINAL, DEVICE_SPEC, DEVICES, FORMAT, FORMAT_KEY,
                       FUNCTION_ARGUMENTS, FUNCTION_CALLS, FUNCTION_MODEL, FUNCTION_RESULTS, FUNCTIONS, HOST,
                       HOST_ENTRY_POINTS, KEY, MODEL_COARSE_FENCES, MODEL_SYNC, MUTABLE_GLOBALS, NO_HOST_ENTRY_POINTS,
                       PINNED_ARGUMENTS, RESULT_DEVICES, RESULT_STORAGE, STAGING, STAGING_FROM, STAGING_OWNER,
                       STAGING_TO, STAGING_VIA, STATE_BY_FUNCTION, STORAGE_FUNCTION, STORAGE_RESULTS, TIED_DIMS,
                       VALUE_DEVICE, VALUE_TYPE, kind_uses_host_memory)


class ManifestError(ValueError):
    """A manifest that does not follow the format (one line, naming the key)."""


@dataclass(frozen=True)
class Device:
    """One declared device, the one record of it on both sides: the
    command line's ``--device`` (pipeline/options.py), the devices a
    module declares (passes/ir/module_facts.py) and the manifest's entry.
    Its symbol name, IREE kind (local, cuda, hip, vulkan, ...) and ordinal
    among the runtime devices of that kind.
    ``given_spec``: the spec as ``--device`` spelled it (``local`` or
    ``local[0]``), which the manifest's ``spec`` records; None: ``spec``.
    ``location``: where the device is declared, for diagnostics only (an
    opaque object, e.g. an MLIR location; None where not known).
    Neither takes part in comparing two records."""

    name: str
    kind: str
    ordinal: int = 0
    given_spec: Optional[str] = field(default=None, compare=False)
    location: object = field(default=None, compare=False, repr=False)

    @property
    def spec(self) -> str:
        """``KIND[ORDINAL]``, however the spec was spelled."""
        return f"{self.kind}[{self.ordinal}]"

    @property
    def spec_as_given(self) -> str:
        """The spec as ``--device`` spelled it, else ``spec``: what the
        IREE flag, the manifest and messages to the user say."""
        return self.spec if self.given_spec is None else self.given_spec

    @property
    def uses_host_memory(self) -> bool:
        return kind_uses_host_memory(self.kind)

    def to_dict(self) -> dict:
        return {DEVICE_NAME: self.name, DEVICE_SPEC: self.spec_as_given, DEVICE_KIND: self.kind,
                DEVICE_ORDINAL: self.ordinal}

    @classmethod
    def from_dict(cls, entry: dict) -> "Device":
        """A "devices" entry; one without ``kind`` and ``ordinal`` (an
        older manifest) is read from its ``spec``."""
        kind, ordinal, spec = entry.get(DEVICE_KIND), entry.get(DEVICE_ORDINAL), entry.get(DEVICE_SPEC)
        if kind is None or ordinal is None:
            kind, ordinal = parse_spec(entry[DEVICE_SPEC])
        return cls(str(entry[DEVICE_NAME]), str(kind), int(ordinal), None if spec is None else str(spec))


def parse_spec(spec: str) -> tuple[str, int]:
    """(kind, ordinal) of a device spec ``KIND`` or ``KIND[ORDINAL]``."""
    m = re.fullmatch(r"([\w-]+)(?:\[(\d+)\])?", spec.strip())
    if not m:
        raise ValueError(f"bad device spec {spec!r}")
    return m.group(1), int(m.group(2) or 0)


@dataclass(frozen=True)
class Staging:
    """A staged pair: ``owner`` is the device whose allocator provides the
    staging memory; a pair relayed through a local device has ``via``
    naming it and no owner."""

    src: str
    dst: str
    owner: Optional[str]
    via: Optional[str] = None

    def to_dict(self) -> dict:
        entry = {STAGING_FROM: self.src, STAGING_TO: self.dst, STAGING_OWNER: self.owner}
        if self.via:
            entry[STAGING_VIA] = self.via
        return entry


@dataclass(frozen=True)
class ValueEntry:
    """An argument or result of a "functions" entry: its MLIR type's text
    and the declared device it lives on (None: not known, or not a tensor)."""

    type: str
    device: Optional[str] = None


@dataclass(frozen=True)
class FunctionEntry:
    """A "functions" entry: a public function IREE wrote no declaration for."""

    name: str
    model: str  # MODEL_SYNC or MODEL_COARSE_FENCES
    arguments: tuple[ValueEntry, ...]
    results: tuple[ValueEntry, ...]
    calls: Optional[str] = None  # the coarse-fences function a sync wrapper calls

    def to_dict(self) -> dict:
        def values(vs):
            return [{VALUE_TYPE: v.type, VALUE_DEVICE: v.device} for v in vs]

        entry = {FUNCTION_MODEL: self.model, FUNCTION_ARGUMENTS: values(self.arguments),
                 FUNCTION_RESULTS: values(self.results)}
        if self.calls is not None:
            entry[FUNCTION_CALLS] = self.calls
        return entry


TiedGroups = tuple[tuple[tuple[int, int], ...], ...]
# (argument index, dimension, bound) per bounded dimension of a function's arguments.
ArgumentBounds = tuple[tuple[int, int, int], ...]


@dataclass(frozen=True)
class Manifest:
    """One manifest; each field is the key of the same name
    (contract/manifest.py), flattened into tuples."""

    devices: tuple[Device, ...]
    staging: tuple[Staging, ...] = ()
    default: Optional[str] = None  # None: the first device stands for it
    # (function, argument index, device whose pinned memory must hold it)
    pinned_arguments: tuple[tuple[str, int, str], ...] = ()
    host: Optional[str] = None  # the local device host entry points use
    host_entry_points: tuple[tuple[str, str], ...] = ()  # (function, its twin)
    no_host_entry_points: bool = False  # mdc-compile was given --no-host-entry-points
    functions: tuple[FunctionEntry, ...] = ()
    # (function, its result-storage twin, the result indices it stores)
    storage_twins: tuple[tuple[str, str, tuple[int, ...]], ...] = ()
    # The program's own mutable globals; None: the manifest does not say.
    mutable_globals: Optional[tuple[str, ...]] = None
    # (function, the mutable globals it refers to); None: not said.
    state_by_function: Optional[tuple[tuple[str, tuple[str, ...]], ...]] = None
    # (function, its groups of tied (argument, dimension)) per function with any.
    tied_dims: tuple[tuple[str, TiedGroups], ...] = ()
    # (function, its bounded argument dimensions) per function with any.
    argument_bounds: tuple[tuple[str, ArgumentBounds], ...] = ()
    # (function, result index, device) for results their declaration places nowhere.
    result_devices: tuple[tuple[str, int, str], ...] = ()

    # -- questions ------------------------------------------------------------

    @property
    def default_device(self) -> str:
        return self.default or self.devices[0].name

    def names(self) -> list[str]:
        return [d.name for d in self.devices]

    def describe(self) -> str:
        return ", ".join(f"{d.name}={d.spec}" for d in self.devices)

    def pinned(self, function: str) -> dict[int, str]:
        """{argument index: device} of @function's arguments given in pinned memory."""
        return {i: d for f, i, d in self.pinned_arguments if f == function}

    def host_entry_point(self, function: str) -> Optional[str]:
        """The name of @function's host twin, or None."""
        return next((t for f, t in self.host_entry_points if f == function), None)

    def storage_twin(self, function: str) -> Optional[tuple[str, tuple[int, ...]]]:
        """(twin, stored result indices) of @function's result-storage twin, or None."""
        return next(((t, r) for f, t, r in self.storage_twins if f == function), None)

    def twins(self) -> set[str]:
        """The names of every twin mdc-compile added."""
        return {t for _, t in self.host_entry_points} | {t for _, t, _ in self.storage_twins}

    def function(self, name: str) -> Optional[FunctionEntry]:
        """The "functions" entry of @name, or None."""
        return next((e for e in self.functions if e.name == name), None)

    def tied_groups(self, function: str) -> TiedGroups:
        """@function's groups of tied (argument, dimension), () for none."""
        return next((g for f, g in self.tied_dims if f == function), ())

    def bounds_of(self, function: str) -> ArgumentBounds:
        """@function's bounded (argument, dimension, bound), () for none."""
        return next((b for f, b in self.argument_bounds if f == function), ())

    def state_of(self, function: str) -> Optional[tuple[str, ...]]:
        """The mutable globals @function refers to: () for none, all of
        them where the manifest does not say, None where it does not say
        whether the program has any."""
        if self.mutable_globals is None:
            return None
        if not self.mutable_globals:
            return ()
        return dict(self.state_by_function or ()).get(function, self.mutable_globals)

    # -- JSON -------------------------------------------------------------------

    def to_json(self) -> str:
        """The manifest's text, exactly as mdc-compile writes it: keys in the
        format's order, no spaces, optional keys left out when empty."""
        return json.dumps(self.to_dict(), separators=(",", ":"))

    def to_dict(self) -> dict:
        out = {FORMAT_KEY: FORMAT, DEVICES: [d.to_dict() for d in self.devices]}
        if self.default is not None:
            out[DEFAULT] = self.default
        out[STAGING] = [s.to_dict() for s in self.staging]
        if self.pinned_arguments:
            out[PINNED_ARGUMENTS] = _grouped(self.pinned_arguments)
        if self.host_entry_points:
            out[HOST], out[HOST_ENTRY_POINTS] = self.host, dict(self.host_entry_points)
        if self.no_host_entry_points:
            out[NO_HOST_ENTRY_POINTS] = True
        if self.storage_twins:
            out[RESULT_STORAGE] = {f: {STORAGE_FUNCTION: t, STORAGE_RESULTS: list(r)} for f, t, r in self.storage_twins}
        if self.functions:
            out[FUNCTIONS] = {e.name: e.to_dict() for e in self.functions}
        if self.tied_dims:
            out[TIED_DIMS] = {f: [[list(m) for m in g] for g in groups] for f, groups in self.tied_dims}
        if self.argument_bounds:
            out[ARGUMENT_BOUNDS] = {f: [list(b) for b in bounds] for f, bounds in self.argument_bounds}
        if self.result_devices:
            out[RESULT_DEVICES] = _grouped(self.result_devices)
        if self.mutable_globals is not None:
            out[MUTABLE_GLOBALS] = list(self.mutable_globals)
        if self.state_by_function is not None:
            out[STATE_BY_FUNCTION] = {f: list(g) for f, g in self.state_by_function}
        return out

    @classmethod
    def from_json(cls, text: str) -> "Manifest":
        """The manifest ``text`` holds, validated; ManifestError if it is
        not one. A manifest an older mdc-compile wrote (no ``default``,
        no ``mutable_globals``, devices given by ``spec`` alone) is read
        as the format says."""
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            raise ManifestError(f"{KEY} is not valid JSON: {e}") from None
        if not isinstance(data, dict) or data.get(FORMAT_KEY) != FORMAT:
            got = data.get(FORMAT_KEY) if isinstance(data, dict) else type(data).__name__
            raise ManifestError(f"unsupported {KEY} {FORMAT_KEY} {got!r} (expected {FORMAT!r})")
        manifest = cls(**{name: _read(data, key, parse, absent) for name, key, parse, absent in _READERS})
        manifest.validate()
        return manifest

    def validate(self) -> None:
        """ManifestError unless every device the manifest names is declared,
        once."""
        names = self.names()
        if not names:
            raise _malformed(DEVICES, "declares no devices")
        if len(set(names)) != len(names):
            raise _malformed(DEVICES, f"declares a device twice: {names}")
        if self.default is not None and self.default not in names:
            raise _malformed(DEFAULT, f"names device {self.default!r}, which it does not declare")
        if self.host_entry_points and self.host not in names:
            raise _malformed(HOST, f"device {self.host!r} of its host entry points is not declared")
        for key, what, used in [(PINNED_ARGUMENTS, "pins arguments in", {d for _, _, d in self.pinned_arguments}),
                                (RESULT_DEVICES, "places results on", {d for _, _, d in self.result_devices})]:
            unknown = sorted(used - set(names))
            if unknown:
                raise _malformed(key, f"{what} device {unknown[0]!r}, which it does not declare")
        for e in self.functions:
            unknown = [v.device for v in e.arguments + e.results if v.device is not None and v.device not in names]
            if unknown:
                raise _malformed(FUNCTIONS, f"places a value of @{e.name} on device {unknown[0]!r}, "
                                 "which it does not declare")


def _grouped(flat) -> dict:
    """{function: {"index": device}} of (function, index, device) triples."""
    out: dict = {}
    for f, i, d in flat:
        out.setdefault(f, {})[str(i)] = d
    return out


def _malformed(key: str, why: str) -> ManifestError:
    return ManifestError(f'malformed {KEY}: "{key}" {why}')


# -- reading each key -------------------------------------------------------------


def _object(value) -> dict:
    if not isinstance(value, dict):
        raise ManifestError(f"is not a JSON object: {json.dumps(value)[:60]}")
    return value


def _array(value) -> list:
    if not isinstance(value, list):
        raise ManifestError(f"is not a JSON array: {json.dumps(value)[:60]}")
    return value


def _name(value) -> Optional[str]:
    return None if value is None else str(value)


def _staging(value) -> tuple[Staging, ...]:
    staging = tuple(Staging(str(s[STAGING_FROM]), str(s[STAGING_TO]), _name(s[STAGING_OWNER]),
                            _name(s.get(STAGING_VIA))) for s in _array(value))
    if any(s.owner is None and s.via is None for s in staging):
        raise ManifestError("has an entry with neither owner nor via")
    return staging


def _by_index(value) -> tuple[tuple[str, int, str], ...]:
    """(function, index, device) of {function: {"index": device}}."""
    return tuple((str(f), int(i), str(d)) for f, found in _object(value).items() for i, d in _object(found).items())


def _storage(value) -> tuple[tuple[str, str, tuple[int, ...]], ...]:
    storage = tuple((str(f), str(e[STORAGE_FUNCTION]), tuple(int(i) for i in _array(e[STORAGE_RESULTS])))
                    for f, e in _object(value).items())
    if any(not results or min(results) < 0 for _, _, results in storage):
        raise ManifestError("has an entry that lists no results, or a negative index")
    return storage


def _function(name: str, entry: dict) -> FunctionEntry:
    model = entry[FUNCTION_MODEL]
    if model not in (MODEL_SYNC, MODEL_COARSE_FENCES):
        raise ManifestError(f"gives @{name} the unknown model {model!r} (expected {MODEL_SYNC!r} "
                            f"or {MODEL_COARSE_FENCES!r})")

    def values(items):
        return tuple(ValueEntry(str(v[VALUE_TYPE]), _name(v.get(VALUE_DEVICE))) for v in _array(items))

    return FunctionEntry(name, model, values(entry[FUNCTION_ARGUMENTS]), values(entry[FUNCTION_RESULTS]),
                         _name(entry.get(FUNCTION_CALLS)))


def _tied_groups(groups) -> TiedGroups:
    """A function's groups: two or more [argument, dimension] pairs of
    non-negative integers each."""
    out = tuple(tuple((int(k), int(i)) for k, i in group) for group in _array(groups))
    if any(len(group) < 2 or min(min(pair) for pair in group) < 0 for group in out):
        raise ManifestError("has a group with fewer than two members, or a negative index")
    return out


def _argument_bounds(bounds) -> ArgumentBounds:
    """A function's bounds: [argument, dimension, bound] triples of
    integers, the indices from 0, the bound above 0."""
    out = tuple((int(k), int(i), int(n)) for k, i, n in _array(bounds))
    if any(min(k, i) < 0 or n < 1 for k, i, n in out):
        raise ManifestError("has a negative index or a bound below 1")
    return out


def _mutable_globals(value) -> Optional[tuple[str, ...]]:
    if value is None:
        return None
    if not isinstance(value, list):
        raise ManifestError("is not a list")
    return tuple(str(g) for g in value)


def _state_by_function(value) -> Optional[tuple[tuple[str, tuple[str, ...]], ...]]:
    if value is None:
        return None
    if not isinstance(value, dict) or not all(isinstance(g, list) for g in value.values()):
        raise ManifestError("is not a map of lists")
    return tuple((str(f), tuple(str(x) for x in g)) for f, g in value.items())


_REQUIRED = object()

# (Manifest field, key, reader of the key's value, the field's value where the key is absent)
_READERS = (
    ("devices", DEVICES, lambda v: tuple(Device.from_dict(d) for d in _array(v)), _REQUIRED),
    ("staging", STAGING, _staging, ()),
    ("default", DEFAULT, _name, None),
    ("pinned_arguments", PINNED_ARGUMENTS, _by_index, ()),
    ("host", HOST, _name, None),
    ("host_entry_points", HOST_ENTRY_POINTS, lambda v: tuple((str(f), str(t)) for f, t in _object(v).items()), ()),
    ("no_host_entry_points", NO_HOST_ENTRY_POINTS, lambda v: v is True, False),
    ("functions", FUNCTIONS, lambda v: tuple(_function(str(f), e) for f, e in _object(v).items()), ()),
    ("storage_twins", RESULT_STORAGE, _storage, ()),
    ("mutable_globals", MUTABLE_GLOBALS, _mutable_globals, None),
    ("state_by_function", STATE_BY_FUNCTION, _state_by_function, None),
    ("tied_dims", TIED_DIMS, lambda v: tuple((str(f), _tied_groups(g)) for f, g in _object(v).items()), ()),
    ("argument_bounds", ARGUMENT_BOUNDS,
     lambda v: tuple((str(f), _argument_bounds(b)) for f, b in _object(v).items()), ()),
    ("result_devices", RESULT_DEVICES, _by_index, ()),
)


def _read(data: dict, key: str, parse, absent):
    """The field's value of ``data[key]``, ``absent`` where there is no
    such key; ManifestError naming ``key`` where its value is malformed."""
    if key not in data:
        if absent is _REQUIRED:
            raise _malformed(key, "is missing")
        return absent
    try:
        return parse(data[key])
    except ManifestError as e:
        raise _malformed(key, str(e)) from None
    except KeyError as e:
        raise _malformed(key, f"has an entry without {e.args[0]!r}") from None
    except (TypeError, ValueError, AttributeError) as e:
        raise _malformed(key, f"is malformed: {str(e).splitlines()[0] if str(e) else type(e).__name__}") from None
