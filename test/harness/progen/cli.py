"""progen's command line: show, check, minimize (the package docstring says
what each does)."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

import numpy as np

from .check import Outcome, check_all, check_batch, default_seed, known_issue
from .commands import TARGETS
from .generator import generate
from .minimize import failure_key, minimize
from .values import FLOATS, NP


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=sys.modules[__package__].__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("show", help="print one program, its inputs and its reference")
    s.add_argument("--seed", type=int, required=True)
    s.add_argument("--index", type=int, required=True)
    c = sub.add_parser("check", help="differential check of programs")
    c.add_argument("--seed", type=int, default=None, help="default: MDC_PROGEN_SEED or the time")
    c.add_argument("--count", type=int, default=24)
    c.add_argument("--index", type=int, action="append", help="only these program indices")
    c.add_argument("--jobs", type=int, default=2)
    c.add_argument("--batch", type=int, default=12)
    c.add_argument("--keep", help="work directory to keep (default: a temporary one)")
    c.add_argument("--target", choices=TARGETS, default="local",
                   help="local: forced staging between CPU devices; vulkan: device_b on Vulkan (lavapipe)")
    m = sub.add_parser("minimize", help="reduce a failing program")
    m.add_argument("--seed", type=int, required=True)
    m.add_argument("--index", type=int, required=True)
    m.add_argument("--keep", help="work directory")
    m.add_argument("--target", choices=TARGETS, default="local", help="as for check")
    a = p.parse_args(argv)

    if a.cmd == "show":
        prog = generate(a.seed, a.index)
        print(prog.text())
        print(prog.describe())
        np.set_printoptions(threshold=64, linewidth=200)
        for k, ((v, d), (ref, bound)) in enumerate(zip(prog.results, prog.reference())):
            print(f"result {k} on {d}: {v.type} = {ref.astype(NP[v.dtype]) if v.dtype not in FLOATS else ref}"
                  + (f"  (max error bound {bound.max() if bound.size else 0:.3g})" if v.dtype in FLOATS else ""))
        return 0

    seed = a.seed if a.seed is not None else default_seed()
    work = a.keep or tempfile.mkdtemp(prefix="progen-")
    if a.cmd == "minimize":
        prog = generate(a.seed, a.index)
        o = check_batch([prog], os.path.join(work, "start"), target=a.target)[0]
        if o.ok:
            print("the program passes; nothing to minimise")
            return 0
        key = failure_key(o)
        print(f"minimising ({key}); the smallest so far goes to {work}/best.mlir", flush=True)
        small = minimize(prog, key, os.path.join(work, "min"), log=lambda m: print(m, flush=True), target=a.target)
        print(small.text())
        print(small.describe())
        print(check_batch([small], os.path.join(work, "final"), target=a.target)[0].report())
        return 1

    indices = a.index if a.index else range(a.count)
    print(f"MDC_PROGEN_SEED={seed}: {len(indices)} programs, work dir {work}", flush=True)
    start = time.time()
    programs = [generate(seed, i) for i in indices]
    gen_time = time.time() - start

    def progress(o: Outcome):
        if not o.ok:
            print(o.report() + "\n", flush=True)

    outcomes = check_all(programs, work, jobs=a.jobs, batch_size=a.batch, progress=progress, target=a.target)
    bad = [o for o in outcomes if not o.ok]
    print(f"MDC_PROGEN_SEED={seed}: {len(outcomes) - len(bad)} passed, {len(bad)} failed "
          f"(generation {gen_time:.1f}s, total {time.time() - start:.1f}s)")
    for o in bad:
        known = known_issue(o)
        print(f"  index {o.program.index}: {o.status}" + (f" [known: {known}]" if known else ""))
    return 1 if bad else 0

