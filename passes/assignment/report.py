"""What ``--report`` writes about an assignment, and the one line that
``mdc-compile`` prints to stderr.

``placement_report`` returns plain JSON data: the objective and budget,
the estimate of the chosen assignment beside those of all on the host, all
on the accelerator (None where it does not fit) and greedy fill, the
accelerator bytes against the budget, every unit, weight and crossing.
Its ``units`` and ``weights`` lists (``id`` or ``name``, and ``device``)
are the shape ``--place=FILE.json`` reads, so a report placed once can
be given back as an assignment.
"""

from __future__ import annotations

from typing import Optional

from .budget import accelerator_bytes, device_bytes, fits, format_bytes, program_budget, unit_bytes
from .cost_model import CostModel
from .estimate import CALLS_IN_FLIGHT, COPIES, crossing_edges
from .measured import MeasuredCostModel, crossing_measured, unit_measured
from .search import all_on, estimate_seconds, greedy_fill
from .work_graph import Assignment, End, WorkGraph


def placement_report(graph: WorkGraph, assignment: Assignment, cost: CostModel,
                     budget_bytes: Optional[int], objective: str = "latency", reserved_bytes: int = 0,
                     exact: bool = False, crowded: bool = False, budget_from: Optional[dict] = None) -> dict:
    """The report of ``assignment`` (see the module's doc); the
    accelerator bytes count ``reserved_bytes`` (the runtime's own, search.solve)
    where any work runs there, and the program's bytes as many times as
    the objective's calls hold it (``copies``, estimate.COPIES): ``total``
    is (weights + activations + staging) x copies + runtime
    (budget.device_bytes), ``others`` being what the module's other
    functions hold there beside this one's (``graph.elsewhere``: the total
    is the module's). ``exact``: whether the search proved it least
    (search.Found.exact); the report says ``"search": "exact"`` only then,
    else ``"heuristic"``, which claims nothing. ``crowded``: everything is
    on the host because the module's other functions hold the budget
    (search.Found.crowded; the report says ``"crowded": true``).
    ``budget_from``: where ``--gpu-memory=auto`` found the budget (the
    flag as given, the profile, its entry, the free bytes and the margin),
    reported as ``"budget_from"``."""
    def seconds(a: Assignment) -> float:
        return estimate_seconds(graph, a, cost, objective)

    everything_there = all_on(graph, graph.accelerator)
    breakdown = accelerator_bytes(graph, assignment)
    copies = COPIES[objective]
    one_call = None if budget_bytes is None else max(program_budget(budget_bytes, reserved_bytes, objective), 0)
    runtime = reserved_bytes if graph.accelerator in assignment.units.values() else 0
    total = device_bytes(breakdown.total, runtime, objective)
    report = {
        "function": graph.function,
        "objective": objective,
        "budget_bytes": budget_bytes,
        **({"budget_from": budget_from} if budget_from else {}),
        "host": graph.host,
        "accelerator": graph.accelerator,
        "search": "exact" if exact else "heuristic",
        "estimate_seconds": seconds(assignment),
        "baselines": {
            "all_host": seconds(all_on(graph, graph.host)),
            "all_accelerator": (seconds(everything_there)
                                if fits(accelerator_bytes(graph, everything_there), one_call) else None),
            "greedy_fill": seconds(greedy_fill(graph, one_call)),
        },
        "accelerator_bytes": {
            "weights": breakdown.weights,
            "activations": breakdown.activations,
            "staging": breakdown.staging,
            "others": breakdown.others,
            "runtime": runtime,
            "copies": copies,
            "total": total,
            "budget": budget_bytes,
            "fits": budget_bytes is None or total <= budget_bytes,
        },
        "units": [{
            "id": unit.id,
            "label": unit.label,
            "location": unit.location,
            "device": assignment.units[unit.id],
            "seconds": cost.unit_seconds(unit, assignment.units[unit.id]),
            "bytes": unit_bytes(graph, unit.id),
        } for unit in graph.units],
        "weights": [{"name": w.name, "bytes": w.bytes, "kind": w.kind, "device": assignment.weights[w.name]}
                    for w in graph.weights],
        "crossings": crossings(graph, assignment, cost),
        **({"crowded": True} if crowded else {}),
    }
    if isinstance(cost, MeasuredCostModel):
        _mark_measured(report, graph, cost)
    return report


def _mark_measured(report: dict, graph: WorkGraph, cost: MeasuredCostModel) -> None:
    """With --place-costs: each unit's and crossing's ``estimate``,
    ``measured`` or ``modelled`` (``at_bound``: a dynamic shape measured at
    its --max-dim bound), and their counts under ``estimates``."""
    for entry, unit in zip(report["units"], graph.units):
        entry["estimate"] = "measured" if unit_measured(cost, unit, entry["device"]) else "modelled"
        if unit.id in cost.at_bound:
            entry["at_bound"] = True
    for entry in report["crossings"]:
        source, target = entry["direction"].split("->")
        entry["estimate"] = "measured" if crossing_measured(cost, entry["bytes"], source, target) else "modelled"
    counts = {}
    for kind in ("units", "crossings"):
        measured = sum(1 for e in report[kind] if e["estimate"] == "measured")
        counts[kind] = {"measured": measured, "modelled": len(report[kind]) - measured}
    report["estimates"] = counts


def _end_name(end: End) -> str:
    return f"unit {end}" if isinstance(end, int) else f"{end[0]} {end[1]}"


def crossings(graph: WorkGraph, assignment: Assignment, cost: CostModel) -> list:
    """Every value that crosses between devices in a call: each value once
    per device it moves to (estimate.crossing_edges; ``target`` is its
    first reader there), in the graph's order, then every weight read on a
    device other than its own, once per such device."""
    found = []
    for edge, source, target in crossing_edges(graph, assignment):
        found.append({"source": _end_name(edge.source), "target": _end_name(edge.target),
                      "bytes": edge.bytes, "direction": f"{source}->{target}",
                      "seconds": cost.crossing_seconds(edge.bytes, source, target)})
    for weight in graph.weights:
        home = assignment.weights[weight.name]
        for reader in sorted({assignment.units[u] for u in weight.users} - {home}):
            first = min(u for u in weight.users if assignment.units[u] == reader)
            found.append({"source": f"weight {weight.name}", "target": _end_name(first),
                          "bytes": weight.bytes, "direction": f"{home}->{reader}",
                          "seconds": cost.crossing_seconds(weight.bytes, home, reader)})
    return found


def format_seconds(seconds: float) -> str:
    """``23.4 ms``, ``812 us``, ``1.25 s``: three significant digits."""
    for scale, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "us")):
        if seconds >= scale:
            break
    value = seconds / scale
    return f"{value:.3g} {unit}"


def summary_line(report: dict) -> str:
    """One line for stderr (the tools print it after their name): the
    estimate beside the baselines, the accelerator bytes against the
    budget and the crossings of a call."""
    units = report["units"]
    on_accelerator = sum(1 for u in units if u["device"] == report["accelerator"])
    baselines = report["baselines"]
    compared = [f"all {report['host']} {format_seconds(baselines['all_host'])}"]
    if baselines["all_accelerator"] is not None:
        compared.append(f"all {report['accelerator']} {format_seconds(baselines['all_accelerator'])}")
    compared.append(f"greedy fill {format_seconds(baselines['greedy_fill'])}")
    per_call = "a call" if report["objective"] == "latency" else "a call with two in flight"
    used = report["accelerator_bytes"]
    budget = ", no budget" if report["budget_bytes"] is None else f" of {budget_text(report['budget_bytes'])}"
    if report.get("budget_from"):
        budget += f" ({auto_text(report['budget_from'])})"
    notes = ["the whole module's"] if used.get("others") else []
    if used.get("copies", 1) > 1:
        notes.append(f"{used['copies']} copies for {CALLS_IN_FLIGHT[report['objective']]} calls in flight")
    if notes:
        budget = f" ({', '.join(notes)}){budget}"
    kept = sum(1 for u in units if u.get("why"))  # kept on the host: the accelerator cannot run them right
    if kept == len(units):
        where = f"all {len(units)} units on {report['host']}, as {report['accelerator']} cannot run them right"
    else:
        where = (f"{on_accelerator} of {len(units)} units on {report['accelerator']}" if on_accelerator
                 else f"all {len(units)} units on {report['host']}{_why_all_host(report)}")
        if kept:
            where += f" ({kept} kept on {report['host']}: {report['accelerator']} cannot run them right)"
    function = report["function"] + (f" from {report['source']}" if report.get("source") else "")
    count = len(report["crossings"])
    return (f"placed @{function}: {where}, {format_seconds(report['estimate_seconds'])} {per_call} estimated "
            f"({', '.join(compared)}); {report['accelerator']} {format_bytes(used['total'])}{budget}; "
            f"{count} crossing{'' if count == 1 else 's'} a call{_measured_text(report)}")


def _measured_text(report: dict) -> str:
    """``; 5 of 6 units measured``, where --place-costs gave times."""
    counts = report.get("estimates")
    if counts is None:
        return ""
    units = counts["units"]
    return f"; {units['measured']} of {units['measured'] + units['modelled']} units measured"


def auto_text(source: dict) -> str:
    """Where ``--gpu-memory=auto`` found the budget: ``--gpu-memory=auto:
    79.1 GiB free less a 1 GiB margin``."""
    return (f"--gpu-memory={source['gpu_memory']}: {format_bytes(source['free_bytes'])} free less a "
            f"{format_bytes(source['margin_bytes'])} margin")


def budget_text(nbytes: int) -> str:
    """The budget as ``--gpu-memory`` was understood: ``8 GiB (8589934592 B)``,
    the bytes beside the rounded binary size (``8GB`` shows as ``7.5 GiB
    (8000000000 B)``), or ``100 B`` alone where that is the same."""
    short = format_bytes(nbytes)
    return short if short == f"{nbytes} B" else f"{short} ({nbytes} B)"


def _why_all_host(report: dict) -> str:
    """Why the search left everything on the host (nothing for a file's
    assignment, which says so itself): the module's other functions hold
    the budget (``crowded``), the budget of 0 asked for it, a budget too
    small for any work there (``budget_too_small``, the search's warning),
    or it is the fastest estimate."""
    if report.get("source"):
        return ""
    if report.get("crowded"):
        return ", as the module's other functions hold the budget"
    flag = report["budget_from"]["gpu_memory"] if report.get("budget_from") else report["budget_bytes"]
    if report.get("budget_too_small"):  # the warning says why, and what budget would do
        return f", as --gpu-memory={flag} fits no work on {report['accelerator']}"
    if report["budget_bytes"] == 0:
        return ", as --gpu-memory=0 asks" if flag == 0 else f", as --gpu-memory={flag} leaves no budget"
    return ", the fastest"
