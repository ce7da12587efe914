"""What a compiled module says about itself, as plain text.

Two sources, both read with no devices and no compiler:

* `mdc.manifest`, a JSON string that mdc-compile puts in each public
  function's `iree.reflection` dictionary::

    {"format": "mdc.manifest/1",
     "devices": [{"name": "device_a", "spec": "local[0]", "kind": "local", "ordinal": 0}, ...],
     "staging": [{"from": "device_a", "to": "device_b", "owner": "device_b"}, ...]}

  A pair relayed through a local device has "owner": null and "via": its name.
  With mdc-compile --pinned-arguments, "pinned_arguments": {"f": {"0":
  "device_b"}} says argument 0 of @f must be given in device_b's pinned
  host memory.
  "host_entry_points": {"f": "f$host"} names the twin of @f that takes and
  returns every tensor on the local device "host" (mdc-compile adds one for
  each public function with a value on a device the CPU cannot reach).
  "result_storage": {"f": {"function": "f$into", "results": [0]}} names
  the twin of @f that writes the listed results into storage the caller
  gives, as output arguments after @f's own (contract/manifest.py).
  "default" names the device of values without an affinity (IREE's
  default device; a manifest written before mdc-compile recorded it has
  none, and the first device stands for it).
  "no_host_entry_points": true says mdc-compile was given
  --no-host-entry-points.
  "result_devices": {"f": {"0": "device_b"}} gives the device a result of
  @f lives on where its declaration names none (mdc-compile read it off
  the stream IR); the shim fetches it from there.
  "functions" (contract/manifest.py gives its format) describes each public
  function IREE wrote no `iree.abi.declaration` for (a program already in
  the buffer-view ABI, such as an iree-turbine export): its model (sync or
  coarse-fences), and each argument's and result's type and device. The
  shim makes a Signature of it, as of a declaration.
  "tied_dims": {"f": [[[0, 0], [1, 0]]]} lists groups of (argument,
  dimension) of @f that the program requires equal (contract/manifest.py);
  a call given different sizes in a group is refused before it runs.

* `iree.abi.declaration`, written by IREE for every public function::

    sync func @f(%input0: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>})
        -> (%output0: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>})

  `async func` marks the async-external (coarse-fences) model, whose VM
  function takes (inputs..., wait_fence, signal_fence).

A module without a manifest (plain iree-compile output) still names its
devices in the error strings its `__init` carries, e.g.
``HAL device `device_b` not found or unavailable: #hal.device.target<"local",
{ordinal = 1 : index}, ...``; `scan_declared_devices` reads those. Devices the
program never uses are dropped by IREE and so do not appear there.
"""

from __future__ import annotations

import dataclasses
import json
import mmap
import re
from dataclasses import dataclass
from typing import Optional

from mdc.contract.declaration_text import split_top_level
from mdc.contract.manifest import FORMAT as MANIFEST_FORMAT
from mdc.contract.manifest import (FUNCTIONS, MODEL_COARSE_FENCES, MODEL_SYNC, MUTABLE_GLOBALS, NO_HOST_ENTRY_POINTS,
                                   RESULT_DEVICES, RESULT_STORAGE, STATE_BY_FUNCTION, TIED_DIMS,
                                   SEAL_LENGTH, SEAL_PREFIX)
from mdc.contract.manifest import KEY as MANIFEST_KEY

from .errors import ShimError

# mdc-compile's integrity seal (pipeline/manifest.py writes it): the last
# bytes of the file, the ZIP archive comment, hold the SHA-256 of all bytes
# before them.


def check_seal(path: str) -> bool:
    """True if the module carries mdc's seal and matches it, False if it
    carries none (stock iree-compile output); raises ShimError if the file
    does not match its seal: it was damaged after mdc-compile wrote it."""
    import hashlib

    try:
        with open(path, "rb") as f:
            f.seek(0, 2)
            size = f.tell()
            if size < SEAL_LENGTH:
                return False
            f.seek(size - SEAL_LENGTH)
            trailer = f.read(SEAL_LENGTH)
            if not trailer.startswith(SEAL_PREFIX):
                return False
            f.seek(0)
            digest = hashlib.sha256()
            left = size - SEAL_LENGTH
            while left:
                chunk = f.read(min(left, 1 << 24))
                if not chunk:
                    break
                digest.update(chunk)
                left -= len(chunk)
    except OSError as e:
        raise ShimError(f"cannot read module {path}: {e.strerror}") from None
    if digest.hexdigest().encode() != trailer[len(SEAL_PREFIX):]:
        raise ShimError(f"module {path} is damaged: its bytes do not match the SHA-256 "
                        "mdc-compile recorded in it; compile it again")
    return True

DECLARATION_KEY = "iree.abi.declaration"


@dataclass(frozen=True)
class DeclaredDevice:
    name: str
    kind: str  # IREE device kind: local, cuda, hip, vulkan, ...
    ordinal: int  # position among the given runtime devices of that kind

    @property
    def spec(self) -> str:
        return f"{self.kind}[{self.ordinal}]"


@dataclass(frozen=True)
class Staging:
    src: str
    dst: str
    owner: Optional[str]  # the device whose allocator provides the staging memory
    via: Optional[str] = None  # a local device relaying the pair (then owner is null)


@dataclass(frozen=True)
class Manifest:
    devices: tuple[DeclaredDevice, ...]
    staging: tuple[Staging, ...] = ()
    default: Optional[str] = None
    source: str = MANIFEST_KEY  # or "module" when scanned from the vmfb
    # (function, argument index, device whose pinned memory must hold it)
    pinned_arguments: tuple[tuple[str, int, str], ...] = ()
    host: Optional[str] = None  # the local device host entry points use
    host_entry_points: tuple[tuple[str, str], ...] = ()  # (function, its twin)
    no_host_entry_points: bool = False  # mdc-compile was given --no-host-entry-points
    # Signatures of the functions IREE wrote no declaration for, from "functions".
    functions: tuple[tuple[str, "Signature"], ...] = ()
    # (function, its result-storage twin, the result indices it stores)
    storage_twins: tuple[tuple[str, str, tuple[int, ...]], ...] = ()
    # The program's own mutable globals: state a call leaves for the next;
    # None: the manifest does not say (an older mdc-compile wrote it).
    mutable_globals: Optional[tuple[str, ...]] = None
    # (function, the mutable globals it refers to) per public function;
    # None: not said (then every function is taken to keep the state).
    state_by_function: Optional[tuple[tuple[str, tuple[str, ...]], ...]] = None
    # (function, its groups of tied (argument, dimension)) per function with any.
    tied_dims: tuple[tuple[str, tuple[tuple[tuple[int, int], ...], ...]], ...] = ()

    def tied(self, signature: "Signature") -> tuple[tuple[tuple[int, int], ...], ...]:
        """The groups of (argument, dimension) of ``signature``'s function
        that must be equal; ShimError if one names no dimension of a
        tensor argument."""
        groups = next((g for f, g in self.tied_dims if f == signature.name), ())
        for group in groups:
            for k, i in group:
                arg = signature.args[k] if k < len(signature.args) else None
                if arg is None or not arg.is_tensor or i >= len(arg.type.shape):
                    raise ShimError(f"{MANIFEST_KEY} ties dimension {i} of input {k} of @{signature.name}, "
                                    f"which has no such dimension: {signature.text}")
        return groups
    # (function, result index, the device it lives on) for results whose
    # declaration names no device.
    result_devices: tuple[tuple[str, int, str], ...] = ()

    def placed_results(self, signature: "Signature") -> "Signature":
        """``signature`` with each result its declaration places nowhere on
        the device the manifest says it lives on."""
        found = {i: d for f, i, d in self.result_devices if f == signature.name}
        if not found:
            return signature
        results = tuple(dataclasses.replace(v, affinity=found[i]) if v.affinity is None and i in found else v
                        for i, v in enumerate(signature.results))
        return dataclasses.replace(signature, results=results)

    def state_of(self, function: str) -> Optional[tuple[str, ...]]:
        """The mutable globals @function refers to: () for none, all of
        them where the manifest does not say, None where it does not say
        whether the program has any."""
        if self.mutable_globals is None:
            return None
        if not self.mutable_globals:
            return ()
        found = dict(self.state_by_function or ())
        return found.get(function, self.mutable_globals)

    def storage_twin(self, function: str) -> Optional[tuple[str, tuple[int, ...]]]:
        """(twin, stored result indices) of @function's result-storage twin, or None."""
        return next(((t, r) for f, t, r in self.storage_twins if f == function), None)

    def twins(self) -> set[str]:
        """The names of every twin mdc-compile added."""
        return {t for _, t in self.host_entry_points} | {t for _, t, _ in self.storage_twins}

    def signature(self, function: str) -> Optional["Signature"]:
        """The manifest's signature of @function, or None."""
        return next((s for f, s in self.functions if f == function), None)

    def host_entry_point(self, function: str) -> Optional[str]:
        """The name of @function's host twin, or None."""
        return next((t for f, t in self.host_entry_points if f == function), None)

    def pinned(self, function: str) -> dict[int, str]:
        """{argument index: device} of @function's arguments given in pinned memory."""
        return {i: d for f, i, d in self.pinned_arguments if f == function}

    @property
    def default_device(self) -> str:
        return self.default or self.devices[0].name

    def names(self) -> list[str]:
        return [d.name for d in self.devices]

    def describe(self) -> str:
        return ", ".join(f"{d.name}={d.spec}" for d in self.devices)


def parse_manifest(text: str) -> Manifest:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise ShimError(f"{MANIFEST_KEY} is not valid JSON: {e}") from None
    if not isinstance(data, dict) or data.get("format") != MANIFEST_FORMAT:
        got = data.get("format") if isinstance(data, dict) else type(data).__name__
        raise ShimError(f"unsupported {MANIFEST_KEY} format {got!r} (expected {MANIFEST_FORMAT!r})")
    try:
        devices = []
        for d in data["devices"]:
            kind, ordinal = d.get("kind"), d.get("ordinal")
            if kind is None or ordinal is None:
                kind, ordinal = _parse_spec(d["spec"])
            devices.append(DeclaredDevice(str(d["name"]), str(kind), int(ordinal)))
        staging = tuple(Staging(str(s["from"]), str(s["to"]), _name(s["owner"]), _name(s.get("via")))
                        for s in data.get("staging", []))
        if any(s.owner is None and s.via is None for s in staging):
            raise ValueError("a staging entry has neither owner nor via")
        pinned = tuple((str(f), int(i), str(d)) for f, arguments in data.get("pinned_arguments", {}).items()
                       for i, d in arguments.items())
        twins = tuple((str(f), str(t)) for f, t in data.get("host_entry_points", {}).items())
        no_twins = data.get(NO_HOST_ENTRY_POINTS, False) is True
        result_devices = tuple((str(f), int(i), str(d)) for f, found in data.get(RESULT_DEVICES, {}).items()
                               for i, d in found.items())
        host = _name(data.get("host"))
        storage = tuple((str(f), str(e["function"]), tuple(int(i) for i in e["results"]))
                        for f, e in data.get(RESULT_STORAGE, {}).items())
        if any(not results or min(results) < 0 for _, _, results in storage):
            raise ValueError("a result_storage entry lists no results, or a negative index")
        functions = tuple((str(f), signature_of_entry(str(f), entry))
                          for f, entry in data.get(FUNCTIONS, {}).items())
        state = data.get(MUTABLE_GLOBALS)
        if state is not None:
            if not isinstance(state, list):
                raise ValueError(f"{MUTABLE_GLOBALS} is not a list")
            state = tuple(str(g) for g in state)
        by_function = data.get(STATE_BY_FUNCTION)
        if by_function is not None:
            if not isinstance(by_function, dict) or not all(isinstance(g, list) for g in by_function.values()):
                raise ValueError(f"{STATE_BY_FUNCTION} is not a map of lists")
            by_function = tuple((str(f), tuple(str(x) for x in g)) for f, g in by_function.items())
        tied = tuple((str(f), _tied_groups(groups)) for f, groups in data.get(TIED_DIMS, {}).items())
    except ShimError as e:
        raise ShimError(f"malformed {MANIFEST_KEY}: {e}") from None
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise ShimError(f"malformed {MANIFEST_KEY}: {e!r}") from None
    if not devices:
        raise ShimError(f"{MANIFEST_KEY} declares no devices")
    names = [d.name for d in devices]
    if len(set(names)) != len(names):
        raise ShimError(f"{MANIFEST_KEY} declares a device twice: {names}")
    default = data.get("default")
    if default is not None and default not in names:
        raise ShimError(f"{MANIFEST_KEY} default device {default!r} is not declared")
    unknown = sorted({d for _, _, d in pinned} - set(names))
    if unknown:
        raise ShimError(f"{MANIFEST_KEY} pins arguments in device {unknown[0]!r}, which it does not declare")
    unknown = sorted({d for _, _, d in result_devices} - set(names))
    if unknown:
        raise ShimError(f"{MANIFEST_KEY} places results on device {unknown[0]!r}, which it does not declare")
    if twins and host not in names:
        raise ShimError(f"{MANIFEST_KEY} host device {host!r} of its host entry points is not declared")
    for f, sig in functions:
        unknown = [v.affinity for v in sig.args + sig.results if v.affinity is not None and v.affinity not in names]
        if unknown:
            raise ShimError(f"{MANIFEST_KEY} places a value of @{f} on device {unknown[0]!r}, "
                            "which it does not declare")
    return Manifest(tuple(devices), staging, default, pinned_arguments=pinned, host=host,
                    host_entry_points=twins, no_host_entry_points=no_twins, functions=functions, storage_twins=storage,
                    mutable_globals=state, state_by_function=by_function, tied_dims=tied,
                    result_devices=result_devices)


def _tied_groups(groups) -> tuple[tuple[tuple[int, int], ...], ...]:
    """A function's "tied_dims" entry: groups of two or more
    [argument, dimension] pairs of non-negative integers."""
    out = tuple(tuple((int(k), int(i)) for k, i in group) for group in groups)
    if any(len(group) < 2 or min(min(pair) for pair in group) < 0 for group in out):
        raise ValueError(f"a {TIED_DIMS} group has fewer than two members, or a negative index")
    return out


def signature_of_entry(name: str, entry: dict) -> "Signature":
    """The Signature a "functions" entry of the manifest describes, with a
    text in the form of IREE's declarations."""
    model = entry["model"]
    if model not in (MODEL_SYNC, MODEL_COARSE_FENCES):
        raise ShimError(f"@{name} has the unknown model {model!r} (expected {MODEL_SYNC!r} "
                        f"or {MODEL_COARSE_FENCES!r})")

    def values(items, prefix):
        return tuple(Value(f"{prefix}{i}", parse_type(str(v["type"])), _name(v.get("device")))
                     for i, v in enumerate(items))

    def text(v: Value) -> str:
        where = f" {{iree.abi.affinity = #hal.device.promise<@{v.affinity}>}}" if v.affinity else ""
        return f"%{v.name}: {v.type}{where}"

    args, results = values(entry["arguments"], "input"), values(entry["results"], "output")
    is_async = model == MODEL_COARSE_FENCES
    declaration = (f"{'async' if is_async else 'sync'} func @{name}({', '.join(text(v) for v in args)}) "
                   f"-> ({', '.join(text(v) for v in results)})")
    return Signature(name, is_async, args, results, declaration, declared_by="mdc")


def _name(value) -> Optional[str]:
    return None if value is None else str(value)


def _parse_spec(spec: str) -> tuple[str, int]:
    m = re.fullmatch(r"([\w-]+)(?:\[(\d+)\])?", spec.strip())
    if not m:
        raise ValueError(f"bad device spec {spec!r}")
    return m.group(1), int(m.group(2) or 0)


_DEVICE_TEXT = re.compile(
    rb"HAL device `([^`]+)` not found or unavailable: "
    rb'#hal\.device\.target<"([\w-]+)"(?:, \{([^{}]*)\})?')


def scan_declared_devices(path: str) -> Optional[Manifest]:
    """Declared devices of a module without a manifest, or None."""
    devices: dict[str, DeclaredDevice] = {}
    with open(path, "rb") as f:
        try:
            data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        except ValueError:  # empty file
            return None
        with data:
            for m in _DEVICE_TEXT.finditer(data):
                name = m.group(1).decode()
                ordinal = re.search(rb"ordinal = (\d+)", m.group(3) or b"")
                devices.setdefault(name, DeclaredDevice(
                    name, m.group(2).decode(), int(ordinal.group(1)) if ordinal else 0))
    if not devices:
        return None
    return Manifest(tuple(devices.values()), source="module")


# ---------------------------------------------------------------------------
# iree.abi.declaration


@dataclass(frozen=True)
class TensorType:
    shape: tuple[Optional[int], ...]  # None for a dynamic dimension
    element: str  # MLIR spelling: f32, bf16, i1, ui8, ...

    def __str__(self) -> str:
        dims = "".join(("?" if d is None else str(d)) + "x" for d in self.shape)
        return f"tensor<{dims}{self.element}>"

    def accepts_shape(self, shape: tuple[int, ...]) -> bool:
        return len(shape) == len(self.shape) and all(
            want is None or want == got for want, got in zip(self.shape, shape))


@dataclass(frozen=True)
class Value:
    name: str  # without the %
    type: object  # TensorType, or the type's text for anything else
    affinity: Optional[str]  # declared device name, or None for the default

    @property
    def is_tensor(self) -> bool:
        return isinstance(self.type, TensorType)


@dataclass(frozen=True)
class Signature:
    name: str
    is_async: bool  # async-external: the VM function also takes two fences
    args: tuple[Value, ...]
    results: tuple[Value, ...]
    text: str
    # "iree": its iree.abi.declaration; "mdc": the manifest's "functions"
    # (IREE wrote no declaration).
    declared_by: str = "iree"

    def __str__(self) -> str:
        return self.text


_HEAD = re.compile(r"\s*(sync|async)\s+func\s+@([^\s(]+)\s*\(")
_AFFINITY = re.compile(r"iree\.abi\.affinity\s*=\s*#hal\.device\.(?:promise|affinity)<@([\w$.\-]+)")


def parse_declaration(text: str) -> Signature:
    m = _HEAD.match(text)
    close = _matching_paren(text, m.end() - 1) if m else -1
    rest = text[close + 1:].strip() if close != -1 else ""
    if not rest.startswith("->"):
        raise ShimError(f"cannot parse {DECLARATION_KEY}: {text!r}")
    results = rest[2:].strip()
    if results.startswith("(") and _matching_paren(results, 0) == len(results) - 1:
        results = results[1:-1]
    return Signature(m.group(2), m.group(1) == "async",
                     _parse_values(text[m.end():close]), _parse_values(results), text)


def _matching_paren(text: str, open_at: int) -> int:
    depth, quoted = 0, False
    for i in range(open_at, len(text)):
        c = text[i]
        if c == '"':
            quoted = not quoted
        elif not quoted and c == "(":
            depth += 1
        elif not quoted and c == ")":
            depth -= 1
            if depth == 0:
                return i
    return -1


def _parse_values(text: str) -> tuple[Value, ...]:
    values = []
    for item in split_top_level(text):
        m = re.fullmatch(r"%([^:\s]+)\s*:\s*(.*)", item, re.S)
        if not m:  # an unnamed type, as IREE may print for results
            name, rest = f"v{len(values)}", item
        else:
            name, rest = m.groups()
        type_text, attrs = _split_attrs(rest.strip())
        affinity = _AFFINITY.search(attrs)
        values.append(Value(name, parse_type(type_text), affinity.group(1) if affinity else None))
    return tuple(values)


def _split_attrs(text: str) -> tuple[str, str]:
    """'tensor<4xf32> {a = b}' -> ('tensor<4xf32>', '{a = b}')."""
    depth = 0
    for i, c in enumerate(text):
        if c in "<([":
            depth += 1
        elif c in ">)]" and text[i - 1:i + 1] != "->":
            depth -= 1
        elif c == "{" and depth == 0:
            return text[:i].strip(), text[i:]
    return text, ""


def parse_type(text: str):
    """A TensorType for `tensor<...>`, else the text itself."""
    m = re.fullmatch(r"tensor<(.*)>", text.strip(), re.S)
    if not m:
        return text.strip()
    body = split_top_level(m.group(1))[0]  # drop an encoding after ','
    shape = []
    while True:
        dim = re.match(r"(\d+|\?)x", body)
        if not dim:
            break
        shape.append(None if dim.group(1) == "?" else int(dim.group(1)))
        body = body[dim.end():]
    return TensorType(tuple(shape), body)
