"""device-isolation-verifier: no device is handed memory or fences it cannot use.

The original failure stayed silent until run time: IREE gave a buffer of one
device to another device's queue, and a GPU queue waited on a CPU fence (it
hangs on a real GPU). This pass is a pure analysis of the final HAL-level IR
of any module, mdc's or IREE's own; it never changes the IR. It judges the
module by the memory model (memory_model.py, with the ``--link``
overrides) in two steps (verifier/rules.py):

- in any module of several devices, the module rules, each alone:
  ``executable-format`` (no device creates an executable from a variant of
  a format it cannot run), then ``list-order`` (no list a call reads is
  filled after the call);
- in a module with a staged pair, the ownership of every buffer, allocator,
  command buffer and fence (verifier/ownership.py), computed once, judged
  by the ownership rules: ``shared-allocation``, ``queue-buffer``,
  ``pooled-dealloca``, ``command-buffer-buffer``, ``foreign-fence``,
  ``caller-fence``, ``result-memory`` and ``default-device``.

Each rule says which IREE behaviour it guards against (its ``guards``) and
has its own lit test (test/lit/verifier/rules/). A value whose origin is
unknown is never an error.
"""

from __future__ import annotations

from ..infra.diagnostics import MdcError
from ..analysis.memory_model import MemoryModel
from ..ir.module_facts import hal_devices
from ..infra.pass_base import ANALYSES, DeviceOptions, ModulePass
from .access import Access
from .rule import Violation
from .rules import check_module_rules, check_ownership_rules

__all__ = ["DeviceIsolationVerifier", "Violation", "verify"]


def verify(module, given: dict, model: MemoryModel) -> list[Violation]:
    """Every isolation violation in ``module``, in program order.
    ``given``: the devices the command line declares (memory_model.Device
    by symbol); those the module no longer declares are added. IREE drops
    the global of a device nothing runs on any more, while a function's
    declaration still names it (result-memory). ``model``: the memory model
    of those devices under the --link overrides (the pass manager's)."""
    devices = dict(hal_devices(module))
    for name, device in given.items():
        devices.setdefault(name, device)
    if len(devices) < 2:
        return []
    found = check_module_rules(module)
    if found:
        return found
    if not model.needs_staging:
        return []  # all pairs share memory: IREE's own behaviour stands
    return check_ownership_rules(module, Access(model, module))


class DeviceIsolationVerifier(ModulePass):
    """Rejects HAL-level IR that hands a device memory or fences it cannot use."""

    name = "device-isolation-verifier"
    level = "hal"
    summary = "reject buffers, shared allocations and fences that cross incompatible devices"

    Options = DeviceOptions
    requires = (MemoryModel,)
    preserves = ANALYSES

    def apply(self, module, options: DeviceOptions, model: MemoryModel) -> None:
        violations = verify(module, options.devices, model)
        if not violations:
            return
        first, rest = violations[0], violations[1:]
        notes = list(first.notes)
        if rest:
            notes.append(f"{len(rest)} more violation(s):")
            notes += [f"  {v.short}" for v in rest[:5]]
            if len(rest) > 5:
                notes.append(f"  ... and {len(rest) - 5} more")
        raise MdcError(first.message, location=first.location, notes=notes)
