"""What every mdc pass is: a class with a ``name``, the IR ``level`` it works
on (``input``: IR after IREE's input phase, before its ABI; ``stream``:
stream-tensor IR right after IREE's tensor pipeline; ``scheduled``: stream
IR after IREE's whole stream pipeline, before the HAL conversion; ``hal``:
IR at IREE's ``hal`` phase), a one-line ``summary``, and ``apply(module, options)`` that
rewrites the module in place or raises :class:`mdc.passes.diagnostics.MdcError`;
its own typed ``Options``, made from the command line's CompileSettings; and
``run_pass``, the one way to run a pass. Pass modules import this, never
the registry, so the registry can import every pass without a cycle.
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar, Mapping

from .outputs import Report
from .module_facts import iree_default_device


@dataclasses.dataclass(frozen=True)
class CompileSettings:
    """What the command line tells mdc's passes, as one record. No pass reads
    it: each takes the part it needs as its own typed ``Options``
    (``Options.of(settings)``), which is all its ``apply`` sees.

    ``links`` maps an unordered device pair (a frozenset of two symbol names)
    to ``("staged", owner, flag)`` or ``("shared", None, flag)``: the ``--link``
    overrides, with each flag as the user wrote it.
    ``staging`` is how a CPU device moves a value into and out of the
    staging memory of the device that owns it: ``emplace`` (its own
    dispatches; the default) or ``copy`` (a copy on the CPU's queue); see
    lowering/emplace.py and lowering/copy.py.
    ``staging_pieces`` is how many pieces a CPU writes a value into pinned
    memory in, with ``emplace``, so the DMA of one piece overlaps the copy of
    the next (None: by size, lowering/emplace.py).
    ``pinned_arguments``: the caller gives each public-function argument a
    CPU passes on to a GPU in that GPU's pinned memory, so it crosses with
    no host copy (lowering/pinned_arguments.py).
    ``devices``: the devices the command line declares
    (module_facts.Device by symbol, in order), for input-level passes:
    before IREE's phases a program names its devices only in affinities.
    Empty: read the module's device globals.
    ``default_device``: ``--iree-hal-default-device`` where given; the
    ``default`` property is the device IREE gives values without an
    affinity (module_facts.iree_default_device).
    ``host_entry_points``: whether host-entry-points adds twins.
    ``result_storage_twins``: whether result-storage-twins adds twins.
    """

    links: Mapping = dataclasses.field(default_factory=dict)
    staging: str = "emplace"
    staging_pieces: int | None = None
    pinned_arguments: bool = False
    devices: Mapping = dataclasses.field(default_factory=dict)
    default_device: str | None = None
    host_entry_points: bool = True
    result_storage_twins: bool = True

    @property
    def default(self) -> str | None:
        return iree_default_device(self.devices, self.default_device)


@dataclasses.dataclass(frozen=True)
class NoOptions:
    """The options of a pass that takes none."""

    @classmethod
    def of(cls, settings: CompileSettings) -> "NoOptions":
        return cls()


@dataclasses.dataclass(frozen=True)
class MemoryModelOptions:
    """The options of a pass that needs only the memory model: the
    ``--link`` overrides (CompileSettings.links)."""

    links: Mapping = dataclasses.field(default_factory=dict)

    @classmethod
    def of(cls, settings: CompileSettings) -> "MemoryModelOptions":
        return cls(settings.links)


@dataclasses.dataclass(frozen=True)
class DeviceOptions:
    """The ``--link`` overrides, the devices the command line declares and
    IREE's default device among them (CompileSettings.links, .devices,
    .default)."""

    links: Mapping = dataclasses.field(default_factory=dict)
    devices: Mapping = dataclasses.field(default_factory=dict)
    default: str | None = None

    @classmethod
    def of(cls, settings: CompileSettings) -> "DeviceOptions":
        return cls(settings.links, settings.devices, settings.default)


class ModulePass:
    """``Options``: the pass's own options type, a frozen dataclass with
    ``of(settings)``. ``apply`` returns what it leaves for reports and the
    manifest (an outputs.Report holding only its own part), or None."""

    name: ClassVar[str]
    level: ClassVar[str]
    summary: ClassVar[str]
    Options: ClassVar[type] = NoOptions

    def apply(self, module, options) -> Report | None:  # pragma: no cover
        raise NotImplementedError


def run_pass(pass_cls: type[ModulePass], module, settings: CompileSettings, report: Report) -> None:
    """Runs ``pass_cls`` on ``module`` with its options of ``settings``,
    adding what it returns to ``report``."""
    produced = pass_cls().apply(module, pass_cls.Options.of(settings))
    if produced is not None:
        report.extend(produced)
