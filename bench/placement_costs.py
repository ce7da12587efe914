"""``bench placement build DIR --program-kits``: the costs trip's kits (issue
45 item 3, costs measured on the program itself).

Per variant of the plan (placement_kit.py: model, dtype, token count), its
placement program ``VARIANT.mlir`` and that program's mdc-profile
--program kit ``VARIANT/`` (profiler/program.py: the program's own units,
compiled for each device here), which bench/gpu_placement_costs.sh times
on the GPU machine with the runtime alone into ``costs_VARIANT.json``; the
placement kit built with ``--place-costs=DIR`` then compiles every module
with its variant's costs file.

Each kit's timing takes about ``expected_seconds``: the runtime's start
and the devices' opening, then on each device each unit function (units
that print alike share one; on a device that runs copies of each unit,
the index's ``copies`` > 1, its function of copies too) and the three
fixed-cost probes, and each crossing size both ways, each timed for
profiler/program_timing.py's 0.2 s or more, and the units' arguments made
(random floats) and put on the device for each function timed.
"""

from __future__ import annotations

import os

from .models_kit import KINDS

START_SECONDS = 6.0  # the interpreter, the runtime and two devices opened
TIMING_SECONDS = 0.25  # one unit, probe or crossing timed (program_timing.TIMERS: 0.2 s, after a warm-up)
ARGUMENT_BYTES_A_SECOND = 2e8  # random arguments made and moved to a device
PROBES = 3  # @identity, @tiny, @chain


def expected_seconds(index: dict) -> float:
    """The rough seconds of ``mdc-profile --program-kit`` on the kit of
    ``index`` (its program.json; the module's doc)."""
    import numpy as np

    functions = {u["symbol"]: u["arguments"] for u in index["units"]}
    argument_bytes = sum(int(np.prod(shape)) * np.dtype(dtype).itemsize
                         for arguments in functions.values() for shape, dtype in arguments)
    # A device that runs copies times two functions a unit, each with its arguments put there.
    calls = sum(2 if d.get("copies", 1) > 1 else 1 for d in index["devices"].values())
    timings = calls * len(functions) + PROBES * len(index["devices"]) + 2 * len(index["crossings"])
    return START_SECONDS + TIMING_SECONDS * timings + calls * argument_bytes / ARGUMENT_BYTES_A_SECOND


def program_kits(plan, out: str) -> int:
    """Each variant's placement program and its mdc-profile --program kit
    in ``out``; says each kit's units, crossings and expected time."""
    from mdc.profiler.program import build as build_program, load_index

    from .placement_kit import ACCELERATOR, HOST

    os.makedirs(out, exist_ok=True)
    gpu = "local[1]" if plan.smoke else "cuda[0]"
    flags = [] if plan.smoke else ["--iree-cuda-target=sm_80"]
    total = 0.0
    lines = []
    for v in plan.variants():
        source = os.path.join(out, f"{v.name}.mlir")
        with open(source, "w") as f:
            f.write(KINDS[v.model].program(v.stack, v.batch))
        kit = os.path.join(out, v.name)
        build_program(kit, source, {HOST: "local[0]", ACCELERATOR: gpu}, {}, plan.cpu, flags)
        index = load_index(kit)
        seconds = expected_seconds(index)
        total += seconds
        lines.append(f"  {v.name}: {len(index['units'])} units ({len({u['symbol'] for u in index['units']})} "
                     f"functions), {len(index['crossings'])} crossing sizes; about {seconds:.0f} s")
        print(f"wrote {kit}/", flush=True)
    print(f"{len(lines)} program kits in {out}, each timed there by mdc-profile --program-kit "
          f"(bench/gpu_placement_costs.sh):")
    print("\n".join(lines))
    print(f"about {total:.0f} s in all ({total / 60:.1f} min)")
    return 0
