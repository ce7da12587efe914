"""A host twin's own copy of each call it reaches that IREE does not inline.

IREE 3.13 gives each argument of a function it does not inline
(``inlining_policy = #util.inline.never``) one resource lifetime, and fails
("'util.call' op function type mismatch") when two calls pass it values of
different lifetimes: an imported argument (``external``) at one, a computed
value (``transient``) at another (canary:
test/lit/regress/iree_never_inlined_mixed_lifetimes.test).

A host twin (host_entry_points.py) runs its function's body on values that
arrive on the host device and are moved to their declared devices, so the
lifetimes in it are not the function's: a ``flow.tensor.clone`` back onto
the host device folds the move away and passes the imported argument on,
where the function passes a copy. A call the twin reaches must therefore
never share its callee with another call. This pass gives the twin a
private copy of its function, and each call in a copy whose callee reaches
a never-inlined function its own private copy of that callee, down the
whole call tree. Every never-inlined function the twin reaches then has
exactly one call, whatever the nesting, whichever other functions call the
original, and whatever the twin's ABI model: IREE has one lifetime to give
each argument. Calls of functions that reach none are left alone (IREE
inlines them), and so is a twin whose function reaches none.

The copies are a tree: a callee reached along two paths is copied twice.
A call graph with a cycle gets no copies (refuse-recursive-calls refuses it
right after).
"""

from __future__ import annotations

from iree.compiler import ir

from ..ir import ir_adapter as irx
from ..ir.ir_util import get_attr, top_level_ops, walk
from .recursive_calls import call_graph, find_call_cycle

_FUNCTIONS = (irx.FUNC_FUNC, irx.UTIL_FUNC)
_CALLS = (irx.FUNC_CALL, irx.UTIL_CALL)


def _never_inlined(function: ir.Operation) -> bool:
    policy = get_attr(function, "inlining_policy")
    return (policy is not None and str(policy) == "#util.inline.never") or "noinline" in function.attributes


def _reaching_never_inlined(module, graph: dict) -> set[str]:
    """Functions that are never inlined or call, at any depth, one that is."""
    never = {ir.StringAttr(op.attributes["sym_name"]).value for op in top_level_ops(module)
             if op.name in _FUNCTIONS and _never_inlined(op)}
    reaching: dict[str, bool] = {}

    def reaches(name: str) -> bool:
        if name not in reaching:
            reaching[name] = name in never or any(reaches(callee) for callee, _ in graph.get(name, []))
        return reaching[name]

    return {name for name in graph if reaches(name)}


def _own_copies(module, caller: ir.Operation, prefix: str, reaching: set[str], functions: dict,
                symbols: irx.SymbolNames) -> None:
    """Points each call in ``caller`` whose callee is in ``reaching`` at a
    fresh private copy of the callee (named ``prefix.callee``, unique in
    ``symbols``), whose own calls get the same, recursively."""
    for call in [op for op in walk(caller) if op.name in _CALLS and "callee" in op.attributes]:
        callee = ir.FlatSymbolRefAttr(call.attributes["callee"]).value
        if callee not in reaching:
            continue
        copy = functions[callee].clone(ip=ir.InsertionPoint(module.regions[0].blocks[0]))
        name = symbols.unique(f"{prefix}.{callee}")
        copy.attributes["sym_name"] = ir.StringAttr.get(name)
        copy.attributes["sym_visibility"] = ir.StringAttr.get("private")
        call.attributes["callee"] = ir.FlatSymbolRefAttr.get(name)
        _own_copies(module, copy, prefix, reaching, functions, symbols)


def give_twins_own_call_trees(module, twins: list[tuple[str, str]]) -> None:
    """For each (function, twin) pair, the twin's calls get their own copies."""
    graph = call_graph(module)
    if find_call_cycle(graph) is not None:
        return
    reaching = _reaching_never_inlined(module, graph)
    functions = {ir.StringAttr(op.attributes["sym_name"]).value: op
                 for op in top_level_ops(module) if op.name in _FUNCTIONS}
    symbols = irx.SymbolNames(module)
    for function, twin in twins:
        if function in reaching:
            _own_copies(module, functions[twin], twin, reaching, functions, symbols)
