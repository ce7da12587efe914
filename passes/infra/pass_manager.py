"""Runs passes on one module, handing each the analyses it declares.

A pass names the analyses its ``apply`` takes after its options
(``requires``, pass_base.ModulePass) and those its rewrite leaves true
(``preserves``). The manager computes each when a pass first asks for it
and keeps it until a pass that does not preserve it has run:

* ``MemoryModel`` (memory_model.py): the policy of the devices the pass's
  level sees (``devices_seen``) under the --link overrides. It depends on
  those two alone, so it is never stale. A compile builds the model of the
  command line's devices once (CompileSettings.memory_model) and gives it to
  every level that sees those devices in that order; ``MemoryModels``, one
  per compile, builds one model per other device list a level sees and gives
  every level that sees that list the same object. A level sees another
  list in two cases, and must: the model's answers depend on the list.
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

from typing import Iterable

from mdc.contract.manifest_record import Device

from ..analysis.memory_model import MemoryModel
from ..ir.module_facts import declared_devices, hal_devices
from .outputs import Report
from .pass_base import ANALYSES, CompileSettings, ModulePass
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


def analyzed_residence(module) -> Residence:
    """residence.py's analysis of ``module``, with its global homes."""
    placement = Residence(module)
    placement.analyze()
    return placement


class MemoryModels:
    """The memory models of one compile: each built once, the first time a
    level sees its device list (the module docstring says when a level
    sees another list than the command line's), and shared by every level
    that sees the same list."""

    def __init__(self, settings: CompileSettings):
        self.settings = settings
        self._built: dict[tuple, MemoryModel] = {}

    def of(self, devices: dict[str, Device]) -> MemoryModel:
        """The model of ``devices`` (by symbol, in order) under the
        compile's --link overrides."""
        links = self.settings.links
        key = MemoryModel.key(devices, links)
        if key == MemoryModel.key(self.settings.devices, links):
            return self.settings.memory_model
        if key not in self._built:
            self._built[key] = MemoryModel(devices, dict(links))
        return self._built[key]


class AnalysisManager:
    """The analyses of one module under one compile's settings; ``models``:
    the compile's memory models, shared with the managers of its other
    levels (None: this manager's own)."""

    def __init__(self, module, settings: CompileSettings, models: MemoryModels | None = None):
        self.module = module
        self.settings = settings
        self._models = models or MemoryModels(settings)
        self._cached: dict[type, object] = {}

    def memory_model(self, level: str) -> MemoryModel:
        """The memory model of the devices ``level`` sees."""
        return self._models.of(devices_seen(self.module, level, self.settings))

    def residence(self) -> Residence:
        if Residence not in self._cached:
            self._cached[Residence] = analyzed_residence(self.module)
        return self._cached[Residence]

    def get(self, analysis: type, level: str):
        """The analysis ``analysis`` (a type of ANALYSES) for a pass at ``level``."""
        if analysis is MemoryModel:
            return self.memory_model(level)
        if analysis is Residence:
            return self.residence()
        raise TypeError(f"no analysis {analysis.__name__}: a pass requires one of {ANALYSES}")

    def ran(self, pass_cls: type[ModulePass]) -> None:
        """Forgets what ``pass_cls``'s rewrite may have made untrue."""
        self._cached = {k: v for k, v in self._cached.items() if k in pass_cls.preserves}

    def run(self, pass_cls: type[ModulePass], report: Report) -> None:
        """Runs ``pass_cls`` with its options and the analyses it requires,
        adding what it returns to ``report``."""
        options = pass_cls.Options.of(self.settings)
        analyses = [self.get(a, pass_cls.level) for a in pass_cls.requires]
        produced = pass_cls().apply(self.module, options, *analyses)
        self.ran(pass_cls)
        if produced is not None:
            report.extend(produced)


def run_passes(passes: Iterable[type[ModulePass]], module, settings: CompileSettings, report: Report,
               analyses: AnalysisManager | None = None, models: MemoryModels | None = None) -> AnalysisManager:
    """Runs ``passes`` in order on ``module``, sharing one AnalysisManager
    (``analyses``, or a new one with the compile's memory models
    ``models``); returns it."""
    manager = analyses or AnalysisManager(module, settings, models)
    for pass_cls in passes:
        manager.run(pass_cls, report)
    return manager
