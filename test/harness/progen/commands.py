"""How a program is compiled and run: the tools, the devices of each target,
and the command lines (each under a memory limit and a timeout)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from typing import Optional

from mdc.pipeline.options import CPU_CODE_DEFAULTS

from ..processes import limited, run_killing_group
from .program import Program

BIN = os.path.dirname(sys.executable)


def tool(name: str) -> str:
    """A console script next to this Python (not a pyenv shim), else PATH."""
    path = os.path.join(BIN, name)
    return path if os.path.exists(path) else (shutil.which(name) or name)


CPU_FLAGS = ["--iree-hal-local-target-device-backends=llvm-cpu", "--iree-llvmcpu-target-cpu=host"]
# Stock IREE's flags for the comparison: mdc-compile's CPU code defaults too
# (data tiling and ukernels, options.cpu_code_flags), which change f16
# matmul results in the last bit; mdc's module and stock's are compared bit
# for bit.
STOCK_CPU_FLAGS = CPU_FLAGS + [f"{flag}={value}" for flag, value in CPU_CODE_DEFAULTS]
RUNTIME_DEVICES = {1: ["local-task"], 2: ["local-task", "local-sync"], 3: ["local-task", "local-sync", "local-task"]}

# Where mdc's side runs. "local": every device a CPU, staging forced
# between every pair (--link), so both lowerings run on CPU pairs. "vulkan":
# device_b is a Vulkan device (lavapipe on a CPU-only machine), a device
# with memory of its own, under the default memory model (no --link):
# device_a and device_c stay CPUs and share memory, and every crossing to or
# from device_b is staged as it would be for a real GPU.
TARGETS = ("local", "vulkan")


def device_specs(devices: list[str], target: str = "local") -> list[str]:
    """mdc-compile's --device flags: all local, or device_b on Vulkan."""
    specs, local = [], 0
    for d in devices:
        if target == "vulkan" and d == "device_b":
            specs.append(f"--device={d[-1]}=vulkan[0]")
        else:
            specs.append(f"--device={d[-1]}=local[{local}]")
            local += 1
    return specs


def staged_compile_cmd(src: str, out: str, devices: list[str], model: str, staging: str = "copy",
                       target: str = "local") -> list[str]:
    """mdc-compile with staging forced between every pair of (local)
    devices, or for the Vulkan target under the default memory model;
    ``staging`` as staging_of gives it."""
    links = [] if target == "vulkan" else [
        f"--link={x[-1]}:{y[-1]}=staged" for i, x in enumerate(devices) for y in devices[i + 1:]]
    mode, *rest = staging.split()
    return [tool("mdc-compile"), src, *device_specs(devices, target), *links, f"--staging={mode}", *rest,
            f"--iree-execution-model={model}", "-o", out]


def stock_compile_cmd(src: str, out: str, devices: list[str], model: str, data_tiling: bool = True) -> list[str]:
    """Stock iree-compile with mdc's CPU code defaults, or (``data_tiling``
    False) with none, as mdc compiles a module it retried without them."""
    devs = [f"--iree-hal-target-device={d}=local[{i}]" for i, d in enumerate(devices)]
    cpu = STOCK_CPU_FLAGS if data_tiling else CPU_FLAGS
    return [tool("iree-compile"), src, *devs, *cpu, f"--iree-execution-model={model}", "-o", out]


def run_cmd(runner: str, vmfb: str, prog: Program, input_flags: list[str], outs: list[str],
            devices: list[str], function: Optional[str] = None) -> list[str]:
    base = [tool("mdc-run")] if runner == "mdc-run" else [tool("iree-run-module")]
    return [*base, f"--module={vmfb}", f"--function={function or prog.name}", *[f"--device={d}" for d in devices],
            *input_flags, *[f"--output=@{o}" for o in outs]]


# Each compile and run gets at most this much address space: a runaway
# compile (one mdc-compile once grew past 24 GB) fails alone instead of
# taking the machine, and the other jobs, down with it.
MEMORY_LIMIT_GB = float(os.environ.get("MDC_PROGEN_MEMORY_GB", "6"))


def sh(cmd: list[str], timeout: float = 600, cwd=None) -> subprocess.CompletedProcess:
    r = run_killing_group(limited(cmd, MEMORY_LIMIT_GB), timeout, cwd=cwd)
    r.args = cmd
    return r


def cmd_text(cmd) -> str:
    return " ".join(str(c) for c in cmd)


def failed(what: str, r: subprocess.CompletedProcess) -> str:
    return f"{what} exited {r.returncode}: {cmd_text(r.args)}\n{(r.stderr or '')[-3000:]}{(r.stdout or '')[-1000:]}"
