"""``python -m bench tune build|run|pick``: the CUDA matmul tuner.

    python -m bench tune build KIT [--quick] [--ops matmul|batch|dynamic|mixed] [--dtypes D,...]  # here: compiled
    python -m bench tune run KIT [--out FILE]     # there: each timed, beside torch
    python -m bench tune pick RESULTS [-o TABLE]  # here: the table cuda-matmul-configs ships

``build`` writes, for every point of the tuning grid (bench/kernel_grid.py,
TUNE_KNS), IREE's default and each candidate of bench/tune_space.py that
fits it, as functions of timing modules (bench/kernel_build.py). ``--ops``
picks the sub-space, one kit each: ``matmul`` (the default: the linear
layers' matmuls by M bucket), ``batch`` (attention's batch matmuls,
kernel_grid.attention_grid), ``dynamic`` (matmuls compiled with M
dynamic, each timed at kernel_grid.DYNAMIC_MS) or ``mixed`` (the linear
layers' matmuls as torch's f16 and bf16 ones are: operands f16 or bf16,
accumulated in f32, dtypes "f16f32" and "bf16f32", by M bucket);
``--dtypes`` gives a sub-space other element types than its own (``--ops
batch --dtypes f16f32,bf16f32``: attention's batch matmuls as torch's f16
and bf16 ones are).
``run`` times each (bench/kernel_timing.py) in workers that may crash
(bench/kernel_runner.py) and writes one JSON line per function. ``pick``
chooses, per (dtype, layout, M bucket), the candidate with the smallest
geometric mean of its kernel time over IREE's default's across the tuned
shapes; it ships only where that candidate is right and faster than the
default at every tuned shape, and each row keeps what it measured.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import math
import os
import sys
import time

from .kernel_build import compile_functions
from .kernel_grid import LAYOUTS, MS, TUNE_KNS, Point, attention_grid, dynamic_grid, function, grid
from .kernel_timing import ERROR_LIMIT
from .tune_space import candidates

SEED = 44
MODULE_FUNCTIONS = 120
QUICK = dict(dtypes=("f32", "f16"), ms=(1, 16, 256), kns=((2048, 2048),))
# A CPU stand-in for the GPU, so the whole path runs on a machine without
# one (the configs are CUDA's: the smoke kit holds IREE's defaults alone).
SMOKE = dict(dtypes=("f32", "bf16"), ms=(1, 8), kns=((256, 512),))
OPS = ("matmul", "batch", "dynamic", "mixed")
# The mixed sub-space's grids: (full, --quick, --smoke).
MIXED_DTYPES = ("f16f32", "bf16f32")
MIXED_GRIDS = (dict(dtypes=MIXED_DTYPES, layouts=LAYOUTS, ms=MS, kns=TUNE_KNS),
               dict(dtypes=MIXED_DTYPES, ms=(1, 16, 256), kns=((2048, 2048),)),
               dict(dtypes=MIXED_DTYPES, layouts=("nt",), ms=(1, 8), kns=((256, 512),)))
# The batch and dynamic sub-spaces' grids: (full, --quick, --smoke).
BATCH_GRIDS = (dict(), dict(ms=(1, 128), head_dims=(64,), key_lengths=(1024,)),
               dict(dtypes=("f32",), ms=(1, 4), head_dims=(16,), key_lengths=(32,), batch=2))
DYNAMIC_GRIDS = (dict(kns=TUNE_KNS), dict(ms=(1, 100, 1024), kns=((2048, 2048),)),
                 dict(dtypes=("f32",), layouts=("nn",), ms=(1, 7), kns=((256, 512),)))
CPU = ["iree-compile", "--iree-hal-target-device=local", "--iree-hal-local-target-device-backends=llvm-cpu",
       "--iree-llvmcpu-target-cpu=host"]
# A candidate's output may differ from the reference by this much more
# than IREE's default's does (relative to the reference's largest value).
# f16 and bf16 accumulating in f32 round once, at the end: a config that
# sums in another order moves the output by a rounding of it at most.
ERROR_SLACK = {"f32": 1e-4, "f16": 2e-2, "bf16": 4e-2, "f16f32": 1e-3, "bf16f32": 8e-3}
FASTER = 0.97


def kind_of(point: dict) -> str:
    """A point's kind, a row's: "matmul", "batch_matmul" or, for a
    dynamic M, "dynamic_matmul"."""
    return "dynamic_matmul" if point.get("dynamic") else "batch_matmul" if point.get("batch") else "matmul"


MATMUL_GRIDS = (dict(dtypes=("f32", "f16", "bf16"), layouts=LAYOUTS, ms=MS, kns=TUNE_KNS), QUICK, SMOKE)


def points(ops: str = "matmul", quick: bool = False, smoke: bool = False,
           dtypes: list[str] | None = None) -> list[Point]:
    """The points of the sub-space ``ops`` (OPS); ``dtypes``: these
    element types instead of its own (attention's batch matmuls or a
    dynamic M in f16f32 and bf16f32, as torch's are)."""
    at = 2 if smoke else 1 if quick else 0
    make, grids = {"batch": (attention_grid, BATCH_GRIDS), "dynamic": (dynamic_grid, DYNAMIC_GRIDS),
                   "mixed": (grid, MIXED_GRIDS)}.get(ops, (grid, MATMUL_GRIDS))
    return make(**dict(grids[at], **({"dtypes": tuple(dtypes)} if dtypes else {})))


def _entries(points: list[Point], smoke: bool = False) -> dict[tuple, list[tuple[dict, str]]]:
    """Functions by (kind, dtype, layout, repeat): (entry, text) pairs."""
    groups: dict[tuple, list] = {}
    for i, p in enumerate(points):
        pt = p.as_dict()
        for c in [None, *([] if smoke else candidates(p))]:
            name = f"p{i}_{c.name if c else 'default'}"
            e = dict(function=name, point=pt, candidate=c.name if c else "default", repeat=p.repeat())
            if c:
                e.update(attribute=c.attribute, m_multiple=c.m_multiple, n_multiple=c.n_multiple,
                         k_multiple=c.k_multiple)
            key = (kind_of(pt), p.dtype, p.layout, p.repeat())
            groups.setdefault(key, []).append((e, function(name, p, e.get("attribute"))))
    return groups


# A module's name begins with its kind's (a plain matmul's with none, as before).
_TAGS = {"matmul": "", "batch_matmul": "batch_", "dynamic_matmul": "dynamic_"}


def build(kit: str, quick: bool = False, smoke: bool = False, jobs: int = 2, ops: str = "matmul",
          dtypes: list[str] | None = None) -> int:
    os.makedirs(kit, exist_ok=True)
    compiler = CPU if smoke else None
    work = []
    for (kind, dt, lay, rep), fns in sorted(_entries(points(ops, quick, smoke, dtypes), smoke).items()):
        for part in range(0, len(fns), MODULE_FUNCTIONS):
            tag = f"{_TAGS[kind]}{dt}_{lay}_r{rep}_{part // MODULE_FUNCTIONS}"
            work.append((tag, rep, fns[part:part + MODULE_FUNCTIONS]))

    def one(item):
        tag, rep, fns = item
        ok, dropped = compile_functions({e["function"]: text for e, text in fns}, os.path.join(kit, tag + ".vmfb"),
                                        [f"--iree-hal-benchmark-dispatch-repeat-count={rep}"], compiler)
        print(f"{tag}: {len(ok)} compiled, {len(dropped)} refused", flush=True)
        kept = set(ok)
        return (dict(vmfb=tag + ".vmfb", entries=[e for e, _ in fns if e["function"] in kept]),
                [dict(e, refused=dropped[e["function"]]) for e, _ in fns if e["function"] in dropped])

    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        done = list(pool.map(one, work))
    compile_functions({}, os.path.join(kit, "floor.vmfb"), [], compiler)
    meta = dict(seed=SEED, modules=[m for m, _ in done], refused=[r for _, rs in done for r in rs])
    with open(os.path.join(kit, "tune.json"), "w") as f:
        json.dump(meta, f, indent=0)
    print(f"built {sum(len(m['entries']) for m in meta['modules'])} functions in {len(work)} modules; "
          f"{len(meta['refused'])} refused by iree-compile")
    return 0


def run(kit: str, out: str | None, device: str, dtypes: list[str] | None = None) -> int:
    from .kernel_runner import results, run_modules
    from .kernel_timing import floor_us
    from .kitframe import device_missing, no_device, read_manifest
    meta = read_manifest(kit, "tune.json", build=f"python -m bench tune build {kit}")
    why = device_missing(device)
    if why:
        return no_device("bench tune", device, why=why)
    out = out or os.path.join(kit, "results.jsonl")
    floor = floor_us(os.path.join(kit, "floor.vmfb"), device)
    from .kernels import copy_bandwidth
    bandwidth = copy_bandwidth()
    print(f"floor (one tiny dispatch a call): {floor:.1f} us"
          + (f"; GPU copy bandwidth {bandwidth / 1e9:.0f} GB/s" if bandwidth else ""), flush=True)
    modules = [m for m in meta["modules"] if not dtypes or m["entries"][0]["point"]["dtype"] in dtypes]
    # f32 first, then f16, then bf16: a run cut short keeps the most used.
    order = {"f32": 0, "f16f32": 1, "f16": 1, "bf16f32": 2, "bf16": 2}
    modules.sort(key=lambda m: order.get(m["entries"][0]["point"]["dtype"], 3))
    started = time.monotonic()
    run_modules(modules, kit, out, device, meta["seed"], floor)
    print(f"{sum(len(m['entries']) for m in modules)} functions in {time.monotonic() - started:.0f} s", flush=True)
    rows = results(out)
    print(summary(rows))
    return 0


def _groups(rows: list[dict]) -> dict[tuple, dict[tuple, dict[str, dict]]]:
    """(kind, dtype, layout, m) -> (m, k, n, batch) -> candidate -> row;
    one group holds a dynamic M's every M (its m 0)."""
    g: dict = {}
    for r in rows:
        p, kind = r["point"], kind_of(r["point"])
        key = (kind, p["dtype"], p["layout"], 0 if kind == "dynamic_matmul" else p["m"])
        shape = (p["m"], p["k"], p["n"], p.get("batch", 0))
        g.setdefault(key, {}).setdefault(shape, {})[r["candidate"]] = r
    return g


# Where IREE's default does not compile (bf16 with M >= 16 in 3.13), a
# candidate is right within kernel_timing.ERROR_LIMIT of the reference, and
# is measured against torch instead.


def _ok(row: dict | None) -> bool:
    return row is not None and "failed" not in row


def default_compiles(by_shape: dict[tuple, dict[str, dict]]) -> bool:
    return all(_ok(c.get("default")) for c in by_shape.values())


def _good(row: dict | None, default: dict | None) -> bool:
    if not _ok(row):
        return False
    dtype = row["point"]["dtype"]
    limit = default["error"] + ERROR_SLACK[dtype] if _ok(default) else ERROR_LIMIT[dtype]
    return row["error"] <= limit


def baseline_us(c: dict[str, dict], name: str, against_default: bool) -> float | None:
    """What a candidate's time is divided by: IREE's default's kernel, or
    (where the default does not compile) torch's."""
    return c["default"]["kernel_us"] if against_default else c[name].get("torch_us")


def choose(by_shape: dict[tuple, dict[str, dict]]) -> tuple[str | None, float]:
    """(best candidate, the geometric mean of its time over the baseline's:
    IREE's default, or torch where the default does not compile) over the
    shapes; None where no candidate is right at every shape."""
    names = set.intersection(*(set(c) for c in by_shape.values())) - {"default"}
    against_default = default_compiles(by_shape)
    best, score = None, math.inf
    for name in sorted(names):
        ratios = [c[name]["kernel_us"] / baseline_us(c, name, against_default) for c in by_shape.values()
                  if _good(c.get(name), c.get("default")) and baseline_us(c, name, against_default)]
        if len(ratios) != len(by_shape):
            continue
        s = math.exp(sum(math.log(max(r, 1e-9)) for r in ratios) / len(ratios))
        if s < score:
            best, score = name, s
    return best, score


def _geo(values: list[float]) -> float:
    return math.exp(sum(math.log(max(v, 1e-9)) for v in values) / len(values)) if values else math.nan


def summary(rows: list[dict]) -> str:
    lines = ["kind           dtype layout     M | default/torch  best/torch  best/default | best candidate "
             "(best/default is best/torch where the default does not compile; M 0: any M, of a dynamic M)"]
    for (kind, dt, lay, m), by_shape in sorted(_groups(rows).items()):
        best, score = choose(by_shape)
        d_t = _geo([c["default"]["kernel_us"] / c["default"]["torch_us"] for c in by_shape.values()
                    if _ok(c.get("default")) and c["default"].get("torch_us")])
        b_t = (_geo([c[best]["kernel_us"] / c[best]["torch_us"] for c in by_shape.values() if c[best].get("torch_us")])
               if best else math.nan)
        lines.append(f"{kind:14} {dt:5} {lay:6} {m:5} | {d_t:13.2f} {b_t:11.2f} {score:13.2f} | {best or '-'}")
    failed = [r for r in rows if "failed" in r]
    lines.append(f"{len(rows)} functions measured, {len(failed)} failed")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench tune", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build", help="compile every candidate (here)")
    b.add_argument("kit")
    b.add_argument("--quick", action="store_true", help="a few points only")
    b.add_argument("--smoke", action="store_true", help="IREE's CPU defaults on a few small points (no GPU)")
    b.add_argument("--ops", choices=OPS, default="matmul",
                   help="the sub-space: matmul (default: linear layers by M bucket), batch (attention's batch "
                   "matmuls), dynamic (matmuls of dynamic M) or mixed (f16 and bf16 accumulating in f32, as torch's)")
    b.add_argument("--dtypes", help="comma-separated: these element types instead of the sub-space's (f32, f16, "
                   "bf16, f16f32, bf16f32; e.g. --ops batch --dtypes f16f32,bf16f32: torch's f16 and bf16 attention)")
    r = sub.add_parser("run", help="time them (there)")
    r.add_argument("kit")
    r.add_argument("--out")
    r.add_argument("--device", default="cuda")
    r.add_argument("--dtypes", help="comma-separated: only these element types")
    p = sub.add_parser("pick", help="choose the rows to ship (here)")
    p.add_argument("results", nargs="+")
    p.add_argument("-o", "--output")
    p.add_argument("--card", action="append", help="the card a results file was measured on (once for all files, "
                   "or once a file, in order); each row records it")
    args = ap.parse_args(argv)
    from .kitframe import kit_errors_said
    return kit_errors_said("bench tune", lambda: _dispatch(args))


def _dispatch(args) -> int:
    if args.cmd == "build":
        from .kernels import dtypes_arg
        return build(args.kit, args.quick, args.smoke, ops=args.ops, dtypes=dtypes_arg(args.dtypes))
    if args.cmd == "run":
        return run(args.kit, args.out, args.device, args.dtypes.split(",") if args.dtypes else None)
    from .tune_pick import pick
    return pick(args.results, args.output, cards=args.card)


if __name__ == "__main__":
    sys.exit(main())
