"""``bench placement run``'s tables (placement.py measures, this shows):
per variant, one line per budget (auto against the best contiguous split
and greedy fill), one line per module (every placement's estimate beside
its measurement), the throughput table's lines; then the targets counted
over every line. Numbers in, text out; needs numpy only through the run."""

from __future__ import annotations

import dataclasses

from .placement_format import estimates_text, placed_text, split_text

# The targets (issue 45 item 3): each estimate within 1.5x of its
# measurement, either way; auto within 1.05x of the best comparison.
ESTIMATE_WITHIN = 1.5
AUTO_WITHIN = 1.05


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:9.2f}"


def mib(nbytes: int | None) -> str:
    return f"{'n/a':>8}" if nbytes is None else f"{nbytes / 2**20:8.1f}"


def off(ratio: float) -> float:
    """How far an estimate/measured ratio is from 1, either way."""
    return max(ratio, 1 / ratio) if ratio > 0 else float("inf")


BUDGET_HEADER = (f"  {'variant':>17} {'budget':>6} {'MiB':>8} | {'auto':>8} {'est':>9} {'meas':>9} | "
                 f"{'best split':>10} {'est':>9} {'meas':>9} | {'a/best':>7} | {'greedy':>8} {'est':>9} {'meas':>9} | "
                 f"{'a/greedy':>8} | {'peak MiB a/b/g':>26} {'in budget':>9} | {'open MiB a/b/g':>26} "
                 f"{'in budget':>9} | {'fit r/c':>7}  correct")
MODULE_HEADER = (f"  {'variant':>17} {'placement':>10} {'GPU MiB':>8} | {'est':>9} {'meas':>9} {'est/meas':>8} "
                 f"{'in 1.5x':>7} | {'estimates':>13} | {'peak MiB':>8}  correct  as")


@dataclasses.dataclass(frozen=True)
class Line:
    """One budget's line of the table, and what the targets ask of it."""

    text: str
    right: bool
    name: str
    auto_over_best: float
    auto_over_greedy: float
    in_budget: bool | None
    cost_shown: bool  # greedy has the table on the GPU; auto has it on the CPU with more blocks
    open_in_budget: bool | None = None  # the peaks with the device open within the budget; None: unknown or budget 0


def budget_line(variant: str, row: dict, runs: dict, overhead: int | None) -> Line:
    """The line of one budget; ``runs``: file -> placement.Run."""
    p = row["placements"]
    best = min(row["splits"], key=lambda s: runs[s["file"]].measured.seconds)
    shown = {"auto": p["auto"], "best": best, "greedy": p["greedy"]}
    r = {k: runs[v["file"]] for k, v in shown.items()}
    right = all(runs[e["file"]].measured.right for e in [*p.values(), *row["splits"]])
    peaks = [x.gpu_bytes for x in r.values()]
    inside = None if overhead is None or None in peaks else all(g - overhead <= row["bytes"] for g in peaks)
    opened = [x.open_bytes for x in r.values()]
    # Budget 0 puts no work there, and no budget counts the open device then.
    open_inside = None if row["bytes"] == 0 or None in opened else all(o <= row["bytes"] for o in opened)
    over_best = r["auto"].measured.seconds / r["best"].measured.seconds
    over_greedy = r["auto"].measured.seconds / r["greedy"].measured.seconds
    cost = (p["greedy"]["embedding"] and not p["auto"]["embedding"] and p["auto"]["blocks"] > p["greedy"]["blocks"]
            and over_greedy < 1.0)

    def cell(key: str) -> str:
        return f"{split_text(shown[key]):>8} {ms(shown[key]['estimate_seconds'])} {ms(r[key].measured.seconds)}"

    text = (f"  {variant:>17} {row['name']:>6} {row['bytes'] / 2**20:8.1f} | {cell('auto')} | "
            f"{split_text(best):>10} {ms(best['estimate_seconds'])} {ms(r['best'].measured.seconds)} | "
            f"{over_best:6.2f}x | {cell('greedy')} | {over_greedy:7.2f}x | "
            f"{' '.join(mib(g) for g in peaks):>26} {'n/a' if inside is None else str(inside):>9} | "
            f"{' '.join(mib(o) for o in opened):>26} {'n/a' if open_inside is None else str(open_inside):>9} | "
            f"{str(row['runs_fit']) + '/' + str(row['classes_fit']):>7}  {right}")
    return Line(text, right, row["name"], over_best, over_greedy, inside, cost, open_inside)


def roles(entry: dict) -> dict:
    """file -> what the variant's budgets use it as (``auto n6``, ``greedy
    cost``, ``split``) and how the table shows it."""
    found: dict = {}
    for row in entry["budgets"]:
        for variant, placed in row["placements"].items():
            found.setdefault(placed["file"], {"placed": placed, "as": []})["as"].append(f"{variant} {row['name']}")
        for placed in row["splits"]:
            item = found.setdefault(placed["file"], {"placed": placed, "as": []})
            item["placed"] = placed  # a split's entry names its run
            if "split" not in item["as"]:
                item["as"].append("split")
    return found


def module_lines(variant: str, entry: dict, runs: dict) -> tuple[list[str], list[float]]:
    """Every module of a variant once: its estimate beside its measurement;
    (the lines, each estimate/measured ratio)."""
    lines, ratios = [], []
    for file, item in sorted(roles(entry).items(), key=lambda kv: kv[1]["placed"]["estimate_seconds"]):
        placed, run = item["placed"], runs[file]
        ratio = placed["estimate_seconds"] / run.measured.seconds
        ratios.append(ratio)
        uses = [a for a in item["as"] if a != "split"]
        uses_text = ("split" + (", " if uses else "") if "split" in item["as"] else "") + _compact(uses)
        lines.append(f"  {variant:>17} {split_text(placed):>10} {placed['gpu_bytes'] / 2**20:8.1f} | "
                     f"{ms(placed['estimate_seconds'])} {ms(run.measured.seconds)} {ratio:7.2f}x "
                     f"{str(off(ratio) <= ESTIMATE_WITHIN):>7} | {estimates_text(placed.get('estimates')):>13} | "
                     f"{mib(run.gpu_bytes)}  {str(run.measured.right):>7}  {uses_text}")
    return lines, ratios


def _compact(uses: list[str]) -> str:
    """``auto n6 n12, greedy cost``: the roles grouped by placement."""
    grouped: dict = {}
    for use in uses:
        kind, name = use.split(" ", 1)
        grouped.setdefault(kind, []).append(name)
    return ", ".join(f"{kind} {' '.join(names)}" for kind, names in grouped.items())


def throughput_line(variant: str, row: dict, runs: dict, overhead: int | None) -> tuple[str, bool, bool | None]:
    """A line of the two-calls table; (text, throughput no slower, its peak in budget)."""
    p = row["placements"]
    ratio = runs["throughput"].measured.seconds / runs["latency"].measured.seconds
    held = {v: None if overhead is None or r.gpu_bytes is None else r.gpu_bytes - overhead <= row["bytes"]
            for v, r in runs.items()}
    text = (f"  {variant:>17} {row['name']:>6} {row['bytes'] / 2**20:8.1f} "
            f"{'/'.join(placed_text(p[v]) for v in runs):>16} | "
            f"{ms(p['latency']['estimate_seconds']):>11} {ms(runs['latency'].measured.seconds)} | "
            f"{ms(p['throughput']['estimate_seconds'])} {ms(runs['throughput'].measured.seconds)} | "
            f"{ratio:5.2f}x | {' '.join(mib(r.gpu_bytes) for r in runs.values()):>17} "
            f"{'/'.join('n/a' if h is None else str(h) for h in held.values()):>13} | "
            f"{' '.join(mib(r.open_bytes) for r in runs.values()):>17}  "
            f"{all(r.measured.right for r in runs.values())}")
    return text, ratio <= 1.0, held["throughput"]


THROUGHPUT_HEADER = (f"  {'variant':>17} {'budget':>6} {'MiB':>8} {'GPU blocks l/t':>16} | {'latency est':>11} "
                     f"{'meas':>9} | {'thrpt est':>9} {'meas':>9} | {'t/l':>6} | {'peak MiB l/t':>17} "
                     f"{'in budget l/t':>13} | {'open MiB l/t':>17}  correct")


def targets(lines: list[Line], ratios: list[float]) -> str:
    """How many lines (and modules) meet each target (docs/PERFORMANCE.md)."""
    count = len(lines)
    best = sum(x.auto_over_best <= AUTO_WITHIN for x in lines)
    greedy = sum(x.auto_over_greedy <= 1.0 for x in lines)
    inside = [x.in_budget for x in lines if x.in_budget is not None]
    opened = [x.open_in_budget for x in lines if x.open_in_budget is not None]
    cost = [x for x in lines if x.name == "cost"]
    close = sum(off(r) <= ESTIMATE_WITHIN for r in ratios)
    return (f"targets: estimates within {ESTIMATE_WITHIN}x of measurement at {close} of {len(ratios)} "
            f"(worst {max(ratios, key=off, default=1.0):.3g}x); auto within {AUTO_WITHIN}x of the best at {best} of "
            f"{count} lines (the best of all-CPU, all-GPU where it fits and every contiguous split); auto no slower "
            f"than greedy fill at {greedy} of {count}; peaks within the budget at "
            + (f"{sum(inside)} of {len(inside)}" if inside else "n/a (no GPU memory measured)")
            + "; peaks with the device open within the budget at "
            + (f"{sum(opened)} of {len(opened)}" if opened else "n/a (no NVML reading)")
            + f"; cost matters (greedy's table on the GPU, auto's on the CPU with more blocks, auto faster) at "
            f"{sum(x.cost_shown for x in cost)} of {len(cost)} cost lines")


BUDGET_LEGEND = (
    "per call, ms (median of {calls1} calls at batch 1, {callsn} at larger batches, after 2); est: the "
    "--report's estimate ({estimates}); a placement: a contiguous split by its run (E the embedding, "
    "first-last block, H the head; cpu, gpu: all on one), else blocks whose matmuls run on the GPU, E, H there "
    "too, ~N: N blocks split between the devices; best split: the fastest measured of all-CPU, all-GPU where it "
    "fits and each contiguous split that fits the budget (one run of each class, placement_splits.py); "
    "a/best, a/greedy: auto's measured time over theirs (target a/best <= {within}x); peak MiB: GPU memory in "
    "use at the peak of the module's load and calls less before it; in budget: each peak less the all-CPU "
    "module's (the runtime's own) within the budget; open MiB: the same peak less what the GPU used before "
    "this process opened it (NVML), the CUDA context and the runtime's own included; in budget: each within "
    "the budget (budgets above 0); fit r/c: contiguous runs and classes that fit the budget")
MODULE_LEGEND = (
    "every placement once: est/meas, the estimate over the measured time (target within {within}x either "
    "way); estimates: units and crossings measured (u measured/all, c measured/all; --place-costs) or model "
    "(the machine profile alone); as: what the budgets use it as")
