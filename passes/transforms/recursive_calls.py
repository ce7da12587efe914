"""refuse-recursive-calls: a program whose functions call themselves is refused up front.

IREE 3.13 does not finish compiling a program with a cycle in its call
graph: its global optimization phase (the fixed-point iteration around
``iree-util-fold-globals`` and the inter-procedural passes) runs forever,
whether the recursion ends at run time or not. Stock ``iree-compile`` hangs
the same way on all-local devices (canary:
``test/e2e/test_recursive_calls.py``). A compiler that hangs on its input
is the worst answer a user can get, so this check runs right after IREE's
input phase, before anything that could loop, and names the cycle and the
call that closes it. Nothing in the module changes.
"""

from __future__ import annotations

from iree.compiler import ir

from ..ir import ir_adapter as irx
from ..infra.diagnostics import MdcError
from ..ir.ir_util import top_level_ops, walk
from ..infra.pass_base import ANALYSES, Fact, ModulePass, NoOptions

_FUNCTIONS = (irx.FUNC_FUNC, irx.UTIL_FUNC)
_CALLS = (irx.FUNC_CALL, irx.UTIL_CALL)


def call_graph(module) -> dict[str, list[tuple[str, ir.Operation]]]:
    """Each function's calls, in program order: name -> [(callee, call op)].
    Calls of functions the module does not define (imports) are left out."""
    functions = [op for op in top_level_ops(module) if op.name in _FUNCTIONS]
    names = {ir.StringAttr(op.attributes["sym_name"]).value for op in functions}
    graph = {}
    for function in functions:
        calls = []
        for op in walk(function):
            if op.name in _CALLS and "callee" in op.attributes:
                callee = ir.FlatSymbolRefAttr(op.attributes["callee"]).value
                if callee in names:
                    calls.append((callee, op))
        graph[ir.StringAttr(function.attributes["sym_name"]).value] = calls
    return graph


def find_call_cycle(graph: dict) -> tuple[list[str], ir.Operation] | None:
    """The first cycle of ``graph`` in program order, as the functions on it
    (first one repeated at the end) and the call that closes it, or None."""
    state: dict[str, str] = {}  # name -> "open" (on the path) or "done"
    path: list[str] = []

    def visit(name):
        state[name] = "open"
        path.append(name)
        for callee, call in graph.get(name, []):
            if state.get(callee) == "open":
                return path[path.index(callee):] + [callee], call
            if callee not in state and (found := visit(callee)):
                return found
        path.pop()
        state[name] = "done"
        return None

    for name in graph:
        if name not in state and (found := visit(name)):
            return found
    return None


class RefuseRecursiveCalls(ModulePass):
    """Refuses a call graph with a cycle, which IREE 3.13 never finishes compiling."""

    name = "refuse-recursive-calls"
    level = "input"
    summary = "refuse a program whose functions call themselves (IREE 3.13 never finishes compiling one)"

    # It refuses a cycle in the call graph with every twin in it (a twin
    # calls its function; twin_call_trees.py copies no cyclic graph).
    needs = (Fact.HOST_TWINS, Fact.STORAGE_TWINS)
    provides = (Fact.ACYCLIC_CALLS,)
    preserves = ANALYSES

    def apply(self, module, options: NoOptions) -> None:
        found = find_call_cycle(call_graph(module))
        if found is None:
            return
        cycle, call = found
        chain = " -> ".join(f"@{n}" for n in cycle)
        who = f"@{cycle[0]} calls itself" if len(cycle) == 2 else f"@{cycle[0]} calls itself through {chain}"
        raise MdcError(
            f"{who}: IREE 3.13 never finishes compiling a recursive program",
            location=call.location,
            notes=["stock iree-compile hangs on it too; write the recursion as a loop (scf.while or scf.for)"],
        )
