"""Probe modules built on one machine and measured on another: a machine
with only the IREE runtime (a GPU machine often has no compiler) is
profiled with modules that ``mdc-profile --build-probes=DIR`` compiled
elsewhere, and ``mdc-profile --probes=DIR`` reads them.

DIR holds one ``KIND.vmfb`` per device kind and the index ``probes.json``::

    {"format": "mdc-profile-probes", "version": 1, "mdc": "0.1.0", "quick": false,
     "target_cpu": "generic",
     "probes": [{"kind": "local", "file": "local.vmfb",
                 "flags": ["--iree-hal-target-device=local", ...,
                           "--iree-llvmcpu-target-cpu=generic"],
                 "program_sha256": "...", "vmfb_sha256": "..."}, ...]}

``program_sha256`` is the probe program's text's (probes.program), so a
DIR built by another mdc, whose probes differ, is refused even where the
measuring side's mdc version is unknown (a checkout that is not
installed); ``vmfb_sha256`` finds a file that changed since it was built.
A local device's probes target ``target_cpu``: probes.PREBUILT_TARGET_CPU
unless the builder names another (one the measuring machine has).

No IREE import: the caller passes the compile function.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from importlib import metadata
from typing import Callable, Iterable, Mapping, Optional

from mdc.contract.atomic_write import write_atomically

from . import probes

INDEX = "probes.json"
FORMAT = "mdc-profile-probes"
FORMAT_VERSION = 1

# kind, sizes, target CPU -> the compiled module
Compile = Callable[[str, probes.ProbeSizes, str], bytes]


class KitMismatch(Exception):
    """A DIR that cannot serve this command: none, no index, another
    format or mdc, a kind it lacks, --quick that differs (exit status 2)."""


class KitBroken(Exception):
    """A probe file the index names that is missing or changed (exit status 1)."""


@dataclasses.dataclass(frozen=True)
class ProbeEntry:
    """One kind's module in a DIR, as its index names it."""

    kind: str
    file: str
    flags: tuple[str, ...]
    program_sha256: str
    vmfb_sha256: str


@dataclasses.dataclass(frozen=True)
class Probes:
    """A DIR's modules by kind, checked, and the CPU its local ones target."""

    modules: Mapping[str, bytes]
    target_cpu: str


def mdc_version() -> Optional[str]:
    """The installed mdc's version, or None (a checkout on sys.path)."""
    try:
        return metadata.version("mdc")
    except metadata.PackageNotFoundError:
        return None


def expected(kind: str, quick: bool, target_cpu: str) -> tuple[tuple[str, ...], str]:
    """(flags, program_sha256) of the module this mdc builds for ``kind``."""
    text = probes.program(probes.sizes_for(kind, quick), f16=kind not in probes.NO_F16_MATMUL)
    return probes.compile_flags(kind, target_cpu), _sha256(text.encode())


def build(directory: str, kinds: Iterable[str], quick: bool, compile_module: Compile,
          target_cpu: str = probes.PREBUILT_TARGET_CPU) -> list[str]:
    """Compiles each kind's probe module, then (nothing where a compile
    fails) writes them into ``directory`` (made if missing) and the index;
    the paths written, the index last."""
    vmfbs = {kind: compile_module(kind, probes.sizes_for(kind, quick), target_cpu) for kind in kinds}
    os.makedirs(directory, exist_ok=True)
    entries, written = [], []
    for kind, vmfb in vmfbs.items():
        flags, program_sha256 = expected(kind, quick, target_cpu)
        path = os.path.join(directory, f"{kind}.vmfb")
        write_atomically(path, vmfb)
        written.append(path)
        entries.append({"kind": kind, "file": os.path.basename(path), "flags": list(flags),
                        "program_sha256": program_sha256, "vmfb_sha256": _sha256(vmfb)})
    index = {"format": FORMAT, "version": FORMAT_VERSION, "mdc": mdc_version(), "quick": quick,
             "target_cpu": target_cpu, "probes": entries}
    path = os.path.join(directory, INDEX)
    write_atomically(path, (json.dumps(index, indent=1) + "\n").encode())
    return written + [path]


def load(directory: str, kinds: Iterable[str], quick: bool) -> Probes:
    """Each kind's module from ``directory``, checked against its index and
    against what this mdc would build; KitMismatch or KitBroken, one line."""
    index = _read_index(directory)
    where = f"--probes={directory}"
    built_by = index.get("mdc") or "an uninstalled mdc"
    ours = mdc_version()
    if ours is not None and index.get("mdc") not in (None, ours):
        raise KitMismatch(f"{where} was built by mdc {built_by}, this is mdc {ours}: rebuild it with --build-probes")
    if index.get("quick") is not quick:
        built, asked = ("with", "without") if index.get("quick") else ("without", "with")
        raise KitMismatch(f"{where} was built {built} --quick; measure {built} it, not {asked}")
    entries = _entries(index, where)
    target_cpu = index.get("target_cpu")
    if not isinstance(target_cpu, str):
        raise KitMismatch(f"{where}: {INDEX} has no \"target_cpu\" string")
    modules = {}
    for kind in kinds:
        entry = entries.get(kind)
        if entry is None:
            raise KitMismatch(f"{where} has no {kind} probes (it has {', '.join(entries) or 'none'}): "
                              f"build it with --device for every device measured")
        if (entry.flags, entry.program_sha256) != expected(kind, quick, target_cpu):
            raise KitMismatch(f"{where} was built by mdc {built_by} with other {kind} probes than this mdc's: "
                              f"rebuild it with --build-probes")
        modules[kind] = _read_module(directory, entry, where)
    return Probes(modules, target_cpu)


def _read_index(directory: str) -> Mapping:
    path = os.path.join(directory, INDEX)
    if not os.path.isdir(directory):
        raise KitMismatch(f"--probes={directory}: no such directory")
    try:
        with open(path, encoding="utf-8") as f:
            index = json.load(f)
    except FileNotFoundError:
        raise KitMismatch(f"--probes={directory}: no {INDEX} (build it with --build-probes={directory})") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise KitMismatch(f"{path}: not a probes index ({e})") from None
    if not isinstance(index, dict) or index.get("format") != FORMAT:
        raise KitMismatch(f"{path}: not a probes index (no \"format\": \"{FORMAT}\")")
    if index.get("version") != FORMAT_VERSION:
        raise KitMismatch(f"{path}: index version {index.get('version')!r}, this mdc reads {FORMAT_VERSION}: "
                          f"rebuild it with --build-probes")
    return index


def _entries(index: Mapping, where: str) -> dict[str, ProbeEntry]:
    try:
        return {e["kind"]: ProbeEntry(e["kind"], e["file"], tuple(e["flags"]), e["program_sha256"], e["vmfb_sha256"])
                for e in index["probes"]}
    except (KeyError, TypeError) as e:
        raise KitMismatch(f"{where}: {INDEX} has a malformed probes list ({type(e).__name__}: {e})") from None


def _read_module(directory: str, entry: ProbeEntry, where: str) -> bytes:
    if os.path.basename(entry.file) != entry.file:
        raise KitBroken(f"{where}: {INDEX} names {entry.file!r}, not a file in the directory")
    path = os.path.join(directory, entry.file)
    try:
        with open(path, "rb") as f:
            vmfb = f.read()
    except OSError as e:
        raise KitBroken(f"{where}: cannot read {entry.kind}'s {entry.file}: {e.strerror or e}") from None
    if _sha256(vmfb) != entry.vmfb_sha256:
        raise KitBroken(f"{where}: {entry.file} is corrupt (its sha256 is not the one {INDEX} recorded): "
                        f"rebuild it with --build-probes")
    return vmfb


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
