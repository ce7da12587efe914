"""What a compiled module says about itself, as plain text.

Two sources, both read with no devices and no compiler:

* `mdc.manifest`, the JSON string mdc-compile puts in each public
  function's `iree.reflection` dictionary. contract/manifest.py describes
  its format; `parse_manifest` reads it into a `Manifest` (the contract's
  record, mdc.contract.manifest_record, with the shim's questions about
  it), and "functions" entries into Signatures, as of a declaration.

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
import mmap
import re
from dataclasses import dataclass
from typing import Optional

from mdc.contract import manifest_record
from mdc.contract.declaration_text import split_top_level
from mdc.contract.manifest import KEY as MANIFEST_KEY
from mdc.contract.manifest import MODEL_COARSE_FENCES, SEAL_LENGTH, SEAL_PREFIX
from mdc.contract.manifest_record import Device, FunctionEntry, ManifestError

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
class Manifest(manifest_record.Manifest):
    """The contract's manifest (mdc.contract.manifest_record) with what the
    shim asks of it in terms of its own Signatures. ``source``: where it
    came from, the manifest, or "module" when scan_declared_devices read
    the devices off a vmfb without one."""

    source: str = MANIFEST_KEY

    def work_outlives_call(self, function: str) -> bool:
        """Whether a call of @function may return before all its work has
        run. IREE 3.13 records the work that stores into a mutable global
        in that global's timepoint, which the next reader waits for; a
        call neither waits for it nor signals its fence after it
        (test/lit/regress/iree_call_returns_before_global_store.test). So
        a function that refers to a mutable global, or one whose state the
        manifest does not give (an older manifest, or devices read off a
        module without one), may read its inputs after it returns. A twin
        mdc-compile added (``F$into``, ``F``'s host twin) is ``F``."""
        if self.source != MANIFEST_KEY:
            return True
        original = next((f for f, t in self.host_entry_points if t == function),
                        next((f for f, t, _ in self.storage_twins if t == function), function))
        state = self.state_of(original)
        return state is None or bool(state)

    def tied(self, signature: "Signature") -> tuple[tuple[tuple[int, int], ...], ...]:
        """The groups of (argument, dimension) of ``signature``'s function
        that must be equal; ShimError if one names no dimension of a
        tensor argument."""
        groups = self.tied_groups(signature.name)
        for group in groups:
            for k, i in group:
                arg = signature.args[k] if k < len(signature.args) else None
                if arg is None or not arg.is_tensor or i >= len(arg.type.shape):
                    raise ShimError(f"{MANIFEST_KEY} ties dimension {i} of input {k} of @{signature.name}, "
                                    f"which has no such dimension: {signature.text}")
        return groups

    def bounds(self, signature: "Signature") -> tuple[tuple[int, int, int], ...]:
        """The (argument, dimension, bound) of ``signature``'s function that
        a call must not exceed (mdc-compile's --max-dim under --place);
        ShimError if one names no dimension of a tensor argument."""
        bounds = self.bounds_of(signature.name)
        for k, i, _ in bounds:
            arg = signature.args[k] if k < len(signature.args) else None
            if arg is None or not arg.is_tensor or i >= len(arg.type.shape):
                raise ShimError(f"{MANIFEST_KEY} bounds dimension {i} of input {k} of @{signature.name}, "
                                f"which has no such dimension: {signature.text}")
        return bounds

    def placed_results(self, signature: "Signature") -> "Signature":
        """``signature`` with each result its declaration places nowhere on
        the device the manifest says it lives on."""
        found = {i: d for f, i, d in self.result_devices if f == signature.name}
        if not found:
            return signature
        results = tuple(dataclasses.replace(v, affinity=found[i]) if v.affinity is None and i in found else v
                        for i, v in enumerate(signature.results))
        return dataclasses.replace(signature, results=results)

    def signature(self, function: str) -> Optional["Signature"]:
        """The manifest's signature of @function (its "functions" entry), or None."""
        entry = self.function(function)
        return None if entry is None else signature_of_entry(entry)


def parse_manifest(text: str) -> Manifest:
    """The manifest ``text`` holds; ShimError if it is not a valid one."""
    try:
        return Manifest.from_json(text)
    except ManifestError as e:
        raise ShimError(str(e)) from None


def signature_of_entry(entry: FunctionEntry) -> "Signature":
    """The Signature a "functions" entry of the manifest describes, with a
    text in the form of IREE's declarations."""

    def values(items, prefix):
        return tuple(Value(f"{prefix}{i}", parse_type(v.type), v.device) for i, v in enumerate(items))

    def text(v: Value) -> str:
        where = f" {{iree.abi.affinity = #hal.device.promise<@{v.affinity}>}}" if v.affinity else ""
        return f"%{v.name}: {v.type}{where}"

    args, results = values(entry.arguments, "input"), values(entry.results, "output")
    is_async = entry.model == MODEL_COARSE_FENCES
    declaration = (f"{'async' if is_async else 'sync'} func @{entry.name}({', '.join(text(v) for v in args)}) "
                   f"-> ({', '.join(text(v) for v in results)})")
    return Signature(entry.name, is_async, args, results, declaration, declared_by="mdc")


_DEVICE_TEXT = re.compile(
    rb"HAL device `([^`]+)` not found or unavailable: "
    rb'#hal\.device\.target<"([\w-]+)"(?:, \{([^{}]*)\})?')


def scan_declared_devices(path: str) -> Optional[Manifest]:
    """Declared devices of a module without a manifest, or None."""
    devices: dict[str, Device] = {}
    with open(path, "rb") as f:
        try:
            data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        except ValueError:  # empty file
            return None
        with data:
            for m in _DEVICE_TEXT.finditer(data):
                name = m.group(1).decode()
                ordinal = re.search(rb"ordinal = (\d+)", m.group(3) or b"")
                devices.setdefault(name, Device(
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
