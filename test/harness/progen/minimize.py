"""Minimising a failing program: drop statements and results while the
failure stays the same."""

from __future__ import annotations

import os
import re
import shutil

from .check import Outcome, check_batch
from .commands import failed, sh, stock_compile_cmd
from .generator import live
from .program import Arg, Program
from .stmts import Cast, Constant, Elementwise, Loop, Stmt, Transfer
from .values import FLOATS, NP, Value


def failure_key(o: Outcome) -> str:
    """What a failure is, for minimising: its category and the first error
    message with paths, numbers and SSA names blanked out."""
    m = re.search(r"error: (.*)", o.detail)
    text = m.group(1) if m else o.detail.splitlines()[0] if o.detail else ""
    text = re.sub(r"%[\w#]+|\d+|/\S+", "_", text)[:80]
    if o.status.startswith(("mdc-vs-stock", "stock-vs-numpy")):
        text = ""  # wrong numbers: any wrong numbers
    return o.status.split(" ")[0] + ": " + text


def _still_fails(prog: Program, key: str, work: str, target: str = "local") -> bool:
    shutil.rmtree(work, ignore_errors=True)
    if key.startswith("stock-compile-failed"):  # only stock matters: skip mdc
        os.makedirs(work)
        src = os.path.join(work, "module.mlir")
        with open(src, "w") as f:
            f.write(prog.text())
        r = sh(stock_compile_cmd(src, os.path.join(work, "stock.vmfb"), prog.devices(), prog.model))
        if r.returncode not in (0, 1) or "Stack dump" in r.stderr:  # as compile_pair does
            r = sh(stock_compile_cmd(src, os.path.join(work, "stock.vmfb"), prog.devices(), prog.model)
                    + ["--iree-opt-const-eval=false"])
        o = Outcome(prog, "stock-compile-failed" if r.returncode else "ok", failed("stock iree-compile", r))
    else:
        o = check_batch([prog], work, target=target)[0]
    return not o.ok and failure_key(o) == key


def _replace_uses(stmts: list[Stmt], old: Value, new: Value) -> None:
    for s in stmts:
        for attr, val in list(vars(s).items()):
            if val is old:
                setattr(s, attr, new)
            elif isinstance(val, list) and any(x is old for x in val):
                setattr(s, attr, [new if x is old else x for x in val])
        if isinstance(s, Loop):
            _replace_uses(s.body, old, new)


def minimize(prog: Program, key: str, work: str, log=print, target: str = "local") -> Program:
    """Greedy graph reduction while the failure stays the same
    (`failure_key`): drop results, bypass statements (use an operand of the
    same type instead), turn statements into arguments, simplify
    expressions, drop dead code and unused arguments. The smallest program
    so far is kept in WORK/best.mlir."""
    import copy

    def log_best(p: Program, what: str):
        with open(os.path.join(os.path.dirname(work), "best.mlir"), "w") as f:
            f.write(p.text())
        log("  " + what)

    def attempt(candidate: Program) -> bool:
        used = {o for s in candidate.stmts for o in s.operands()} | {v for v, _ in candidate.results}
        candidate.args = [a for a in candidate.args if a.value in used]
        if len(candidate.devices()) < 2 and len(prog.devices()) >= 2:
            return False
        try:
            candidate.reference()
        except Exception:
            return False
        return _still_fails(candidate, key, work, target)

    def variants(p: Program):
        """Smaller candidates, roughly the biggest cuts first."""
        for k in range(len(p.results)):
            if len(p.results) > 1:
                c = copy.deepcopy(p)
                del c.results[k]
                yield f"dropped result {k}", c
        for k in reversed(range(len(p.stmts))):
            s = p.stmts[k]
            seen = set()
            for op in s.operands():
                if op.type != s.result.type or id(op) in seen:
                    continue
                seen.add(id(op))
                c = copy.deepcopy(p)
                cs = c.stmts[k]
                cop = [o for o in cs.operands() if o.name == op.name][0]
                del c.stmts[k]
                _replace_uses(c.stmts, cs.result, cop)
                c.results = [(cop if v is cs.result else v, d) for v, d in c.results]
                yield f"bypassed {type(s).__name__} %{s.result.name}", c
        for k in reversed(range(len(p.stmts))):
            s = p.stmts[k]
            if isinstance(s, (Transfer, Cast, Constant)) or s.result.dtype == "index":
                continue
            # cut the statement off its inputs: its result becomes an argument
            c = copy.deepcopy(p)
            cs = c.stmts[k]
            v = cs.result
            arr, _ = p.reference_env()[s.result]
            del c.stmts[k]
            own = {d for _, d in cs.fresh}  # dims the statement defined: the argument defines them now
            n = len(c.args) + 100
            nv = Value(f"arg{n}", v.dtype, v.shape, v.dyn,
                       tuple(d if (not dy or d in own) else f"dx{n}_{i}" for i, (d, dy) in enumerate(zip(v.dims, v.dyn))),
                       v.device or "device_a")
            _replace_uses(c.stmts, v, nv)
            c.results = [(nv if r is v else r, d) for r, d in c.results]
            data = arr.astype(NP[v.dtype])
            c.args.append(Arg(nv, nv.device, data))
            yield f"made %{v.name} an argument", c
        for k, s in enumerate(p.stmts):
            simple = ("neg", ("in", 0)) if s.result.dtype in FLOATS else ("add", ("in", 0), ("in", 0))
            if isinstance(s, Elementwise) and (s.expr != simple or len(s.ins) > 1 or s.style != "arith"):
                c = copy.deepcopy(p)
                c.stmts[k].expr = simple
                c.stmts[k].ins = c.stmts[k].ins[:1]
                c.stmts[k].style = "arith"
                yield f"simplified %{s.result.name}", c

    changed = True
    while changed:
        changed = False
        for what, c in variants(prog):
            if attempt(c):
                prog, changed = c, True
                log_best(prog, what)
                break
        if changed:
            continue
        kept = live(prog.stmts, [v for v, _ in prog.results])
        if len(kept) < len(prog.stmts):
            c = copy.deepcopy(prog)
            ids = {id(s) for s in kept}
            c.stmts = [c.stmts[i] for i, s in enumerate(prog.stmts) if id(s) in ids]
            if attempt(c):
                prog, changed = c, True
                log_best(prog, "removed dead statements")
    return prog
