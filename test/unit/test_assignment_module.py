"""One budget for the whole module (passes/assignment/budget.py's
``others``, ``module_bytes`` and ``elsewhere_of``; the search's
``WorkGraph.elsewhere``): every weight once, one call's working memory,
counted by hand and against brute force."""

from __future__ import annotations

import dataclasses
import random

import pytest

from assignment_fakes import ACC, HOST, FakeCost, every_assignment, graph, random_graph, unit
from mdc.passes.assignment.programme import run_programme
from mdc.passes.assignment.budget import BudgetBreakdown, accelerator_bytes, elsewhere_of, fits, module_bytes
from mdc.passes.assignment.report import placement_report, summary_line
from mdc.passes.assignment.search import BudgetError, all_on, estimate_seconds, find_assignment
from mdc.passes.assignment.work_graph import Assignment, Edge, Elsewhere, Weight


def _two_layers(first: str, second: str, name="main"):
    """argument -100-> u0 (reads first, 1000 B) -200-> u1 (reads second,
    1000 B) -300-> result."""
    weights = [Weight(first, 1000, users=(0,)), Weight(second, 1000, users=(1,))]
    edges = [Edge(("argument", 0), 0, 100), Edge(0, 1, 200), Edge(1, ("result", 0), 300)]
    g = graph([unit(0, weights=(first,)), unit(1, weights=(second,))], weights, edges)
    return dataclasses.replace(g, function=name)


def _all_acc(g):
    return Assignment({0: ACC, 1: ACC}, {w.name: ACC for w in g.weights})


def test_the_other_functions_weights_and_hungrier_call_are_counted():
    g = _two_layers("a", "b")
    # Alone: weights 2000; positions 0: 100 + 200, 1: 200 + 300 (peak).
    assert accelerator_bytes(g, _all_acc(g)) == BudgetBreakdown(2000, 200, 300, 2500)
    # Another function keeps 700 B of weights there that this one does not
    # read: counted whole. Its call needs 400 B: less than this one's 500.
    beside = dataclasses.replace(g, elsewhere=Elsewhere(weights=700, working=400))
    assert accelerator_bytes(beside, _all_acc(g)) == BudgetBreakdown(2000, 200, 300, 3200, others=700)
    # A call of 900 B: 400 B more than this one's, one call at a time.
    hungry = dataclasses.replace(g, elsewhere=Elsewhere(weights=700, working=900))
    assert accelerator_bytes(hungry, _all_acc(g)) == BudgetBreakdown(2000, 200, 300, 3600, others=1100)


def test_module_bytes_count_a_shared_weight_once_and_the_hungriest_call():
    first, second = _two_layers("a", "b", "first"), _two_layers("a", "c", "second")
    second = dataclasses.replace(second, edges=second.edges + (Edge(("argument", 0), 1, 5000),))
    placed = [(first, _all_acc(first)), (second, _all_acc(second))]
    module = module_bytes(placed)
    # a, b, c once: 3000; working: first's 500, second's 300 + 5000 + 200 = 5500 at position 0.
    assert (module.weights, module.working, module.total) == (3000, 5500, 8500)
    # What the first sees beside it: b and c less a (it reads a), the second's call.
    assert elsewhere_of(first, [placed[1]]) == Elsewhere(weights=1000, working=5500)
    seen = dataclasses.replace(first, elsewhere=elsewhere_of(first, [placed[1]]))
    assert accelerator_bytes(seen, placed[0][1]).total == module.total
    # A weight kept on the host by the other function is not on the accelerator.
    on_host = Assignment({0: ACC, 1: HOST}, {"a": ACC, "c": HOST})
    assert elsewhere_of(first, [(second, on_host)]).weights == 0


@pytest.mark.parametrize("objective", ("latency", "throughput"))
def test_the_search_is_exact_beside_other_functions(objective):
    """Chains with what other functions hold: the programme's bytes (a
    floor of working memory, weights beside) against brute force."""
    rng = random.Random(45)
    cost = FakeCost()
    checked = 0
    for _ in range(150):
        g = random_graph(rng, rng.randrange(1, 8), dag=False)
        g = dataclasses.replace(g, elsewhere=Elsewhere(rng.choice((0, 1 << 20, 8 << 20)),
                                                       rng.choice((0, 4096, 4 << 20, 16 << 20))))
        budget = rng.choice((16 << 20, 40 << 20, 80 << 20))
        one_copy = budget // (3 if objective == "throughput" else 1)
        fitting = [a for a in every_assignment(g) if fits(accelerator_bytes(g, a), one_copy)]
        try:
            found = find_assignment(g, cost, budget, objective)
        except BudgetError:
            assert not fitting
            continue
        assert fits(accelerator_bytes(g, found.assignment), one_copy)
        if found.crowded:
            assert not any(ACC in a.units.values() for a in fitting)
            continue
        best = min(estimate_seconds(g, a, cost, objective) for a in fitting)
        assert estimate_seconds(g, found.assignment, cost, objective) == pytest.approx(best, rel=1e-12)
        checked += 1
    assert checked > 75


def test_a_function_the_others_leave_no_room_runs_on_the_host_and_says_why():
    g = _two_layers("b", "c")
    # Alone it fits 2500 B all on the accelerator; 2000 B of another
    # function's weights leave 500 B, less than any unit with its weight.
    beside = dataclasses.replace(g, elsewhere=Elsewhere(weights=2000, working=300))
    found = find_assignment(beside, FakeCost(), 2500)
    assert found.crowded and found.assignment == all_on(g, HOST)
    assert accelerator_bytes(beside, found.assignment).total == 2300
    report = placement_report(beside, found.assignment, FakeCost(), 2500, exact=found.exact, crowded=True)
    assert report["crowded"] and report["accelerator_bytes"]["others"] == 2300
    line = summary_line(report)
    assert "all 2 units on cpu, as the module's other functions hold the budget" in line, line
    assert "gpu 2.2 KiB (the whole module's) of 2.4 KiB (2500 B)" in line, line
    assert found.too_small is None  # not the budget's fault: no too-small warning
    # Alone, a budget that small is the user's to raise: everything on the
    # host with the too-small warning (not crowded).
    alone = find_assignment(g, FakeCost(), 500)
    assert not alone.crowded and alone.assignment == all_on(g, HOST)
    assert "--gpu-memory=500 (500 B) fits no work on 'gpu'" in alone.too_small, alone.too_small
    # Beside other functions, a budget too small even for this one alone is
    # too small, not crowded; the warning counts what the others hold.
    small = find_assignment(dataclasses.replace(g, elsewhere=Elsewhere(weights=100)), FakeCost(), 600)
    assert not small.crowded and small.assignment == all_on(g, HOST)
    assert "beside what the module's other public functions hold there" in small.too_small, small.too_small


def test_functions_placed_in_turn_keep_the_module_within_the_budget():
    """Two random functions (DAGs) sharing weights, placed in order, each
    beside what the earlier one holds: the module's bytes fit the budget.
    (``alone``: the cases where placing the second as if it were alone, as
    before, overflowed the budget, so that the cases test the rule.)"""
    rng = random.Random(7)
    cost = FakeCost()
    checked = alone = 0
    for _ in range(60):
        first = random_graph(rng, rng.randrange(2, 7), dag=True)
        second = dataclasses.replace(random_graph(rng, rng.randrange(2, 7), dag=True), function="second")
        # A shared name is one weight: the second's copy has the first's bytes and pin.
        same = {w.name: w for w in first.weights}
        second = dataclasses.replace(second, weights=tuple(
            dataclasses.replace(w, bytes=same[w.name].bytes, pinned=same[w.name].pinned) if w.name in same else w
            for w in second.weights))
        budget = rng.choice((12 << 20, 20 << 20, 40 << 20))
        try:
            a1 = find_assignment(first, cost, budget).assignment
            second = dataclasses.replace(second, weights=tuple(
                dataclasses.replace(w, pinned=w.pinned or a1.weights.get(w.name)) for w in second.weights))
            by_itself = find_assignment(second, cost, budget).assignment
            beside = dataclasses.replace(second, elsewhere=elsewhere_of(second, [(first, a1)]))
            a2 = find_assignment(beside, cost, budget).assignment
        except BudgetError:
            continue
        assert all(a1.weights[w.name] == a2.weights[w.name] for w in second.weights if w.name in same)
        assert module_bytes([(first, a1), (second, a2)]).total <= budget
        alone += module_bytes([(first, a1), (second, by_itself)]).total > budget
        checked += 1
    assert checked > 40 and alone > 2, (checked, alone)


def test_a_weight_that_moves_to_the_host_shares_the_other_calls_memory():
    """A weight the accelerator reads first is resident there until a later
    reader on the host moves it home, where the accelerator reads it across:
    its bytes become staging, working memory, which sits under the other
    function's bigger call. The search must not drop the partial assignment
    over the bytes it holds before that reader (it did: everything stayed on
    the host, and the answer was called exact)."""
    weights = [Weight("s", 1000, users=(0, 1))]
    edges = [Edge(("argument", 0), 0, 10), Edge(0, 1, 10), Edge(1, ("result", 0), 10)]
    g = graph([unit(0, flops=10**9, weights=("s",)), unit(1, weights=("s",), pinned=HOST)], weights, edges)
    g = dataclasses.replace(g, elsewhere=Elsewhere(weights=0, working=2000))
    split = Assignment({0: ACC, 1: HOST}, {"s": HOST})
    assert accelerator_bytes(g, split).total == 2000  # the staged 1000 B under the other call's 2000
    outcome = run_programme(g, FakeCost(), "latency", 2000)
    assert outcome.best == split and outcome.exhaustive
    found = find_assignment(g, FakeCost(), 2000)
    assert found.assignment == split and found.exact
