"""The devices a program names, checked against mdc-compile's ``--device``
flags: names resolved (``a`` is ``device_a`` where the program says
``@device_a``), every device it names given, a device it defines itself
given as the same kind and ordinal."""

from __future__ import annotations

from mdc.contract.manifest_record import Device
from mdc.passes.infra.diagnostics import MdcError, format_location

from . import options
from .options import UsageError


def resolve_devices(program, devices: list[Device]):
    """The devices' names resolved against the program (``a`` is
    ``device_a`` where it says ``@device_a``), checked against the devices
    it defines and names; returns them, the devices it never names that
    must still reach mdc's passes (options.staging_hops), and warnings for
    devices it has no use for."""
    from mdc.passes.ir.module_facts import defined_devices, referenced_devices

    referenced = referenced_devices(program)
    resolved, unnamed = options.resolve_names(devices, referenced)
    _check_defined_devices(resolved, devices, defined_devices(program))
    _check_symbol_clashes(program, resolved, devices)
    given = {d.name for d in resolved}
    for name, loc in referenced.items():
        if name not in given:
            # A device the program never names is likely this one misspelled.
            raise UsageError(
                f"the program uses device '@{name}', but no --device gives it",
                location=format_location(loc),
                notes=[f"{options.unnamed_warning(d, n)} (misspelled?)" for d, n in unnamed]
                + [f"add --device={name}=SPEC (e.g. local[0] or cuda[0])"],
            )
    hops = options.staging_hops(resolved, referenced)
    return resolved, hops, options.unnamed_warnings([(d, n) for d, n in unnamed if n not in hops])


def _check_defined_devices(devices, given, defined: dict) -> None:
    """A --device must agree with the program's own definition of that device:
    IREE may keep either one, while the manifest always records the flag."""
    for d, flag in zip(devices, given):
        if d.name not in defined:
            continue
        kind, ordinal, loc = defined[d.name]
        if kind == d.kind and ordinal in (None, d.ordinal):
            continue
        program = kind if ordinal is None else f"{kind}[{ordinal}]"
        raise MdcError(
            f"the program defines device '@{d.name}' as {program}, but --device={flag.name}={flag.spec_as_given} says "
            f"{d.spec_as_given}: make them agree, or drop the program's util.global",
            location=format_location(loc),
        )


def _check_symbol_clashes(program, devices, given) -> None:
    """IREE declares each device as a global named like the device; another
    symbol of that name (a function ``@a`` beside ``--device=a=...``) makes
    IREE fail with "redefinition of symbol", which says nothing of why."""
    from mdc.passes.ir import ir_adapter as irx
    names = {d.name: flag for d, flag in zip(devices, given)}
    for op in irx.top_level_ops(program):
        if irx.is_device_global(op) or "sym_name" not in op.attributes:
            continue
        name = op.attributes["sym_name"].value
        if name in names:
            flag = names[name]
            raise UsageError(
                f"{op.name} @{name} has the name of device '{name}' (--device={flag.name}={flag.spec_as_given}): "
                f"IREE declares each device as a global of its name",
                location=format_location(op.location),
                notes=[f"rename the {op.name} or the device (e.g. --device=dev_{name}={flag.spec_as_given})"],
            )
