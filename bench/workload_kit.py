"""``bench workload build DIR``: the workload's kit (here, with the compiler).

One mdc module per split k (blocks 0..k-1 on the CPU device, the rest on
the GPU), in each execution model asked for, and a stock iree-compile
module of the same stack with everything on one GPU; the numpy reference's
logits for the kit's token ids; and workload.json, which says how it was
all made. The weights are not in the kit: the run makes them again from
the seed (model.weight) and checks their digest against the kit's.
"""

from __future__ import annotations

import dataclasses
import os

import numpy as np

from . import model
from .kitframe import compile_jobs, kit_mib, write_manifest

FORMAT = "mdc.bench.workload/1"
MODELS = {"sync": [], "async": ["--iree-execution-model=async-external"]}


@dataclasses.dataclass(frozen=True)
class Plan:
    """What a kit holds: the stack, the batch sizes (1 and the throughput
    batch), the splits k, the execution models, the CPU target, whether a
    second local device stands in for the GPU, and more mdc-compile flags
    for the split modules."""

    stack: model.Stack
    batches: tuple[int, ...]
    splits: tuple[int, ...]
    models: tuple[str, ...]
    cpu: str = "generic"
    smoke: bool = False
    mdc_flags: tuple[str, ...] = ()


def default_splits(blocks: int) -> tuple[int, ...]:
    """k = 0, N/4, N/2, 3N/4, N (rounded down), each once."""
    return tuple(sorted({blocks * q // 4 for q in range(5)}))


def _write(path: str, text: str) -> str:
    with open(path, "w") as f:
        f.write(text)
    return path


def _jobs(plan: Plan, out: str) -> tuple[dict[str, list[str]], list[dict]]:
    """(compile jobs by output name, the kit's module entries); writes
    each module's MLIR into ``out``."""
    gpu = (["--device=b=local[1]", "--link=a:b=staged"] if plan.smoke else
           ["--device=b=cuda[0]", "--iree-cuda-target=sm_80"])
    mdc = ["--device=a=local[0]", *gpu, f"--iree-llvmcpu-target-cpu={plan.cpu}", *plan.mdc_flags,
           "--no-host-entry-points"]
    jobs, modules = {}, []
    for k in plan.splits:
        source = _write(os.path.join(out, f"workload_k{k}.mlir"), model.program(plan.stack, plan.batches, k))
        for name in plan.models:
            vmfb = f"split_k{k}_{name}.vmfb"
            jobs[vmfb] = ["mdc-compile", source, *mdc, *MODELS[name]]
            modules.append({"file": vmfb, "k": k, "model": name})
    source = _write(os.path.join(out, "workload_stock.mlir"), model.program(plan.stack, plan.batches, None))
    target = (["--iree-hal-target-device=local", "--iree-hal-local-target-device-backends=llvm-cpu",
               f"--iree-llvmcpu-target-cpu={plan.cpu}"] if plan.smoke else
              ["--iree-hal-target-device=cuda", "--iree-cuda-target=sm_80"])
    jobs["stock_gpu.vmfb"] = ["iree-compile", source, *target]
    return jobs, modules


def _expected(plan: Plan, out: str) -> dict:
    """The reference logits per batch size, written into ``out``; -> the
    kit's entries for them, and the weights' digest."""
    params = model.weights(plan.stack)
    entries = {}
    for b in plan.batches:
        ids = plan.stack.ids(b)
        name = f"expected_b{b}.npy"
        np.save(os.path.join(out, name), model.reference(plan.stack, params, ids).astype(np.float32))
        entries[str(b)] = {"ids": ids.tolist(), "expected": name}
    return {"batches": entries, "weights_sha256": model.digest(params)}


def build(plan: Plan, out: str) -> int:
    os.makedirs(out, exist_ok=True)
    jobs, modules = _jobs(plan, out)
    if compile_jobs(out, jobs):
        return 1
    kit = {"format": FORMAT, "stack": dataclasses.asdict(plan.stack), "smoke": plan.smoke, "cpu": plan.cpu,
           "mdc_flags": list(plan.mdc_flags),
           "splits": list(plan.splits), "modules": modules, "stock": "stock_gpu.vmfb", **_expected(plan, out)}
    write_manifest(out, "workload.json", kit)
    s = plan.stack
    print(f"built {len(jobs)} modules in {out} ({kit_mib(out):.1f} MiB): {s.blocks} blocks, hidden {s.hidden}, "
          f"vocab {s.vocab}, {s.weight_bytes / 2**20:.1f} MiB of weights made at run time; "
          f"batches {', '.join(map(str, plan.batches))}; splits k = {', '.join(map(str, plan.splits))}")
    return 0
