"""What the pipeline's stages record about the program as they compile it,
typed: facts read from the module beside mdc's passes, not what a pass
returns (that is the passes' outputs.Report). The manifest and the report
writer read both.
"""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass
class ModuleRecord:
    """What the stages read from the module (pipeline/stages.py): before
    mdc's input-level passes, the program's own mutable globals
    (module_facts.mutable_globals), which of them each public function
    refers to (module_facts.state_by_function) and, with a manifest, the
    argument dimensions each public function requires equal
    (tied_dims.tied_dims); after them, the program's own tensor types of
    its moves before IREE's phases (sizes.source_types: location -> sizes,
    which reports show); before mdc's stream-level passes, IREE's default
    device (module_facts.module_default_device)."""

    program_state: list[str] = dataclasses.field(default_factory=list)
    state_by_function: dict = dataclasses.field(default_factory=dict)
    tied_dims: dict = dataclasses.field(default_factory=dict)
    source_types: dict = dataclasses.field(default_factory=dict)
    default_device: str | None = None
