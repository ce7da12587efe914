"""A compiled program opened for a set of runtime devices, before anything
runs: the file checked and mapped once, its functions' signatures and mdc
manifest read, its declared devices bound to the given ones, and every
value's device known. Both backends (module.py's in-process Module and
native.py's NativeModule) start from one.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Optional, Sequence

import iree.runtime as rt

from . import devices as dev
from .errors import ShimError, ShimTypeError, short
from .manifest import (DECLARATION_KEY, MANIFEST_KEY, Manifest, Signature, Value, check_seal,
                       parse_declaration, parse_manifest, scan_declared_devices)


@dataclasses.dataclass
class Program:
    """A .vmfb mapped into ``instance``, for the runtime devices ``uris``.
    ``manifest``: its mdc manifest, else the devices its __init names, else
    None (then every value lives on device 0); ``binding``: declared device
    name -> index into ``uris``; ``sealed``: whether mdc-compile sealed it."""

    path: str
    uris: list[str]
    sealed: bool
    instance: rt.VmInstance
    vm_module: rt.VmModule
    signatures: dict[str, Signature]
    manifest: Optional[Manifest]
    binding: dict[str, int]

    def device_index(self, value: Value, signature: Signature) -> int:
        """The index into ``uris`` of the device ``value`` lives on."""
        return device_index(self.manifest, self.binding, value, signature)

    def check_affinities(self) -> None:
        """ShimError for a value placed on a device the module does not declare."""
        for signature in self.signatures.values():
            for v in signature.args + signature.results:
                self.device_index(v, signature)


def open_program(path, uris: Sequence[str], flags: Sequence[str] = ()) -> Program:
    """The program at ``path`` for the runtime devices ``uris``, checked as
    far as it can be without opening a device: the file exists, each URI
    names a driver this runtime has, the runtime ``flags`` parse, the seal
    holds, and the declared devices bind to ``uris``. ShimError otherwise."""
    path = os.fspath(path)
    uris = list(uris)
    if not os.path.isfile(path):
        raise ShimError(f"module file not found: {path}")
    if not uris:
        raise ShimError("no devices given: name at least one, e.g. devices=\"local-task\"")
    check_drivers(uris)
    if flags:
        try:
            rt.flags.parse_flags(*flags)
        except (ValueError, RuntimeError) as e:
            raise ShimError(f"bad runtime flag in {' '.join(flags)}: {short(e)}") from None
    # A damaged module can pass IREE's bytecode verifier and then crash
    # or hang the VM; mdc-compile's seal catches it first.
    sealed = check_seal(path)
    instance = rt.VmInstance()
    try:
        vm_module = rt.VmModule.mmap(instance, path)
    except Exception as e:  # IREE maps statuses to several types (IndexError, ...)
        raise ShimError(f"cannot load module {path}: {short(e)}") from None
    signatures, manifest = read_signatures(vm_module)
    used = None
    if manifest is None:
        manifest = scan_declared_devices(path)
    elif any(d.ordinal >= sum(dev.kind_matches(d.kind, u) for u in uris) for d in manifest.devices):
        # A declared device no given one matches: fine where IREE dropped
        # it, so that its __init never looks it up (devices.bind).
        in_init = scan_declared_devices(path)
        names = {d.name for d in in_init.devices} if in_init is not None else set()
        if names and names <= {d.name for d in manifest.devices}:  # else not to be trusted
            used = names
    binding = dev.bind(manifest, uris, used) if manifest is not None else {}
    return Program(path, uris, sealed, instance, vm_module, signatures, manifest, binding)


def device_index(manifest: Optional[Manifest], binding: dict[str, int], value: Value,
                 signature: Signature) -> int:
    """The index of the runtime device ``value`` of ``signature`` lives on:
    its affinity's, or the manifest's default device's; 0 with no manifest."""
    if manifest is None:
        return 0
    name = value.affinity or manifest.default_device
    declared = next((d for d in manifest.devices if d.name == name), None)
    if declared is not None and name not in binding:
        raise ShimError(f"@{signature.name}: %{value.name} is placed on '{name}' ({declared.spec}), "
                        f"which no given runtime device matches: give a '{declared.kind}' device")
    if name not in binding:
        raise ShimError(f"@{signature.name}: %{value.name} is placed on '{name}', which the "
                        f"module does not declare ({manifest.describe()})")
    return binding[name]


def device_list(devices) -> list[str]:
    """``devices`` as a list of URI strings: one string is one device."""
    if isinstance(devices, (str, os.PathLike)):
        return [os.fspath(devices)]
    try:
        uris = list(devices)
    except TypeError:
        raise ShimTypeError(f"devices must be a device URI or a list of them, such as "
                            f"[\"local-task\", \"cuda\"]; got {type(devices).__name__}") from None
    bad = [u for u in uris if not isinstance(u, str)]
    if bad:
        raise ShimTypeError(f"devices must be device URI strings; got {bad[0]!r}")
    return uris


def read_signatures(vm_module: rt.VmModule) -> tuple[dict[str, Signature], Optional[Manifest]]:
    """Public functions with their declarations, and the module's manifest.
    A function IREE wrote no declaration for takes its signature from the
    manifest's "functions" (an iree-turbine export compiled by mdc-compile);
    a result declared on no device is on the one the manifest's
    "result_devices" names."""
    signatures, manifests, undeclared = {}, {}, []
    for name in vm_module.function_names:
        if name.startswith("__"):  # __init and other internal entry points
            continue
        reflection = vm_module.lookup_function(name).reflection
        if MANIFEST_KEY in reflection:
            manifests[reflection[MANIFEST_KEY]] = name
        if DECLARATION_KEY not in reflection:
            undeclared.append(name)
            signatures[name] = None
            continue
        signature = parse_declaration(reflection[DECLARATION_KEY])
        if signature.name != name:
            raise ShimError(f"function @{name} is declared as @{signature.name} in its "
                            f"{DECLARATION_KEY}; the module is inconsistent (damaged?)")
        signatures[name] = signature
    if len(manifests) > 1:
        raise ShimError(f"functions disagree on {MANIFEST_KEY}: " + ", ".join(
            f"@{n}" for n in manifests.values()))
    manifest = parse_manifest(next(iter(manifests))) if manifests else None
    for name in undeclared:
        signatures[name] = manifest.signature(name) if manifest is not None else None
        if signatures[name] is None:
            raise ShimError(f"function @{name} has no {DECLARATION_KEY}, and no mdc manifest describes it; "
                            "was the module built by iree-compile or mdc-compile?")
    if manifest is not None:
        signatures = {name: manifest.placed_results(s) for name, s in signatures.items()}
    return signatures, manifest


def check_drivers(uris: Sequence[str]) -> None:
    """Every URI names a driver this runtime has, as iree-run-module checks
    first (a typo such as local_task is not a device of another kind)."""
    available = rt.query_available_drivers()
    for uri in uris:
        name = dev.driver_name(uri)
        if name not in available:
            raise ShimError(f"device '{uri}': unknown driver '{name}'; no driver of that name is "
                            f"registered (available: {', '.join(available)})")
