"""The cover part of test/e2e/gpu_matmul_configs.py (issue 44): what
cuda-matmul-configs does to attention's batch matmuls and to a matmul of
dynamic M, each checked against a float64 reference.

``build(kit, table)`` compiles with mdc-compile (one cuda device), once
with the pass on, reading ``table`` (``--cuda-matmul-table``; None: the
shipped one) and once off:

* attention at batch x heads 32, head dim 64, key length 1024, query
  length S in {1, 16, 128}, f32 and f16: Q x K^T as the batch_matmul that
  reads K as (b, n, k) ("qk"), the same as the 4-loop linalg.generic
  ("qk_generic"), and P x V ("pv");
* a linear layer of dynamic M (K = N = 2048, f32 and f16, weight K x N
  "nn" and N x K "nt"), one vmfb called at M in kernel_grid.DYNAMIC_MS.

The manifest records, per case, the row the table gives it (the config's
candidate name, or "IREE default") and whether the pass set a config on
it (``mdc-compile --compile-to=mdc``: the stream IR after mdc's passes). ``run(kit)`` calls each on the cuda
device: its output against the reference (kernel_timing.error, within
kernel_timing.ERROR_LIMIT) and the median wall time of a call, pass on
against pass off. bench/kernel_timing.py's inputs and reference are the
tuner's, so a case here is a tuner point.
"""

from __future__ import annotations

import os
import subprocess

from bench.kernel_grid import DYNAMIC_MS, Point, function, module, mul_add_generic
from bench.kitframe import failed, markdown, read_manifest, write_manifest

BATCH, HEAD_DIM, KEY_LENGTH = 32, 64, 1024
QUERY_LENGTHS = (1, 16, 128)
DTYPES = ("f32", "f16")
MDC = ["mdc-compile", "--no-host-entry-points"]
MANIFEST = "cover.json"
SEED = 44


def _generic_batch(name: str, p: Point) -> str:
    """Q x K^T as the 4-loop linalg.generic (b, m, n parallel; k reduction)."""
    dt = p.dtype
    x, w, y = (f"tensor<{p.batch}x{p.m}x{p.k}x{dt}>", f"tensor<{p.batch}x{p.n}x{p.k}x{dt}>",
               f"tensor<{p.batch}x{p.m}x{p.n}x{dt}>")
    maps = ", ".join(f"affine_map<(d0, d1, d2, d3) -> ({r})>" for r in ("d0, d1, d3", "d0, d2, d3", "d0, d1, d2"))
    return f"""  func.func @{name}(%a: {x}, %b: {w}) -> {y} {{
    %z = arith.constant 0.0 : {dt}
    %e = tensor.empty() : {y}
    %c = linalg.fill ins(%z : {dt}) outs(%e : {y}) -> {y}
""" + mul_add_generic(maps, '"parallel", "parallel", "parallel", "reduction"', x, w, y, dt)


def cases() -> list[dict]:
    """Each case: its name, form, point (the dynamic ones at M = 0, their
    Ms apart) and the Ms it is called at."""
    out = []
    for dt in DTYPES:
        for s in QUERY_LENGTHS:
            qk = Point(dt, "nt", s, HEAD_DIM, KEY_LENGTH, BATCH)
            pv = Point(dt, "nn", s, KEY_LENGTH, HEAD_DIM, BATCH)
            out += [dict(name=f"qk_{dt}_s{s}", form="named", point=qk.as_dict(), ms=[s]),
                    dict(name=f"qk_generic_{dt}_s{s}", form="generic", point=qk.as_dict(), ms=[s]),
                    dict(name=f"pv_{dt}_s{s}", form="named", point=pv.as_dict(), ms=[s])]
        for layout in ("nn", "nt"):
            p = Point(dt, layout, 0, 2048, 2048, dynamic=True)
            out.append(dict(name=f"linear_dynamic_{dt}_{layout}", form="named", point=p.as_dict(),
                            ms=list(DYNAMIC_MS)))
    return out


def _point(case: dict, m: int | None = None) -> Point:
    p = dict(case["point"], **({"m": m} if m is not None else {}))
    return Point(p["dtype"], p["layout"], p["m"], p["k"], p["n"], p.get("batch", 0), p.get("dynamic", False))


def _row_of(case: dict, table: str | None) -> str:
    """The candidate the pass's table gives the case, or "IREE default"."""
    from mdc.passes.targets.cuda.matmul_table import config_for, table_at

    p = _point(case)
    row = config_for(p.dtype, p.layout, None if p.dynamic else p.m, p.n, p.k, table=table_at(table), op=p.op)
    return row.candidate if row is not None else "IREE default"


def _sets_config(cmd: list[str]) -> bool:
    """Whether the compile ``cmd`` leaves a compilation_info in mdc's stream IR."""
    r = subprocess.run([*cmd, "--compile-to=mdc", "-o", "-"], capture_output=True, text=True)
    return r.returncode == 0 and "compilation_info" in r.stdout


def build(kit: str, table: str | None = None, device: str = "cuda", only=None) -> int:
    """The cover kit in ``kit``; 1 if a case did not compile. ``device``:
    the one device's driver (another than cuda only to try the kit's
    plumbing without a GPU: the pass changes nothing there); ``only``:
    these cases' names alone."""
    os.makedirs(kit, exist_ok=True)
    on = [f"--cuda-matmul-table={os.path.abspath(table)}"] if table else []
    built, status = [], 0
    for case in [c for c in cases() if not only or c["name"] in only]:
        p = _point(case, 1 if case["point"].get("dynamic") else None)
        text = module([_generic_batch("mm", p) if case["form"] == "generic" else function("mm", p)])
        src = os.path.join(kit, case["name"] + ".mlir")
        with open(src, "w") as f:
            f.write(text)
        for setting, flags in (("on", on), ("off", ["--no-cuda-matmul-configs"])):
            out = os.path.join(kit, f"{case['name']}_{setting}.vmfb")
            r = subprocess.run([*MDC, f"--device=a={device}[0]", *flags, src, "-o", out],
                               capture_output=True, text=True)
            if r.returncode:
                print(f"did not compile: {case['name']} ({setting}): {r.stderr.strip()[-300:]}", flush=True)
                status = 1
        set_ = _sets_config([*MDC, f"--device=a={device}[0]", *on, src])
        os.remove(src)
        built.append(dict(case, row=_row_of(case, table), set=set_))
        print("built", case["name"], "->", built[-1]["row"], "(set)" if set_ else "(none set)", flush=True)
    write_manifest(kit, MANIFEST, dict(cases=built, seed=SEED, table=table or "shipped", device=device))
    return status


# ---------------------------------------------------------------- run there

def _measure(vmfb: str, p: Point, seed: int, device: str) -> tuple[float, float]:
    """(error against the reference, median call in us) of the module's @mm."""
    from bench.kernel_timing import Module, error, inputs, reference

    point = p.as_dict()
    x, w = inputs(point, seed)
    mod = Module(vmfb, device)
    args = [mod.upload(x, p.dtype), mod.upload(w, p.dtype)]
    fn = mod.functions["mm"]
    err = error(mod.result(fn(*args), p.dtype), reference(point, x, w))
    return err, mod.median_us(fn, args)


def run(kit: str, device: str = "cuda") -> tuple[list[str], bool]:
    """The cover rows of the run's table, and whether every result is right
    (``device``: the runtime's driver, as the kit was built for)."""
    from bench.kernel_timing import ERROR_LIMIT

    meta = read_manifest(kit, MANIFEST, build="python test/e2e/gpu_matmul_configs.py build KIT --cover-only")
    rows, right = [], True
    for case in meta["cases"]:
        for m in case["ms"]:
            p = _point(case, m)
            got = {}
            for setting in ("on", "off"):
                try:
                    got[setting] = _measure(os.path.join(kit, f"{case['name']}_{setting}.vmfb"), p, meta["seed"],
                                            device)
                except Exception as e:  # a case that fails is a row, not the end
                    got[setting] = e
            cells = []
            for setting in ("on", "off"):
                g = got[setting]
                ok = not isinstance(g, Exception) and g[0] <= ERROR_LIMIT[p.dtype]
                right = right and ok
                cells.append(failed(g) if isinstance(g, Exception) else
                             f"{g[1]:.1f} us, err {g[0]:.1e}{'' if ok else ' WRONG'}")
            ratio = (f"{got['on'][1] / got['off'][1]:.2f}x" if not any(isinstance(g, Exception) for g in got.values())
                     else "n/a")
            row = case["row"] + ("" if case["set"] == (case["row"] != "IREE default") else " (set: MISMATCH)")
            right = right and not row.endswith("MISMATCH)")
            rows.append(f"| {case['name']} | {m} | {row} | {cells[0]} | {cells[1]} | {ratio} |")
            print("measured", case["name"], m, flush=True)
    return rows, right


def table(rows: list[str]) -> str:
    return markdown(("case", "M", "row (pass on)", "pass on: call, error", "pass off (IREE's default)",
                     "on / off"), "lrllll", rows)
