"""``bench generate build DIR``: the kit of generation under a GPU memory
budget (issue 46 item 4), here, with the compiler.

The model is the TinyLlama-sized export of examples/pytorch/
exported_generate (llama_tinyllama_f32.mlir: 22 blocks of width 2048, 32
query and 4 KV heads, MLP 5632, vocabulary 32000; functions prefill and
decode, the KV cache in mutable globals of 256 positions, the weights
named parameters of scope ``model``, made from the seed at run time).

**Budgets.** Each budget fraction f (default 0, 1/4, 1/2, 3/4, 1) is the
GPU bytes that fit n = floor(22 f + 1/2) of the blocks (0, 6, 11, 17,
22), from the model's own sizes:

    budget(n) = reserved + working + n x (one block's weights + its KV cache)
                (+ the embedding, the final norm and the head when n is every block)

``reserved``: the runtime's own bytes on the GPU, the machine profile's
``reserved_bytes`` (what --place=auto holds back of every budget);
``working``: room for one call's activations, every value of one
block's prefill of the prompt held at once (``working_bytes``: 8 vectors
of the width, 3 of the KV width and 4 of the MLP width per token, two
rows of attention scores per head and token, and one row of logits), so
that the all-GPU placement fits the whole budget. Budget 0 is 0 bytes:
everything on the CPU. Each budget is one module, ``mdc-compile
--device=cpu=local[0] --device=gpu=cuda[0] --place=auto --gpu-memory=B
--place-profile=P`` (the profile: bench/profiles/h100.json unless
--place-profile; --place-costs passed on), with its ``--report`` in the
kit: which blocks went where, and the estimated bytes. The f16 export is
compiled all on the GPU (``--device=gpu=cuda[0]``, no placement), the
f16 line against torch's f16 on the GPU.

The run (generate.py) gives the same bytes to torch's hand split (the
last n blocks on the GPU, the rest of the model on the CPU) and to
accelerate (its ``max_memory`` counts weights alone: the budget's weight
bytes, n blocks and at n = 22 the embedding and head). ``--smoke``: the
tiny config (2 blocks of width 64, its committed parameters and torch
ids) for a staged CPU pair (``--device=gpu=local[1]
--link=cpu:gpu=staged``) under a profile whose second device is the
profile's CPU made 1000 times faster (and the crossing's latency 1000
times shorter), so that the budget, not the cost, decides; no GPU or
torch needed.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

from .kitframe import ROOT, kit_mib, write_manifest
from .placement_format import placed_text

FORMAT = "mdc.bench.generate/1"
EXAMPLES = os.path.join(ROOT, "examples", "pytorch")
EXPORTED = os.path.join(EXAMPLES, "exported_generate")
FRACTIONS = (0.0, 0.25, 0.5, 0.75, 1.0)
SMOKE_FRACTIONS = (0.5, 1.0)
PROFILE = os.path.join(ROOT, "bench", "profiles", "h100.json")
CPU_TARGET = "x86-64-v4"  # the GPU machine's CPU: AVX-512 without naming a chip
HOST, ACCELERATOR = "cpu", "gpu"
FAST = 1000.0  # --smoke: how much faster than the CPU the stand-in GPU is
ITEM = {"f32": 4, "f16": 2}


def llama_weights():
    """examples/pytorch/llama_weights.py (numpy only): the configs, seed and prompt."""
    if EXAMPLES not in sys.path:
        sys.path.insert(0, EXAMPLES)
    import llama_weights

    return llama_weights


@dataclasses.dataclass(frozen=True)
class Sizes:
    """A config's bytes: one block's weights and its KV cache, the
    embedding, the head with the final norm, the working allowance."""

    blocks: int
    block: int
    kv: int
    embedding: int
    head: int
    working: int

    def fits(self, fraction: float) -> int:
        """The blocks the budget of ``fraction`` fits: floor(N f + 1/2)."""
        return int(self.blocks * fraction + 0.5)

    def weights(self, n: int) -> int:
        """The weight bytes of n blocks, and at n = N of the whole model."""
        return n * self.block + (self.embedding + self.head if n == self.blocks else 0)

    def budget(self, n: int, reserved: int) -> int:
        """The GPU bytes that fit n blocks (the module's doc); 0 for none."""
        return 0 if n == 0 else reserved + self.working + n * self.kv + self.weights(n)


def working_bytes(config: dict, dtype: str, tokens: int) -> int:
    """Every value of one block's prefill of ``tokens`` tokens held at
    once, and the logits (the module's doc)."""
    h, f, v = config["hidden_size"], config["intermediate_size"], config["vocab_size"]
    heads, kv_heads = config["num_attention_heads"], config["num_key_value_heads"]
    kv = kv_heads * h // heads
    per_token = 8 * h + 3 * kv + 4 * f + 2 * heads * tokens
    return (per_token * tokens + v) * ITEM[dtype]


def sizes_of(config: dict, dtype: str, prompt_tokens: int, max_context: int) -> Sizes:
    """``config``'s Sizes from its weight shapes (llama_weights.weight_shapes)."""
    lw = llama_weights()
    n = config["num_hidden_layers"]
    shapes = lw.weight_shapes(config)
    nbytes = {name: ITEM[dtype] * _count(shape) for name, shape in shapes.items()}
    block = sum(b for name, b in nbytes.items() if name.startswith("model.layers.0."))
    head_dim = config["hidden_size"] // config["num_attention_heads"]
    kv = 2 * config["num_key_value_heads"] * max_context * head_dim * ITEM[dtype]
    return Sizes(n, block, kv, nbytes["model.embed_tokens.weight"],
                 nbytes["lm_head.weight"] + nbytes["model.norm.weight"], working_bytes(config, dtype, prompt_tokens))


def _count(shape) -> int:
    out = 1
    for d in shape:
        out *= d
    return out


@dataclasses.dataclass(frozen=True)
class Plan:
    """What a kit holds: the budget fractions, the CPU target, whether a
    local device stands in for the GPU, the machine profile, the costs
    file (--place-costs) and the compiles at a time."""

    fractions: tuple = FRACTIONS
    cpu: str = CPU_TARGET
    smoke: bool = False
    profile: str | None = None
    costs: str | None = None
    jobs: int = 1

    @property
    def config_name(self) -> str:
        return "tiny" if self.smoke else "tinyllama"

    def source(self, dtype: str) -> str:
        return os.path.join(EXPORTED, f"llama_{self.config_name}_{dtype}.mlir")

    def placed_flags(self, profile: str) -> list[str]:
        gpu = (["--device=gpu=local[1]", "--link=cpu:gpu=staged"] if self.smoke
               else ["--device=gpu=cuda[0]", "--iree-cuda-target=sm_80"])
        return [f"--device={HOST}=local[0]", *gpu, f"--iree-llvmcpu-target-cpu={self.cpu}", "--place=auto",
                f"--place-profile={profile}", *([f"--place-costs={os.path.abspath(self.costs)}"] if self.costs else [])]

    def devices(self) -> list[str]:
        """The runtime devices of the placed modules."""
        return ["local-task", "local-sync" if self.smoke else "cuda"]


def smoke_profile(out: str) -> str:
    """--smoke's profile, written into the kit: bench/profiles/h100.json's
    CPU for both devices of the pair, the second (named gpu) FAST times
    faster, no reserved bytes, and the H100's CPU->GPU crossing between
    them with a latency FAST times shorter; -> its path."""
    with open(PROFILE) as f:
        profile = json.load(f)
    local = profile["devices"]["local"]
    fast = {**local, "matmul_flops_per_s": {k: v * FAST for k, v in local["matmul_flops_per_s"].items()},
            "bytes_per_s": {k: v * FAST for k, v in local["bytes_per_s"].items()},
            "seconds_per_dispatch": local["seconds_per_dispatch"] / FAST,
            "seconds_per_call": local["seconds_per_call"] / FAST, "reserved_bytes": 0}
    crossing = next(c for c in profile["crossings"] if (c["source"], c["target"]) == ("local", "cuda"))
    profile.update(devices={"local": local, ACCELERATOR: fast},
                   crossings=[{**crossing, "target": "local", "latency_s": crossing["latency_s"] / FAST}],
                   source={**profile["source"], "machine": f"bench generate --smoke: {profile['source']['machine']}'s "
                                                           f"CPU, and a device named gpu {FAST:g}x faster"})
    return write_manifest(out, "smoke_profile.json", profile)


def reserved_of(profile: str, smoke: bool) -> int:
    """The runtime's reserved bytes on the accelerator, by the profile."""
    from mdc.contract.machine_profile import load_profile
    from mdc.passes.assignment.cost_model import CostModel

    kinds = {HOST: "local", ACCELERATOR: "local" if smoke else "cuda"}
    return CostModel.of(load_profile(profile), kinds).reserved_bytes(ACCELERATOR)


def describe(report: dict, blocks: int) -> dict:
    """What a placement report puts on the GPU: ``blocks`` whole, ``split``
    (some weights each side), the embedding, the head; the module's
    estimated GPU bytes and each function's estimate. A weight belongs to
    the part named last before it in the report's weights (a block's
    parameters and cache, the embedding, the final norm for the head):
    the hoisted transposes the pass makes of the parameters carry no name
    of their own but follow the parameters of their block."""
    functions = report["placement"]["functions"]
    parts: dict = {}
    for placed in functions.values():
        part = "embedding"
        for w in placed["weights"]:
            name = w["name"]
            block = re.search(r"layers\.(\d+)\.|cache\.[kv](\d+)$", name)
            if block:
                part = int(block.group(1) or block.group(2))
            elif "embed_tokens" in name:
                part = "embedding"
            elif name.endswith("model.norm.weight"):
                part = "head"
            parts.setdefault(part, {}).setdefault(name, (w["bytes"], w["device"]))
    on = {p: sum(b for b, d in ws.values() if d == ACCELERATOR) for p, ws in parts.items()}
    total = {p: sum(b for b, _ in ws.values()) for p, ws in parts.items()}
    whole = [i for i in range(blocks) if total.get(i) and on[i] == total[i]]
    split = [i for i in range(blocks) if total.get(i) and 0 < on[i] < total[i]]
    first = next(iter(functions.values()))["accelerator_bytes"]
    return {"blocks": len(whole), "split": len(split), "embedding": on.get("embedding", 0) * 2 > total.get("embedding", 1),
            "head": on.get("head", 0) * 2 > total.get("head", 1), "gpu_blocks": whole + split,
            "gpu_bytes": first["total"], "estimate_seconds": {f.split("$")[0]: p["estimate_seconds"]
                                                              for f, p in functions.items()}}


def _prompt_tokens(plan: Plan) -> int:
    """The run's prompt: the export's prefill size, or with --smoke the
    committed references' prompt (its torch ids are the check)."""
    if not plan.smoke:
        return llama_weights().PROMPT_TOKENS
    with open(os.path.join(EXPORTED, "index.json")) as f:
        return json.load(f)["llama_tiny_f32"]["prompt_tokens"]


def _budgets(plan: Plan, sizes: Sizes, reserved: int) -> list[dict]:
    rows = []
    for fraction in plan.fractions:
        n = sizes.fits(fraction)
        rows.append({"fraction": fraction, "fits": n, "name": f"n{n}", "bytes": sizes.budget(n, reserved),
                     "weights_bytes": sizes.weights(n), "file": f"auto_f32_n{n}.vmfb",
                     "report": f"auto_f32_n{n}.report.json"})
    unique = {r["name"]: r for r in rows}
    return list(unique.values())


def build(plan: Plan, out: str) -> int:
    out = os.path.abspath(out)
    os.makedirs(out, exist_ok=True)
    lw = llama_weights()
    config = lw.CONFIGS[plan.config_name]
    sizes = sizes_of(config, "f32", lw.PROMPT_TOKENS, lw.MAX_CONTEXT)
    profile = smoke_profile(out) if plan.smoke else os.path.abspath(plan.profile or PROFILE)
    reserved = reserved_of(profile, plan.smoke)
    rows = _budgets(plan, sizes, reserved)
    mdc = [sys.executable, "-m", "mdc.pipeline"]
    jobs = {r["file"]: [*mdc, plan.source("f32"), *plan.placed_flags(profile), f"--gpu-memory={r['bytes']}",
                        f"--report={os.path.join(out, r['report'])}"] for r in rows}
    if not plan.smoke:
        jobs["gpu_f16.vmfb"] = [*mdc, plan.source("f16"), "--device=gpu=cuda[0]", "--iree-cuda-target=sm_80"]
    print(f"compiling {len(jobs)} modules, {plan.jobs} at a time (a TinyLlama-sized one takes about 70 s "
          f"here): {', '.join(jobs)}", flush=True)
    retried = compile_all(out, jobs, plan.jobs)
    if retried is None:
        return 1
    for r in rows:
        with open(os.path.join(out, r["report"])) as f:
            r["placed"] = describe(json.load(f), sizes.blocks)
    kit = {"format": FORMAT, "smoke": plan.smoke, "config": plan.config_name, "cpu": plan.cpu,
           "profile": os.path.relpath(profile, ROOT) if profile.startswith(ROOT) else profile,
           "costs": plan.costs, "reserved_bytes": reserved, "without_const_eval": retried, "sizes": dataclasses.asdict(sizes),
           "prompt_tokens": _prompt_tokens(plan), "devices": plan.devices(), "budgets": rows,
           "f16_gpu": None if plan.smoke else {"file": "gpu_f16.vmfb", "devices": ["cuda"]}}
    write_manifest(out, "kit.json", kit)
    print(f"built {len(jobs)} modules in {out} ({kit_mib(out):.1f} MiB); {plan.config_name}: {sizes.blocks} blocks of "
          f"{sizes.block / 2**20:.1f} MiB (f32) and {sizes.kv / 2**20:.2f} MiB of KV cache each, embedding "
          f"{sizes.embedding / 2**20:.1f} MiB, head {sizes.head / 2**20:.1f} MiB; working allowance "
          f"{sizes.working / 2**20:.1f} MiB, the runtime's reserved {reserved / 2**20:.1f} MiB")
    print(budget_text(kit))
    return 0


# IREE 3.13's compiler crashes (SIGSEGV) in its constant evaluation of
# initializers on some placements of these exports (the tiny one's, with
# one block on each device, for one); mdc-compile then compiles again with
# this flag and warns, naming it.
CONST_EVAL_OFF = "--iree-opt-const-eval=false"


def compile_all(out: str, jobs: dict, workers: int) -> list | None:
    """Each job with ``-o OUT/NAME``, ``workers`` at a time. -> the names
    mdc-compile compiled again with CONST_EVAL_OFF (its warning says so),
    or None (said) if a job failed."""
    def one(item):
        name, cmd = item
        return name, cmd, subprocess.run([*cmd, "-o", os.path.join(out, name)], capture_output=True, text=True)

    retried = []
    with ThreadPoolExecutor(max(workers, 1)) as pool:
        for name, cmd, r in pool.map(one, jobs.items()):
            if r.returncode:
                print(f"{name}: {' '.join(cmd)}\n{r.stderr}")
                return None
            print(f"compiled {name}", flush=True)
            for line in r.stderr.splitlines():  # a module compiled without data tiling runs its CPU part slower
                if "warning:" in line:
                    print(f"  {name}: {line.strip()}", flush=True)
            if CONST_EVAL_OFF in r.stderr:
                retried.append(name)
    return retried


def budget_text(kit: dict) -> str:
    """Per budget: its bytes and what mdc placed there (the report)."""
    lines = [f"  {'budget':>6} {'blocks':>6} {'MiB':>9} {'accelerate MiB':>14}  {'mdc GPU':>8} {'est MiB':>8} "
             f"{'est prefill ms':>14} {'est decode ms':>13}"]
    for r in kit["budgets"]:
        p = r["placed"]
        lines.append(f"  {r['fraction']:>6.2f} {r['fits']:>6} {r['bytes'] / 2**20:9.1f} "
                     f"{r['weights_bytes'] / 2**20:14.1f}  {placed_text(p):>8} {p['gpu_bytes'] / 2**20:8.1f} "
                     f"{p['estimate_seconds'].get('prefill', 0) * 1e3:14.2f} "
                     f"{p['estimate_seconds'].get('decode', 0) * 1e3:13.2f}")
    return "\n".join(lines)
