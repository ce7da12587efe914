"""``bench models build DIR``: whole models on each device, the kit (here,
with the compiler).

Two models, each a function of the token ids with its weights as named
parameters (as an exported model holds them): the workload's stack
(model.py, its placement variant) and a Llama-style SwiGLU stack
(swiglu.py). Per model and batch size, two mdc-compile modules: all on the
GPU (one ``cuda[0]`` device, mdc's defaults: its cuda matmul configs) and
all on the CPU (one ``local[0]`` device, mdc's CPU defaults: data tiling
and ukernels for the kit's CPU target). Neither weights nor references
are in the kit: the run makes the weights from each model's seed, writes
them as a parameter archive and computes the float64 reference there.
models.json says how it was all made. With ``--smoke`` the sizes are tiny
and the "GPU" module is a second CPU module (the run plays it on
local-sync).
"""

from __future__ import annotations

import dataclasses
import os
from typing import Callable

from . import gpt2_mlp, model, swiglu
from .kitframe import compile_jobs, kit_mib, write_manifest

FORMAT = "mdc.bench.models/1"
# The GPU machine's CPU: AVX-512 without naming a chip (as bench kernels builds).
CPU_TARGET = "x86-64-v4"
SIDES = ("gpu", "cpu")


@dataclasses.dataclass(frozen=True)
class Kind:
    """What the kit and the run need of one model: its stack from the
    manifest's dict, its MLIR at a batch size, its float64 reference, and
    its torch eager form on a device."""

    stack: Callable[[dict], object]
    program: Callable[[object, int], str]
    reference: Callable  # (stack, params, ids) -> logits, float64
    torch: Callable  # (torch, stack, params, device) -> forward(ids) -> logits (numpy)
    describe: Callable[[object], str]


def _workload_torch(torch, stack, params, device):
    from .workload import TorchStack

    return TorchStack(torch, stack, params, None, device)  # k None: everything on ``device``


def _workload_describe(s: model.Stack) -> str:
    return (f"the bench workload: {s.blocks} blocks of rmsnorm, one {s.hidden}x{s.hidden} linear and silu, residual; "
            f"vocab {s.vocab}, {s.dtype}, weights {s.layout.replace('_', ' x ')}")


KINDS = {
    "workload": Kind(lambda d: model.Stack(**d), model.placement_program, model.reference, _workload_torch,
                     _workload_describe),
    "swiglu": Kind(lambda d: swiglu.Stack(**d), swiglu.program, swiglu.reference, swiglu.TorchSwiGLU,
                   swiglu.Stack.describe),
    "gpt2mlp": Kind(lambda d: gpt2_mlp.Stack(**d), gpt2_mlp.program, gpt2_mlp.reference, gpt2_mlp.TorchGPT2MLP,
                    gpt2_mlp.Stack.describe),
}


def default_stacks(smoke: bool) -> dict:
    """Each model's stack: item 5's sizes, or tiny ones for --smoke."""
    if smoke:
        return {"workload": model.Stack(hidden=64, blocks=3, vocab=256),
                "swiglu": swiglu.Stack(hidden=64, ffn=160, blocks=2, vocab=300)}
    return {"workload": model.Stack(), "swiglu": swiglu.Stack()}


@dataclasses.dataclass(frozen=True)
class Plan:
    """The models (name -> stack), the batch sizes, the CPU target, and
    whether a local device stands in for the GPU."""

    stacks: dict
    batches: tuple[int, ...] = (1, 16)
    cpu: str = CPU_TARGET
    smoke: bool = False

    def flags(self, side: str) -> list[str]:
        """mdc-compile's device flags for the module of ``side``."""
        cpu = f"--iree-llvmcpu-target-cpu={self.cpu}"
        if side == "cpu" or self.smoke:
            return [f"--device={side}=local[0]", cpu]
        return [f"--device={side}=cuda[0]", "--iree-cuda-target=sm_80"]


def build(plan: Plan, out: str) -> int:
    os.makedirs(out, exist_ok=True)
    jobs, models = {}, []
    for name, stack in plan.stacks.items():
        modules = {side: {} for side in SIDES}
        for b in plan.batches:
            source = os.path.join(out, f"{name}_b{b}.mlir")
            with open(source, "w") as f:
                f.write(KINDS[name].program(stack, b))
            for side in SIDES:
                vmfb = f"{name}_{side}_b{b}.vmfb"
                jobs[vmfb] = ["mdc-compile", source, *plan.flags(side), "--no-host-entry-points"]
                modules[side][str(b)] = vmfb
        models.append({"name": name, "stack": dataclasses.asdict(stack), "modules": modules})
    if compile_jobs(out, jobs, warnings=True):
        return 1
    kit = {"format": FORMAT, "smoke": plan.smoke, "cpu": plan.cpu, "batches": list(plan.batches),
           "models": models, "flags": {side: plan.flags(side) for side in SIDES}}
    write_manifest(out, "models.json", kit)
    print(f"built {len(jobs)} modules in {out} ({kit_mib(out):.1f} MiB); batches "
          f"{', '.join(map(str, plan.batches))}; weights made at run time:")
    for name, stack in plan.stacks.items():
        print(f"  {name}: {KINDS[name].describe(stack)}; {stack.weight_bytes / 2**20:.1f} MiB")
    return 0
