"""mdc-profile: measures this machine's devices for automatic placement.

    mdc-profile --device=local-task --device=cuda -o machine.json [--quick]
    mdc-profile --build-probes=DIR --device=local-task --device=cuda [--quick] [--target-cpu=CPU]
    mdc-profile --probes=DIR --device=local-task --device=cuda -o machine.json [--quick]
    mdc-profile --program=X.mlir --device=cpu=local[0] --device=gpu=cuda[0] -o costs.json [--quick]
    mdc-profile --program=X.mlir --device=... --build-program=DIR [--target-cpu=CPU] [--iree-...]
    mdc-profile --program-kit=DIR -o costs.json [--quick]

Each --device (a runtime URI, as mdc-run takes it) is opened alone and
measured with small probe programs (probes.py, measure.py); the profile
(contract/machine_profile.py) is written atomically to -o, then a short
table is printed. --build-probes compiles the probe modules into DIR
instead (prebuilt.py), and --probes measures with them, with only the
IREE runtime: how a machine without the compiler is profiled. A usage
mistake (a DIR that cannot serve the command included) is one line and
exit status 2; a device that cannot be opened, a probe file missing or
corrupt, or a failure while compiling or measuring, one line and 1; no
profile is written then. --program measures one program's own units and
crossings into a costs file instead (program_cli.py).
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import os
import platform
import sys
from typing import Optional, Sequence

from mdc.contract.atomic_write import CannotWrite, why_unwritable, write_atomically
from mdc.contract.machine_profile import HOST_KIND, CrossingCosts, DeviceCosts, MachineProfile, Provenance
from mdc.contract.version import IREE_COMPILER, IREE_RUNTIME, add_version_argument, version_text

from . import prebuilt, probes

TOOL = "mdc-profile"
USAGE_STATUS, FAILURE_STATUS = 2, 1


class UsageError(Exception):
    """A mistake in the command line (exit status 2)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, no usage block
        raise UsageError(message)


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog=TOOL, allow_abbrev=False,
                description="Measure this machine's devices (throughput by op class and dtype, the fixed "
                "cost per call and per dispatch, crossings each way) into a machine profile for "
                "mdc-compile --place=auto --place-profile=FILE.")
    p.add_argument("--device", action="append", default=[], metavar="URI",
                   help="runtime device to measure, repeated: local-task, local-sync, cuda, cuda://1, "
                   "vulkan, hip (one per kind)")
    p.add_argument("-o", "--output", help="the profile to write (JSON)")
    p.add_argument("--quick", action="store_true",
                   help="smaller probes and fewer runs: seconds, not minutes, and rougher numbers")
    p.add_argument("--build-probes", metavar="DIR",
                   help="compile the probe modules for the --device kinds into DIR (with an index, "
                   f"{prebuilt.INDEX}) and measure nothing: for a machine without the IREE compiler, which "
                   "then runs --probes=DIR. Needs iree-base-compiler. A local device's probes target a "
                   f"generic x86-64 CPU (--iree-llvmcpu-target-cpu={probes.PREBUILT_TARGET_CPU}), so its "
                   f"numbers are generic code's: {GENERIC_CPU_NOTE}")
    p.add_argument("--target-cpu", metavar="CPU",
                   help=f"with --build-probes: the CPU a local device's probes are built for instead of "
                   f"{probes.PREBUILT_TARGET_CPU}, as --iree-llvmcpu-target-cpu takes it (x86-64-v3, x86-64-v4, "
                   "sapphirerapids, ...): one the measuring machine has, or its probes crash there")
    p.add_argument("--program", metavar="X.mlir",
                   help="measure this program's own units (the work graph's, as mdc-compile --place reads it) "
                   "and crossings into a costs file for mdc-compile --place-costs=FILE; its --device flags are "
                   "NAME=SPEC as mdc-compile takes them (--device=cpu=local[0] --device=gpu=cuda[0])")
    p.add_argument("--build-program", metavar="DIR",
                   help="with --program: compile its units for each device into DIR and time nothing (CPU code "
                   "for --target-cpu, default generic; --iree-* flags go to each compile)")
    p.add_argument("--program-kit", metavar="DIR",
                   help="time the units --build-program=DIR compiled, on this machine's devices, with only "
                   "the IREE runtime")
    p.add_argument("--max-dim", action="append", default=[], metavar="NAME=N",
                   help="with --program: a dynamic dimension's bound, as mdc-compile takes it (units are timed "
                   "at the bound)")
    p.add_argument("--probes", metavar="DIR",
                   help="measure with the probe modules --build-probes=DIR compiled (same --quick, the "
                   "same mdc), not compiling any: needs only the IREE runtime")
    add_version_argument(p, (IREE_COMPILER, IREE_RUNTIME))
    return p


# How generic CPU code compares with host code on the development machine
# (docs/mdc-profile.md has the numbers).
GENERIC_CPU_NOTE = ("on this project's development machine f32 matmuls ran 5-8x and f16 matmuls ~100x slower "
                    "than host code, copies up to 2x, the other rates and the call and dispatch costs alike "
                    "(--target-cpu=x86-64-v3 ran as fast as host code there)")


def main(argv: Optional[Sequence[str]] = None) -> int:
    try:
        args, extra = _parser().parse_known_args(argv)
        if args.program is not None or args.program_kit is not None or args.build_program is not None:
            from . import program_cli

            program_cli.check(args, extra, UsageError)
            return program_cli.run(args, extra, TOOL)
        if extra or args.max_dim:
            raise UsageError(f"unrecognized arguments: {' '.join(extra or ['--max-dim'])}")
        kinds = _kinds(args.device)
        if args.target_cpu is not None and args.build_probes is None:
            raise UsageError("--target-cpu=CPU is for --build-probes=DIR (measuring here compiles for this CPU)")
        if args.build_probes is not None:
            if args.probes is not None:
                raise UsageError("--build-probes=DIR builds probes and --probes=DIR measures with them: give one")
            if args.output:
                raise UsageError("--build-probes=DIR writes probe modules, not a profile: drop -o "
                                 "(measure with --probes=DIR -o FILE)")
            return _build(args.build_probes, kinds, args.quick, args.target_cpu or probes.PREBUILT_TARGET_CPU)
        if not args.output:
            raise UsageError("-o FILE is required: where to write the profile")
        why = why_unwritable(args.output)
        if why:
            raise UsageError(f"cannot write {args.output}: {why}")
        prebuilt_probes = prebuilt.load(args.probes, kinds.values(), args.quick) if args.probes is not None else None
    except (UsageError, prebuilt.KitMismatch) as e:
        print(f"{TOOL}: error: {e}", file=sys.stderr)
        return USAGE_STATUS
    except prebuilt.KitBroken as e:
        print(f"{TOOL}: error: {e}", file=sys.stderr)
        return FAILURE_STATUS
    try:
        if prebuilt_probes is None:
            profile = _measure(kinds, args.quick)
        else:
            profile = _measure(kinds, args.quick, prebuilt_probes.modules,
                               f"probes from {args.probes} (CPU code: --iree-llvmcpu-target-cpu="
                               f"{prebuilt_probes.target_cpu})")
        write_atomically(args.output, profile.to_json().encode())
    except CannotWrite as e:
        print(f"{TOOL}: error: cannot write {args.output}: {e}", file=sys.stderr)
        return FAILURE_STATUS
    except _Failure as e:
        print(f"{TOOL}: error: {e}", file=sys.stderr)
        return FAILURE_STATUS
    print(table(profile))
    print(f"wrote {args.output}")
    return 0


def _build(directory: str, kinds: dict[str, str], quick: bool, target_cpu: str) -> int:
    """--build-probes: each kind's probe module and the index into
    ``directory``; 1 where the compiler is missing or fails, or a file
    cannot be written."""
    try:
        import iree.compiler  # noqa: F401  (only to say plainly that it is missing)
    except ImportError:
        print(f"{TOOL}: error: --build-probes needs the IREE compiler (pip install {IREE_COMPILER}); "
              f"a machine with only the runtime measures with --probes=DIR", file=sys.stderr)
        return FAILURE_STATUS
    from mdc.runtime_shim.errors import short

    from .measure import compile_probes

    try:
        written = prebuilt.build(directory, kinds.values(), quick, compile_probes, target_cpu)
    except (OSError, CannotWrite) as e:
        print(f"{TOOL}: error: cannot write into {directory}: {e}", file=sys.stderr)
        return FAILURE_STATUS
    except Exception as e:  # a compile failure inside IREE: one line
        print(f"{TOOL}: error: compiling the probes failed: {short(e)}", file=sys.stderr)
        return FAILURE_STATUS
    for path in written:
        print(f"wrote {path}")
    return 0


class _Failure(Exception):
    """A device that cannot be opened or measured (exit status 1)."""


def _kinds(uris: Sequence[str]) -> dict[str, str]:
    """URI -> IREE kind, in the order given; UsageError for none, an
    unknown driver, or two devices of one kind (a profile holds one entry
    per kind)."""
    if not uris:
        raise UsageError("give at least one --device=URI (local-task, local-sync, cuda, vulkan, hip)")
    kinds: dict[str, str] = {}
    for uri in uris:
        kind = probes.kind_of_uri(uri)
        if kind is None:
            raise UsageError(f"--device={uri}: unknown driver (known: {', '.join(probes.DRIVER_KINDS)})")
        twin = next((u for u, k in kinds.items() if k == kind), None)
        if twin is not None:
            raise UsageError(f"--device={uri}: {twin} is already a {kind} device; "
                             f"a profile holds one entry per kind")
        kinds[uri] = kind
    return kinds


def _measure(kinds: dict[str, str], quick: bool, modules: Optional[dict[str, bytes]] = None,
             probes_from: str = "") -> MachineProfile:
    """Each device measured with ``modules`` (kind -> prebuilt probe
    module, ``probes_from`` saying whence) or, without, modules compiled
    here for this CPU."""
    # The runtime and compiler load only here: --help and usage errors stay quick.
    from mdc.runtime_shim.devices import open_device, usable_driver
    from mdc.runtime_shim.errors import ShimError, short

    from .measure import DeviceProbe, Timer, compile_probes
    from .open_cost import OpenCostFailed, measure_apart

    timer = Timer(seconds=0.15, min_runs=3) if quick else Timer(seconds=1.0, min_runs=5)
    devices: dict[str, DeviceCosts] = {}
    crossings: dict[tuple[str, str], CrossingCosts] = {}
    names, memory_notes = [], []
    for uri, kind in kinds.items():
        try:
            usable_driver(uri)  # a driver missing here fails before compiling the probes
        except ShimError as e:
            raise _Failure(str(e)) from None
        try:
            sizes = probes.sizes_for(kind, quick)
            vmfb = modules[kind] if modules is not None else compile_probes(kind, sizes)
        except Exception as e:  # a compile failure inside IREE: one line
            raise _Failure(f"measuring device '{uri}' failed: {short(e)}") from None
        try:  # before this process opens the device (open_cost.py)
            measured = measure_apart(uri, kind, vmfb)
            device = open_device(uri)
        except (OpenCostFailed, ShimError) as e:
            raise _Failure(str(e)) from None
        try:
            probe = DeviceProbe(device, kind, sizes, timer, vmfb)
            devices[kind] = dataclasses.replace(probe.costs(), memory_bytes=measured.memory_bytes,
                                                free_bytes=measured.free_bytes,
                                                reserved_bytes=measured.reserved_bytes)
            to_device, to_host = probe.crossings()
        except Exception as e:  # a runtime failure inside IREE: one line
            raise _Failure(f"measuring device '{uri}' failed: {short(e)}") from None
        crossings[(HOST_KIND, kind)] = to_device
        if kind != HOST_KIND:  # local->local is the upload above, a copy between host allocations
            crossings[(kind, HOST_KIND)] = to_host
        names.append(f"{uri} ({kind})")
        memory_notes.append(f"{kind}: {measured.how}")
    source = _provenance(names, quick, probes_from)
    source = dataclasses.replace(source, tool=f"{source.tool}; memory: {'; '.join(memory_notes)}")
    return MachineProfile(devices=devices, crossings=crossings, source=source)


def _provenance(devices: list[str], quick: bool, probes_from: str = "") -> Provenance:
    cpu = _cpu_model()
    machine = f"{platform.node()}: {cpu}, {os.cpu_count()} CPUs; measured {', '.join(devices)}"
    tool = ", ".join(version_text(TOOL, (IREE_COMPILER, IREE_RUNTIME)).splitlines()) + (" (--quick)" if quick else "")
    if probes_from:
        tool += f"; {probes_from}"
    return Provenance(machine=machine, date=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%MZ"),
                      tool=tool)


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def table(profile: MachineProfile) -> str:
    """The profile as a short table: one line per device, one per crossing."""
    lines = [f"{'device':8} {'f32 GF/s':>9} {'f16 GF/s':>9} {'matmul':>7} {'elemwise':>8} {'reduce':>7} "
             f"{'gather':>7} {'copy':>7} {'GB/s':4} {'dispatch us':>11} {'call us':>8}"]
    for key, d in profile.devices.items():
        rates = " ".join(f"{d.bytes_per_s[c] / 1e9:>{w}.2f}" for c, w in
                         (("matmul", 7), ("elementwise", 8), ("reduction", 7), ("gather", 7), ("copy", 7)))
        lines.append(f"{key:8} {d.matmul_flops_per_s['f32'] / 1e9:>9.2f} {d.matmul_flops_per_s['f16'] / 1e9:>9.2f} "
                     f"{rates}      {d.seconds_per_dispatch * 1e6:>11.1f} {d.seconds_per_call * 1e6:>8.1f}")
    for key, d in profile.devices.items():
        lines.append(f"memory {key}: {_mib(d.memory_bytes)} total, {_mib(d.free_bytes)} free, "
                     f"{_mib(d.reserved_bytes)} taken by opening it (reserved_bytes)")
    for (source, target), c in profile.crossings.items():
        lines.append(f"crossing {source}->{target}: latency {c.latency_s * 1e6:.1f} us, {c.bytes_per_s / 1e9:.2f} GB/s")
    return "\n".join(lines)


def _mib(nbytes) -> str:
    return "unknown" if nbytes is None else f"{nbytes / 2**20:.1f} MiB"


if __name__ == "__main__":
    sys.exit(main())
