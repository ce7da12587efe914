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


def _memory_model(devices: dict, links: dict | None) -> MemoryModel:
    """The memory model of ``devices``; overrides naming devices this level
    cannot see are left out."""
    links = {pair: v for pair, v in (links or {}).items() if all(n in devices for n in pair)}
    return MemoryModel(devices, links)


def verify(module, links: dict | None = None, given: dict | None = None,
           model: MemoryModel | None = None) -> list[Violation]:
    """Every isolation violation in ``module``, in program order.
    ``given``: the devices the command line declares (memory_model.Device
    by symbol); those the module no longer declares are added. IREE drops
    the global of a device nothing runs on any more, while a function's
    declaration still names it (result-memory). ``model``: the memory model
    of those devices (pass_manager.py's), else one is built."""
    devices = dict(hal_devices(module))
    for name, device in (given or {}).items():
        devices.setdefault(name, device)
    if len(devices) < 2:
        return []
    found = check_module_rules(module)
    if found:
        return found
    model = model if model is not None else _memory_model(devices, links)
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
        violations = verify(module, options.links, options.devices, model)
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
