"""The house's shape, as issue 33 states it: prints every module of
passes/, pipeline/, runtime_shim/, contract/ and profiler/ over 450 lines,
every class over 250 lines, every function over 70, and every import cycle
among mdc's modules; exits 1 when any is found, 0 when none.

    python scripts/house_shape.py          # the findings, one a line
    python scripts/house_shape.py --stats  # also the largest module, class and function
"""

from __future__ import annotations

import ast
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Source folder -> installed package (pyproject.toml's package-dir).
PACKAGES = {"passes": "mdc.passes", "pipeline": "mdc.pipeline", "runtime_shim": "mdc.runtime_shim",
            "contract": "mdc.contract", "profiler": "mdc.profiler"}
MAX_MODULE_LINES, MAX_CLASS_LINES, MAX_FUNCTION_LINES = 450, 250, 70


def modules() -> dict[str, str]:
    """Installed module name -> source path."""
    found = {}
    for folder, package in PACKAGES.items():
        for here, _, files in os.walk(os.path.join(ROOT, folder)):
            for name in sorted(files):
                if not name.endswith(".py"):
                    continue
                rel = os.path.relpath(os.path.join(here, name), os.path.join(ROOT, folder))[:-3]
                parts = [p for p in rel.split(os.sep) if p != "__init__"]
                found[".".join([package, *parts])] = os.path.join(here, name)
    return found


def _imports(module: str, path: str, tree: ast.AST, known: dict[str, str]) -> set[str]:
    is_package = path.endswith("__init__.py")
    base = module.split(".") if is_package else module.split(".")[:-1]
    out = set()
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                prefix = base[: len(base) - node.level + 1]
                target = ".".join([*prefix, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            # ``from package import submodule`` depends on the submodule,
            # not on the package's __init__.
            subs = [f"{target}.{a.name}" for a in node.names]
            names = [n for n in subs if n in known] or [target]
            if len(names) < len(subs):
                names.append(target)
        for name in names:
            if name in known and name != module:
                out.add(name)
    return out


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def findings() -> tuple[list[str], dict[str, tuple[int, str]]]:
    known = modules()
    problems, largest, graph = [], {"module": (0, ""), "class": (0, ""), "function": (0, "")}, {}
    for module, path in sorted(known.items()):
        source = open(path).read()
        rel = os.path.relpath(path, ROOT)
        tree = ast.parse(source, path)
        lines = source.count("\n")
        largest["module"] = max(largest["module"], (lines, rel))
        if lines > MAX_MODULE_LINES:
            problems.append(f"module {rel}: {lines} lines (at most {MAX_MODULE_LINES})")
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                size, kind, limit = node.end_lineno - node.lineno + 1, "class", MAX_CLASS_LINES
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                size, kind, limit = node.end_lineno - node.lineno + 1, "function", MAX_FUNCTION_LINES
            else:
                continue
            where = f"{rel}:{node.lineno} {node.name}"
            largest[kind] = max(largest[kind], (size, where))
            if size > limit:
                problems.append(f"{kind} {where}: {size} lines (at most {limit})")
        graph[module] = _imports(module, path, tree, known)
    for component in cycles(graph):
        problems.append("import cycle: " + " <-> ".join(component))
    return problems, largest


def main(argv: list[str]) -> int:
    if any(a in ("-h", "--help") for a in argv):
        print(__doc__.strip())
        return 0
    problems, largest = findings()
    for line in problems:
        print(line)
    if "--stats" in argv:
        for kind, (size, where) in largest.items():
            print(f"largest {kind}: {size} lines, {where}")
    print(f"{len(problems)} finding(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
