"""``python -m bench kernels build|run``: every grid matmul, mdc against stock IREE and torch.

    python -m bench kernels build KIT [--quick|--smoke]   # here: the compilers
    python -m bench kernels run KIT [--out FILE]          # there: runtime, numpy, torch

The grid (bench/kernel_grid.py): M in MS, (K, N) in KNS, nn and nt, and
GRID_DTYPES: f32, and f16 and bf16 as torch's matmuls are, accumulating
in f32 ("f16f32", "bf16f32": f16 operands and result, the sum in f32).
``--dtypes f16,bf16`` builds the matmuls of one type instead (f16 summed
in f16), the form the table's first f16 and bf16 rows were tuned on and
that a hand-written f16 program such as the bench workload's holds. On
cuda each point is compiled twice: by stock iree-compile
("default") and by mdc-compile with one cuda device ("mdc": its
cuda-matmul-configs pass sets the shipped table's config where a row
covers the point), each dispatch repeated R times so a kernel's time is
(call - empty call) / R (bench/kernel_timing.py). On the CPU (f32, every
point) mdc-compile's CPU code with its defaults (data tiling and
ukernels), and stock iree-compile's defaults ("default"), on local-task.
The cuda functions take the weight as an argument; the CPU functions, both
variants, read it from an immutable global whose value is a named
parameter, as a model's weights are: data tiling packs the weight into its
tiled layout, which for an argument happens on every call (at batch 1 that
packing is most of the call), and for a parameter once, in the module's
initializer. ``run`` provides the parameters when it loads a CPU module,
from the same arrays as the reference's.

``run`` measures in the same run torch's kernel (CUDA events, back to
back; on the CPU the median call, in a process of its own, first, with
torch's default thread count: bench/kernel_torch_cpu.py), the weight-read
floor (the point's bytes over the device-to-device copy bandwidth torch
reaches in the same run) and every module's kernel, checks each output
against a float64 reference, and prints one table with the targets: cuda
f16/bf16 <= 1.5x torch and f32 <= 2.5x torch; the CPU <= 1.5x torch's CPU
time. A target is met only if it is met at every point. Exit status 1 if
any output is wrong.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import subprocess
import sys

from .kernel_build import CUDA, compile_functions
from .kernel_grid import KNS, LAYOUTS, MS, Point, function, grid, weight_name

SEED = 45
# The CPU code's target: AVX-512 without naming a chip, so a kit built here
# runs on the GPU machine's Xeon whatever its generation.
CPU_TARGET = "x86-64-v4"
# More flags for mdc's CPU modules (e.g. IREE's data tiling, before
# mdc-compile turns it on by default): MDC_CPU_FLAGS="--a --b".
MDC_CPU_FLAGS = os.environ.get("MDC_CPU_FLAGS", "").split()
MODULE_FUNCTIONS = 120
TARGETS = {("cuda", "f32"): 2.5, ("cuda", "f16"): 1.5, ("cuda", "bf16"): 1.5, ("cuda", "f16f32"): 1.5,
           ("cuda", "bf16f32"): 1.5, ("cpu", "f32"): 1.5}
# What torch's f32, f16 and bf16 matmuls are (the latter two summing in f32).
GRID_DTYPES = ("f32", "f16f32", "bf16f32")
QUICK = dict(dtypes=("f32", "f16f32"), ms=(1, 16, 256), kns=((2048, 2048), (768, 3072)))
SMOKE = dict(dtypes=("f32",), ms=(1, 8), kns=((256, 512),))
# M the tuner never saw (the table's rows apply by bucket and tiles), on
# (K, N) it never saw: --unseen builds these instead of the grid.
UNSEEN = dict(dtypes=("f32", "f16f32"), ms=(3, 12, 24, 48, 100, 384), kns=((768, 3072), (1024, 4096)))
CPU = ["--iree-hal-target-device=local", "--iree-hal-local-target-device-backends=llvm-cpu",
       "--iree-llvmcpu-target-cpu=" + CPU_TARGET]


class _MdcThenIree:
    """mdc-compile to its ``stream`` stage (after every mdc pass), then
    iree-compile from there: mdc-compile takes no dispatch-repeat flag, and
    from the stream phase on mdc runs IREE's own pipeline."""

    def __init__(self, device: str, extra: list[str]):
        self.device, self.extra = device, extra

    def __call__(self, src: str, out: str, flags: list[str], timeout: int) -> subprocess.CompletedProcess:
        stream = out + ".stream.mlir"
        r = subprocess.run(["mdc-compile", f"--device=a={self.device}", "--no-host-entry-points", *self.extra,
                            "--compile-to=stream", src, "-o", stream], capture_output=True, text=True, timeout=timeout)
        if r.returncode == 0:
            r = subprocess.run(["iree-compile", "--compile-from=stream", *self.extra, *flags, stream, "-o", out],
                               capture_output=True, text=True, timeout=timeout)
            os.remove(stream)
        return r


def _variants(smoke: bool) -> dict[tuple[str, str], object]:
    """(target, variant) -> the compiler for it."""
    if smoke:
        return {("cpu", "mdc"): _MdcThenIree("local[0]", ["--iree-llvmcpu-target-cpu=" + CPU_TARGET]),
                ("cpu", "default"): ["iree-compile", *CPU]}
    return {("cuda", "default"): ["iree-compile", *CUDA],
            ("cuda", "mdc"): _MdcThenIree("cuda[0]", ["--iree-cuda-target=sm_80"]),
            ("cpu", "mdc"): _MdcThenIree("local[0]", ["--iree-llvmcpu-target-cpu=" + CPU_TARGET, *MDC_CPU_FLAGS]),
            ("cpu", "default"): ["iree-compile", *CPU]}


def _work(points: list[Point], smoke: bool, parts: list[str] | None = None) -> list[tuple]:
    work = []
    for (target, variant), compiler in _variants(smoke).items():
        if parts and f"{target}_{variant}" not in parts:
            continue
        groups: dict = {}
        for i, p in enumerate(points):
            if target == "cpu" and p.dtype != "f32":
                continue
            rep = p.repeat() if target == "cuda" else max(1, p.repeat() // 8)
            e = dict(function=f"{target}_{variant}_p{i}", point=dict(dtype=p.dtype, layout=p.layout, m=p.m, k=p.k, n=p.n),
                     target=target, variant=variant, repeat=rep)
            if target == "cpu":
                e["weight"] = weight_name(p)
            text = function(e["function"], p, weight=e.get("weight"))
            groups.setdefault((p.dtype, p.layout, rep), []).append((e, text))
        for (dt, lay, rep), fns in sorted(groups.items()):
            for part in range(0, len(fns), MODULE_FUNCTIONS):
                tag = f"{target}_{variant}_{dt}_{lay}_r{rep}_{part // MODULE_FUNCTIONS}"
                work.append((tag, rep, compiler, target, fns[part:part + MODULE_FUNCTIONS]))
    return work


def build(kit: str, quick: bool = False, smoke: bool = False, jobs: int = 2, parts: list[str] | None = None,
          unseen: bool = False, dtypes: list[str] | None = None) -> int:
    """``parts``: only these of cuda_default, cuda_mdc, cpu_default and
    cpu_mdc, keeping the kit's other parts (mdc's are rebuilt after its
    table or CPU defaults change, the stock ones need not be). ``dtypes``:
    these element types instead of the grid's (GRID_DTYPES, or the
    --quick, --smoke or --unseen one's)."""
    os.makedirs(kit, exist_ok=True)
    chosen = dict(SMOKE) if smoke else dict(QUICK) if quick else dict(UNSEEN) if unseen else dict(
        dtypes=GRID_DTYPES, ms=MS, kns=KNS, layouts=LAYOUTS)
    points = grid(**dict(chosen, **({"dtypes": tuple(dtypes)} if dtypes else {})))

    def one(item):
        tag, rep, compiler, target, fns = item
        cmd = compiler if isinstance(compiler, list) else None
        ok, dropped = compile_functions({e["function"]: t for e, t in fns}, os.path.join(kit, tag + ".vmfb"),
                                        [f"--iree-hal-benchmark-dispatch-repeat-count={rep}"],
                                        cmd, runner=None if cmd else compiler)
        print(f"{tag}: {len(ok)} compiled, {len(dropped)} refused", flush=True)
        for name, why in dropped.items():
            print(f"  {name}: {why}", flush=True)
        entries = [e for e, _ in fns if e["function"] in set(ok)]
        # The module's every weight, which its loader must provide as
        # parameters whichever of its functions are still to be measured.
        weights = [dict(name=e["weight"], point=e["point"]) for e in entries if "weight" in e]
        return dict(vmfb=tag + ".vmfb", target=target, entries=entries, **(dict(parameters=weights) if weights else {}))

    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        modules = list(pool.map(one, _work(points, smoke, parts)))
    meta_path = os.path.join(kit, "kernels.json")
    if parts and os.path.exists(meta_path):
        with open(meta_path) as f:
            kept = [m for m in json.load(f)["modules"] if f"{m['target']}_{m['entries'][0]['variant']}" not in parts]
        modules = kept + modules
    floors = {"cuda": ["iree-compile", *CUDA], "cpu": ["iree-compile", *CPU]}
    for target in {m["target"] for m in modules}:
        compile_functions({}, os.path.join(kit, f"floor_{target}.vmfb"), [], floors[target])
    with open(meta_path, "w") as f:
        json.dump(dict(seed=SEED, modules=[m for m in modules if m["entries"]]), f, indent=0)
    print(f"built {sum(len(m['entries']) for m in modules)} functions in {len(modules)} modules")
    return 0


DEVICES = {"cuda": "cuda", "cpu": "local-task"}


def copy_bandwidth() -> float | None:
    """Bytes/s torch reaches copying 1 GiB on the GPU (read + write)."""
    from .kernel_timing import _torch
    torch = _torch()
    if torch is None:
        return None
    a = torch.empty(1 << 28, dtype=torch.float32, device="cuda")
    b = torch.empty_like(a)
    for _ in range(3):
        b.copy_(a)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(10):
        b.copy_(a)
    end.record()
    torch.cuda.synchronize()
    return 2 * a.numel() * 4 * 10 / (start.elapsed_time(end) * 1e-3)


def with_torch_cpu(modules: list[dict], out: str, seed: int) -> list[dict]:
    """``modules`` with torch's CPU time in each CPU entry still to be
    measured, torch measured first in a process of its own
    (bench/kernel_torch_cpu.py): no IREE runtime is loaded yet, in it or
    in this one, whose local-task workers would spin beside it."""
    from . import kernel_torch_cpu
    from .kernel_runner import results
    done = {r["function"] for r in results(out)}
    points = {kernel_torch_cpu.key(e["point"]): e["point"] for m in modules if m["target"] == "cpu"
              for e in m["entries"] if e["function"] not in done}
    if not points:
        return modules
    measured, threads = kernel_torch_cpu.times(list(points.values()), seed, out + ".torch_cpu.jsonl")
    print(f"torch on the CPU, in its own process: {len(measured)} of {len(points)} points"
          + (f", {threads} threads" if threads else " (no torch)"), flush=True)
    return [dict(m, entries=[dict(e, torch_us=measured.get(kernel_torch_cpu.key(e["point"]))) for e in m["entries"]])
            if m["target"] == "cpu" else m for m in modules]


def run(kit: str, out: str | None) -> int:
    from .kernel_runner import results, run_modules
    from .kernel_timing import floor_us
    from .kernels_table import report
    from .kitframe import cuda_available, no_device, read_manifest
    meta = read_manifest(kit, "kernels.json", build=f"python -m bench kernels build {kit}")
    if any(m["target"] == "cuda" for m in meta["modules"]) and not cuda_available():
        return no_device("bench kernels", "cuda")
    out = out or os.path.join(kit, "results.jsonl")
    modules = with_torch_cpu(meta["modules"], out, meta["seed"])
    floors = {t: floor_us(os.path.join(kit, f"floor_{t}.vmfb"), DEVICES[t])
              for t in sorted({m["target"] for m in modules})}
    bandwidth = copy_bandwidth()
    print("floors (one tiny dispatch a call): " + ", ".join(f"{t} {v:.1f} us" for t, v in floors.items())
          + (f"; GPU copy bandwidth {bandwidth / 1e9:.0f} GB/s" if bandwidth else ""), flush=True)
    modules = [dict(m, device=DEVICES[m["target"]], floor=floors[m["target"]]) for m in modules]
    run_modules(modules, kit, out, "cuda", meta["seed"], 0.0)
    return report(results(out), bandwidth)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench kernels", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build", help="compile the grid (here)")
    b.add_argument("kit")
    b.add_argument("--quick", action="store_true", help="a few points only")
    b.add_argument("--smoke", action="store_true", help="the CPU half on a few small points (no GPU)")
    b.add_argument("--unseen", action="store_true", help="M and (K, N) the tuner never saw, instead of the grid")
    b.add_argument("--parts", help="comma-separated: only these of cuda_default, cuda_mdc, cpu_default, cpu_mdc")
    b.add_argument("--dtypes", help="comma-separated: these element types instead of the grid's (f32, f16f32, "
                   "bf16f32; f16 and bf16: the matmuls of one type, f16 summed in f16)")
    r = sub.add_parser("run", help="measure it (there)")
    r.add_argument("kit")
    r.add_argument("--out")
    args = ap.parse_args(argv)
    from .kitframe import kit_errors_said
    return kit_errors_said("bench kernels", lambda: _dispatch(args))


def dtypes_arg(text: str | None) -> list[str] | None:
    """--dtypes' element types; one the grid does not know is an error."""
    from .kernel_grid import ELEMENT_BYTES
    from .kitframe import KitError
    dtypes = text.split(",") if text else None
    unknown = [d for d in dtypes or [] if d not in ELEMENT_BYTES]
    if unknown:
        raise KitError(f"--dtypes: unknown element type {unknown[0]!r} (known: {', '.join(ELEMENT_BYTES)})")
    return dtypes


def _dispatch(args) -> int:
    if args.cmd == "build":
        return build(args.kit, args.quick, args.smoke, parts=args.parts.split(",") if args.parts else None,
                     unseen=args.unseen, dtypes=dtypes_arg(args.dtypes))
    return run(args.kit, args.out)


if __name__ == "__main__":
    sys.exit(main())
