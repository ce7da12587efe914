"""What passes leave for reports, typed: the Report that pipeline/report.py
renders (``--report``, ``--graph``).
"""

from __future__ import annotations

import dataclasses

from .crossings import Crossing
from .placement_graph import PlacementGraph


@dataclasses.dataclass
class PlacedOp:
    """An op that had no affinity and was placed by place-unplaced-ops:
    where and why (placement.py's rule)."""

    location: str | None
    op: str
    device: str
    why: str


@dataclasses.dataclass
class Report:
    """The placement graph (None until placement ran), the ops placed,
    every crossing staged, in the order they were rewritten, and the
    program's own tensor types of its moves before IREE's phases
    (sizes.source_types: location -> sizes), which reports show."""

    graph: PlacementGraph | None = None
    placements: list[PlacedOp] = dataclasses.field(default_factory=list)
    crossings: list[Crossing] = dataclasses.field(default_factory=list)
    source_types: dict = dataclasses.field(default_factory=dict)
