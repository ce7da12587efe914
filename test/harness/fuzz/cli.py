"""fuzz's command line: run, show, minimize (the package docstring says
what each does)."""

from __future__ import annotations

import argparse
import sys
import os
import tempfile
import time

from .cases import make_case, make_cases
from .minimize import minimize
from .mutations import corpus
from .rule import Result
from .run import default_seed, prepare, run_all, run_case


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=sys.modules[__package__].__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--seed", type=int)
    r.add_argument("--count", type=int, default=500)
    r.add_argument("--jobs", type=int, default=2)
    r.add_argument("--keep")
    for name in ("show", "minimize"):
        s = sub.add_parser(name)
        s.add_argument("--seed", type=int, required=True)
        s.add_argument("--index", type=int, required=True)
        s.add_argument("--keep")
    a = p.parse_args(argv)
    work = a.keep or tempfile.mkdtemp(prefix="mdc-fuzz-")
    if a.cmd in ("show", "minimize"):
        compile_inputs, opt_inputs = corpus()
        case = make_case(a.seed, a.index, compile_inputs, opt_inputs)
        vmfbs = prepare(os.path.join(work, "vmfb"))
        if a.cmd == "minimize":
            case = minimize(case, os.path.join(work, "min"), vmfbs, log=lambda m: print(m, flush=True))
        res = run_case(case, os.path.join(work, "show"), vmfbs)
        print(f"case {case.index}: {case.tool}: {case.what}")
        print("command: " + " ".join(res.cmd))
        for name, data in case.files.items():
            if isinstance(data, bytes):
                print(f"--- {name} ({len(data)} bytes) ---")
                print(data.decode("utf-8", "replace")[:6000])
        print(res.report(a.seed) if not res.ok else f"obeys the rule (exit {res.returncode})\n{res.stderr[:2000]}")
        return 0 if res.ok else 1
    seed = a.seed if a.seed is not None else default_seed()
    print(f"MDC_FUZZ_SEED={seed}: {a.count} cases, work dir {work}", flush=True)
    start = time.time()
    cases = make_cases(seed, a.count)

    def progress(res: Result):
        if not res.ok:
            print(res.report(seed) + "\n", flush=True)

    results = run_all(cases, work, a.jobs, progress)
    bad = [x for x in results if not x.ok]
    by_tool = {}
    for x in results:
        by_tool.setdefault(x.case.tool, [0, 0])[x.returncode == 0] += 1
    print(f"MDC_FUZZ_SEED={seed}: {len(results) - len(bad)} obeyed the rule, {len(bad)} did not "
          f"({time.time() - start:.0f}s); exit status 0/non-0 per tool: "
          + ", ".join(f"{t} {s}/{f}" for t, (f, s) in sorted(by_tool.items())))
    return 1 if bad else 0
