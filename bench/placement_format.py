"""What the placement kit's builder and its run share: the format's name,
the kit's grid (models, dtypes, token counts) and how a variant and a
placement are named and shown. Needs nothing but the standard library, so
that the run needs no compiler."""

from __future__ import annotations

FORMAT = "mdc.bench.placement/2"
MODELS = ("workload", "swiglu", "gpt2mlp")  # models_kit.KINDS' names: bench/model.py's, swiglu.py's, gpt2_mlp.py's
DTYPES = ("f32", "f16")
TOKENS = (1, 16)  # token ids a call (the programs' batch); issue 45's targets name 1 and 16
SMOKE_TOKENS = (1, 4)
VARIANTS = ("auto", "greedy")  # the placements of a budget beside its contiguous splits


def variant_name(model: str, dtype: str, batch: int) -> str:
    """``workload_f32_b1``: a model at a dtype and a batch, the kit's unit."""
    return f"{model}_{dtype}_b{batch}"


def placed_text(described: dict) -> str:
    """``24H~16``: 24 blocks' matmuls on the GPU, E the embedding and H the
    head there too, ~16 of the blocks split between the devices
    (placement_plan.describe's fields)."""
    text = f"{described['blocks']}{'E' if described['embedding'] else ''}{'H' if described['head'] else ''}"
    return text + (f"~{described['split']}" if described.get("split") else "")


def split_text(entry: dict) -> str:
    """A placement as the tables show it: a contiguous split by its run
    (placement_splits.text: ``18-23H``), anything else by placed_text."""
    return entry.get("run") or placed_text(entry)


def estimates_text(counts: dict | None) -> str:
    """A report's ``estimates`` (--place-costs: units and crossings
    measured and modelled) as ``u 98/100 c 2/2``; ``model`` without."""
    if not counts:
        return "model"
    u, c = counts["units"], counts["crossings"]
    return (f"u {u['measured']}/{u['measured'] + u['modelled']} "
            f"c {c['measured']}/{c['measured'] + c['modelled']}")


def plan_text(entry: dict) -> str:
    """The estimates of a variant's budgets (the build's print): auto,
    greedy fill and the contiguous split of least estimate that fits, and
    how many runs and classes fit."""
    def cell(p: dict) -> str:
        return f"{split_text(p):>8} {p['estimate_seconds'] * 1e3:9.3f} ms"

    lines = [f"{entry['name']}: GPU placement and estimated time per call",
             f"  {'budget':>6} {'MiB':>9}  {'auto':>21}  {'greedy':>21}  {'best split (est)':>21}  runs/classes fit"]
    for row in entry["budgets"]:
        best = min(row["splits"], key=lambda p: p["estimate_seconds"])
        lines.append(f"  {row['name']:>6} {row['bytes'] / 2**20:9.1f}  {cell(row['placements']['auto']):>21}  "
                     f"{cell(row['placements']['greedy']):>21}  {cell(best):>21}  "
                     f"{row['runs_fit']}/{row['classes_fit']}")
    return "\n".join(lines)


def throughput_text(entry: dict) -> str:
    """The throughput table's estimates of a variant, one line per budget."""
    lines = [f"{entry['name']}, two calls in flight: blocks on the GPU and estimated time per call in a stream",
             f"  {'budget':>6} {'MiB':>9}  {'latency':>21}  {'throughput':>21}"]
    for row in entry["throughput"]:
        cells = [f"{placed_text(p):>8} {p['estimate_seconds'] * 1e3:9.3f} ms" for p in row["placements"].values()]
        lines.append(f"  {row['name']:>6} {row['bytes'] / 2**20:9.1f}  " + "  ".join(f"{c:>21}" for c in cells))
    return "\n".join(lines)
