"""Two GPU drivers on one GPU: values moving cuda <-> vulkan, staged through
the local device. Build here, run there.

    python test/e2e/gpu_vulkan_pair.py build KIT   # here: mdc-compile + numpy references
    python test/e2e/gpu_vulkan_pair.py run KIT     # there: runtime only, cuda and NVIDIA's Vulkan

The programs move values between local, cuda and vulkan devices in each
direction, computing on each device, in both execution models, one with
its argument and results declared on the GPUs. ``run`` runs each module on
stock iree-run-module (the runtime wheel's own binary, through the host
entry point where there is one) with local-task + cuda + vulkan, and with
mdc.runtime_shim.load (which runs such device sets in that same tool, as
mdc-run does) in both device orders, each call under a timeout, and
compares every result with numpy. A run with no cuda or no Vulkan device
exits 2.
"""

from __future__ import annotations

import os
import sys

import numpy as np

import _harness_path  # noqa: F401  (test/ and the checkout on sys.path)
from bench.kitframe import (Step, as_list, close, device_missing, kit_main, markdown, no_device,  # noqa: E402
                            read_manifest, run_timed, write_manifest)

# Each program: (name, text, inputs, numpy reference of each result).
PROGRAMS = [
    # local -> cuda -> vulkan -> local: the chain the issue measured working.
    ("cuda_then_vulkan", """
func.func public @cuda_then_vulkan(%x: tensor<64xf32>) -> tensor<64xf32> {
  %on_cuda = flow.tensor.transfer %x : tensor<64xf32> to #hal.device.promise<@device_b>
  %sq = arith.mulf %on_cuda, %on_cuda : tensor<64xf32>
  %on_vk = flow.tensor.transfer %sq : tensor<64xf32> to #hal.device.promise<@device_c>
  %plus = arith.addf %on_vk, %on_vk : tensor<64xf32>
  %r = flow.tensor.transfer %plus : tensor<64xf32> to #hal.device.promise<@device_a>
  return %r : tensor<64xf32>
}
""", lambda x: [2 * x * x]),
    # local -> vulkan -> cuda -> local: the other direction between the GPUs.
    ("vulkan_then_cuda", """
func.func public @vulkan_then_cuda(%x: tensor<64xf32>) -> tensor<64xf32> {
  %on_vk = flow.tensor.transfer %x : tensor<64xf32> to #hal.device.promise<@device_c>
  %sq = arith.mulf %on_vk, %on_vk : tensor<64xf32>
  %on_cuda = flow.tensor.transfer %sq : tensor<64xf32> to #hal.device.promise<@device_b>
  %plus = arith.addf %on_cuda, %on_cuda : tensor<64xf32>
  %r = flow.tensor.transfer %plus : tensor<64xf32> to #hal.device.promise<@device_a>
  return %r : tensor<64xf32>
}
""", lambda x: [2 * x * x]),
    # cuda -> vulkan -> cuda and two results: hung on stock iree-run-module
    # in the last H200 run.
    ("round_trip", """
func.func public @round_trip(%x: tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>) {
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
""", lambda x: [2 * x * x, x * x]),
    # Argument on cuda, results on vulkan and on the CPU: only the host
    # entry point can be called by a runner.
    ("declared_on_gpus", """
func.func public @declared_on_gpus(%x: tensor<64xf32> {iree.abi.affinity = #hal.device.promise<@device_b>})
    -> (tensor<64xf32> {iree.abi.affinity = #hal.device.promise<@device_c>},
        tensor<64xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %sq = arith.mulf %x, %x : tensor<64xf32>
  %on_vk = flow.tensor.transfer %sq : tensor<64xf32> to #hal.device.promise<@device_c>
  %plus = arith.addf %on_vk, %on_vk : tensor<64xf32>
  %on_a = flow.tensor.transfer %x : tensor<64xf32> to #hal.device.promise<@device_a>
  %neg = arith.negf %on_a : tensor<64xf32>
  return %plus, %neg : tensor<64xf32>, tensor<64xf32>
}
""", lambda x: [2 * x * x, -x]),
]
DEVICES = ["--device=a=local[0]", "--device=b=cuda[0]", "--device=c=vulkan[0]"]
RUNTIME = ["local-task", "cuda", "vulkan"]
MODELS = ("async-internal", "async-external")


def build(kit: str) -> int:
    kit = os.path.abspath(kit)
    os.makedirs(kit, exist_ok=True)
    x = np.linspace(-3, 3, 64, dtype=np.float32)
    np.save(os.path.join(kit, "x.npy"), x)
    for name, text, _ in PROGRAMS:
        src = os.path.join(kit, f"{name}.mlir")
        with open(src, "w") as f:
            f.write(text)
        for model in MODELS:
            r = run_timed(["mdc-compile", src, *DEVICES, "--iree-llvmcpu-target-cpu=generic",
                           f"--iree-execution-model={model}", "-o", os.path.join(kit, f"{name}-{model}.vmfb")])
            if not r.ok:
                print(f"mdc-compile failed ({name}, {model}): {r.stderr.strip()}")
                return 1
    for name, _, reference in PROGRAMS:
        for k, ref in enumerate(reference(x.astype(np.float64))):
            np.save(os.path.join(kit, f"{name}.ref{k}.npy"), ref.astype(np.float32))
    write_manifest(kit, "pair.json", {"models": list(MODELS), "programs": [n for n, _, _ in PROGRAMS]})
    print(f"built {len(PROGRAMS) * len(MODELS)} modules in {kit}")
    return 0


def _stock_runner() -> str:
    import iree._runtime_libs as libs

    return os.path.join(os.path.dirname(libs.__file__), "iree-run-module")


def _stock(vmfb: str, name: str, kit: str, refs: list) -> str:
    """Stock iree-run-module on the function a runner can call: its host
    entry point where it has one, with the CPU first."""
    import iree.runtime as rt

    m = rt.VmModule.mmap(rt.VmInstance(), vmfb)
    function = f"{name}$host" if f"{name}$host" in m.function_names else name
    outs = [os.path.join(kit, f"out-{os.path.basename(vmfb)}-{k}.npy") for k in range(len(refs))]
    r = run_timed([_stock_runner(), f"--module={vmfb}", f"--function={function}", *[f"--device={d}" for d in RUNTIME],
                   f"--input=@{os.path.join(kit, 'x.npy')}", *[f"--output=@{o}" for o in outs]], 60, outputs=outs)
    if r.status == "TIMEOUT":
        return "HANG (60 s)"
    if not r.ok:
        return "FAIL: " + (r.stderr.strip().splitlines() or ["no message"])[-1][:160]
    return ("match" if _match([np.load(o) for o in outs], refs) else "MISMATCH") + f" (@{function})"


def _match(got: list, refs: list) -> bool:
    return len(got) == len(refs) and all(close(g, r, 1e-6, 1e-8)[0] for g, r in zip(got, refs))


def _shim(vmfb: str, name: str, kit: str, refs: list, order: list) -> str:
    """mdc.runtime_shim.load, which runs this device set in iree-run-module."""
    from mdc.runtime_shim import load

    try:
        with load(vmfb, order, timeout_s=60) as m:
            got = as_list(getattr(m, name)(np.load(os.path.join(kit, "x.npy"))))
        return "match" if _match(got, refs) else "MISMATCH"
    except Exception as e:  # noqa: BLE001 - recorded in the table
        return f"FAIL: {type(e).__name__}: {(str(e).splitlines() or [''])[0][:140]}"


def run(kit: str) -> int:
    kit = os.path.abspath(kit)
    for driver in ("cuda", "vulkan"):
        why = device_missing(driver)
        if why:
            return no_device("gpu_vulkan_pair", driver, why=why, nothing="run")
    spec = read_manifest(kit, "pair.json", build=f"python test/e2e/gpu_vulkan_pair.py build {kit}")
    rows, failures = [], 0
    for name in spec["programs"]:
        refs = [np.load(os.path.join(kit, p)) for p in sorted(os.listdir(kit)) if p.startswith(f"{name}.ref")]
        for model in spec["models"]:
            vmfb = os.path.join(kit, f"{name}-{model}.vmfb")
            for runner, result in (
                    ("stock iree-run-module", _stock(vmfb, name, kit, refs)),
                    ("mdc.runtime_shim.load", _shim(vmfb, name, kit, refs, RUNTIME)),
                    ("mdc.runtime_shim.load, vulkan first", _shim(vmfb, name, kit, refs, RUNTIME[::-1]))):
                failures += not result.startswith("match")
                rows.append((name, model, runner, result))
    print(markdown(("program", "model", "runner", "result"), "llll", rows))
    return 1 if failures else 0


def main() -> int:
    return kit_main(__doc__, Step(lambda a: build(a.kit)), Step(lambda a: run(a.kit)))


if __name__ == "__main__":
    sys.exit(main())
