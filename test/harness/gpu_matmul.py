"""Build here, run on a GPU machine: one 32x2048 by 2048x2048 matmul (issue 35).

    python test/e2e/gpu_matmul.py build KIT_DIR   # here: needs iree-compile
    python test/e2e/gpu_matmul.py run KIT_DIR     # there: iree runtime + torch

``build`` writes the matmul (f32/f16; weight in x out "nn" or out x in "nt",
as torch.nn.Linear stores it) once per variant: IREE's default CUDA code,
split-k dispatch formation (``--iree-dispatch-creation-split-matmul-reduction``),
mdc-compile with one cuda device with its cuda-matmul-configs pass on ("mdc")
and off ("mdc_off"), and hand-set ``#iree_codegen.compilation_info`` (lowering config + translation
info on the op; stock 3.13's ``--iree-codegen-tuning-spec-path`` is not
applied by iree-compile, see docs/PERFORMANCE.md). Each variant is compiled
twice: plain, and with every dispatch repeated REPEAT times in its command
buffer, so the kernel's own time is (t_repeat - t_plain) / (REPEAT - 1).
Inputs are f16-representable values drawn here; the reference is numpy in
float64 here. ``run`` times each vmfb with ``iree-benchmark-module`` (median
of 5), checks its output with the python runtime against the reference, times
torch on the same inputs (CUDA events over 200 back-to-back calls, and the
median wall time of a synchronized call), and prints one table; then a second
table of the per-call time of a 4-element add (the runtime's floor) and of
two matmuls under the CUDA HAL's runtime flags. With no cuda device it says
so and exits 2 (``--allow-no-gpu``: exit 0, a skip). On the GPU machine only
the runtime wheel is needed (with the checkout: test/harness travels with it).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import numpy as np

from bench.kitframe import (Step, allow_no_gpu_option, cuda_available, kit_main, markdown, no_device, option,
                            read_manifest, write_manifest)

M, N, K = 32, 2048, 2048
REPEAT = 20
TOL = {"f32": 1e-3, "f16": 6e-2}
SPLIT_FLAG = "--iree-dispatch-creation-split-matmul-reduction="
CUDA_FLAGS = ["--iree-hal-target-device=cuda", "--iree-cuda-target=sm_80"]


def _mma(kind, wg, sub, red, threads, stages=2):
    return ("#iree_codegen.compilation_info<lowering_config = #iree_gpu.lowering_config<{"
            f"mma_kind = #iree_gpu.mma_layout<{kind}>, promote_operands = [0, 1], "
            f"reduction = [0, 0, {red}], subgroup = [{sub[0]}, {sub[1]}, 0], "
            f"workgroup = [{wg[0]}, {wg[1]}, 0]}}>, translation_info = "
            "#iree_codegen.translation_info<pipeline = #iree_gpu.pipeline<TileAndFuse> "
            f"workgroup_size = [{threads}, 1, 1] subgroup_size = 32, {{gpu_pipeline_options = "
            f"#iree_gpu.pipeline_options<prefetch_num_stages = {stages}>}}>>")


def _simt(wg, thread, red, promote=False):
    threads = (wg[0] // thread[0]) * (wg[1] // thread[1])
    prom = "promote_operands = [0, 1], " if promote else ""
    return ("#iree_codegen.compilation_info<lowering_config = #iree_gpu.lowering_config<{"
            f"{prom}reduction = [0, 0, {red}], thread = [{thread[0]}, {thread[1]}, 0], "
            f"workgroup = [{wg[0]}, {wg[1]}, 0]}}>, translation_info = "
            "#iree_codegen.translation_info<pipeline = #iree_gpu.pipeline<TileAndFuse> "
            f"workgroup_size = [{threads}, 1, 1] subgroup_size = 32>>")


F16MMA = "NV_MMA_SYNC_F16_16x8x16_F16"
F16WMMA = "NV_WMMA_F16_16x16x16_F16"
# name -> (dtypes, extra iree-compile flags, compilation_info or None)
VARIANTS = {
    "default": (("f32", "f16"), [], None),
    "splitk8": (("f32", "f16"), [SPLIT_FLAG + "8"], None),
    "splitk16": (("f32", "f16"), [SPLIT_FLAG + "16"], None),
    "splitk32": (("f32",), [SPLIT_FLAG + "32"], None),
    "simt_32x32": (("f32",), [], _simt((32, 32), (1, 4), 32)),
    "simt_32x16": (("f32",), [], _simt((32, 16), (1, 2), 32)),
    "simt_16x16": (("f32",), [], _simt((16, 16), (1, 1), 32)),
    "simt_32x16_smem": (("f32",), [], _simt((32, 16), (1, 2), 32, promote=True)),
    "simt_16x16_smem": (("f32",), [], _simt((16, 16), (1, 1), 32, promote=True)),
    "simt_32x32_smem": (("f32",), [], _simt((32, 32), (1, 4), 32, promote=True)),
    "simt_16x32_smem": (("f32",), [], _simt((16, 32), (1, 2), 32, promote=True)),
    "simt_32x16_smem_k64": (("f32",), [], _simt((32, 16), (1, 2), 64, promote=True)),
    "simt_32x16_smem_k16": (("f32",), [], _simt((32, 16), (1, 2), 16, promote=True)),
    "simt_32x8_smem": (("f32",), [], _simt((32, 8), (1, 1), 32, promote=True)),
    "mma_16x16_k8": (("f16",), [], _mma(F16MMA, (16, 16), (1, 1), 8, 64)),
    "mma_16x16_k4": (("f16",), [], _mma(F16MMA, (16, 16), (1, 1), 4, 64)),
    "mma_32x16_k8": (("f16",), [], _mma(F16MMA, (32, 16), (1, 1), 8, 128)),
    "mma_16x32_k16": (("f16",), [], _mma(F16MMA, (16, 32), (1, 2), 16, 64)),
    "mma_32x16_k4": (("f16",), [], _mma(F16MMA, (32, 16), (1, 1), 4, 128)),
    "mma_32x16_k16": (("f16",), [], _mma(F16MMA, (32, 16), (1, 1), 16, 128)),
    "mma_32x16_k8_s3": (("f16",), [], _mma(F16MMA, (32, 16), (1, 1), 8, 128, stages=3)),
    "mma_32x32_k8": (("f16",), [], _mma(F16MMA, (32, 32), (1, 2), 8, 128)),
    "wmma_16x16_k8": (("f16",), [], _mma(F16WMMA, (16, 16), (1, 1), 8, 32)),
    "wmma_32x16_k8": (("f16",), [], _mma(F16WMMA, (32, 16), (1, 1), 8, 64)),
}


def _table_config(dt: str) -> str:
    """The config mdc's cuda-matmul-configs pass sets on this matmul."""
    from mdc.passes.targets.cuda.cuda_matmul_configs import config_for
    return config_for(dt, "nn", M, N, K).attribute_text()


# "table": iree-compile with the config the pass's table gives (built
# twice, as the others, for the kernel's time). mdc-compile with one cuda
# device, cuda-matmul-configs on ("mdc", its default) and off ("mdc_off"):
# built once (mdc-compile does not take
# --iree-hal-benchmark-dispatch-repeat-count), for the whole call.
VARIANTS["table"] = (("f32", "f16"), [], _table_config)
MDC_VARIANTS = {
    "mdc": (("f32", "f16"), [], None),
    "mdc_off": (("f32", "f16"), ["--no-cuda-matmul-configs"], None),
}
MDC_DEVICE = ["--device=a=cuda[0]", "--no-host-entry-points"]
LAYOUTS = ("nn", "nt")
# iree-benchmark-module's per-call time of a 4-element add (the call's floor)
# and of two matmuls, under the CUDA HAL's runtime flags.
PROBE_FLAGS = ([], ["--cuda_allow_inline_execution=true"], ["--cuda_use_streams=false"],
               ["--cuda_async_allocations=false"], ["--device_allocator=caching"])
PROBE_TAGS = ("tiny", "default_f16_nn", "simt_32x16_smem_f32_nn")
TINY = """func.func @mm(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = arith.addf %a, %a : tensor<4xf32>
  return %r : tensor<4xf32>
}
"""


def program(dt: str, layout: str, compilation_info: str | None) -> str:
    """The matmul as a linalg.generic (y = x @ W, W k x n for nn, n x k for nt)."""
    bmap = "(d1, d2)" if layout == "nt" else "(d2, d1)"
    attrs = f" attrs = {{compilation_info = {compilation_info}}}" if compilation_info else ""
    x, w, y = f"tensor<{M}x{K}x{dt}>", f"tensor<{K}x{N}x{dt}>", f"tensor<{M}x{N}x{dt}>"
    return f"""func.func @mm(%a: {x}, %b: {w}) -> {y} {{
  %z = arith.constant 0.0 : {dt}
  %e = tensor.empty() : {y}
  %c = linalg.fill ins(%z : {dt}) outs(%e : {y}) -> {y}
  %r = linalg.generic {{indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> {bmap}>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]}}
       ins(%a, %b : {x}, {w}) outs(%c : {y}){attrs} {{
  ^bb0(%p: {dt}, %q: {dt}, %o: {dt}):
    %m = arith.mulf %p, %q : {dt}
    %s = arith.addf %o, %m : {dt}
    linalg.yield %s : {dt}
  }} -> {y}
  return %r : {y}
}}
"""


def _inputs(seed: int):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = (rng.standard_normal((K, N)) / np.sqrt(K)).astype(np.float16)
    return a, b


def _reference(a, b):
    """y = a @ b in float64; nt stores b transposed, nn as is."""
    return a.astype(np.float64) @ b.astype(np.float64)


def _compile(src_path, out, flags, mdc=False):
    cmd = (["mdc-compile", *MDC_DEVICE] if mdc else ["iree-compile", *CUDA_FLAGS]) + [*flags, src_path, "-o", out]
    subprocess.run(cmd, check=True, capture_output=True, text=True)


def build(kit: str, seed: int, only=None) -> int:
    if os.path.exists(kit):
        shutil.rmtree(kit)
    os.makedirs(kit)
    a, b = _inputs(seed)
    np.save(os.path.join(kit, "a.npy"), a)
    np.save(os.path.join(kit, "b.npy"), b)
    np.save(os.path.join(kit, "ref.npy"), _reference(a, b))
    cases = []
    for layout in LAYOUTS:
        for name, (dtypes, flags, ci) in {**VARIANTS, **MDC_VARIANTS}.items():
            for dt in dtypes:
                if only and name not in only:
                    continue
                mdc = name in MDC_VARIANTS
                tag = f"{name}_{dt}_{layout}"
                src = os.path.join(kit, tag + ".mlir")
                with open(src, "w") as f:
                    f.write(program(dt, layout, ci(dt) if callable(ci) else ci))
                try:
                    _compile(src, os.path.join(kit, tag + ".vmfb"), flags, mdc)
                    if not mdc:
                        _compile(src, os.path.join(kit, tag + "_rep.vmfb"),
                                 flags + [f"--iree-hal-benchmark-dispatch-repeat-count={REPEAT}"])
                except subprocess.CalledProcessError as e:
                    first = next((l for l in e.stderr.splitlines() if "error" in l), "?")
                    print(f"did not compile: {tag}: {first[:300]}", flush=True)
                    continue
                finally:
                    os.remove(src)
                cases.append(dict(tag=tag, variant=name, dtype=dt, layout=layout))
                print("built", tag, flush=True)
    tiny = os.path.join(kit, "tiny.mlir")
    with open(tiny, "w") as f:
        f.write(TINY)
    _compile(tiny, os.path.join(kit, "tiny.vmfb"), [])
    os.remove(tiny)
    np.save(os.path.join(kit, "tiny.npy"), np.arange(4, dtype=np.float32))
    write_manifest(kit, "cases.json", dict(cases=cases, repeat=REPEAT, seed=seed))
    return 0


# ---------------------------------------------------------------- run there

def _bench_module(vmfb, inputs, device, flags=()):
    """iree-benchmark-module's median wall time of one call, in us."""
    import iree.runtime
    exe = os.path.join(os.path.dirname(os.path.dirname(iree.runtime.__file__)),
                       "_runtime_libs", "iree-benchmark-module")
    cmd = [exe, f"--device={device}", f"--module={vmfb}", "--function=mm",
           *[f"--input=@{p}" for p in inputs], "--benchmark_repetitions=5",
           "--benchmark_min_time=0.1s", "--benchmark_format=json", *flags]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=60).stdout
    scale = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}
    for row in json.loads(out)["benchmarks"]:
        if row.get("aggregate_name") == "median":
            return row["real_time"] * scale[row["time_unit"]]
    raise RuntimeError("no median in iree-benchmark-module's output")


def _iree_output(vmfb, a, b, device):
    import iree.runtime as rt
    config = rt.Config(device)
    ctx = rt.SystemContext(config=config)
    with open(vmfb, "rb") as f:
        ctx.add_vm_module(rt.VmModule.copy_buffer(config.vm_instance, f.read()))
    return np.asarray(ctx.modules.module["mm"](a, b).to_host(), np.float64)


def _torch_times(a, w, layout):
    """(us per call back to back, us per call each synchronized, output)."""
    import time
    import torch
    x, wt = torch.from_numpy(a).cuda(), torch.from_numpy(w).cuda()
    fn = (lambda: torch.nn.functional.linear(x, wt)) if layout == "nt" else (lambda: x @ wt)
    for _ in range(20):
        y = fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(200):
        fn()
    end.record()
    torch.cuda.synchronize()
    back_to_back = start.elapsed_time(end) * 1e3 / 200
    walls = []
    for _ in range(200):
        t = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        walls.append((time.perf_counter() - t) * 1e6)
    return back_to_back, float(np.median(walls)), y.double().cpu().numpy()


def layout_inputs(a, b, dt, layout):
    """The call's arguments: x, and the weight b stored n x k for nt."""
    w = np.ascontiguousarray(b.T) if layout == "nt" else b
    np_dt = np.float32 if dt == "f32" else np.float16
    return a.astype(np_dt), w.astype(np_dt)


def _kit_inputs(kit, dt, layout):
    a = np.load(os.path.join(kit, "a.npy"))
    b = np.load(os.path.join(kit, "b.npy"))
    return layout_inputs(a, b, dt, layout)


def run(kit: str, device: str) -> int:
    meta = read_manifest(kit, "cases.json", build=f"python test/e2e/gpu_matmul.py build {kit}")
    repeat = meta["repeat"]
    tmp = os.path.join(kit, "tmp")
    os.makedirs(tmp, exist_ok=True)
    torch_rows, rows, failed = {}, [], 0
    for case in meta["cases"]:
        dt, layout = case["dtype"], case["layout"]
        a, w = _kit_inputs(kit, dt, layout)
        paths = [os.path.join(tmp, f"{dt}_{layout}_{i}.npy") for i in "ab"]
        np.save(paths[0], a)
        np.save(paths[1], w)
        ref = np.load(os.path.join(kit, "ref.npy"))
        if (dt, layout) not in torch_rows:
            t_b2b, t_sync, y = _torch_times(a, w, layout)
            torch_rows[(dt, layout)] = (t_b2b, t_sync, float(np.abs(y - ref).max()))
        t_b2b, t_sync, torch_err = torch_rows[(dt, layout)]
        vmfb = os.path.join(kit, case["tag"] + ".vmfb")
        try:
            err = float(np.abs(_iree_output(vmfb, a, w, device) - ref).max())
            call = _bench_module(vmfb, paths, device)
            rep_vmfb = os.path.join(kit, case["tag"] + "_rep.vmfb")
            rep = _bench_module(rep_vmfb, paths, device) if os.path.exists(rep_vmfb) else float("nan")
        except Exception as e:  # a variant that fails to run is a row, not the end
            print(f"{case['tag']}: FAILED {type(e).__name__}: {str(e)[-300:]}", flush=True)
            failed += 1
            continue
        kernel = (rep - call) / (repeat - 1)
        ok = err <= TOL[dt]
        failed += not ok
        rows.append((case["variant"], f"{dt} {layout}", call, kernel, t_sync, t_b2b,
                     call / t_sync, kernel / t_b2b, err, torch_err, "ok" if ok else "BAD"))
        print("measured", case["tag"], flush=True)
    print(markdown(("variant", "dtype layout", "IREE call us", "IREE kernel us", "torch call us (sync)",
                    "torch us (back to back)", "call ratio", "kernel ratio", "IREE max err", "torch max err", "check"),
                   "llrrrrrrrrl", [(*r[:2], *(f"{t:.1f}" for t in r[2:6]), *(f"{x:.2f}x" for x in r[6:8]),
                                    *(f"{e:.2e}" for e in r[8:10]), r[10]) for r in rows]))
    if all(os.path.exists(os.path.join(kit, tag + ".vmfb")) for tag in PROBE_TAGS):
        _probe(kit, device)  # a kit built with --only may lack the probe's variants
    return 1 if failed else 0


def _probe(kit, device):
    print("\n| runtime flags | " + " | ".join(f"{t} call us" for t in PROBE_TAGS) + " |")
    print("|---|" + "---:|" * len(PROBE_TAGS))
    tmp = os.path.join(kit, "tmp")
    inputs = {"tiny": [os.path.join(kit, "tiny.npy")],
              "default_f16_nn": [os.path.join(tmp, f"f16_nn_{i}.npy") for i in "ab"],
              "simt_32x16_smem_f32_nn": [os.path.join(tmp, f"f32_nn_{i}.npy") for i in "ab"]}
    for flags in PROBE_FLAGS:
        times = []
        for tag in PROBE_TAGS:
            try:
                times.append(f"{_bench_module(os.path.join(kit, tag + '.vmfb'), inputs[tag], device, flags):.1f}")
            except Exception as e:
                times.append(f"failed ({type(e).__name__})")
        print(f"| {' '.join(flags) or '(defaults)'} | " + " | ".join(times) + " |", flush=True)


def _run(args) -> int:
    if not cuda_available():
        return no_device("gpu_matmul", allow=args.allow_no_gpu)
    return run(args.kit, "cuda")


BUILD = Step(lambda a: build(a.kit, a.seed, a.only), [
    option("--seed", type=int, default=35),
    option("--only", nargs="*", help="variant names to build (default: all)")],
    help="compile the variants and draw inputs (here)")
RUN = Step(_run, [allow_no_gpu_option()], help="measure and check the variants (GPU machine)")


def main(argv=None) -> int:
    return kit_main(__doc__.splitlines()[0], BUILD, RUN, argv, name="gpu_matmul")
