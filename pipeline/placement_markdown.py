"""The placement section of ``--report=FILE.md``: what ``--place`` decided,
from the report's ``"placement"`` (passes/assignment/report.py says what it
holds): per placed function the estimates beside the baselines, the
accelerator's bytes against the budget, and a table each of units, weights
and crossings. A program of several public functions (``{"functions":
{...}}``) gets one subsection per function.
"""

from __future__ import annotations

from mdc.passes.assignment.budget import format_bytes
from mdc.passes.assignment.report import auto_text, budget_text, format_seconds


def placement_markdown(placement: dict) -> list[str]:
    """The section's lines (from its heading on)."""
    lines = ["", "## Placement", ""]
    if placement.get("summary"):
        lines += [placement["summary"], ""]
    functions = placement.get("functions")
    if functions is None:
        return lines + _function_lines(placement)
    for name, entry in functions.items():
        lines += [f"### @{name}", ""] + _function_lines(entry)
    return lines


def _cell(text) -> str:
    """``text`` as one table cell: a ``|`` in it would end the cell."""
    return str(text).replace("|", "\\|")


def _seconds(value) -> str:
    return "-" if value is None else format_seconds(value)


def _function_lines(entry: dict) -> list[str]:
    host, accelerator = entry["host"], entry["accelerator"]
    source = f"`{entry['source']}`" if entry.get("source") else "the search (`--place=auto`)"
    budget = entry.get("budget_bytes")
    # A file's assignment had no search: its "search" says only what the graph's shape allows.
    search = "" if entry.get("source") else (
        "; search exact (no assignment has a lower estimate)" if entry.get("search") == "exact"
        else "; search heuristic")
    lines = [f"Assignment of `@{entry['function']}` from {source}; host `{host}`, accelerator `{accelerator}`; "
             f"objective {entry['objective']}; budget {'none' if budget is None else budget_text(budget)}"
             f"{' (' + auto_text(entry['budget_from']) + ')' if entry.get('budget_from') else ''}{search}.", ""]
    baselines = entry.get("baselines", {})
    lines += ["| estimate | time |", "|---|---|",
              f"| this assignment | {_seconds(entry.get('estimate_seconds'))} |",
              f"| all on `{host}` | {_seconds(baselines.get('all_host'))} |",
              f"| all on `{accelerator}` | {_seconds(baselines.get('all_accelerator'))}"
              f"{'' if baselines.get('all_accelerator') is not None else ' (does not fit)'} |",
              f"| greedy fill | {_seconds(baselines.get('greedy_fill'))} |", ""]
    used = entry.get("accelerator_bytes")
    if used:
        parts = ", ".join(f"{key} {format_bytes(used[key])}" for key in ("weights", "activations", "staging",
                                                                          "runtime") if key in used)
        copies = f" x {used['copies']} copies" if used.get("copies", 1) > 1 else ""
        fits = "" if used.get("fits", True) else " (over the budget)"
        lines += [f"`{accelerator}` bytes: {format_bytes(used['total'])}{fits} ({parts}{copies}).", ""]
    counts = entry.get("estimates")
    if counts:  # --place-costs: which estimates are measurements
        lines += ["Estimates from `--place-costs`: " + ", ".join(
            f"{kind} {c['measured']} measured, {c['modelled']} modelled" for kind, c in counts.items()) + ".", ""]
    lines += _units(entry["units"]) + _weights(entry.get("weights", [])) + _crossings(entry.get("crossings", []))
    return lines


def _units(units: list) -> list[str]:
    """The units' table; a ``why`` column where any unit says why it is
    where it is (auto kept it on the host)."""
    why = any(u.get("why") for u in units)
    lines = ["| unit | op | location | device | estimated time | bytes |" + (" why |" if why else ""),
             "|---|---|---|---|---|---|" + ("---|" if why else "")]
    for u in units:
        time = (_seconds(u["seconds"]) if "seconds" in u else "-") + _how(u)
        size = format_bytes(u["bytes"]) if "bytes" in u else "-"
        lines.append(f"| {u['id']} | {_cell(u['label'])} | `{u.get('location') or '?'}` | {u['device']} | {time} | "
                     f"{size} |" + (f" {_cell(u.get('why') or '')} |" if why else ""))
    return lines + [""]


def _how(entry: dict) -> str:
    """`` (measured)`` or `` (modelled)`` where --place-costs gave times;
    `` (measured at bound)`` for a dynamic shape timed at its --max-dim bound."""
    if "estimate" not in entry:
        return ""
    return f" ({entry['estimate']}{' at bound' if entry.get('at_bound') and entry['estimate'] == 'measured' else ''})"


def _weights(weights: list) -> list[str]:
    if not weights:
        return ["No weights.", ""]
    lines = ["| weight | device | bytes |", "|---|---|---|"]
    lines += [f"| `{w['name']}` | {w['device']} | {format_bytes(w['bytes'])} |" for w in weights]
    return lines + [""]


def _crossings(crossings: list) -> list[str]:
    if not crossings:
        return ["No value crosses between the devices.", ""]
    lines = ["| from | to | direction | bytes | estimated time |", "|---|---|---|---|---|"]
    lines += [f"| {c['source']} | {c['target']} | {c['direction']} | {format_bytes(c['bytes'])} | "
              f"{_seconds(c.get('seconds'))}{_how(c)} |" for c in crossings]
    return lines + [""]
