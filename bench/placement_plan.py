"""The placements ``bench placement`` compares, worked out on the work graph
of a model's placement program (model.placement_program, swiglu.program)
with the placement package's own budget accounting, before anything is
compiled.

* **Budgets**: the GPU budget that fits n of the N blocks is the GPU bytes
  (passes/assignment/budget.py: weights, plus the peak of live activations
  and staging buffers) of the last n blocks and the head on the GPU, plus
  the bytes the runtime itself takes there once work runs on it (the
  profile's reserved_bytes); n = 0 is a budget of 0 (everything on the
  CPU). The *cost* budget is the bytes of greedy fill's own shape with
  ``COST_BLOCKS`` blocks: the embedding table and blocks 0..COST_BLOCKS-1
  on the GPU. The *all* budget holds everything on the GPU.
* **Contiguous splits** (placement_splits.py): one unbroken run of the
  chain embedding, blocks, head on the GPU; all-CPU, all-GPU and
  llama.cpp's ``-ngl`` (the last blocks, with or without the head) among
  them. Per budget, every run that fits is counted and each class of runs
  (the same ends and block count) that fits is compiled once.
* **Greedy fill**: search.greedy_fill, accelerate's ``device_map="auto"``:
  units in program order until the budget is spent, the embedding table
  first.
* **auto**: ``--place=auto --gpu-memory=B``, the compile's own.
"""

from __future__ import annotations

import dataclasses

from mdc.passes.assignment.budget import accelerator_bytes, device_bytes
from mdc.passes.assignment.search import assignment_of, greedy_fill
from mdc.passes.assignment.work_graph import Assignment, WorkGraph

from . import placement_splits as splits

COST_BLOCKS = 4  # the cost budget: the embedding table and this many blocks, greedy fill's shape


class PlanError(Exception):
    """The work graph is not shaped as the kit's stacks are."""


@dataclasses.dataclass(frozen=True)
class Layout:
    """Unit ids by part of the stack: the embedding's, each block's, the head's."""

    embedding: tuple[int, ...]
    blocks: tuple[tuple[int, ...], ...]
    head: tuple[int, ...]

    def parts(self) -> list[tuple[int, ...]]:
        """The chain of placement_splits.py: E, each block, H."""
        return [self.embedding, *self.blocks, self.head]


def layout_of(graph: WorkGraph, stack) -> Layout:
    """Which units are the embedding, each block and the head (of a
    model.Stack, swiglu.Stack or gpt2_mlp.Stack: blocks of weights ``norm<i>``, then
    ``norm_out`` and ``head``): block i begins with the unit before the one
    reading ``norm{i}`` (its sum of squares), the head with the unit before
    the one reading ``norm_out``."""
    ids = [u.id for u in graph.units]
    where = {unit_id: index for index, unit_id in enumerate(ids)}

    def start(weight_name: str) -> int:
        users = graph.weight(weight_name).users
        if len(users) != 1 or where[users[0]] < 1:
            raise PlanError(f"the weight {weight_name} is not read by one unit after the first")
        return where[users[0]] - 1

    starts = [start(f"norm{i}") for i in range(stack.blocks)] + [start("norm_out")]
    if starts[0] != 1 or starts != sorted(starts):
        raise PlanError(f"the units are not the embedding, {stack.blocks} blocks and the head in order")
    blocks = tuple(tuple(ids[starts[i]:starts[i + 1]]) for i in range(stack.blocks))
    return Layout(tuple(ids[:starts[0]]), blocks, tuple(ids[starts[-1]:]))


def on_gpu(graph: WorkGraph, units: set) -> Assignment:
    """``units`` on the accelerator, every other unit on the host, each
    weight where its readers are (search.assignment_of)."""
    return assignment_of(graph, {u.id: graph.accelerator if u.id in units else graph.host for u in graph.units})


def run_assignment(graph: WorkGraph, layout: Layout, run: splits.Run) -> Assignment:
    """The contiguous split ``run`` (placement_splits.py)."""
    return on_gpu(graph, {u for part in layout.parts()[run.start:run.stop] for u in part})


def part_on_gpu(part: tuple[int, ...], assignment: Assignment, accelerator: str) -> bool:
    return all(assignment.units[u] == accelerator for u in part)


def program_bytes(graph: WorkGraph, assignment: Assignment) -> int:
    return accelerator_bytes(graph, assignment).total


@dataclasses.dataclass(frozen=True)
class Budget:
    """One budget of the table: its name (``n6``: fits 6 blocks; ``cost``;
    ``all``), its ``--gpu-memory`` bytes and the program's share of them,
    greedy fill's assignment, the contiguous splits compiled for it (one
    run per class that fits, placement_splits.py) and the counts of runs
    and of classes that fit."""

    name: str
    bytes: int
    program_bytes: int
    greedy: Assignment
    runs: tuple[splits.Run, ...]
    runs_fit: int
    classes_fit: int


@dataclasses.dataclass(frozen=True)
class Splits:
    """Every run of a graph's chain and the GPU bytes of each."""

    layout: Layout
    bytes: dict  # Run -> program bytes

    @classmethod
    def of(cls, graph: WorkGraph, layout: Layout) -> "Splits":
        return cls(layout, {r: program_bytes(graph, run_assignment(graph, layout, r))
                            for r in splits.every_run(len(layout.blocks))})

    def blocks(self) -> int:
        return len(self.layout.blocks)

    def fitting(self, budget: int) -> tuple[int, list[splits.Run]]:
        """(how many runs fit ``budget`` program bytes, the compiled run of
        each class that fits)."""
        n = self.blocks()
        count = sum(fits_bytes(b, budget) for b in self.bytes.values())
        reps = [splits.representative(s, n) for s in splits.classes(n)]
        return count, [r for r in reps if fits_bytes(self.bytes[r], budget)]


def fits_bytes(nbytes: int, budget: int) -> bool:
    """budget.fits's rule, on bytes worked out once."""
    return nbytes <= budget


def budgets(graph: WorkGraph, every: Splits, fits_blocks: tuple[int, ...], reserved: int = 0) -> list[Budget]:
    """The table's budgets: one per block count in ``fits_blocks``, then the
    cost budget and the all budget; each with greedy fill and its splits
    (``every``: the graph's runs, Splits.of). ``reserved``: the runtime's
    own bytes on the GPU, added to every budget above 0 (the program gets
    the rest, as --place=auto does)."""
    layout, n = every.layout, every.blocks()
    named = [(f"n{k}", every.bytes[splits.representative(splits.Shape(False, k, True), n)] if k else 0)
             for k in fits_blocks]
    cost_units = set(layout.embedding) | {u for block in layout.blocks[:min(COST_BLOCKS, n)] for u in block}
    named.append(("cost", program_bytes(graph, on_gpu(graph, cost_units))))
    named.append(("all", every.bytes[splits.Run(0, n + 2)]))
    out = []
    for name, nbytes in named:
        count, runs = every.fitting(nbytes)
        out.append(Budget(name, device_bytes(nbytes, reserved, "latency") if nbytes else 0, nbytes,
                          greedy_fill(graph, nbytes), tuple(runs), count, len(runs)))
    return out


def default_fits(blocks: int) -> tuple[int, ...]:
    """0, N/4, N/2, 3N/4 and N blocks (rounded down), each once."""
    return tuple(sorted({blocks * q // 4 for q in range(5)}))


def assignment_json(assignment: Assignment) -> dict:
    """The shape ``--place=FILE.json`` reads (assignment_file.py)."""
    return {"units": [{"id": u, "device": d} for u, d in sorted(assignment.units.items())],
            "weights": [{"name": n, "device": d} for n, d in sorted(assignment.weights.items())]}


def _matrices(stack, block: int) -> list[str]:
    """Block ``block``'s matrices (its weights of two dimensions): ``w<i>``
    of the workload, ``gate<i>``, ``up<i>`` and ``down<i>`` of SwiGLU, ``fc<i>``
    and ``proj<i>`` of the GPT-2-style stack."""
    return [name for name, shape, b in stack.weights() if b == block and len(shape) == 2]


def describe(graph: WorkGraph, stack, assignment: Assignment) -> dict:
    """What the table shows of an assignment: ``blocks``, the blocks whose
    matmuls all run on the GPU; ``split``, the blocks with units on both
    devices; whether the embedding and the head (its matmul) are there; its
    GPU bytes."""
    layout = layout_of(graph, stack)
    a = graph.accelerator
    matmuls_on_gpu = [all(assignment.units[u] == a for m in _matrices(stack, i) for u in graph.weight(m).users)
                      for i in range(stack.blocks)]
    split = sum(len({assignment.units[u] for u in block}) > 1 for block in layout.blocks)
    return {"blocks": sum(matmuls_on_gpu), "split": split,
            "embedding": part_on_gpu(layout.embedding, assignment, a),
            "head": assignment.units[graph.weight("head").users[0]] == a,
            "gpu_bytes": program_bytes(graph, assignment)}
