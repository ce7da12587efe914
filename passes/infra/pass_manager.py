"""Runs passes on one module, handing each the analyses it declares: the
one way a pass gets an analysis.

A pass names the analyses its ``apply`` takes after its options
(``requires``, pass_base.ModulePass) and those its rewrite leaves true
(``preserves``). The manager computes each when a pass first asks for it
and keeps it until a pass that does not preserve it has run. A pass that
rewrites the module between uses of an analysis requires a
``Handle`` on it (pass_base.Handle) and gets an AnalysisHandle: it tells
the manager when it rewrote, and its next ``get()`` is computed anew,
here. ``computed`` counts the analyses this manager computed.

* ``MemoryModel`` (memory_model.py): the policy of the devices the pass's
  level sees (``devices_seen``) under the --link overrides. It depends on
  those two alone, so it is never stale. The compile's ``MemoryModels``
  (CompileSettings.models, pass_base.py) builds each model once: the
  model of the command line's devices (CompileSettings.memory_model),
  given to every level that sees those devices in that order, and one
  model per other device list a level sees, given to every level that
  sees that list. A level sees another list in two cases, and must: the
  model's answers depend on the list.
  From the flow phase on, the devices are the module's globals, which IREE
  declares in its own order (by name for --device targets,
  module_facts.iree_default_device): that order orders the staged pairs the
  manifest records and picks the local device that GPUs of two drivers
  stage through. And IREE drops the global of a device nothing uses (a
  local device the program never names; at the HAL level any): a level
  whose module no longer declares a device must not stage pairs with it,
  since "is anything staged?" decides whether its passes rewrite at all.
* ``Residence`` (residence.py): where each value of the module as it is now
  lives, with the module's global homes analyzed. Any rewrite may move a
  value, so a pass that does not preserve it makes the next one that asks
  analyze the module anew.
"""

from __future__ import annotations

import collections
from typing import Iterable

from mdc.contract.manifest_record import Device

from ..analysis.memory_model import MemoryModel
from ..ir.module_facts import declared_devices, hal_devices
from .outputs import Report
from .pass_base import ANALYSES, CompileSettings, Handle, MemoryModels, ModulePass  # noqa: F401 (MemoryModels: the API)
from ..analysis.residence import Residence


def devices_seen(module, level: str, settings: CompileSettings) -> dict[str, Device]:
    """The devices a pass at ``level`` works with. Before IREE's phases
    (``input``) a program names its devices only in affinities: the command
    line's (or, with none, the module's globals, as mdc-opt gives them).
    On stream IR, the module's device globals (IREE may have dropped one
    nothing uses). At the HAL level, the devices its initializers make, and
    the command line's that IREE dropped (a declaration may still name one)."""
    if level == "input":
        return dict(settings.devices) or declared_devices(module)
    if level == "hal":
        devices = dict(hal_devices(module))
        for name, device in settings.devices.items():
            devices.setdefault(name, device)
        return devices
    return declared_devices(module)


class AnalysisManager:
    """The analyses of one module under one compile's settings (its
    memory models are the compile's, ``settings.models``)."""

    def __init__(self, module, settings: CompileSettings):
        self.module = module
        self.settings = settings
        self._cached: dict[type, object] = {}
        self.computed: collections.Counter = collections.Counter()

    def memory_model(self, level: str) -> MemoryModel:
        """The memory model of the devices ``level`` sees."""
        return self.settings.models.of(devices_seen(self.module, level, self.settings))

    def residence(self) -> Residence:
        """residence.py's analysis of the module as it is now, with its
        global homes."""
        if Residence not in self._cached:
            residence = Residence(self.module)
            residence.analyze()
            self.computed[Residence] += 1
            self._cached[Residence] = residence
        return self._cached[Residence]

    def get(self, analysis: type, level: str):
        """The analysis ``analysis`` (a type of ANALYSES) for a pass at ``level``."""
        if analysis is MemoryModel:
            return self.memory_model(level)
        if analysis is Residence:
            return self.residence()
        raise TypeError(f"no analysis {analysis.__name__}: a pass requires one of {ANALYSES}")

    def handle(self, analysis: type, level: str) -> "AnalysisHandle":
        """A handle on ``analysis`` for a pass at ``level`` that rewrites
        between uses of it (pass_base.Handle)."""
        if analysis not in ANALYSES:
            raise TypeError(f"no analysis {analysis.__name__}: a pass requires one of {ANALYSES}")
        return AnalysisHandle(self, analysis, level)

    def invalidate(self, analysis: type) -> None:
        """Forgets ``analysis``: the module was rewritten since it was
        computed (the memory model is never stale)."""
        self._cached.pop(analysis, None)

    def ran(self, pass_cls: type[ModulePass]) -> None:
        """Forgets what ``pass_cls``'s rewrite may have made untrue."""
        self._cached = {k: v for k, v in self._cached.items() if k in pass_cls.preserves}

    def _argument(self, required, level: str):
        if isinstance(required, Handle):
            return self.handle(required.analysis, level)
        return self.get(required, level)

    def run(self, pass_cls: type[ModulePass], report: Report) -> None:
        """Runs ``pass_cls`` with its options and the analyses it requires,
        adding what it returns to ``report``."""
        options = pass_cls.Options.of(self.settings)
        analyses = [self._argument(a, pass_cls.level) for a in pass_cls.requires]
        produced = pass_cls().apply(self.module, options, *analyses)
        self.ran(pass_cls)
        if produced is not None:
            report.extend(produced)


class AnalysisHandle:
    """What a pass that requires ``Handle(analysis)`` gets: the manager's
    ``analysis`` of the module as it is now (``get()``), computed anew
    after the pass says it rewrote the module (``rewrote()``)."""

    def __init__(self, manager: AnalysisManager, analysis: type, level: str):
        self._manager, self._analysis, self._level = manager, analysis, level

    def get(self):
        return self._manager.get(self._analysis, self._level)

    def rewrote(self) -> None:
        self._manager.invalidate(self._analysis)


def run_passes(passes: Iterable[type[ModulePass]], module, settings: CompileSettings, report: Report,
               analyses: AnalysisManager | None = None) -> AnalysisManager:
    """Runs ``passes`` in order on ``module``, sharing one AnalysisManager
    (``analyses``, or a new one); returns it."""
    manager = analyses or AnalysisManager(module, settings)
    for pass_cls in passes:
        manager.run(pass_cls, report)
    return manager
