"""What the tests of ``--place`` share: a matmul written as the input
program writes one, a machine profile that makes the device named ``gpu``
fast (so that a CPU pair or local + lavapipe is split), and a placed module
of one input and one result run through both mdc-run and
mdc.runtime_shim.load."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from mdc.contract.machine_profile import default_profile

SPEEDUP = 1000.0  # the fast gpu's rates over the local device's


def matmul_lines(lhs: str, rhs: str, out: str, m: int, k: int, n: int) -> list[str]:
    """``%out = %lhs (m x k) @ %rhs (k x n)``, f32, its storage zeroed with
    the function's ``%zero``."""
    return [f"  %{out}_e = tensor.empty() : tensor<{m}x{n}xf32>",
            f"  %{out}_z = linalg.fill ins(%zero : f32) outs(%{out}_e : tensor<{m}x{n}xf32>) -> tensor<{m}x{n}xf32>",
            f"  %{out} = linalg.matmul ins(%{lhs}, %{rhs} : tensor<{m}x{k}xf32>, tensor<{k}x{n}xf32>) "
            f"outs(%{out}_z : tensor<{m}x{n}xf32>) -> tensor<{m}x{n}xf32>"]


def fast_gpu_profile(path: Path, crossing_bytes_per_s: float) -> Path:
    """The built-in profile with an entry for the device named gpu: the
    local device's rates SPEEDUP times over, 10 ns a dispatch and a call,
    and crossings to and from it of 0.1 us plus ``crossing_bytes_per_s``.
    Written to ``path``, which it returns."""
    base = default_profile()
    local = base.devices["local"]
    gpu = dataclasses.replace(local, matmul_flops_per_s={k: v * SPEEDUP for k, v in local.matmul_flops_per_s.items()},
                              bytes_per_s={k: v * SPEEDUP for k, v in local.bytes_per_s.items()},
                              seconds_per_dispatch=1e-8, seconds_per_call=1e-8)
    crossing = dataclasses.replace(base.crossings[("local", "local")], latency_s=1e-7,
                                   bytes_per_s=crossing_bytes_per_s)
    profile = dataclasses.replace(base, devices={**base.devices, "gpu": gpu},
                                  crossings={**base.crossings, ("local", "gpu"): crossing, ("gpu", "local"): crossing})
    path.write_text(profile.to_json())
    return path


def run_both_ways(tmp_path: Path, vmfb, runtime_devices, x: np.ndarray, mdc_run) -> tuple:
    """The result of ``main(x)`` through mdc-run (the ``mdc_run`` fixture)
    and through mdc.runtime_shim.load, as (mdc-run's, load's)."""
    from mdc.runtime_shim import load

    np.save(tmp_path / "in.npy", x)
    r = mdc_run(f"--module={vmfb}", *(f"--device={d}" for d in runtime_devices), "--function=main",
                f"--input=@{tmp_path / 'in.npy'}", f"--output=@{tmp_path / 'out.npy'}", timeout=300)
    assert r.returncode == 0, r.stderr
    with load(str(vmfb), list(runtime_devices)) as m:
        loaded = np.asarray(m.main(x))
    return np.load(tmp_path / "out.npy"), loaded
