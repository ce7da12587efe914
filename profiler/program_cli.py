"""mdc-profile's program commands (cli.py parses them):

    mdc-profile --program=X.mlir --device=cpu=local[0] --device=gpu=cuda[0] -o costs.json
    mdc-profile --program=X.mlir --device=... --build-program=DIR [--target-cpu=CPU] [--iree-...]
    mdc-profile --program-kit=DIR -o costs.json

The first compiles the program's units here (for this CPU) and times them
here; --build-program compiles them into DIR (program.py) and
--program-kit times DIR's modules on the machine it runs on, with the
runtime alone (program_timing.py). The costs file is for mdc-compile
--place=auto --place-costs=costs.json.
"""

from __future__ import annotations

import dataclasses
import datetime
import os
import sys
import tempfile

from mdc.contract.atomic_write import CannotWrite, why_unwritable, write_atomically
from mdc.contract.version import IREE_COMPILER, IREE_RUNTIME, version_text

from .program import ProgramError, build, load_index, parse_devices


def _max_dims(given: list[str]) -> dict[str, int]:
    bounds = {}
    for text in given:
        name, eq, value = text.partition("=")
        if not eq or not value.isdigit() or int(value) < 1:
            raise ProgramError(f"--max-dim={text}: expected NAME=N, N a whole number above 0")
        bounds[name] = int(value)
    return bounds


def check(args, extra: list[str], usage) -> None:
    """The program flags make sense together; ``usage(message)`` raises
    the usage error."""
    if args.program_kit is not None:
        for flag, given in (("--program", args.program), ("--build-program", args.build_program),
                            ("--device", args.device or None), ("--max-dim", args.max_dim or None)):
            if given is not None:
                raise usage(f"--program-kit=DIR times the kit as it was built: drop {flag}")
        if not args.output:
            raise usage("-o FILE is required: where to write the costs")
    elif args.program is None:
        raise usage("--build-program=DIR needs --program=X.mlir")
    elif args.build_program is not None and args.output:
        raise usage("--build-program=DIR writes a kit, not costs: drop -o (time it with --program-kit=DIR -o FILE)")
    elif args.build_program is None and not args.output:
        raise usage("-o FILE is required: where to write the costs")
    if args.probes is not None or args.build_probes is not None:
        raise usage("--probes and --build-probes measure the machine; --program measures a program: give one")
    bad = [flag for flag in extra if not flag.startswith("--iree-")]
    if bad or (extra and args.program is None):
        raise usage(f"unrecognized arguments: {' '.join(bad or extra)}")
    if args.target_cpu is not None and args.build_program is None:
        raise usage("--target-cpu=CPU is for --build-program=DIR (measuring here compiles for this CPU)")
    if args.output:
        why = why_unwritable(args.output)
        if why:
            raise usage(f"cannot write {args.output}: {why}")
    if args.program is not None and not os.path.exists(args.program):
        raise usage(f"--program={args.program}: no such file")


def run(args, extra: list[str], tool: str) -> int:
    """The program commands (checked); the exit status."""
    try:
        if args.program_kit is not None:
            index = load_index(args.program_kit)
            return _time(args.program_kit, index, args, tool)
        devices = parse_devices(args.device)
        bounds = _max_dims(args.max_dim)
    except ProgramError as e:
        print(f"{tool}: error: {e}", file=sys.stderr)
        return 2
    try:
        if args.build_program is not None:
            written = build(args.build_program, args.program, devices, bounds, args.target_cpu or "generic", extra)
            for path in written:
                print(f"wrote {path}")
            return 0
        with tempfile.TemporaryDirectory(prefix="mdc-program-") as kit:
            build(kit, args.program, devices, bounds, "host", extra)
            return _time(kit, load_index(kit), args, tool)
    except (ProgramError, CannotWrite, OSError) as e:
        print(f"{tool}: error: {e}", file=sys.stderr)
        return 1
    except Exception as e:  # a compile failure inside IREE or mdc: one line
        from mdc.runtime_shim.errors import short

        print(f"{tool}: error: compiling the program's units failed: {short(e)}", file=sys.stderr)
        return 1


def _time(kit: str, index: dict, args, tool: str) -> int:
    from mdc.runtime_shim.devices import open_device
    from mdc.runtime_shim.errors import ShimError, short

    from .program_timing import time_kit

    try:
        costs = time_kit(kit, index, args.quick, open_device, print)
    except ShimError as e:
        print(f"{tool}: error: {e}", file=sys.stderr)
        return 1
    except Exception as e:  # a runtime failure inside IREE: one line
        print(f"{tool}: error: timing the program's units failed: {short(e)}", file=sys.stderr)
        return 1
    tool_text = ", ".join(version_text(tool, (IREE_COMPILER, IREE_RUNTIME)).splitlines())
    source = {"program": index["source"], "tool": tool_text + (" (--quick)" if args.quick else ""),
              "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%MZ"),
              "target_cpu": index["target_cpu"]}
    costs = dataclasses.replace(costs, source=source)
    try:
        write_atomically(args.output, costs.to_json().encode())
    except CannotWrite as e:
        print(f"{tool}: error: cannot write {args.output}: {e}", file=sys.stderr)
        return 1
    print(table(costs))
    print(f"wrote {args.output}")
    return 0


def table(costs) -> str:
    """One line per unit: its label and its time on each device."""
    names = list(costs.devices)
    lines = [f"{'unit':44} " + " ".join(f"{n + ' us':>12}" for n in names)]
    for u in costs.units:
        cells = " ".join(f"{u.seconds[n] * 1e6:>12.2f}" if n in u.seconds else f"{'-':>12}" for n in names)
        lines.append(f"{u.key[:44]:44} {cells}" + ("  (at bound)" if u.at_bound else ""))
    return "\n".join(lines)
