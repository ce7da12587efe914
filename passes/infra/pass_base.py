"""What every mdc pass is: a class with a ``name``, the IR ``level`` it works
on (``input``: IR after IREE's input phase, before its ABI; ``stream``:
stream-tensor IR right after IREE's tensor pipeline; ``scheduled``: stream
IR after IREE's whole stream pipeline, before the HAL conversion; ``hal``:
IR at IREE's ``hal`` phase), a one-line ``summary``, and ``apply(module,
options, *analyses)`` that rewrites the module in place or raises
:class:`mdc.passes.infra.diagnostics.MdcError`; its own typed ``Options``, made
from the command line's CompileSettings; the analyses ``apply`` takes after
its options (``requires``) and those its rewrite leaves valid
(``preserves``), which pass_manager.py computes and caches; and the facts of
the IR it needs, provides and removes (``needs``, ``provides``,
``removes``: a :class:`Fact` each), from which pipeline_order.py derives the
order passes run in. Pass modules import this, never the registry, so the
registry can import every pass without a cycle.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
from typing import ClassVar, Mapping

from mdc.contract.manifest_record import Device
from mdc.contract.place_options import AutoMemory

from ..analysis.memory_model import MemoryModel
from .outputs import Report
from ..analysis.residence import Residence
from ..ir.module_facts import iree_default_device


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
    (contract's manifest_record.Device by symbol, in order), for input-level passes:
    before IREE's phases a program names its devices only in affinities.
    Empty: read the module's device globals.
    ``default_device``: ``--iree-hal-default-device`` where given; the
    ``default`` property is the device IREE gives values without an
    affinity (module_facts.iree_default_device).
    ``host_entry_points``: whether host-entry-points adds twins.
    ``generate_entry_point``: whether generate-entry-point adds @generate.
    ``result_storage_twins``: whether result-storage-twins adds twins.
    ``cuda_matmul_configs``: whether cuda-matmul-configs sets its configs;
    ``cuda_matmul_table``: the path of the table it reads them from
    (``--cuda-matmul-table``; None: the shipped one).
    ``place``, ``gpu_memory``, ``place_profile``, ``place_objective``,
    ``max_dims``: automatic placement's flags (assign_devices.py):
    ``manual`` (nothing changes), ``auto`` or an assignment file; the
    accelerator's budget in bytes (None: no budget; an AutoMemory: the
    machine profile's free memory less a margin); the machine profile's
    path (None: the built-in one); ``latency`` or ``throughput``; the
    bounds of dynamic dimensions by name. ``place_costs``: the costs
    file's path (``--place-costs``; None: every estimate modelled).
    ``place_decided``: with ``--place=auto``, the placement an earlier try
    of this same compile chose (that try's report ``placement``): the
    driver's retries (without data tiling, without result-storage twins)
    give it, so the search runs once per compile (assign_devices.py).
    """

    links: Mapping = dataclasses.field(default_factory=dict)
    staging: str = "emplace"
    staging_pieces: int | None = None
    pinned_arguments: bool = False
    devices: Mapping = dataclasses.field(default_factory=dict)
    default_device: str | None = None
    host_entry_points: bool = True
    generate_entry_point: bool = True
    result_storage_twins: bool = True
    cuda_matmul_configs: bool = True
    cuda_matmul_table: str | None = None
    place: str = "manual"
    gpu_memory: int | AutoMemory | None = None
    place_profile: str | None = None
    place_objective: str = "latency"
    place_costs: str | None = None
    max_dims: Mapping = dataclasses.field(default_factory=dict)
    place_decided: Mapping | None = None

    @property
    def default(self) -> str | None:
        return iree_default_device(self.devices, self.default_device)

    @functools.cached_property
    def models(self) -> "MemoryModels":
        """The compile's memory models: the one place a model is built
        (the pass manager of every level, and options that need a model,
        ask it)."""
        return MemoryModels(self)

    @property
    def memory_model(self) -> MemoryModel:
        """The memory model of the command line's devices and links, built
        once per compile (pass_manager.py gives it to every pass whose
        level sees these devices; options that need it read it here)."""
        return self.models.of(self.devices)


class MemoryModels:
    """The memory models of one compile (CompileSettings.models): each built
    once, the first time a level sees its device list (pass_manager.py
    says when a level sees another list than the command line's), and
    shared by every level that sees the same list. No other code builds a
    MemoryModel."""

    def __init__(self, settings: CompileSettings):
        self.settings = settings
        self._built: dict[tuple, MemoryModel] = {}

    def of(self, devices: Mapping[str, Device]) -> MemoryModel:
        """The model of ``devices`` (by symbol, in order) under the
        compile's --link overrides. The command line's devices answer as
        ``settings.devices`` (a level may see them with another ordinal
        or location, which decides no policy)."""
        links = self.settings.links
        key = MemoryModel.key(devices, links)
        if key not in self._built:
            if key == MemoryModel.key(self.settings.devices, links):
                devices = self.settings.devices
            self._built[key] = MemoryModel(dict(devices), dict(links))
        return self._built[key]

    @property
    def built(self) -> list[MemoryModel]:
        """Every model built so far, in the order they were built."""
        return list(self._built.values())


@dataclasses.dataclass(frozen=True)
class NoOptions:
    """The options of a pass that takes none."""

    @classmethod
    def of(cls, settings: CompileSettings) -> "NoOptions":
        return cls()


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


class Fact(enum.Enum):
    """A property of the IR that a pass needs before it runs, provides, or
    removes (pass_base.ModulePass; pipeline_order.py orders passes by
    them). Each value says what holds."""

    DEVICES_ASSIGNED = "each unit of work and weight has the device --place gives it (none changes with manual)"
    DEFAULT_DEVICE = "a program that declares its own devices names IREE's default device among them"
    GENERATE_ENTRY = "a module whose @prefill and @decode follow mdc.generate's convention has its @generate"
    HOST_TWINS = "each public tensor function with a value the host cannot use has its @F$host twin"
    STORAGE_TWINS = "each public function with CPU results that a GPU makes has its @F$into twin"
    ACYCLIC_CALLS = "no function reaches a call of itself"
    PLACED_OPS = "every resource op has an affinity (residence.py's rule)"
    STUB_TWINS = "each public buffer-view function with a value on a far device has its @F$host twin"
    STAGED_CROSSINGS = "every crossing between a staged pair of devices goes through the host"
    MDC_MARKS = "what the staging added carries mdc's marks (mdc.staged)"
    EXECUTABLES_PER_TARGET = "each executable is dispatched on devices of one executable target"
    LOOP_INITS_ISOLATED = "no loop that carries a staged value starts from a packed allocation"
    HOST_FENCES = "the caller's fences are awaited and signalled on the host"
    PARTITION_FENCES = "no execution region can span a loop or a conditional"
    DEALLOCAS_PLACED = "a dealloca another device waits on runs on its resource's device"
    ENCODED_SIZES_PLACED = "every sizeof of an encoded tensor type has the device of the ops that read it"
    PLAIN_CROSSINGS = "no value crosses between devices of different targets in a data-tiled layout that mdc can unpack"
    PLAIN_ENCODES_FORWARDED = "no encode op copies a value on a device that lays every encoding out plain, where only that device reads it"


# The analyses a pass may require (pass_manager.py computes them).
ANALYSES = (MemoryModel, Residence)


@dataclasses.dataclass(frozen=True)
class Handle:
    """A ``requires`` entry for a pass that rewrites the module between
    uses of an analysis: ``Handle(Residence)`` gives ``apply`` the
    manager's handle on it (pass_manager.AnalysisHandle) rather than the
    analysis. ``get()`` is the manager's analysis of the module as it is
    now; after a rewrite the pass calls ``rewrote()``, and the next
    ``get()`` analyzes the module anew. A pass never builds an analysis
    itself."""

    analysis: type


class ModulePass:
    """``Options``: the pass's own options type, a frozen dataclass with
    ``of(settings)``. ``apply`` takes the module, its options and one
    argument per entry of ``requires``: an analysis of ANALYSES (the
    memory model, the residence), or a Handle on one for a pass that
    rewrites between uses of it; it returns what it leaves for reports
    and the manifest (an outputs.Report holding only its own part), or
    None. ``preserves``: the analyses still true of the module it leaves
    (the memory model depends on the devices alone and is never stale).

    ``needs``: the facts that must hold when it runs (it runs after the
    passes of its level that provide them); ``provides``: those that hold
    after it; ``removes``: those it takes away (it runs after every pass
    of its level that needs them, and after every pass it can follow)."""

    name: ClassVar[str]
    level: ClassVar[str]
    summary: ClassVar[str]
    Options: ClassVar[type] = NoOptions
    requires: ClassVar[tuple[type | Handle, ...]] = ()
    preserves: ClassVar[tuple[type, ...]] = ()
    needs: ClassVar[tuple[Fact, ...]] = ()
    provides: ClassVar[tuple[Fact, ...]] = ()
    removes: ClassVar[tuple[Fact, ...]] = ()

    def apply(self, module, options, *analyses) -> Report | None:  # pragma: no cover
        raise NotImplementedError
