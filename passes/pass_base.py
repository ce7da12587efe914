"""What every mdc pass is: a class with a ``name``, the IR ``level`` it works
on (``input``: IR after IREE's input phase, before its ABI; ``stream``:
stream-tensor IR right after IREE's tensor pipeline; ``hal``: IR at IREE's
``hal`` phase), a one-line ``summary``, and ``apply(module, options)`` that
rewrites the module in place or raises :class:`mdc.passes.diagnostics.MdcError`;
and the options the command line gives them. Pass modules import this, never
the registry, so the registry can import every pass without a cycle.
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

from .outputs import Report


@dataclasses.dataclass
class PassOptions:
    """What the command line tells passes.

    ``links`` maps an unordered device pair (a frozenset of two symbol names)
    to ``("staged", owner, flag)`` or ``("shared", None, flag)``: the ``--link``
    overrides, with each flag as the user wrote it.
    ``report`` is what passes leave for reports (outputs.Report: the
    placement graph, the placement decisions and their reasons, each
    crossing staged).
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
    (memory_model.Device by symbol, in order; the first is the default),
    for input-level passes: before IREE's phases a program names its
    devices only in affinities. Empty: read the module's device globals.
    """

    links: dict = dataclasses.field(default_factory=dict)
    report: Report = dataclasses.field(default_factory=Report)
    staging: str = "emplace"
    staging_pieces: int | None = None
    pinned_arguments: bool = False
    devices: dict = dataclasses.field(default_factory=dict)
    # host-entry-points: where twins go (None: add none), and the
    # (function, twin) pairs it added, for the manifest.
    host_entry_points: object = None
    host_entry_point_names: list = dataclasses.field(default_factory=list)


class ModulePass:
    name: ClassVar[str]
    level: ClassVar[str]
    summary: ClassVar[str]

    def apply(self, module, options: PassOptions) -> None:  # pragma: no cover
        raise NotImplementedError
