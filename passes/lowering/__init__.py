"""The lowerings of a staged crossing, one module each, behind one interface
(base.Lowering): pinned_arguments.py, small_in_place.py, emplace.py,
copy.py. ``Lowerings`` tries them in that order; the first that applies
lowers the crossing, and copy applies to every one.
"""

from __future__ import annotations

import dataclasses
from typing import Mapping

from ..analysis.memory_model import MemoryModel
from ..transforms.result_storage_twins import storage_twins_of
from .base import Lowering, Site
from .copy import HostHopCopy
from .emitter import Emitter
from .emplace import Emplace
from .pinned_arguments import PinnedArguments
from .small_in_place import SmallInPlace

__all__ = ["Lowering", "Lowerings", "Site", "Staged", "StagingOptions"]


@dataclasses.dataclass(frozen=True)
class StagingOptions:
    """How crossings are staged and lowered: ``links`` (the --link
    overrides the memory model takes), ``emplace`` (--staging=emplace, else
    copy), ``pieces`` (--staging-pieces; None: one piece per
    staging_template.PIECE_BYTES), ``pinned_arguments``."""

    links: Mapping = dataclasses.field(default_factory=dict)
    emplace: bool = True
    pieces: int | None = None
    pinned_arguments: bool = False

    @classmethod
    def of(cls, settings) -> "StagingOptions":
        """From the command line's pass_base.CompileSettings."""
        return cls(settings.links, settings.staging == "emplace", settings.staging_pieces, settings.pinned_arguments)


@dataclasses.dataclass
class Staged:
    """What a lowering made: the value standing for the crossing on its
    destination, and the caller's buffer it copied from or into (base.Lowering)."""

    value: object
    caller_buffer: str | None


class Lowerings:
    """The lowerings of one module, sharing one Emitter."""

    def __init__(self, module, model: MemoryModel, options: StagingOptions):
        emit = Emitter(module, model)
        self.pinned = PinnedArguments(emit, options.pinned_arguments, storage_twins_of(module))
        emplace = Emplace(emit, options.emplace, options.pieces)
        self.small = SmallInPlace(emit, emplace)
        self.order: list[Lowering] = [self.pinned, self.small, emplace, HostHopCopy(emit)]

    def stage(self, site: Site) -> Staged:
        """Lowers ``site`` at the current insertion point."""
        chosen = next(lowering for lowering in self.order if lowering.applies(site))
        return Staged(chosen.lower(site), chosen.caller_buffer)

    def stage_into_output(self, site: Site, update) -> Staged | None:
        """Lowers ``site`` straight into the output storage ``update``
        writes it into (abi.update_into_argument); None, emitting nothing,
        where no lowering can."""
        for lowering in self.order:
            if lowering.applies_into_output(site, update):
                return Staged(lowering.lower_into_output(site, update), lowering.caller_buffer_into_output)
        return None

    def finish(self) -> None:
        for lowering in self.order:
            lowering.finish()

    @property
    def pinned_arguments(self) -> dict[str, dict[int, str]]:
        """{function: {argument index: device}} of the arguments given pinned."""
        return self.pinned.pinned
