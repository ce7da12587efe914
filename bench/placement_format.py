"""What the placement kit's builder and its run share: the format's name,
the placements of each budget, and how a placement is shown. Needs
nothing but the standard library, so that the run needs no compiler."""

from __future__ import annotations

FORMAT = "mdc.bench.placement/1"
VARIANTS = ("auto", "hand_head", "hand_blocks", "greedy")


def placed_text(described: dict) -> str:
    """``24H~16``: 24 blocks' matmuls on the GPU, E the embedding and H the
    head there too, ~16 of the blocks split between the devices
    (placement_plan.describe's fields)."""
    text = f"{described['blocks']}{'E' if described['embedding'] else ''}{'H' if described['head'] else ''}"
    return text + (f"~{described['split']}" if described.get("split") else "")
