"""The pass registry: every mdc pass, by name, and the pipeline's passes at
each level in the order they run (pipeline_order.PIPELINE, derived from
what each pass declares). Pass modules import pass_base, not this module,
so importing every pass here makes no import cycle. ``run_passes`` runs
passes with the analyses they require (pass_manager.py).
"""

from __future__ import annotations

# The API the pipeline uses, from here: the settings, the pass type, the
# ways to run passes, and what passes report.
from .outputs import Report  # noqa: F401
from .pass_base import CompileSettings, ModulePass  # noqa: F401
from .pass_manager import AnalysisManager, MemoryModels, run_passes  # noqa: F401


def pipeline() -> list[type[ModulePass]]:
    """The passes the pipeline runs, in order."""
    from .pipeline_order import PIPELINE
    return list(PIPELINE)


def all_passes() -> list[type[ModulePass]]:
    """Every registered pass: the pipeline's, then those only mdc-opt runs
    by name (the steps of a combined pass)."""
    from .pipeline_order import PIPELINE, STEPS
    return [*PIPELINE, *STEPS]


def passes_at(level: str) -> list[type[ModulePass]]:
    return [p for p in pipeline() if p.level == level]


def lookup(name: str) -> type[ModulePass] | None:
    return next((p for p in all_passes() if p.name == name), None)
