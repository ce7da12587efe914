#!/usr/bin/env python3
"""Build here, run on a GPU machine: a TinyLlama-sized Llama generating text with mdc.generate, against torch.

    python test/e2e/gpu_generate.py build KIT_DIR [--smoke]   # here: the compiler
    python test/e2e/gpu_generate.py run KIT_DIR               # there: runtime, numpy, torch, transformers

``build`` compiles examples/pytorch/exported_generate/llama_tinyllama_D.mlir
(a transformers LlamaForCausalLM of 22 blocks of width 2048, 32 query and
4 KV heads, MLP 5632, vocabulary 32000; its KV cache in mutable globals;
functions prefill and decode, docs/mdc-generate.md) for D in f32 and f16,
for one device, ``--device=gpu=cuda[0]`` (``--iree-cuda-target=sm_80``).
``--smoke`` builds the tiny config (2 blocks of width 64) for
``--device=gpu=local[0]``, run on local-task, to check the kit without a GPU.

``run`` makes the weights from the seed (examples/pytorch/llama_weights.py:
1.1G weights, 4.4 GB in f32) as a parameter archive in a scratch folder,
runs torch's greedy reference in a child process (``transformers``'
``generate`` on the same weights, on cuda with TF32 and reduced-precision
f16 sums off; on the CPU with --smoke; the committed references where
torch is not importable, --smoke only), then ``mdc.generate`` with the
module on the kit's device: NEW_TOKENS new ids after a prompt of
PROMPT_TOKENS. It prints one line per dtype: mdc's prefill ms and decode
tokens/s, torch's, and the check: f32 must give torch's every id; f16
torch's first F16_SAME ids, or the first divergence is printed with both
sides' logits of both ids, and is right only as a near tie (torch's own
logits of the two ids within F16_TIE). Exit status 1 on a wrong result, 2
without cuda.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time

import _harness_path  # noqa: F401  (test/ and the checkout on sys.path)
from bench.kitframe import ROOT, Step, failed, kit_main, kit_mib, option, read_manifest, verdict, write_manifest
from harness.place_kit import no_cuda

EXAMPLES = os.path.join(ROOT, "examples", "pytorch")
EXPORTED = os.path.join(EXAMPLES, "exported_generate")
PROMPT_TOKENS, NEW_TOKENS, F16_SAME = 32, 64, 32
SMOKE_PROMPT = 12  # the committed tiny references' prompt (export_generate.TINY_PROMPT)
F16_TIE = 0.02  # logits of order 1 in f16: a gap this small is rounding's to decide
GPU = (["--device=gpu=cuda[0]", "--iree-cuda-target=sm_80"], ["cuda"])
SMOKE = (["--device=gpu=local[0]", "--iree-llvmcpu-target-cpu=x86-64-v3"], ["local-task"])


def build(kit: str, smoke: bool) -> int:
    kit = os.path.abspath(kit)
    os.makedirs(kit, exist_ok=True)
    config = "tiny" if smoke else "tinyllama"
    flags, devices = SMOKE if smoke else GPU
    modules = []
    for dtype in ("f32", "f16"):
        name = f"llama_{config}_{dtype}"
        print(f"compiling {name}", flush=True)  # progress: a watched run takes silence as a hang
        r = subprocess.run([sys.executable, "-m", "mdc.pipeline", os.path.join(EXPORTED, f"{name}.mlir"), *flags,
                            "-o", os.path.join(kit, f"{name}.vmfb")], capture_output=True, text=True, timeout=1800)
        if r.returncode != 0:
            print(f"gpu_generate: mdc-compile failed for {name}: {r.stderr.strip()[-2000:]}", file=sys.stderr)
            return 1
        modules.append({"dtype": dtype, "vmfb": f"{name}.vmfb", "name": name})
    write_manifest(kit, "kit.json", {"config": config, "devices": devices, "modules": modules, "smoke": smoke,
                                     "prompt_tokens": SMOKE_PROMPT if smoke else PROMPT_TOKENS})
    print(f"built {len(modules)} modules in {kit}, {kit_mib(kit):.1f} MiB")
    return 0


# ---------------------------------------------------------------- run there

def torch_reference(argv: list[str]) -> int:
    """Child: ``torch-reference CONFIG DTYPE DEVICE PROMPT_TOKENS OUT_PREFIX``:
    torch's greedy ids and logits, saved as OUT_PREFIX.ids.npy and .logits.npy."""
    config, dtype, device, prompt_tokens, prefix = argv
    sys.path.insert(0, EXAMPLES)
    import numpy as np
    import torch

    import llama_generate as lg
    import llama_weights as lw

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
    lm = lg.build(config, dtype).to(device)
    prompt = lw.prompt(lw.CONFIGS[config], int(prompt_tokens))
    lg.torch_greedy(lm, prompt, 2)  # warm-up
    if device == "cuda":
        torch.cuda.synchronize()
    began = time.perf_counter()
    ids, logits = lg.torch_greedy(lm, prompt, NEW_TOKENS)
    seconds = time.perf_counter() - began
    np.save(prefix + ".ids.npy", ids)
    np.save(prefix + ".logits.npy", logits)
    print(json.dumps({"seconds": seconds, "about": f"torch {torch.__version__} on {device}"}))
    return 0


def _reference(meta: dict, dtype: str, scratch: str):
    """(ids, logits, what ran) of torch for ``dtype``: the child's, or the
    committed tiny references where torch is missing (--smoke)."""
    import numpy as np

    prefix = os.path.join(scratch, f"torch_{dtype}")
    device = "cpu" if meta["smoke"] else "cuda"
    r = subprocess.run([sys.executable, __file__, "torch-reference", meta["config"], dtype, device,
                        str(meta["prompt_tokens"]), prefix],
                       capture_output=True, text=True, timeout=3600)
    if r.returncode == 0:
        about = json.loads(r.stdout.strip().splitlines()[-1])
        what = f"{about['about']}, {NEW_TOKENS / about['seconds']:.1f} tokens/s overall (generate)"
        return np.load(prefix + ".ids.npy"), np.load(prefix + ".logits.npy"), what
    if meta["smoke"] and "No module named 'torch'" in r.stderr:
        committed = os.path.join(EXPORTED, f"llama_tiny_{dtype}.torch_")
        return np.load(committed + "ids.npy"), np.load(committed + "logits.npy"), "no torch here: the committed ids"
    raise RuntimeError(f"torch's reference failed: {r.stderr.strip()[-1500:]}")


def _one(kit: str, meta: dict, row: dict, scratch: str) -> bool:
    import numpy as np

    sys.path.insert(0, EXAMPLES)
    import llama_weights as lw
    from mdc.runtime_shim import load
    from mdc.runtime_shim.generate import describe_divergence, first_divergence, generate

    config = lw.CONFIGS[meta["config"]]
    began = time.perf_counter()
    archive = lw.write_archive(os.path.join(scratch, f"{row['dtype']}.irpa"), config, row["dtype"])
    print(f"{row['name']}: weights from seed {lw.SEED} in {time.perf_counter() - began:.1f} s", flush=True)
    ids, logits, what = _reference(meta, row["dtype"], scratch)
    print(f"{row['name']}: torch: {what}", flush=True)
    prompt = lw.prompt(config, meta["prompt_tokens"])
    with load(os.path.join(kit, row["vmfb"]), meta["devices"], parameters=[archive]) as m:
        generate(m, prompt, 2)  # warm-up: the first calls load kernels
        got = generate(m, prompt, NEW_TOKENS, keep_logits=True)
    print(f"{row['name']}: mdc on {'+'.join(meta['devices'])}: {got.summary()}", flush=True)
    print(f"{row['name']}: ids {' '.join(map(str, got.ids))}")
    want = NEW_TOKENS if row["dtype"] == "f32" else F16_SAME
    d = first_divergence(got.ids[:want], got.logits, ids[:want], logits)
    print(f"{row['name']}: against torch over {want} ids: {describe_divergence(d, want)}")
    if d is None:
        return True
    gap = d["ref_logits"][d["ref_id"]] - d["ref_logits"][d["id"]]
    tie = row["dtype"] == "f16" and 0 <= gap <= F16_TIE
    print(f"{row['name']}: {'a near tie in torch (gap ' + format(gap, '.3g') + '): ok' if tie else 'WRONG'}")
    return tie


def run(kit: str) -> int:
    kit = os.path.abspath(kit)
    meta = read_manifest(kit, "kit.json", build=f"python test/e2e/gpu_generate.py build {kit}")
    status = no_cuda("gpu_generate", meta["devices"])
    if status is not None:
        return status
    right = []
    with tempfile.TemporaryDirectory(prefix="mdc-generate-") as scratch:
        for row in meta["modules"]:
            try:
                right.append(_one(kit, meta, row, scratch))
            except Exception as e:  # a module that fails is a line, not the end
                print(f"{row['name']}: {failed(e, 400)}", flush=True)
                right.append(False)
            for f in os.listdir(scratch):  # the next dtype's weights in the room of these
                os.unlink(os.path.join(scratch, f))
    return verdict(all(right))


BUILD = Step(lambda a: build(a.kit, a.smoke), [
    option("--smoke", action="store_true", help="the tiny config on local-task, no GPU needed")],
    help="compile the kit (here)")
RUN = Step(lambda a: run(a.kit), help="run the kit (GPU machine)")


def main(argv=None) -> int:
    return kit_main(__doc__.splitlines()[0], BUILD, RUN, argv, children={"torch-reference": torch_reference})


if __name__ == "__main__":
    sys.exit(main())
