"""Build here, run on a GPU machine: what cuda-matmul-configs buys, in one table.

    python test/e2e/gpu_matmul_configs.py build KIT_DIR   # here: mdc-compile, iree-compile
    python test/e2e/gpu_matmul_configs.py run KIT_DIR     # there: iree runtime + torch
    python test/e2e/gpu_matmul_configs.py build KIT_DIR --cover-only [--table FILE.json]  # the cover kit alone
    python test/e2e/gpu_matmul_configs.py run KIT_DIR --cover-only                        # a short run

``build`` makes two kits in KIT_DIR: ``matmul``, gpu_matmul.py's kit of the
32x2048 by 2048x2048 matmul (f32 and f16, weight in x out "nn" and out x in
"nt") with only stock iree-compile's default ("default"), iree-compile with
the config cuda-matmul-configs' table gives ("table"; its kernel time is
the pass's: the PTX is the same) and mdc-compile with one cuda device,
the pass on ("mdc") and off ("mdc_off"), whole calls only;
and one workload kit per dtype and setting (``workload_f32_off``, ...): the
bench workload's model at split k = 0 (the embedding on the CPU, every
block and the head on the GPU), batch 32, sync, built with and without
``--no-cuda-matmul-configs``; and the cover kit (``cover``,
test/harness/gpu_matmul_cover.py): attention's batch matmuls (Q x K^T as
batch_matmul and as the 4-loop generic, P x V) and a linear layer of
dynamic M called at several M, each with the pass on (reading ``--table``,
by default the shipped table) and off.

``run`` prints one table. The matmul's rows: each variant's whole call and
kernel (gpu_matmul.py says how each is timed) against torch's synchronized
call and back-to-back kernel, with the output's error. The workload's rows:
tokens/s at batch 32 of mdc's module with the pass off and on, of stock
IREE with everything on the GPU and of torch on the GPU, each checked
against the kit's numpy reference, and each mdc row's ratio to torch's
tokens/s. A second table holds the cover cases: the row the table gave
each, its call time and error with the pass on and off. Exit status 1 if
any result is wrong.
"""

from __future__ import annotations

import os
import subprocess
import sys

import _harness_path  # noqa: F401  (test/ and the checkout on sys.path)
from bench.kitframe import ROOT, Step, cuda_available, kit_main, markdown, no_device, option, read_manifest, verdict
from harness import gpu_matmul, gpu_matmul_cover

MATMUL_VARIANTS = ("default", "table", "mdc", "mdc_off")
DTYPES = ("f32", "f16")
SETTINGS = {"off": ["--mdc-flag=--no-cuda-matmul-configs"], "on": []}
BATCH = 32


def build(kit: str, cover_only: bool = False, table: str | None = None) -> int:
    os.makedirs(kit, exist_ok=True)
    status = gpu_matmul_cover.build(os.path.join(kit, "cover"), table)
    if cover_only:
        return status
    status |= gpu_matmul.build(os.path.join(kit, "matmul"), 35, list(MATMUL_VARIANTS))
    for dt in DTYPES:
        for setting, flags in SETTINGS.items():
            cmd = [sys.executable, "-m", "bench", "workload", "build", os.path.join(kit, f"workload_{dt}_{setting}"),
                   "--splits", "0", "--models", "sync", "--batch", str(BATCH), "--dtype", dt, *flags]
            status |= subprocess.run(cmd, cwd=ROOT).returncode
    return status


# ---------------------------------------------------------------- run there

def _matmul_rows(kit: str) -> tuple[list[str], bool]:
    import numpy as np

    path = os.path.join(kit, "matmul")
    meta = read_manifest(path, "cases.json", build=f"python test/e2e/gpu_matmul_configs.py build {kit}")
    ref = np.load(os.path.join(path, "ref.npy"))
    tmp = os.path.join(path, "tmp")
    os.makedirs(tmp, exist_ok=True)
    rows, right, torch_rows = [], True, {}
    for case in sorted(meta["cases"], key=lambda c: (c["dtype"], c["layout"])):
        dt, layout = case["dtype"], case["layout"]
        a, w = gpu_matmul._kit_inputs(path, dt, layout)
        inputs = [os.path.join(tmp, f"{dt}_{layout}_{i}.npy") for i in "ab"]
        np.save(inputs[0], a)
        np.save(inputs[1], w)
        if (dt, layout) not in torch_rows:
            b2b, sync, y = gpu_matmul._torch_times(a, w, layout)
            torch_rows[(dt, layout)] = (b2b, sync, float(np.abs(y - ref).max()))
        b2b, sync, _ = torch_rows[(dt, layout)]
        vmfb = os.path.join(path, case["tag"] + ".vmfb")
        try:
            err = float(np.abs(gpu_matmul._iree_output(vmfb, a, w, "cuda") - ref).max())
            call = gpu_matmul._bench_module(vmfb, inputs, "cuda")
            rep_vmfb = os.path.join(path, case["tag"] + "_rep.vmfb")
            rep = gpu_matmul._bench_module(rep_vmfb, inputs, "cuda") if os.path.exists(rep_vmfb) else float("nan")
        except Exception as e:  # a variant that fails is a row, not the end
            rows.append(f"| matmul {dt} {layout} | {case['variant']} | FAILED {type(e).__name__} | | | | |")
            right = False
            continue
        kernel = (rep - call) / (meta["repeat"] - 1)
        ok = err <= gpu_matmul.TOL[dt]
        right = right and ok
        mine, ratio = f"call {call:.1f} us", f"call {call / sync:.2f}x"
        if kernel == kernel:  # not NaN: the variant has a repeated build
            mine, ratio = mine + f", kernel {kernel:.1f} us", ratio + f", kernel {kernel / b2b:.2f}x"
        rows.append(f"| matmul {dt} {layout} | {case['variant']} | {mine} | call {sync:.1f} us, kernel {b2b:.1f} us "
                    f"| {ratio} | {err:.1e} | {'ok' if ok else 'WRONG'} |")
        print("measured", case["tag"], flush=True)
    return rows, right


def _workload_rows(kit: str, calls: int, dtypes=DTYPES) -> tuple[list[str], bool]:
    from bench import workload
    from bench.common import Config

    config = Config(gpu="cuda")
    torch, why = workload.find_torch(config)
    rows, right = [], True
    for dt in dtypes:
        kits = {s: workload.read_kit(os.path.abspath(os.path.join(kit, f"workload_{dt}_{s}"))) for s in SETTINGS}
        params = workload._weights(kits["off"])
        k0 = {s: next(e for e in k.modules if e["k"] == 0) for s, k in kits.items()}
        got = {f"mdc, pass {s}": workload.mdc_split(config, kits[s], k0[s], BATCH, params, calls) for s in SETTINGS}
        got["stock IREE, all on the GPU"] = workload.stock_gpu(config, kits["off"], BATCH, params, calls)
        ref = workload.torch_measure(torch, kits["off"], BATCH, params, None, calls) if torch else None
        got["torch, all on the GPU"] = ref
        for name, m in got.items():
            if m is None:
                rows.append(f"| workload {dt} b{BATCH} k=0 | {name} | not measured ({why}) | | | | |")
                continue
            right = right and m.right
            ratio = f"{ref.seconds / m.seconds:.2f}x torch's tokens/s" if ref else "n/a"
            rows.append(f"| workload {dt} b{BATCH} k=0 | {name} | {BATCH / m.seconds:.1f} tokens/s "
                        f"| {BATCH / ref.seconds:.1f} tokens/s | {ratio} | {m.error:.1e} "
                        f"| {'ok' if m.right else 'WRONG'} |" if ref else
                        f"| workload {dt} b{BATCH} k=0 | {name} | {BATCH / m.seconds:.1f} tokens/s | n/a | n/a "
                        f"| {m.error:.1e} | {'ok' if m.right else 'WRONG'} |")
        del params
        print("measured workload", dt, flush=True)
    return rows, right


def run(kit: str, calls: int, dtypes=DTYPES, matmul_rows: bool = True, cover_only: bool = False) -> int:
    cover, right_c = gpu_matmul_cover.run(os.path.join(kit, "cover"))
    if cover_only:
        print("\n" + gpu_matmul_cover.table(cover))
        return verdict(right_c)
    matmul, right_m = _matmul_rows(kit) if matmul_rows else ([], True)
    work, right_w = _workload_rows(kit, calls, dtypes)
    print()
    print(markdown(("what", "variant", "mdc / IREE", "torch, same run", "ratio", "max error", "check"), "lllllrl",
                   matmul + work))
    print("\n" + gpu_matmul_cover.table(cover))
    return verdict(right_m and right_w and right_c)


def _run(a) -> int:
    if not cuda_available():
        return no_device("gpu_matmul_configs", nothing="measured")
    return run(a.kit, a.calls, tuple(a.dtype or DTYPES), not a.workload_only, a.cover_only)


BUILD = Step(lambda a: build(a.kit, a.cover_only, a.table), [
    option("--cover-only", action="store_true", help="the cover kit alone (batch matmuls, dynamic M)"),
    option("--table", metavar="FILE.json", help="the table the cover kit's pass reads (--cuda-matmul-table; "
           "default: the shipped one)")],
    help="build the matmul, workload and cover kits (here)")
RUN = Step(_run, [
    option("--calls", type=int, default=5, help="timed workload calls per row (default 5)"),
    option("--dtype", action="append", choices=DTYPES, help="the workload rows of this dtype only"),
    option("--workload-only", action="store_true", help="no matmul rows (a short run)"),
    option("--cover-only", action="store_true", help="the cover rows alone (a short run)")],
    help="measure them (GPU machine)")


def main(argv=None) -> int:
    return kit_main(__doc__.splitlines()[0], BUILD, RUN, argv)


if __name__ == "__main__":
    sys.exit(main())
