"""The contiguous splits ``bench placement`` compares auto with.

A placement program of the kit (the workload's stack or the SwiGLU one) is
a chain of *parts*: the embedding (E), blocks 0..N-1, the head (H, the
final norm and the head matmul); each part's units run one after another
and a part reads only the part before it (placement_plan.layout_of). A
**contiguous split** puts one unbroken run of parts on the GPU, part
``start`` up to (not including) part ``stop`` (0 is E, 1..N the blocks,
N+1 the head), and everything else on the CPU, each weight with its
readers: a value crosses to the GPU where the run begins (none if it
begins at E) and back where it ends (the logits if it ends with H). The
empty run is all-CPU, the whole chain all-GPU, and llama.cpp's ``-ngl K``
the last K blocks with the head (``hand_head``) or without it
(``hand_blocks``). A chain of P = N + 2 parts has P(P+1)/2 runs and the
empty one: 351 for the workload's 24 blocks, 55 for SwiGLU's 8.

**Which are compiled.** The blocks of a stack are the same units on the
same shapes (only their weights' values differ), so two runs with the same
ends (whether they hold E, whether they hold H) and the same number of
blocks do the same work with the same crossings, one value of the same
size in and one out: the same estimate, and the same GPU bytes but for one
activation of staging (the budget's accounting gives a run that ends at
the last block one activation less; test_bench_placement_splits.py holds
all three on the kit's programs). Such runs are one *class*, and the kit
compiles one run of each class, the one of least bytes: E with blocks
0..n-1; blocks N-n..N-1 with H; blocks N-n..N-1 alone (the end nearest the
head, as ``hand_blocks``); all-CPU; all-GPU. For each budget the kit counts every run that fits and every
class that fits, and compiles each class's run where it fits some budget:
3N + 4 classes at most, 76 for the workload, 28 for SwiGLU.
"""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True, order=True)
class Run:
    """Parts ``start`` .. ``stop - 1`` of the chain on the GPU (the
    module's doc); ``start == stop``: none (all-CPU)."""

    start: int
    stop: int

    def __post_init__(self):
        if not 0 <= self.start <= self.stop:
            raise ValueError(f"run {self.start}..{self.stop}: expected 0 <= start <= stop")


@dataclasses.dataclass(frozen=True, order=True)
class Shape:
    """What a run's class is: whether it holds E, its blocks, whether it holds H."""

    embedding: bool
    blocks: int
    head: bool


def every_run(blocks: int) -> list[Run]:
    """Every run of a chain of ``blocks`` blocks: the empty one, then each
    start with each stop."""
    parts = blocks + 2
    return [Run(0, 0)] + [Run(s, e) for s in range(parts) for e in range(s + 1, parts + 1)]


def shape_of(run: Run, blocks: int) -> Shape:
    """The class of ``run`` in a chain of ``blocks`` blocks."""
    if run.start == run.stop:
        return Shape(False, 0, False)
    first, last = max(run.start, 1), min(run.stop, blocks + 1)  # the blocks' parts: first .. last - 1
    return Shape(run.start == 0, max(last - first, 0), run.stop == blocks + 2)


def representative(shape: Shape, blocks: int) -> Run:
    """The run the kit compiles for ``shape`` (the module's doc)."""
    n = shape.blocks
    if not (n or shape.embedding or shape.head):
        return Run(0, 0)
    if shape.embedding and shape.head:
        if n != blocks:
            raise ValueError("a run that holds E and H holds every block")
        return Run(0, blocks + 2)
    if shape.embedding:
        return Run(0, 1 + n)
    if shape.head:
        return Run(blocks + 1 - n, blocks + 2)
    return Run(blocks + 1 - n, blocks + 1)


def classes(blocks: int) -> list[Shape]:
    """Every class of a chain of ``blocks`` blocks, each once."""
    return sorted({shape_of(r, blocks) for r in every_run(blocks)})


def text(run: Run, blocks: int) -> str:
    """``cpu`` (the empty run), ``gpu`` (the whole chain), else E, the
    first and last block's index and H: ``E0-3``, ``18-23H``, ``20-23``,
    ``H``, ``5``. Used in module names and the run's table."""
    if run.start == run.stop:
        return "cpu"
    if (run.start, run.stop) == (0, blocks + 2):
        return "gpu"
    shape = shape_of(run, blocks)
    first, last = max(run.start, 1) - 1, min(run.stop, blocks + 1) - 2
    span = "" if not shape.blocks else str(first) if first == last else f"{first}-{last}"
    return f"{'E' if shape.embedding else ''}{span}{'H' if shape.head else ''}"
