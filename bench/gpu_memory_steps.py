"""On the GPU machine: where a generation module's GPU memory goes, step by
step, beside what its ``--place=auto`` report counted.

    python -m bench.gpu_memory_steps KIT SCRATCH [NAME ...] [--flag=--cuda_...]

KIT is a ``bench generate build`` kit and SCRATCH a ``bench generate run
--scratch`` folder that already holds the f32 archive (CONFIG_f32.irpa,
the kit's config) and the prompt. For
each module NAME (default: every ``auto_f32_n*`` of the kit), in a process
of its own, CUDA device 0's memory in use is read (profiler/memory.py's
CudaMemory, sampled every 2 ms for the peak) once its context is open,
after ``load`` (the devices open, the module and its parameters loaded),
after a generation of 2 tokens and after one of 32; each step's growth
and peak are printed in MiB beside the report's accelerator bytes
(weights, activations, the runtime's, their total, the budget).
``--flag`` passes a runtime flag (iree.runtime.flags) before any device
opens, so that allocator settings can be compared.
"""

from __future__ import annotations

import glob
import json
import os
import sys

from .kit_child import child_or_help, load_module, run_child, usage

MIB = 1 << 20


def _child(kit: str, scratch: str, name: str, flags: list[str]) -> dict:
    from mdc.profiler.memory import CudaMemory
    from mdc.runtime_shim.generate import generate

    memory = CudaMemory()
    steps = {}

    def step(label: str) -> None:
        steps[label] = (memory.used() - memory.before, memory.peak - memory.before)

    with memory:
        module, prompt = load_module(kit, scratch, name, flags)
        with module as m:
            step("loaded")
            generate(m, prompt, 2)
            step("2 tokens")
            generate(m, prompt, 32)
            step("32 tokens")
    step("closed")
    return steps


def _report(kit: str, name: str) -> dict:
    with open(os.path.join(kit, f"{name}.report.json")) as f:
        functions = json.load(f)["placement"]["functions"]
    return next(iter(functions.values()))["accelerator_bytes"]


def main(argv: list[str]) -> int:
    status = child_or_help(argv, __doc__, _child)
    if status is not None:
        return status
    flags = [a.split("=", 1)[1] for a in argv if a.startswith("--flag=")]
    positional = [a for a in argv if not a.startswith("--flag=")]
    if len(positional) < 2 or any(a.startswith("-") for a in positional):
        return usage(__doc__)
    kit, scratch, *names = positional
    names = names or sorted(os.path.basename(p)[:-5] for p in glob.glob(os.path.join(kit, "auto_f32_n*.vmfb")))
    print(f"flags: {flags or 'none'}")
    print(f"{'module':14} {'step':10} {'used MiB':>9} {'peak MiB':>9}   report MiB: weights activations runtime "
          f"total budget")
    for name in names:
        steps = run_child("bench.gpu_memory_steps", kit, scratch, name, flags, 300)
        if isinstance(steps, str):
            print(f"{name}: {steps}")
            continue
        b = _report(kit, name)
        counted = " ".join(f"{int(b[k]) / MIB:.1f}" for k in ("weights", "activations", "runtime", "total", "budget"))
        for i, (step, (used, peak)) in enumerate(steps.items()):
            print(f"{name:14} {step:10} {used / MIB:9.1f} {peak / MIB:9.1f}   {counted if i == 0 else ''}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
