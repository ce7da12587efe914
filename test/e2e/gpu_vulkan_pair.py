"""Two GPU drivers on one GPU: values moving cuda <-> vulkan, staged through
the local device. Build here, run there.

    python test/e2e/gpu_vulkan_pair.py build KIT   # here: mdc-compile + numpy references
    python test/e2e/gpu_vulkan_pair.py run KIT     # there: runtime only, cuda and NVIDIA's Vulkan

The program moves a value local -> cuda -> vulkan -> local and vulkan ->
cuda, computing on each device, in both execution models. ``run`` runs each
module on stock iree-run-module (the runtime wheel's own binary) with
local-task + cuda + vulkan, compares every result with numpy, and then tries
runtime_shim.load on the same devices, which IREE 3.13's Python runtime
refuses for Vulkan beside another device (test_vulkan.py's canary): the
table says whether that still holds on NVIDIA's driver. A run with no cuda
or no Vulkan device exits 2.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))

PROGRAM = """
func.func public @chain(%x: tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>) {
  %on_cuda = flow.tensor.transfer %x : tensor<64xf32> to #hal.device.promise<@device_b>
  %sq = arith.mulf %on_cuda, %on_cuda : tensor<64xf32>
  %on_vk = flow.tensor.transfer %sq : tensor<64xf32> to #hal.device.promise<@device_c>
  %plus = arith.addf %on_vk, %on_vk : tensor<64xf32>
  %back_cuda = flow.tensor.transfer %plus : tensor<64xf32> to #hal.device.promise<@device_b>
  %diff = arith.subf %back_cuda, %sq : tensor<64xf32>
  %r0 = flow.tensor.transfer %plus : tensor<64xf32> to #hal.device.promise<@device_a>
  %r1 = flow.tensor.transfer %diff : tensor<64xf32> to #hal.device.promise<@device_a>
  return %r0, %r1 : tensor<64xf32>, tensor<64xf32>
}
"""
DEVICES = ["--device=a=local[0]", "--device=b=cuda[0]", "--device=c=vulkan[0]"]
RUNTIME = ["local-task", "cuda", "vulkan"]
MODELS = ("async-internal", "async-external")


def build(kit: str) -> int:
    os.makedirs(kit, exist_ok=True)
    src = os.path.join(kit, "chain.mlir")
    with open(src, "w") as f:
        f.write(PROGRAM)
    x = np.linspace(-3, 3, 64, dtype=np.float32)
    np.save(os.path.join(kit, "x.npy"), x)
    sq = x * x
    np.save(os.path.join(kit, "ref0.npy"), sq + sq)
    np.save(os.path.join(kit, "ref1.npy"), (sq + sq) - sq)
    for model in MODELS:
        r = subprocess.run(["mdc-compile", src, *DEVICES, "--iree-llvmcpu-target-cpu=generic",
                            f"--iree-execution-model={model}", "-o", os.path.join(kit, f"chain-{model}.vmfb")],
                           capture_output=True, text=True)
        if r.returncode:
            print(f"mdc-compile failed ({model}): {r.stderr.strip()}")
            return 1
    with open(os.path.join(kit, "pair.json"), "w") as f:
        json.dump({"models": list(MODELS)}, f)
    print(f"built {len(MODELS)} modules in {kit}")
    return 0


def _stock_runner() -> str:
    import iree._runtime_libs as libs

    return os.path.join(os.path.dirname(libs.__file__), "iree-run-module")


def run(kit: str) -> int:
    import iree.runtime as rt

    for driver in ("cuda", "vulkan"):
        try:
            rt.get_driver(driver).create_default_device()
        except Exception as e:  # noqa: BLE001 - any failure means: not here
            print(f"gpu_vulkan_pair: no {driver} device here ({str(e).splitlines()[0][:120]})")
            return 2
    refs = [np.load(os.path.join(kit, f"ref{k}.npy")) for k in range(2)]
    rows, failures = [], 0
    for model in MODELS:
        vmfb = os.path.join(kit, f"chain-{model}.vmfb")
        outs = [os.path.join(kit, f"out-{model}-{k}.npy") for k in range(2)]
        for o in outs:
            if os.path.exists(o):
                os.unlink(o)
        cmd = [_stock_runner(), f"--module={vmfb}", *[f"--device={d}" for d in RUNTIME],
               f"--input=@{os.path.join(kit, 'x.npy')}", *[f"--output=@{o}" for o in outs]]
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
            ok = r.returncode == 0 and all(np.allclose(np.load(o), ref, rtol=1e-6) for o, ref in zip(outs, refs))
            why = "" if ok else (r.stderr.strip().splitlines() or ["wrong numbers"])[-1][:160]
        except subprocess.TimeoutExpired:
            ok, why = False, "HANG (60 s)"
        failures += not ok
        rows.append((model, "stock iree-run-module", "match" if ok else f"FAIL: {why}"))
        from runtime_shim import load

        try:
            with load(vmfb, RUNTIME, timeout_s=30) as m:
                got = m.chain(np.load(os.path.join(kit, "x.npy")))
            shim = "opened; " + ("match" if all(np.allclose(g, r) for g, r in zip(got, refs)) else "MISMATCH")
        except Exception as e:  # noqa: BLE001 - recorded in the table
            shim = f"refused: {str(e).splitlines()[0][:140]}"
        rows.append((model, "runtime_shim.load", shim))
    print("| model | runner | result |\n|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    return 1 if failures else 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("cmd", choices=["build", "run"])
    p.add_argument("kit")
    a = p.parse_args()
    return build(os.path.abspath(a.kit)) if a.cmd == "build" else run(os.path.abspath(a.kit))


if __name__ == "__main__":
    sys.exit(main())
