"""The placement report and its summary line (passes/assignment/report.py)."""

from __future__ import annotations

import dataclasses
import json
import re

import pytest

from assignment_fakes import ACC, HOST, MiB, FakeCost, chain, graph, unit
from mdc.passes.assignment.budget import accelerator_bytes
from mdc.passes.assignment.report import crossings, format_seconds, placement_report, summary_line
from mdc.passes.assignment.search import (all_on, assignment_of, estimate_seconds, find_assignment,
                                          greedy_fill, solve)
from mdc.passes.assignment.work_graph import Edge, Weight


def _split():
    g = chain(3, value_bytes=1000, weight_bytes=(MiB, 2 * MiB, MiB))
    return g, assignment_of(g, {0: HOST, 1: ACC, 2: ACC})


def test_the_report_is_json_and_says_everything():
    g, a = _split()
    cost = FakeCost()
    report = placement_report(g, a, cost, 4 * MiB, "latency", exact=True)
    assert json.loads(json.dumps(report)) == report
    assert report["objective"] == "latency"
    assert report["budget_bytes"] == 4 * MiB
    assert (report["host"], report["accelerator"], report["search"]) == (HOST, ACC, "exact")
    assert report["estimate_seconds"] == estimate_seconds(g, a, cost)
    assert report["baselines"] == {
        "all_host": estimate_seconds(g, all_on(g, HOST), cost),
        "all_accelerator": None,  # 4 MiB of weights and values do not fit 4 MiB
        "greedy_fill": estimate_seconds(g, greedy_fill(g, 4 * MiB), cost),
    }
    breakdown = accelerator_bytes(g, a)
    assert report["accelerator_bytes"] == {
        "weights": 3 * MiB, "activations": breakdown.activations, "staging": breakdown.staging, "others": 0,
        "runtime": 0, "copies": 1, "total": breakdown.total, "budget": 4 * MiB, "fits": True}
    assert report["units"][1] == {"id": 1, "label": "u1", "location": None, "device": ACC,
                                  "seconds": cost.unit_seconds(g.units[1], ACC), "bytes": 2 * MiB + 2000}
    assert report["weights"] == [{"name": "w0", "bytes": MiB, "kind": "constant", "device": HOST},
                                 {"name": "w1", "bytes": 2 * MiB, "kind": "constant", "device": ACC},
                                 {"name": "w2", "bytes": MiB, "kind": "constant", "device": ACC}]
    assert report["crossings"] == [
        {"source": "unit 0", "target": "unit 1", "bytes": 1000, "direction": "cpu->gpu",
         "seconds": cost.crossing_seconds(1000, HOST, ACC)},
        {"source": "unit 2", "target": "result 0", "bytes": 1000, "direction": "gpu->cpu",
         "seconds": cost.crossing_seconds(1000, ACC, HOST)}]
    assert [(u["id"], u["device"]) for u in report["units"]] == [(0, HOST), (1, ACC), (2, ACC)]


def test_all_accelerator_is_shown_where_it_fits_and_a_dag_is_a_heuristic():
    g, a = _split()
    g = dataclasses.replace(g, edges=g.edges + (Edge(0, 2, 8),))
    found = find_assignment(g, FakeCost(), None, "throughput")
    assert not found.exact
    report = placement_report(g, a, FakeCost(), None, "throughput", exact=found.exact)
    assert report["baselines"]["all_accelerator"] == estimate_seconds(g, all_on(g, ACC), FakeCost(), "throughput")
    assert report["search"] == "heuristic"
    assert report["accelerator_bytes"]["budget"] is None


def test_a_weight_read_across_devices_is_a_crossing():
    g = graph([unit(0, weights=("tied",)), unit(1), unit(2, weights=("tied",))],
              [Weight("tied", 4096, users=(0, 2))],
              [Edge(("argument", 0), 0, 8), Edge(0, 1, 8), Edge(1, 2, 8), Edge(2, ("result", 0), 8)])
    a = assignment_of(g, {0: HOST, 1: HOST, 2: ACC})
    found = crossings(g, a, FakeCost())
    assert [(c["source"], c["target"], c["bytes"], c["direction"]) for c in found] == [
        ("unit 1", "unit 2", 8, "cpu->gpu"), ("unit 2", "result 0", 8, "gpu->cpu"),
        ("weight tied", "unit 2", 4096, "cpu->gpu")]


def test_summary_line():
    g, a = _split()
    report = placement_report(g, a, FakeCost(), 4 * MiB, "latency")
    report["estimate_seconds"] = 0.0234
    report["baselines"] = {"all_host": 0.0801, "all_accelerator": None, "greedy_fill": 0.0302}
    report["accelerator_bytes"]["total"] = int(7.9 * 1024 ** 3)
    report["budget_bytes"] = 8 * 1024 ** 3
    assert summary_line(report) == (
        "placed @main: 2 of 3 units on gpu, 23.4 ms a call estimated (all cpu 80.1 ms, greedy fill 30.2 ms); "
        "gpu 7.9 GiB of 8 GiB (8589934592 B); 2 crossings a call")


def test_summary_line_all_host_throughput_and_no_budget():
    g = chain(2)
    cost = FakeCost()
    report = placement_report(g, all_on(g, HOST), cost, None, "throughput")
    line = summary_line(report)
    assert line.startswith("placed @main: all 2 units on cpu, ")
    assert "a call with two in flight estimated (all cpu " in line
    assert ", all gpu " in line
    assert line.endswith("gpu 0 B (3 copies for 2 calls in flight), no budget; 0 crossings a call")


def test_summary_line_says_why_the_search_left_all_on_the_host():
    """All on the host is the fastest estimate, or what --gpu-memory=0 asks;
    a file's assignment gives no reason (it is the file's)."""
    g = chain(2)
    report = placement_report(g, all_on(g, HOST), FakeCost(), 4 * MiB, "latency")
    assert summary_line(report).startswith("placed @main: all 2 units on cpu, the fastest, ")
    report["budget_bytes"] = 0
    assert summary_line(report).startswith("placed @main: all 2 units on cpu, as --gpu-memory=0 asks, ")
    report["source"] = "hand.json"
    assert summary_line(report).startswith("placed @main from hand.json: all 2 units on cpu, ")


def test_the_report_of_what_solve_chose_fits_its_budget():
    g = chain(6, value_bytes=4096, weight_bytes=(MiB,) * 6)
    cost = FakeCost()
    a = solve(g, cost, 3 * MiB + 65536)
    report = placement_report(g, a, cost, 3 * MiB + 65536, "latency")
    assert report["accelerator_bytes"]["fits"]
    assert report["estimate_seconds"] <= min(v for v in report["baselines"].values() if v is not None)


@pytest.mark.parametrize("seconds, text", [
    (1.25, "1.25 s"), (0.0234, "23.4 ms"), (0.000812, "812 us"), (0.0, "0 us"), (2e-7, "0.2 us")])
def test_format_seconds(seconds, text):
    assert format_seconds(seconds) == text


def test_the_runtimes_reserved_bytes_count_against_the_budget_where_work_runs_there():
    """The profile's reserved_bytes: the memory the runtime takes on the
    accelerator once work runs there (bench placement measured +32 MiB on
    an H100 for every placement that used the GPU)."""
    g = chain(3, weight_bytes=(MiB, MiB, MiB))
    cost = FakeCost()
    free = solve(g, cost, 3 * MiB + 65536, "latency")
    assert sum(d == ACC for d in free.units.values()) == 3
    reserved = solve(g, cost, 3 * MiB + 65536, "latency", reserved_bytes=MiB)
    assert sum(d == ACC for d in reserved.units.values()) == 2
    report = placement_report(g, reserved, cost, 3 * MiB + 65536, "latency", reserved_bytes=MiB)
    used = report["accelerator_bytes"]
    assert used["runtime"] == MiB and used["total"] == accelerator_bytes(g, reserved).total + MiB and used["fits"]
    host = placement_report(g, all_on(g, HOST), cost, 3 * MiB, "latency", reserved_bytes=MiB)
    assert host["accelerator_bytes"]["runtime"] == 0
    small = find_assignment(g, cost, MiB, "latency", reserved_bytes=MiB)
    assert small.assignment == all_on(g, HOST)
    assert re.search(r"beside the 1 MiB the runtime itself takes there .*--gpu-memory=\d+", small.too_small)
