"""Which of mdc-compile's lowerings each program gets: a rotation by index,
so that a seed and index repeat it."""

from __future__ import annotations

import os
from typing import Protocol


# Both lowerings of mdc-compile are exercised: odd-indexed programs use
# --staging=copy, the others the default --staging=emplace, every second one
# of those (index 2 mod 4) with --staging-pieces=3, so the piece-wise copy
# that a value going to a GPU gets by default runs on these CPU pairs too.
# MDC_PROGEN_STAGING=copy|emplace uses one for every program;
# MDC_PROGEN_PIECES=N gives every emplace program --staging-pieces=N.
ONLY_STAGING = os.environ.get("MDC_PROGEN_STAGING")
PIECES = os.environ.get("MDC_PROGEN_PIECES")
ROTATION_PIECES = 3


class Indexed(Protocol):
    """What the rotation reads of a program: its index in its seed's run."""

    index: int


def staging_of(prog: Indexed, target: str = "local") -> str:
    """mdc-compile's lowering flags for a program, as one string (a seed
    and index repeat it): "copy", "emplace", "emplace --staging-pieces=N",
    or either lowering with "--pinned-arguments" (index 3 mod 4 with copy,
    4 mod 8 with emplace: arguments given in, and output arguments written
    into, the staging owner's memory; runners place them there). The
    Vulkan target never pins: its runner, stock iree-run-module, cannot
    place an argument in a GPU's pinned memory."""
    if ONLY_STAGING in ("copy", "emplace"):
        staging = ONLY_STAGING
    else:
        staging = "copy" if prog.index % 2 else "emplace"
    if staging == "emplace":
        pieces = PIECES or (ROTATION_PIECES if prog.index % 4 == 2 and not ONLY_STAGING else None)
        if pieces:
            return f"emplace --staging-pieces={pieces}"
    if target == "local" and not ONLY_STAGING and prog.index % (4 if staging == "copy" else 8) in (3, 4):
        return f"{staging} --pinned-arguments"
    return staging
