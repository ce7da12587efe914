"""One measurement of ``bench models run``, in a process of its own:

    python -m bench.models_child SPEC.json

SPEC says who runs (``mdc``: the kit's module through
mdc.runtime_shim.load with the parameter archive; ``torch``: the model's
torch eager form, its weights read from the same archive), on which
device, which model at which batch, and how many calls. Its own process,
so that torch's CPU threads never share the machine with IREE's
local-task workers (which spin a while after each task) and every
measurement starts with the GPU's memory free. The last line of stdout is
the result as JSON: seconds (the median call), right, error, load_s, and
``about`` (what ran: torch's version, threads, GPU and TF32 setting), or
``skipped`` and why (no torch, or torch without CUDA).
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np

from . import model
from .models_kit import KINDS
from .workload import measure


def read_weights(stack, irpa: str) -> list[np.ndarray]:
    """The model's weights from the parameter archive the run wrote, in
    ``stack.weights()`` order, each in writable 64-byte aligned memory."""
    import iree.runtime as rt

    index = rt.ParameterIndex()
    index.load(irpa)
    entries = dict(index.items())
    return [model.aligned_copy(np.frombuffer(entries[name].file_view, stack.numpy_dtype).reshape(shape))
            for name, shape, _ in stack.weights()]


def _torch(spec: dict, stack, ids, want) -> dict:
    try:
        import torch
    except ImportError as e:
        return {"skipped": f"torch is not importable ({e})"}
    device = spec["device"]
    if device == "cuda" and not torch.cuda.is_available():
        return {"skipped": f"torch {torch.__version__} has no CUDA device here"}
    began = time.perf_counter()
    forward = KINDS[spec["model"]].torch(torch, stack, read_weights(stack, spec["irpa"]), device)
    if device == "cuda":
        torch.cuda.synchronize()
    load_s = time.perf_counter() - began
    m = measure(forward, want, spec["calls"], ids, stack.tolerance)
    gpu = f", GPU {torch.cuda.get_device_name(0)}, TF32 matmul {torch.backends.cuda.matmul.allow_tf32}" \
        if device == "cuda" else ""
    about = f"torch {torch.__version__} on {device}: {torch.get_num_threads()} CPU threads{gpu}"
    return {"seconds": m.seconds, "right": m.right, "error": m.error, "load_s": load_s, "about": about}


def _mdc(spec: dict, stack, ids, want) -> dict:
    from mdc.runtime_shim import load

    began = time.perf_counter()
    with load(spec["file"], [spec["driver"]], parameters=[f"{model.PARAMETER_SCOPE}={spec['irpa']}"],
              flags=spec.get("flags", [])) as m:
        f = m.function(f"forward_b{spec['batch']}")
        load_s = time.perf_counter() - began
        result = measure(f, want, spec["calls"], ids, stack.tolerance)
    about = f"mdc on {spec['driver']}" + (f" ({' '.join(spec['flags'])})" if spec.get("flags") else "")
    return {"seconds": result.seconds, "right": result.right, "error": result.error, "load_s": load_s,
            "about": about}


def main(argv: list[str]) -> int:
    with open(argv[0]) as f:
        spec = json.load(f)
    stack = KINDS[spec["model"]].stack(spec["stack"])
    ids = model.aligned_copy(stack.ids(spec["batch"]))
    want = np.load(spec["expected"])
    result = (_torch if spec["who"] == "torch" else _mdc)(spec, stack, ids, want)
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
