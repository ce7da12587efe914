"""``bench generate run``'s table and targets (issue 46 item 4).

One row per line, grouped by budget: mdc's ``--place=auto`` module, torch
(the hand split; at budget 0 all on the CPU, at the full budget all on
the GPU) and accelerate; then the f16 lines, mdc and torch all on the GPU.
On each mdc row, its decode tokens/s over accelerate's and over torch's
at the same budget (above 1.00x mdc is faster). The targets: mdc's decode
tokens/s at least accelerate's at every partial budget, at least 0.8x
torch's hand split at every budget, mdc f16 on the GPU at least 0.5x
torch f16 on the GPU, and the peak GPU memory of every mdc line within
its budget (torch's hand split and accelerate are counted beside it: they
hold no budget of their own, accelerate's ``max_memory`` counting weights
alone).
"""

from __future__ import annotations

from .kitframe import fixed
from .placement_format import placed_text

HAND_AT_LEAST, F16_AT_LEAST = 0.8, 0.5
SPECS = (">6", ">8", "<13", ">9", ">10", ">9", ">8", ">8", ">8", ">8", ">8", ">7", "")
HEADS = ("budget", "MiB", "tool", "GPU", "prefill ms", "decode/s", "mdc/acc", "mdc/hand", "peak MiB", "open MiB",
         "torch MiB", "in bud", "ids right")


def _mib(nbytes) -> str:
    return "n/a" if nbytes is None else f"{nbytes / 2**20:.0f}"


def tokens_per_s(result: dict | None, new_tokens: int) -> float | None:
    """Decode tokens/s of a measured result (None: none)."""
    if not result or "failed" in result:
        return None
    return (new_tokens - 1) / result["decode_s"] if result["decode_s"] > 0 else float("inf")


def in_budget(line, result: dict | None) -> bool | None:
    """The line's peak GPU memory (with the context open) within its
    budget; None: no budget above 0, or not measured."""
    if line.budget is None or not line.budget["bytes"] or not result or result.get("grown") is None:
        return None
    return result["grown"] <= line.budget["bytes"]


def _placed(line, result: dict) -> str:
    if line.tool == "mdc":
        return placed_text(line.budget["placed"]) if line.budget else "all"
    if line.tool == "accelerate":
        return result.get("placed", "?") if result else "?"
    return result.get("placed", "?") if result else "?"


def _ratio(a: float | None, b: float | None) -> str:
    return "" if a is None or b is None or not b else f"{a / b:.2f}x"


def _row(line, result: dict | None, new_tokens: int, ratios: tuple = ("", "")) -> str:
    b = line.budget
    budget = (f"{b['fraction']:.2f}", f"{b['bytes'] / 2**20:.1f}") if b else ("none", "")
    if not result:
        return fixed((*budget, line.label, "", "not run"), SPECS[:4] + ("",))
    if "failed" in result:
        return fixed((*budget, line.label, "", f"FAILED {result['failed'][:160]}"), SPECS[:4] + ("",))
    fits = in_budget(line, result)
    ids = {"same": "yes"}.get(result.get("ids"), f"no ({result.get('ids')})" if result.get("ids_same") is False
                                else "n/a")
    return fixed((*budget, line.label, _placed(line, result), f"{result['prefill_s'] * 1e3:.1f}",
                  f"{tokens_per_s(result, new_tokens):.1f}", *ratios, _mib(result.get("grown")),
                  _mib(result.get("held")), _mib(result.get("torch_allocated")),
                  "n/a" if fits is None else ("yes" if fits else "NO"), ids), SPECS)


def _by_budget(lines: list) -> dict:
    """Budget name -> {tool: line}; the torch GPU f32 line is the hand
    split of the full budget."""
    out: dict = {}
    for line in lines:
        if line.budget is not None:
            out.setdefault(line.budget["name"], {})["hand" if line.tool == "torch" else line.tool] = line
    return out


def table(kit: dict, lines: list, results: dict, new_tokens: int) -> bool:
    """Prints the table and the targets; -> every result right (no line
    failed, every f32 line's ids torch's)."""
    print(f"\nms and tokens/s: prefill of {kit['prompt_tokens']} tokens (one call and its argmax), decode of "
          f"{new_tokens - 1} more (after a warm-up generation); GPU: the blocks there (mdc: its report's, E the "
          "embedding, H the head, ~N blocks split; accelerate: the blocks its map keeps there, the rest run there "
          "streamed from the CPU); mdc/acc, mdc/hand: mdc's decode tokens/s over accelerate's and torch's at the "
          "budget; peak MiB: the GPU's peak use less its use with the CUDA context open; open MiB: less its use "
          "before the process opened the GPU; torch MiB: torch.cuda.max_memory_allocated; in bud: peak MiB "
          "within the budget; ids right: torch's all-GPU ids of the dtype, every one\n")
    print(fixed(HEADS, SPECS))
    groups = _by_budget(lines)
    acc, hand, inside, wrong = [], [], [], []
    for row in kit["budgets"]:
        tools = groups.get(row["name"], {})
        got = {t: results.get(line.key) for t, line in tools.items()}
        rate = {t: tokens_per_s(r, new_tokens) for t, r in got.items()}
        partial = 0 < row["fits"] < kit["sizes"]["blocks"]
        for tool in ("mdc", "hand", "accelerate"):
            if tool not in tools:
                continue
            ratios = (_ratio(rate.get("mdc"), rate.get("accelerate")), _ratio(rate.get("mdc"), rate.get("hand"))) \
                if tool == "mdc" else ("", "")
            print(_row(tools[tool], got[tool], new_tokens, ratios))
            if row["bytes"]:  # budget 0 holds nothing there: no peak to judge
                inside.append((tool, in_budget(tools[tool], got[tool])))
        if partial and "accelerate" in tools:
            acc.append(None if None in (rate.get("mdc"), rate.get("accelerate")) else rate["mdc"] >= rate["accelerate"])
        if "hand" in tools:
            hand.append(None if None in (rate.get("mdc"), rate.get("hand"))
                        else rate["mdc"] >= HAND_AT_LEAST * rate["hand"])
    f16 = {line.tool: line for line in lines if line.dtype == "f16"}
    f16_rate = {t: tokens_per_s(results.get(line.key), new_tokens) for t, line in f16.items()}
    for line in lines:  # the lines of no budget: f16 all on the GPU (torch's f32 too, where no budget fits all)
        if line.budget is None:
            ratios = ("", _ratio(f16_rate.get("mdc"), f16_rate.get("torch"))) if line.key == "mdc-f16" else ("", "")
            print(_row(line, results.get(line.key), new_tokens, ratios))
    failed = [line.key for line in lines if "failed" in (results.get(line.key) or {})]
    wrong = [f"{line.key} ({results[line.key]['ids_note']})" for line in lines
             if line.dtype == "f32" and (results.get(line.key) or {}).get("ids_same") is False]
    f16_met = None if None in (f16_rate.get("mdc"), f16_rate.get("torch")) or not f16 else \
        f16_rate["mdc"] >= F16_AT_LEAST * f16_rate["torch"]
    print("\n" + targets(acc, hand, f16_met, inside))
    for about in dict.fromkeys(r.get("about") for r in results.values() if r.get("about")):
        print(f"  {about}")
    for w in wrong:
        print(f"WRONG ids: {w}")
    for f in failed:
        print(f"FAILED: {f}: {results[f]['failed']}")
    return not failed and not wrong


def _count(met: list) -> str:
    known = [m for m in met if m is not None]
    unknown = len(met) - len(known)
    return f"{sum(known)} of {len(known)}" + (f" ({unknown} not measured)" if unknown else "")


def targets(acc: list, hand: list, f16: bool | None, inside: list) -> str:
    """One line per target of issue 46 item 4 (``inside``: (tool, peak
    within the budget) of every line of a budget above 0)."""
    return "\n".join([
        f"target: mdc's decode tokens/s >= accelerate's at every partial budget: met at {_count(acc)} budgets",
        f"target: mdc's decode tokens/s >= {HAND_AT_LEAST}x torch's hand split at every budget: met at "
        f"{_count(hand)} budgets",
        f"target: mdc f16 all on the GPU >= {F16_AT_LEAST}x torch f16 all on the GPU (decode tokens/s): "
        + ("not measured" if f16 is None else ("met" if f16 else "NOT met")),
        f"target: mdc's peak GPU memory within the budget at every line (budgets above 0): met at "
        f"{_count([m for tool, m in inside if tool == 'mdc'])} lines (torch's hand split and accelerate, which "
        f"hold no budget: {_count([m for tool, m in inside if tool != 'mdc'])})"])
