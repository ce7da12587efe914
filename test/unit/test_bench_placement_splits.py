"""bench placement's contiguous splits (bench/placement_splits.py): every
run of the chain embedding, blocks, head counted once, each class's run
of its own class, and the premise of compiling one run a class: on the
kit's own programs, the runs of a class have the same estimate and GPU
bytes within one activation of each other, the compiled run the least."""

import pytest

from bench import model, placement_kit, placement_plan, placement_splits as splits, swiglu


@pytest.mark.parametrize("blocks", [1, 2, 4, 8, 24])
def test_every_run_once_and_each_class_its_own_run(blocks):
    runs = splits.every_run(blocks)
    parts = blocks + 2
    assert len(runs) == len(set(runs)) == parts * (parts + 1) // 2 + 1
    classes = splits.classes(blocks)
    assert len(classes) == 3 * blocks + 4
    for shape in classes:
        run = splits.representative(shape, blocks)
        assert run in runs and splits.shape_of(run, blocks) == shape
    texts = [splits.text(splits.representative(s, blocks), blocks) for s in classes]
    assert len(set(texts)) == len(texts)  # module names do not collide


def test_the_texts_name_the_parts():
    n = 24
    assert splits.text(splits.Run(0, 0), n) == "cpu" and splits.text(splits.Run(0, n + 2), n) == "gpu"
    assert splits.text(splits.Run(0, 5), n) == "E0-3"
    assert splits.text(splits.Run(19, 26), n) == "18-23H"  # llama.cpp's -ngl 6 with the head
    assert splits.text(splits.Run(21, 25), n) == "20-23"
    assert splits.text(splits.Run(25, 26), n) == "H" and splits.text(splits.Run(0, 1), n) == "E"
    assert splits.text(splits.Run(6, 7), n) == "5"
    assert splits.representative(splits.Shape(False, 6, False), n) == splits.Run(19, 25)


@pytest.mark.parametrize("stack", [model.Stack(hidden=64, blocks=4, vocab=256),
                                   model.Stack(hidden=64, blocks=4, vocab=256, dtype="f16"),
                                   swiglu.Stack(hidden=64, ffn=160, blocks=3, vocab=300)],
                         ids=["workload", "workload_f16", "swiglu"])
def test_the_runs_of_a_class_cost_the_same(stack):
    from mdc.contract.machine_profile import default_profile
    from mdc.passes.assignment.cost_model import CostModel
    from mdc.passes.assignment.estimate import estimate_seconds

    text = (model.placement_program if isinstance(stack, model.Stack) else swiglu.program)(stack, 2)
    graph = placement_kit.work_graph(text, "program.mlir")
    layout = placement_plan.layout_of(graph, stack)
    every = placement_plan.Splits.of(graph, layout)
    cost = CostModel.of(default_profile(), {"cpu": "local", "gpu": "cuda"})
    by_class: dict = {}
    for run, nbytes in every.bytes.items():
        seconds = estimate_seconds(graph, placement_plan.run_assignment(graph, layout, run), cost)
        by_class.setdefault(splits.shape_of(run, stack.blocks), []).append((run, nbytes, seconds))
    assert len(by_class) == 3 * stack.blocks + 4
    activation = 2 * stack.hidden * (2 if stack.dtype == "f16" else 4)  # batch 2
    for shape, found in by_class.items():
        assert max(s for _, _, s in found) == pytest.approx(min(s for _, _, s in found), rel=1e-12), found
        least = min(b for _, b, _ in found)
        assert max(b for _, b, _ in found) - least <= activation, found
        assert every.bytes[splits.representative(shape, stack.blocks)] == least, found
    # A run that holds some block and neither end costs two crossings, one more part more bytes.
    one = every.bytes[splits.representative(splits.Shape(False, 1, False), stack.blocks)]
    two = every.bytes[splits.representative(splits.Shape(False, 2, False), stack.blocks)]
    assert 0 < one < two
