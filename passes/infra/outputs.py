"""What passes leave for reports, typed: the Report that pipeline/report.py
renders (``--report``, ``--graph``).
"""

from __future__ import annotations

import dataclasses

from ..analysis.crossings import Crossing
from ..analysis.residence_graph import ResidenceGraph


@dataclasses.dataclass
class PlacedOp:
    """An op that had no affinity and was placed by place-unplaced-ops:
    where and why (residence.py's rule)."""

    location: str | None
    op: str
    device: str
    why: str


@dataclasses.dataclass
class Report:
    """What mdc's passes return: the residence graph (None until
    place-unplaced-ops ran), the ops it placed by the residence rule
    (``placed_ops``), every crossing staged, in the order they were
    rewritten, the host twins and result-storage twins added, warnings, and
    --place's decision (``placement``). A pass returns one holding its own
    part (the pass manager adds it to the compile's). Only passes write
    it: what the pipeline's stages read from the module beside them is
    their own record (pipeline/module_record.py)."""

    graph: ResidenceGraph | None = None
    placed_ops: list[PlacedOp] = dataclasses.field(default_factory=list)
    crossings: list[Crossing] = dataclasses.field(default_factory=list)
    # (function, twin) for each host twin host-entry-points added.
    host_twins: list[tuple[str, str]] = dataclasses.field(default_factory=list)
    # (function, twin, result indices) for each result-storage twin added.
    storage_twins: list[tuple[str, str, tuple[int, ...]]] = dataclasses.field(default_factory=list)
    # (``file:line:col`` or None, message): what the program does that
    # stock IREE is known to get wrong (the tools print them as warnings).
    warnings: list[tuple[str | None, str]] = dataclasses.field(default_factory=list)
    # What assign-devices decided (--place other than manual): the
    # placement report, JSON-ready (assign_devices.py), else None.
    placement: dict | None = None
    # --max-dim's bounds of public functions' argument dimensions, which
    # assign-devices placed with: {function: [(argument, dimension, bound)]}.
    argument_bounds: dict = dataclasses.field(default_factory=dict)

    def extend(self, other: "Report") -> None:
        """Adds what one pass reported (``other``) to this report."""
        if other.graph is not None:
            self.graph = other.graph
        self.placed_ops.extend(other.placed_ops)
        self.crossings.extend(other.crossings)
        self.host_twins.extend(other.host_twins)
        self.storage_twins.extend(other.storage_twins)
        self.warnings.extend(other.warnings)
        if other.placement is not None:
            self.placement = other.placement
        self.argument_bounds.update(other.argument_bounds)
