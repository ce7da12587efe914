"""``bench build DIR``: compile the measuring commands' modules (here, with
the compiler) into a kit the GPU machine runs with the runtime alone."""

from __future__ import annotations

import os

from .common import HERE, PIECE_COUNTS, SEED, SEED_DYNAMIC, STAGINGS
from .kitframe import compile_jobs


def _program(name: str) -> str:
    return os.path.join(HERE, "programs", f"{name}.mlir")


def _stock_jobs(cpu: str, smoke: bool) -> dict[str, list[str]]:
    """The stock IREE references: the seed on two GPUs and on two CPUs, and
    the compute programs' op alone on its device."""
    local = ["--iree-hal-local-target-device-backends=llvm-cpu", f"--iree-llvmcpu-target-cpu={cpu}"]
    two_gpus = (["--iree-hal-target-device=device_a=local[0]", "--iree-hal-target-device=device_b=local[1]",
                 "--iree-hal-local-target-device-backends=llvm-cpu"] if smoke else
                ["--iree-hal-target-device=device_a=cuda[0]", "--iree-hal-target-device=device_b=cuda[1]",
                 "--iree-cuda-target=sm_80"])
    gpu = (["--iree-hal-target-device=device_b=local[0]", *local] if smoke else
           ["--iree-hal-target-device=device_b=cuda[0]", "--iree-cuda-target=sm_80"])
    return {
        "seed_cuda_cuda.vmfb": ["iree-compile", SEED, *two_gpus],
        "seed_dynamic_cuda_cuda.vmfb": ["iree-compile", SEED_DYNAMIC, *two_gpus],
        "seed_local_local.vmfb": ["iree-compile", SEED, "--iree-hal-target-device=device_a=local[0]",
                                  "--iree-hal-target-device=device_b=local[1]", *local],
        "compute_on_gpu.vmfb": ["iree-compile", _program("compute_on_gpu"), *gpu],
        "compute_on_cpu.vmfb": ["iree-compile", _program("compute_on_cpu"),
                                "--iree-hal-target-device=device_a=local[0]", *local],
    }


def _mdc_jobs(cpu: str, smoke: bool) -> dict[str, list[str]]:
    """mdc-compile's modules: both lowerings side by side, each piece count,
    and the pinned-argument variants."""
    gpu = ["--device=b=local[1]", "--link=a:b=staged"] if smoke else ["--device=b=cuda[0]"]
    mdc = ["--device=a=local[0]", *gpu, f"--iree-llvmcpu-target-cpu={cpu}"]
    jobs = {}
    for staging in STAGINGS:
        lowered = [*mdc, f"--staging={staging}"]
        for program in ("to_gpu", "to_cpu", "compute_to_gpu", "compute_to_cpu"):
            jobs[f"{program}_{staging}.vmfb"] = ["mdc-compile", _program(program), *lowered]
        jobs[f"seed_mdc_{staging}.vmfb"] = ["mdc-compile", SEED, *lowered]
        jobs[f"seed_dynamic_mdc_{staging}.vmfb"] = ["mdc-compile", SEED_DYNAMIC, *lowered]
    for pieces in PIECE_COUNTS:
        jobs[f"to_gpu_pieces_{pieces}.vmfb"] = ["mdc-compile", _program("to_gpu"), *mdc,
                                                f"--staging-pieces={pieces}"]
    jobs["to_gpu_pinned.vmfb"] = ["mdc-compile", _program("to_gpu"), *mdc, "--pinned-arguments"]
    jobs["to_cpu_into.vmfb"] = ["mdc-compile", _program("to_cpu_into"), *mdc]
    jobs["to_cpu_into_pinned.vmfb"] = ["mdc-compile", _program("to_cpu_into"), *mdc, "--pinned-arguments"]
    return jobs


def build(out: str, cpu: str, smoke: bool = False) -> int:
    """``smoke``: a second local device (forced staging) stands in for the
    GPU, so ``run --smoke`` exercises the measurements on a CPU-only machine."""
    os.makedirs(out, exist_ok=True)
    jobs = {**_stock_jobs(cpu, smoke), **_mdc_jobs(cpu, smoke)}
    if compile_jobs(out, jobs):
        return 1
    print(f"built {len(jobs)} modules in {out}")
    return 0


# What a baseline kit of ``latency --baseline`` must hold: the seed's mdc
# modules alone (a kit from an older commit may lack later modules); the
# dynamic-size seed's are measured where it has them.
SEED_MDC_MODULES = tuple(f"seed_mdc_{staging}.vmfb" for staging in STAGINGS)
SEED_DYNAMIC_MDC_MODULES = tuple(f"seed_dynamic_mdc_{staging}.vmfb" for staging in STAGINGS)


def missing(kit: str, names=None) -> list[str]:
    """Of ``names`` (default: every module ``build`` makes), those ``kit``
    lacks (all of them where it is no folder)."""
    if names is None:
        names = [*_stock_jobs("generic", False), *_mdc_jobs("generic", False)]
    return [n for n in names if not os.path.isfile(os.path.join(kit, n))]
