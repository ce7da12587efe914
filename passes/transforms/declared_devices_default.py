"""declared-devices-default: a program that declares its own devices gets
the default device IREE's rule picks, written into the module.

IREE sets the module's default device (``stream.affinity.default``) only
where it declares the devices itself, from ``--iree-hal-target-device``:
``--iree-hal-default-device``, else the name that sorts first
(module_facts.iree_default_device). A program that declares its devices
itself (``util.global private @dev = #hal.device.alias<"local"[0]>``) gets
no default unless ``--iree-hal-default-device`` is given, and IREE then
imports an argument declared on no device on every device that reads it.
mdc places such an argument, and reads such a result, on the default
device, so it makes that device the same one by the same rule: the device
whose name sorts first. ``--iree-hal-default-device`` still overrides it
(IREE's flow phase replaces the attribute).

Runs right after IREE's input phase and assign-devices, before IREE assigns devices; a module
that has a default, or no device globals (its devices come from the
command line), is left as it is. So is a module with a device global
declared without a value (``util.global private @device_b : !hal.device``):
IREE gives it its target from ``--iree-hal-target-device`` and sets the
default itself, but only where the module has none yet. A default written
here would make IREE skip that step, and every promise of such a device
then fails with "references a promised device that was not declared"
(test/lit/regress/iree_default_before_undefined_device_globals.test shows
stock IREE doing so).
"""

from __future__ import annotations

from ..ir import ir_adapter as irx
from ..ir.ir_util import affinity_attr, get_attr
from ..ir.module_facts import device_globals, iree_default_device
from ..infra.pass_base import Fact, ModulePass, NoOptions

DEFAULT_ATTR = irx.DEFAULT_AFFINITY


def add_default_device(module) -> None:
    """Sets the default device of a module that defines every device it
    declares and has no default."""
    if get_attr(module, DEFAULT_ATTR) is not None:
        return
    globals_ = device_globals(module)
    if any(value is None for _, _, value in globals_):
        return  # IREE defines these devices from the command line, and the default with them
    default = iree_default_device([name for name, _, _ in globals_])
    if default is not None:
        module.attributes[DEFAULT_ATTR] = affinity_attr(default)


class DeclaredDevicesDefault(ModulePass):
    """Gives a program that declares its own devices IREE's default device."""

    name = "declared-devices-default"
    level = "input"
    summary = ("give a program that declares its own devices a default device (the name that sorts first, "
               "IREE's rule), where arguments declared on no device live")

    # Right after assign-devices (whose device annotations it may read): the
    # passes after it read the default it sets.
    needs = (Fact.DEVICES_ASSIGNED,)
    provides = (Fact.DEFAULT_DEVICE,)

    def apply(self, module, options: NoOptions) -> None:
        add_default_device(module)
