"""The numbers of mdc's built-in machine profile (used by
``mdc-compile --place=auto`` without ``--place-profile``), as the JSON
document machine_profile.py reads. docs/DESIGN.md ("The cost model") says
where each comes from; in short:

* local: this project's 2-core development machine (AMD EPYC VM), measured
  with ``mdc-profile --device=local-task`` (full, not --quick), the best of
  four runs for each number (the machine was shared: other work only
  slows a run down);
* cuda: the H100/H200 rows of docs/PERFORMANCE.md and
  docs/performance-history.md: issue 35 run 3's matmul kernels (H100),
  IREE's ~130 us per call (issue 35 runs 1, 2), the workload's all-GPU
  stock IREE call (H200, run G1) for bytes/s, the 30-38 us queue copy and
  the 27.2 / 50.9 GB/s crossings (bench sizes, bench run B);
* vulkan: lavapipe on the development machine, measured with
  ``mdc-profile --device=vulkan`` in the same way (a CPU-backed Vulkan:
  profile a real GPU's Vulkan driver before relying on it);
* hip: a guess, stated as one: cuda's numbers (no AMD GPU was measured);
* reserved bytes (what opening the device and running work there takes
  beside the program's buffers): on cuda 552 MiB, *not measured by
  mdc-profile yet*: about 520 MiB to open the device on an H100 (a CUDA
  context and IREE's own; issue 45's observation) plus the 32 MiB bench
  placement measured beyond an all-CPU module (2026-12-06: every placement
  that ran work on the GPU peaked at its accounted bytes plus 32 MiB);
  hip: the same guess. On vulkan 84 MiB, *measured* on lavapipe on the
  development machine (profiler/open_cost.py, three runs of 83.8 MiB):
  the 64 MiB block IREE's Vulkan device allocates on creation and
  lavapipe's own heap. 0 on local: the host is not budgeted.
* memory and free memory: unknown (null) everywhere: they are a
  machine's, and ``--gpu-memory=auto`` needs a profile of this machine.

Pure data, no imports.
"""

_LOCAL = {
    "matmul_flops_per_s": {"f32": 1.05e11, "f16": 8.59e9, "other": 8.59e9},
    "bytes_per_s": {"matmul": 2.84e9, "elementwise": 1.77e10, "reduction": 1.75e10, "gather": 3.35e9,
                    "copy": 1.08e10},
    "seconds_per_dispatch": 7.01e-6,
    "seconds_per_call": 3.47e-6,
    "memory_bytes": None,
}

# IREE's effective bytes/s on the GPU: 448 MiB of weights read by one
# batch-1 call of the workload in 2.10 ms, less the 130 us call (2.38e11).
_CUDA_BYTES_PER_S = 2.38e11

_CUDA = {
    "matmul_flops_per_s": {"f32": 7.67e12, "f16": 1.61e13, "other": 7.67e12},
    "bytes_per_s": {c: _CUDA_BYTES_PER_S for c in ("matmul", "elementwise", "reduction", "gather", "copy")},
    "seconds_per_dispatch": 9e-6,
    "seconds_per_call": 130e-6,
    "memory_bytes": None,
    "reserved_bytes": 552 << 20,
}

_VULKAN = {
    "matmul_flops_per_s": {"f32": 1.89e9, "f16": 1.89e9, "other": 1.89e9},
    "bytes_per_s": {"matmul": 2.06e8, "elementwise": 8.16e8, "reduction": 4.15e9, "gather": 2.06e8,
                    "copy": 3.82e8},
    "seconds_per_dispatch": 9.37e-5,
    "seconds_per_call": 3.41e-6,
    "memory_bytes": None,
    "reserved_bytes": 84 << 20,
}


def _crossing(source: str, target: str, latency_s: float, bytes_per_s: float) -> dict:
    return {"source": source, "target": target, "latency_s": latency_s, "bytes_per_s": bytes_per_s}


DOCUMENT = {
    "format": "mdc-machine-profile",
    "version": 1,
    "source": {
        "machine": "mdc's default: local and vulkan (lavapipe) measured on a 2-core AMD EPYC VM; cuda from "
                   "H100/H200 measurements (docs/PERFORMANCE.md); hip a guess (cuda's numbers)",
        "date": "2026-12-06",
        "tool": "mdc-profile (mdc) 0.1.0, iree-base-compiler 3.13.0, iree-base-runtime 3.13.0; bench/",
    },
    "devices": {"local": _LOCAL, "cuda": _CUDA, "vulkan": _VULKAN, "hip": dict(_CUDA)},
    "crossings": [
        _crossing("local", "local", 6.1e-6, 3.36e9),
        _crossing("local", "cuda", 35e-6, 2.72e10),
        _crossing("cuda", "local", 35e-6, 5.09e10),
        _crossing("local", "vulkan", 3.53e-5, 7.63e8),
        _crossing("vulkan", "local", 4.82e-5, 3.22e9),
        _crossing("local", "hip", 35e-6, 2.72e10),
        _crossing("hip", "local", 35e-6, 5.09e10),
    ],
}
