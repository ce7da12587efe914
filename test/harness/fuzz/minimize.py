"""Minimising a violation: line-level, then character-level delta debugging
of the case's input file."""

from __future__ import annotations

import dataclasses
import time

from .cases import Case
from .run import run_case


def _ddmin(items: list, still_fails) -> list:
    n = 2
    while len(items) >= 2:
        chunk = max(len(items) // n, 1)
        reduced = False
        for start in range(0, len(items), chunk):
            candidate = items[:start] + items[start + chunk:]
            if candidate and still_fails(candidate):
                items, n, reduced = candidate, max(n - 1, 2), True
                break
        if not reduced:
            if n >= len(items):
                break
            n = min(n * 2, len(items))
    return items


def minimize(case: Case, work: str, vmfbs: dict, log=print, budget_s: float = 600) -> Case:
    """Shrink the case's input file while a violation of the same kind stays
    (at most `budget_s` seconds; the best so far is kept)."""
    deadline = time.time() + budget_s
    first = run_case(case, work, vmfbs)
    if first.ok:
        log("the case obeys the rule; nothing to minimise")
        return case
    kinds = {v.split(":")[0] for v in first.violations}
    name = next((n for n in case.files if n.startswith("input")), None)
    if name is None:
        log("no input file to minimise (the violation comes from the flags)")
        return case

    def fails(data: bytes) -> bool:
        if time.time() > deadline:
            return False
        c = dataclasses.replace(case, files={**case.files, name: data})
        r = run_case(c, work, vmfbs)
        return bool(kinds & {v.split(":")[0] for v in r.violations})

    data = case.files[name]
    lines = data.split(b"\n")
    lines = _ddmin(lines, lambda ls: fails(b"\n".join(ls)))
    data = b"\n".join(lines)
    if len(data) < 2000:
        chars = _ddmin([data[i:i + 1] for i in range(len(data))], lambda cs: fails(b"".join(cs)))
        data = b"".join(chars)
    log(f"minimised {name} to {len(data)} bytes")
    return dataclasses.replace(case, files={**case.files, name: data})
