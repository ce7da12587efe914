"""``bench compile-time``: mdc-compile against iree-compile on one larger
program (here, no GPU)."""

from __future__ import annotations

import os
import statistics
import subprocess
import tempfile
import time


def larger_program(layers: int) -> str:
    """A chain of `layers` matmul+bias+relu blocks alternating between devices."""
    lines = ["func.func public @mlp(%x: tensor<64x64xf32> {iree.abi.affinity = #hal.device.promise<@device_a>})"
             " -> (tensor<64x64xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {",
             "  %zero = arith.constant 0.0 : f32",
             "  %e = tensor.empty() : tensor<64x64xf32>",
             "  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>"]
    cur = "%x"
    for i in range(layers):
        dev = "device_b" if i % 2 == 0 else "device_a"
        lines += [
            f"  %t{i} = flow.tensor.transfer {cur} : tensor<64x64xf32> to #hal.device.promise<@{dev}>",
            f"  %w{i} = arith.constant dense<{0.01 * (i + 1)}> : tensor<64x64xf32>",
            f"  %m{i} = linalg.matmul ins(%t{i}, %w{i} : tensor<64x64xf32>, tensor<64x64xf32>) "
            f"outs(%z : tensor<64x64xf32>) -> tensor<64x64xf32>",
            f"  %b{i} = arith.addf %m{i}, %t{i} : tensor<64x64xf32>",
            f"  %r{i} = arith.maximumf %b{i}, %z : tensor<64x64xf32>",
        ]
        cur = f"%r{i}"
    lines += [f"  %out = flow.tensor.transfer {cur} : tensor<64x64xf32> to #hal.device.promise<@device_a>",
              "  return %out : tensor<64x64xf32>", "}"]
    return "\n".join(lines) + "\n"


def _variants(src: str, tmp: str) -> dict[str, list[str]]:
    devices = ["--device=a=local[0]", "--device=b=local[1]"]
    flags = subprocess.run(["mdc-compile", src, *devices, "--print-iree-flags"],
                           capture_output=True, text=True, check=True).stdout.split()
    return {
        "iree-compile": ["iree-compile", src, *flags, "-o", os.path.join(tmp, "ref.vmfb")],
        "mdc-compile (nothing staged)": ["mdc-compile", src, *devices, "-o", os.path.join(tmp, "a.vmfb")],
        "mdc-compile --link=a:b=staged": ["mdc-compile", src, *devices, "--link=a:b=staged",
                                         "-o", os.path.join(tmp, "b.vmfb")],
        "  the same, --staging=copy": ["mdc-compile", src, *devices, "--link=a:b=staged", "--staging=copy",
                                       "-o", os.path.join(tmp, "c.vmfb")],
    }


def compile_time(layers: int, repeat: int) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "mlp.mlir")
        with open(src, "w") as f:
            f.write(larger_program(layers))
        ops = sum(1 for line in open(src) if " = " in line)
        results = {}
        for name, cmd in _variants(src, tmp).items():
            times = []
            for _ in range(repeat):
                t = time.perf_counter()
                subprocess.run(cmd, check=True, capture_output=True)
                times.append(time.perf_counter() - t)
            results[name] = statistics.median(times)
        print(f"compile time, {ops} ops ({layers} layers, {2 * layers} transfers), median of {repeat}, wall clock")
        base = results["iree-compile"]
        for name, t in results.items():
            print(f"  {name:32} {t:7.2f} s   {t / base:5.2f}x")
    return 0
