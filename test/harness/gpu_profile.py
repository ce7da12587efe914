"""Build here, run on a GPU machine: mdc-profile with probes built here.

    python test/e2e/gpu_profile.py build KIT [--quick] [--no-vulkan] [--target-cpu=CPU]   # here: the compiler
    python test/e2e/gpu_profile.py run KIT [--device=URI ...] [--timeout S] [--allow-no-gpu]

``build`` runs ``mdc-profile --build-probes=KIT/probes`` for local, cuda
and (unless --no-vulkan) vulkan: the GPU machine often has the IREE
runtime only. ``run`` runs ``mdc-profile --probes=KIT/probes`` there under
``timeout`` (by default on local-task, cuda, and vulkan where KIT has its
probes and the runtime finds a Vulkan device), writes the profile to
$OUT/machine.json ($OUT set) or KIT/machine.json, prints mdc-profile's
table, then each measured number beside the built-in default profile's
(contract/default_machine_profile.py) and their ratio: how the default's
cuda numbers are checked. With no cuda device it says so and exits 2
(--allow-no-gpu: a run on the other devices; --device=local-task alone
runs anywhere). On the GPU machine only the runtime wheel is needed, with
the checkout (test/harness travels with it).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from bench.kitframe import NO_GPU_STATUS, Step, allow_no_gpu_option, checkout_env, cuda_available, kit_main, option
from mdc.contract.machine_profile import BYTE_CLASSES, MachineProfile, default_profile, load_profile

BUILD_DEVICES = ("local-task", "cuda", "vulkan")


def _profiler(argv: list[str], timeout: float | None = None) -> int:
    """``python -m mdc.profiler ARGV`` (under ``timeout`` when given) with
    this checkout's mdc importable, installed or not; its exit status."""
    command = [sys.executable, "-m", "mdc.profiler", *argv]
    if timeout is not None:
        command = ["timeout", f"{timeout:.0f}", *command]
    status = subprocess.run(command, env=checkout_env()).returncode
    if status == 124:
        print(f"TIMEOUT: mdc-profile ran past {timeout:.0f} s", flush=True)
    return status


def build(kit: str, quick: bool, vulkan: bool, target_cpu: str | None = None) -> int:
    devices = [d for d in BUILD_DEVICES if vulkan or d != "vulkan"]
    return _profiler([f"--build-probes={_probes(kit)}", *(f"--device={d}" for d in devices),
                      *(["--quick"] if quick else []), *([f"--target-cpu={target_cpu}"] if target_cpu else [])])


def _probes(kit: str) -> str:
    return os.path.join(kit, "probes")


def _kit_index(kit: str) -> dict:
    with open(os.path.join(_probes(kit), "probes.json"), encoding="utf-8") as f:
        return json.load(f)


def _vulkan_available() -> bool:
    try:
        import iree.runtime as rt

        return "vulkan" in rt.query_available_drivers() and bool(rt.get_driver("vulkan").query_available_devices())
    except Exception:
        return False


def default_devices(kinds: set[str]) -> list[str]:
    """local-task and cuda; vulkan too where KIT has its probes and the
    runtime finds a Vulkan device."""
    return ["local-task", "cuda", *(["vulkan"] if "vulkan" in kinds and _vulkan_available() else [])]


def run(kit: str, devices: list[str] | None, timeout: float, allow_no_gpu: bool) -> int:
    index = _kit_index(kit)
    devices = devices or default_devices({p["kind"] for p in index["probes"]})
    if "cuda" in devices and not cuda_available():
        print("no cuda device here", flush=True)
        if not allow_no_gpu:
            return NO_GPU_STATUS
        devices = [d for d in devices if d != "cuda"]
    out = os.environ.get("OUT")
    profile_path = os.path.join(out if out else kit, "machine.json")
    status = _profiler([f"--probes={_probes(kit)}", *(f"--device={d}" for d in devices), "-o", profile_path,
                        *(["--quick"] if index["quick"] else [])], timeout=timeout)
    if status != 0:
        print(f"mdc-profile exited {status}", flush=True)
        return status
    measured = load_profile(profile_path)
    print()
    print(comparison(measured, default_profile()))
    if "local" in measured.devices:
        print(f"(local: the probes' code for --iree-llvmcpu-target-cpu={index['target_cpu']}, not mdc-compile's "
              "host code: docs/mdc-profile.md, \"A machine without the compiler\", says how much slower)")
    return 0


def rows(measured: MachineProfile, default: MachineProfile) -> list[tuple[str, str, float, float]]:
    """(device or crossing, number, measured, default) for every number
    the measured profile has and the default has too."""
    found = []
    for kind, d in measured.devices.items():
        base = default.devices.get(kind)
        if base is None:
            continue
        for dtype in ("f32", "f16"):
            found.append((kind, f"matmul {dtype} GF/s", d.matmul_flops_per_s[dtype] / 1e9,
                          base.matmul_flops_per_s[dtype] / 1e9))
        for op_class in BYTE_CLASSES:
            found.append((kind, f"{op_class} GB/s", d.bytes_per_s[op_class] / 1e9, base.bytes_per_s[op_class] / 1e9))
        found.append((kind, "dispatch us", d.seconds_per_dispatch * 1e6, base.seconds_per_dispatch * 1e6))
        found.append((kind, "call us", d.seconds_per_call * 1e6, base.seconds_per_call * 1e6))
        found.append((kind, "open MiB", d.reserved_bytes / 2**20, base.reserved_bytes / 2**20))
    for pair, c in measured.crossings.items():
        base = default.crossings.get(pair)
        if base is not None:
            name = f"{pair[0]}->{pair[1]}"
            found.append((name, "latency us", c.latency_s * 1e6, base.latency_s * 1e6))
            found.append((name, "GB/s", c.bytes_per_s / 1e9, base.bytes_per_s / 1e9))
    return found


def comparison(measured: MachineProfile, default: MachineProfile) -> str:
    """rows() as a table; ratio = measured / default."""
    lines = [f"{'device':14} {'number':18} {'measured':>10} {'default':>10} {'ratio':>7}"]
    for where, number, value, base in rows(measured, default):
        ratio = f"{value / base:7.2f}" if base else f"{'-':>7}"
        lines.append(f"{where:14} {number:18} {value:10.3f} {base:10.3f} {ratio}")
    return "\n".join(lines)


BUILD = Step(lambda a: build(a.kit, a.quick, not a.no_vulkan, a.target_cpu), [
    option("--quick", action="store_true", help="mdc-profile's --quick probes"),
    option("--no-vulkan", action="store_true", help="local and cuda probes only"),
    option("--target-cpu", help="mdc-profile's --target-cpu (default: its generic x86-64)")],
    help="mdc-profile --build-probes into KIT/probes (here: needs the compiler)")
RUN = Step(lambda a: run(a.kit, a.device, a.timeout, a.allow_no_gpu), [
    option("--device", action="append", help="a device to measure, repeated (default: local-task, "
           "cuda, and vulkan where KIT and the runtime have it)"),
    option("--timeout", type=float, default=420, help="seconds mdc-profile may run (default 420)"),
    allow_no_gpu_option("without a cuda device, measure the others, exit 0")],
    help="mdc-profile --probes=KIT/probes, then the profile beside the default's")


def main(argv=None) -> int:
    return kit_main(__doc__.split("\n\n")[0], BUILD, RUN, argv, prog="gpu_profile.py", raw=False, name="gpu_profile")
