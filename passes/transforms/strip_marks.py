"""strip-mdc-marks: takes mdc's own marks off the IR before IREE goes on.

Lowerings mark what they add with the unit attribute ``mdc.staged``
(lowering/emitter.STAGED: every call of a staging helper, every byte-copy
dispatch), so that later mdc passes recognise staged values by a mark
rather than by a helper's name (loop-init-isolation). Nothing after mdc's
stream passes needs it, and IREE should see the IR it would see without
marks: this pass, the last at the stream level, removes every ``mdc.*``
attribute an op carries. A module without marks is left as it is.
"""

from __future__ import annotations

from iree.compiler import ir

from ..ir.ir_util import walk
from ..infra.pass_base import Fact, ModulePass, NoOptions

MARK_PREFIX = "mdc."


def marks_of(op: ir.Operation) -> list[str]:
    """The names of ``op``'s ``mdc.*`` attributes."""
    return [name for name in op.attributes if name.startswith(MARK_PREFIX)]


def strip_marks(module) -> int:
    """Removes every ``mdc.*`` attribute from the ops of ``module``;
    returns how many it removed."""
    removed = 0
    for op in walk(module):
        for name in marks_of(op):
            del op.attributes[name]
            removed += 1
    return removed


class StripMarks(ModulePass):
    name = "strip-mdc-marks"
    level = "stream"
    summary = "remove mdc's own op marks (mdc.staged) before IREE's stream pipelines"

    # The marks never reach IREE: last at the stream level.
    removes = (Fact.MDC_MARKS,)

    def apply(self, module, options: NoOptions) -> None:
        strip_marks(module)
