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
    """The placement graph (None until placement ran), the ops placed,
    every crossing staged, in the order they were rewritten, the host
    twins and result-storage twins added, and the program's own tensor types of its moves before
    IREE's phases (sizes.source_types: location -> sizes, which the
    pipeline records and reports show). A pass returns one holding its own
    part (the pass manager adds it to the compile's)."""

    graph: ResidenceGraph | None = None
    placements: list[PlacedOp] = dataclasses.field(default_factory=list)
    crossings: list[Crossing] = dataclasses.field(default_factory=list)
    # (function, twin) for each host twin host-entry-points added.
    host_twins: list[tuple[str, str]] = dataclasses.field(default_factory=list)
    # (function, twin, result indices) for each result-storage twin added.
    storage_twins: list[tuple[str, str, tuple[int, ...]]] = dataclasses.field(default_factory=list)
    source_types: dict = dataclasses.field(default_factory=dict)
    # The program's own mutable globals (module_facts.mutable_globals),
    # recorded before mdc's input-level passes.
    program_state: list[str] = dataclasses.field(default_factory=list)
    # Which of them each public function refers to (module_facts.state_by_function).
    state_by_function: dict = dataclasses.field(default_factory=dict)
    # (``file:line:col`` or None, message): what the program does that
    # stock IREE is known to get wrong (the tools print them as warnings).
    warnings: list[tuple[str | None, str]] = dataclasses.field(default_factory=list)
    # The argument dimensions each public function requires equal
    # (tied_dims.tied_dims), read after IREE's input conversion.
    tied_dims: dict = dataclasses.field(default_factory=dict)
    # IREE's default device (module_facts.module_default_device), recorded
    # before mdc's stream-level passes.
    default_device: str | None = None
    # What assign-devices decided (--place other than manual): the
    # placement report, JSON-ready (assign_devices.py), else None.
    placement: dict | None = None

    def extend(self, other: "Report") -> None:
        """Adds what one pass reported (``other``) to this report."""
        if other.graph is not None:
            self.graph = other.graph
        self.placements.extend(other.placements)
        self.crossings.extend(other.crossings)
        self.host_twins.extend(other.host_twins)
        self.storage_twins.extend(other.storage_twins)
        self.source_types.update(other.source_types)
        self.warnings.extend(other.warnings)
        if other.placement is not None:
            self.placement = other.placement
