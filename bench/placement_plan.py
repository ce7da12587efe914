"""The placements ``bench placement`` compares, worked out on the work graph
of the workload's placement variant (model.placement_program) with the
placement package's own budget accounting, before anything is compiled.

* **Budgets**: the GPU budget that fits n of the N blocks is the GPU bytes
  (passes/assignment/budget.py: weights, plus the peak of live activations
  and staging buffers) of the hand split with the last n blocks and the head
  on the GPU, plus the bytes the runtime itself takes there once work runs
  on it (the profile's reserved_bytes); n = 0 is a budget of 0 (everything
  on the CPU). The *cost*
  budget is the bytes of greedy fill's own shape with ``COST_BLOCKS``
  blocks: the embedding table and blocks 0..COST_BLOCKS-1 on the GPU.
* **Hand splits** (llama.cpp's ``-ngl``): the embedding on the CPU, the last
  n blocks on the GPU, and the head with them where it fits (``hand_head``);
  or the head on the CPU too, which leaves room for more blocks
  (``hand_blocks``). For each budget both are the most blocks that fit; the
  run reports the faster of the two as "the best hand split".
* **Greedy fill**: search.greedy_fill, accelerate's ``device_map="auto"``:
  units in program order until the budget is spent, the embedding table
  first.
* **auto**: ``--place=auto --gpu-memory=B``; search.solve gives here the
  answer the compile will give (the build checks that they agree).
"""

from __future__ import annotations

import dataclasses

from mdc.passes.assignment.budget import accelerator_bytes, device_bytes, fits
from mdc.passes.assignment.search import assignment_of, greedy_fill
from mdc.passes.assignment.work_graph import Assignment, WorkGraph

from . import model

COST_BLOCKS = 4  # the cost budget: the embedding table and this many blocks, greedy fill's shape


class PlanError(Exception):
    """The work graph is not shaped as the workload's stack."""


@dataclasses.dataclass(frozen=True)
class Layout:
    """Unit ids by part of the stack: the embedding's, each block's, the head's."""

    embedding: tuple[int, ...]
    blocks: tuple[tuple[int, ...], ...]
    head: tuple[int, ...]


def layout_of(graph: WorkGraph, stack: model.Stack) -> Layout:
    """Which units are the embedding, each block and the head: block i
    begins with the unit before the one reading ``norm{i}`` (its sum of
    squares), the head with the unit before the one reading ``norm_out``."""
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


def hand(graph: WorkGraph, layout: Layout, blocks: int, head: bool) -> Assignment:
    """The last ``blocks`` blocks on the GPU, and the head where ``head``."""
    chosen = {u for block in layout.blocks[len(layout.blocks) - blocks:] for u in block} if blocks else set()
    if head:
        chosen |= set(layout.head)
    return on_gpu(graph, chosen)


def part_on_gpu(part: tuple[int, ...], assignment: Assignment, accelerator: str) -> bool:
    return all(assignment.units[u] == accelerator for u in part)


def budget_for(graph: WorkGraph, layout: Layout, blocks: int) -> int:
    """The budget that fits ``blocks`` blocks (the module's doc)."""
    return accelerator_bytes(graph, hand(graph, layout, blocks, True)).total if blocks else 0


def cost_budget(graph: WorkGraph, layout: Layout) -> int:
    """Greedy fill's shape: the embedding table and blocks 0..COST_BLOCKS-1."""
    units = set(layout.embedding) | {u for block in layout.blocks[:COST_BLOCKS] for u in block}
    return accelerator_bytes(graph, on_gpu(graph, units)).total


def best_hand(graph: WorkGraph, layout: Layout, budget: int, head: bool) -> Assignment:
    """The hand split with the most blocks that fits ``budget`` (the head on
    the GPU or not, as ``head`` says; with the head alone not fitting,
    everything on the CPU)."""
    for blocks in range(len(layout.blocks), -1, -1):
        candidate = hand(graph, layout, blocks, head)
        if fits(accelerator_bytes(graph, candidate), budget):
            return candidate
    return hand(graph, layout, 0, False)


@dataclasses.dataclass(frozen=True)
class Budget:
    """One budget of the table: its name (``n6``: fits 6 blocks; ``cost``),
    its bytes, and the assignments files are written for (hand_head,
    hand_blocks, greedy; auto is the compile's own)."""

    name: str
    bytes: int
    assignments: dict


def budgets(graph: WorkGraph, stack: model.Stack, fits_blocks: tuple[int, ...],
            reserved: int = 0) -> list[Budget]:
    """The table's budgets: one per block count in ``fits_blocks``, then the
    cost budget; each with its hand splits and greedy fill. ``reserved``:
    the runtime's own bytes on the GPU, added to every budget above 0 (the
    splits get the rest, as --place=auto does)."""
    layout = layout_of(graph, stack)
    named = [(f"n{n}", budget_for(graph, layout, n)) for n in fits_blocks]
    named.append(("cost", cost_budget(graph, layout)))
    out = []
    for name, nbytes in named:
        out.append(Budget(name, device_bytes(nbytes, reserved, "latency") if nbytes else 0, {
            "hand_head": best_hand(graph, layout, nbytes, True),
            "hand_blocks": best_hand(graph, layout, nbytes, False),
            "greedy": greedy_fill(graph, nbytes),
        }))
    return out


def default_fits(blocks: int) -> tuple[int, ...]:
    """0, N/4, N/2, 3N/4 and N blocks (rounded down), each once."""
    return tuple(sorted({blocks * q // 4 for q in range(5)}))


def assignment_json(assignment: Assignment) -> dict:
    """The shape ``--place=FILE.json`` reads (assignment_file.py)."""
    return {"units": [{"id": u, "device": d} for u, d in sorted(assignment.units.items())],
            "weights": [{"name": n, "device": d} for n, d in sorted(assignment.weights.items())]}


def describe(graph: WorkGraph, stack: model.Stack, assignment: Assignment) -> dict:
    """What the table shows of an assignment: ``blocks``, the blocks whose
    matmul runs on the GPU; ``split``, the blocks with units on both
    devices; whether the embedding and the head (its matmul) are there; its
    GPU bytes."""
    layout = layout_of(graph, stack)
    a = graph.accelerator
    matmul_on_gpu = [assignment.units[graph.weight(f"w{i}").users[0]] == a for i in range(stack.blocks)]
    split = sum(len({assignment.units[u] for u in block}) > 1 for block in layout.blocks)
    return {"blocks": sum(matmul_on_gpu), "split": split,
            "embedding": part_on_gpu(layout.embedding, assignment, a),
            "head": assignment.units[graph.weight("head").users[0]] == a,
            "gpu_bytes": accelerator_bytes(graph, assignment).total}

