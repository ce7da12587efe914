"""The values of ``--place``, ``--place-objective`` and ``--gpu-memory``:
mdc-compile's options (pipeline/options.py) check them, and automatic
device assignment (passes/transforms/assign_devices.py, passes/assignment/)
acts on them.

* ``--place``: ``MANUAL`` (the program as written), ``AUTO`` (the search),
  or the path of an assignment file;
* ``--place-objective``: one of ``OBJECTIVES``, the first the default
  (passes/assignment/estimate.py says what each estimates);
* ``--gpu-memory``: bytes, or ``AutoMemory`` for ``auto`` / ``auto-SIZE``:
  the machine profile's free memory of the accelerator less a margin.
"""

from __future__ import annotations

import dataclasses
from typing import Optional

MANUAL, AUTO = "manual", "auto"
OBJECTIVES = ("latency", "throughput")

# --gpu-memory=auto's default margin: 1 GiB (llama.cpp's --fit keeps as much
# free by default), or a tenth of the free memory where that is less, so
# that a small device (or a CPU-backed one with little RAM free) still
# has room; the runtime's own memory (the profile's reserved_bytes) is
# counted apart, inside the budget.
AUTO_MARGIN_BYTES = 1 << 30
AUTO_MARGIN_SHARE = 10


@dataclasses.dataclass(frozen=True)
class AutoMemory:
    """``--gpu-memory=auto`` (``margin_bytes`` None: the default margin) or
    ``auto-SIZE`` (a margin of SIZE bytes); ``text``: as it was given."""

    margin_bytes: Optional[int] = None
    text: str = "auto"

    def margin(self, free_bytes: int) -> int:
        """The margin kept free of ``free_bytes``: the one given, else the
        default (AUTO_MARGIN_BYTES, or a tenth of the free memory where
        that is less)."""
        if self.margin_bytes is not None:
            return self.margin_bytes
        return min(AUTO_MARGIN_BYTES, free_bytes // AUTO_MARGIN_SHARE)

    def budget(self, free_bytes: int) -> int:
        """The budget: ``free_bytes`` less the margin, at least 0."""
        return max(free_bytes - self.margin(free_bytes), 0)
