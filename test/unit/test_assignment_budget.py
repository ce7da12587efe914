"""The accelerator bytes of an assignment (passes/assignment/budget.py),
counted by hand on small graphs."""

from __future__ import annotations

import pytest

from assignment_fakes import ACC, HOST, MiB, graph, unit
from mdc.passes.assignment.budget import (BudgetBreakdown, accelerator_bytes, fits, format_bytes,
                                          unit_bytes)
from mdc.passes.assignment.work_graph import Assignment, Edge, Weight


def _three(weights=None, extra_edges=(), arguments=1):
    """argument 0 -100-> u0 -200-> u1 -300-> u2 -400-> result 0; unit i
    reads w{i} of 1000 * 2**i bytes."""
    weights = weights if weights is not None else [Weight(f"w{i}", 1000 * 2 ** i, users=(i,)) for i in range(3)]
    units = [unit(i, weights=tuple(w.name for w in weights if i in w.users)) for i in range(3)]
    edges = [Edge(("argument", 0), 0, 100), Edge(0, 1, 200), Edge(1, 2, 300), Edge(2, ("result", 0), 400)]
    return graph(units, weights, edges + list(extra_edges), arguments=arguments)


def _on(*devices, weights):
    return Assignment(dict(enumerate(devices)), weights)


def test_all_on_the_host_needs_nothing():
    g = _three()
    a = _on(HOST, HOST, HOST, weights={"w0": HOST, "w1": HOST, "w2": HOST})
    assert accelerator_bytes(g, a) == BudgetBreakdown(0, 0, 0, 0)


def test_weights_activations_and_staging_at_their_peak():
    g = _three()
    a = _on(HOST, ACC, ACC, weights={"w0": HOST, "w1": ACC, "w2": ACC})
    # position 0: u0->u1 staging 200; 1: + u1->u2 activation 300 = 500;
    # 2: activation 300 + u2->result staging 400 = 700, the peak
    assert accelerator_bytes(g, a) == BudgetBreakdown(weights=6000, activations=300, staging=400, total=6700)


def test_a_value_leaving_the_accelerator_is_counted_until_its_reader():
    g = _three()
    a = _on(ACC, ACC, HOST, weights={"w0": ACC, "w1": ACC, "w2": HOST})
    # 0: arg->u0 100 + u0->u1 200 = 300; 1: 200 + u1->u2 staging 300 = 500; 2: 300
    assert accelerator_bytes(g, a) == BudgetBreakdown(weights=3000, activations=200, staging=300, total=3500)


def test_an_argument_read_later_is_live_from_the_start():
    g = _three(extra_edges=[Edge(("argument", 1), 2, 5000)], arguments=2)
    a = _on(ACC, HOST, ACC, weights={"w0": ACC, "w1": HOST, "w2": ACC})
    # the argument's buffer on the accelerator is counted at positions 0..2;
    # at 0: 100 + 200 + 5000; 1: 200 + 300 + 5000; 2: 300 + 400 + 5000
    assert accelerator_bytes(g, a) == BudgetBreakdown(weights=5000, activations=0, staging=5700, total=10700)


def test_a_weight_read_on_both_devices_is_staged_for_the_whole_call():
    tied = Weight("tied", 10_000, users=(0, 2))
    g = _three(weights=[tied])
    a = _on(HOST, HOST, ACC, weights={"tied": HOST})
    # 2: u1->u2 300 + u2->result 400, plus the table for the whole call
    assert accelerator_bytes(g, a) == BudgetBreakdown(weights=0, activations=0, staging=10_700, total=10_700)


def test_a_weight_pinned_to_the_accelerator_counts_even_unread_there():
    g = _three(weights=[Weight("pinned", 777, users=(0,), pinned=ACC)])
    a = _on(HOST, HOST, HOST, weights={"pinned": ACC})
    assert accelerator_bytes(g, a) == BudgetBreakdown(weights=777, activations=0, staging=0, total=777)


def test_an_edge_is_counted_on_its_own_even_beside_another_from_the_same_unit():
    g = _three(extra_edges=[Edge(0, 2, 200)])
    a = _on(ACC, ACC, ACC, weights={"w0": ACC, "w1": ACC, "w2": ACC})
    # 1: u0->u1 200 + u1->u2 300 + u0->u2 200 = 700; 2: 300 + 200 + 400 staging = 900
    assert accelerator_bytes(g, a) == BudgetBreakdown(weights=7000, activations=500, staging=400, total=7900)


def test_no_units():
    g = graph([], [], [Edge(("argument", 0), ("result", 0), 64)])
    assert accelerator_bytes(g, Assignment({}, {})) == BudgetBreakdown(0, 0, 0, 0)


def test_fits():
    b = BudgetBreakdown(1, 2, 3, 6)
    assert fits(b, None) and fits(b, 6) and not fits(b, 5)


def test_unit_bytes_counts_its_weights_once_and_its_values():
    g = _three(weights=[Weight("w", 1000, users=(1,))])
    assert unit_bytes(g, 1) == 1000 + 200 + 300
    assert unit_bytes(g, 0) == 100 + 200


@pytest.mark.parametrize("nbytes, text", [
    (None, "no limit"), (0, "0 B"), (512, "512 B"), (1024, "1 KiB"), (1536, "1.5 KiB"),
    (8 * 1024 ** 3, "8 GiB"), (int(7.94 * 1024 ** 3), "7.9 GiB"), (MiB + 2000, "1 MiB"),
    (3 * 1024 ** 5, "3072 TiB")])
def test_format_bytes(nbytes, text):
    assert format_bytes(nbytes) == text


def _count_position_by_position(g, a):
    """The module doc's rule, literally: every edge's bytes added at each
    position it is live at; the peak of activations + staging."""
    where = {u.id: i for i, u in enumerate(g.units)}
    last = max(len(g.units) - 1, 0)
    at = lambda end: where[end] if isinstance(end, int) else (0 if end[0] == "argument" else last)  # noqa: E731
    activations, staging = [0] * (last + 1), [0] * (last + 1)
    for e in g.edges:
        source, target = a.device_of(e.source, g), a.device_of(e.target, g)
        if ACC not in (source, target):
            continue
        into = activations if source == target else staging
        for p in range(min(at(e.source), at(e.target)), max(at(e.source), at(e.target)) + 1):
            into[p] += e.bytes
    live = [x + y for x, y in zip(activations, staging)]
    weights_read_across = sum(w.bytes for w in g.weights
                              if a.weights[w.name] != ACC and any(a.units[u] == ACC for u in w.users))
    peak = live.index(max(live))
    return activations[peak], staging[peak] + weights_read_across


def test_random_graphs_match_a_count_position_by_position():
    import random

    from assignment_fakes import every_assignment, random_graph

    rng = random.Random(20261207)
    checked = 0
    for n in (1, 2, 5, 8):
        for dag in (False, True):
            g = random_graph(rng, n, dag)
            for a in every_assignment(g):
                b = accelerator_bytes(g, a)
                activations, staging = _count_position_by_position(g, a)
                assert (b.activations, b.staging) == (activations, staging), (n, dag, a)
                checked += 1
    assert checked > 100
