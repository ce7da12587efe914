"""The kits of their own in ``python -m bench``: ``NAME build DIR`` here,
with the compiler, then ``NAME run DIR`` on the GPU machine, runtime only.

Each is a TwoStep in KITS (``workload``, ``placement``): its help, the
options of each step, and ``main(p, a, config)``, which runs the step asked
for (``a.step``). A new kit adds its modules (its build and its run, as
workload_kit.py and workload.py are) and one TwoStep here; __main__.py adds
every kit of KITS to the command line, with the run step's ``--smoke`` and
``--allow-no-gpu``, dispatches to it, and says a KitError (kitframe.py's:
a kit missing, incomplete or not for this run) as one error line, status 1. Also here: the option types and
the IREE runtime settings the measuring commands share with the kits.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
from typing import Callable

from .common import Config, configure_host
from .model import DTYPES, Stack


def whole(low: int):
    """An option type: a whole number of at least ``low``."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = low - 1
        if value < low:
            raise argparse.ArgumentTypeError(f"expected a whole number of at least {low}, got {text!r}")
        return value

    return parse


def comma_list(text: str) -> list[str]:
    return [t for t in text.split(",") if t]


def runtime_flag_option(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("--runtime-flag", action="append", default=[], metavar="FLAG",
                    help="one more of IREE's runtime flags, set before any device exists (repeatable), "
                         "e.g. --runtime-flag=--task_worker_spin_us=500")


def check_runtime_flag_forms(p: argparse.ArgumentParser, a: argparse.Namespace) -> None:
    for flag in getattr(a, "runtime_flag", []):
        if not flag.startswith("--") or "=" not in flag:
            p.error(f"--runtime-flag: expected one of IREE's runtime flags as --name=value, got {flag!r}")


def configure(p: argparse.ArgumentParser, a: argparse.Namespace) -> None:
    """Workers, host memory and IREE runtime flags of a measuring command
    (their forms checked first); a setting IREE does not take is a usage
    error, in IREE's words."""
    check_runtime_flag_forms(p, a)
    try:
        configure_host(a.workers, getattr(a, "retain_host_memory", False), tuple(a.runtime_flag))
    except ValueError as e:
        p.error(f"IREE refused a runtime setting (--workers, --runtime-flag): {str(e).splitlines()[0]}")


@dataclasses.dataclass(frozen=True)
class TwoStep:
    """One kit of its own (the module's doc)."""

    help: str
    description: str
    build_options: Callable[[argparse.ArgumentParser], None]
    run_options: Callable[[argparse.ArgumentParser], None]
    main: Callable[[argparse.ArgumentParser, argparse.Namespace, Config], int]


def _stack_size_options(b, batch: bool = True) -> None:
    """The workload stack's sizes (and the throughput batch), shared by
    workload build and placement build."""
    b.add_argument("--hidden", type=whole(1), help="the workload's hidden size H (default 2048; 64 with --smoke)")
    b.add_argument("--blocks", type=whole(1), help="the workload's blocks N (default 24; 4 with --smoke)")
    b.add_argument("--vocab", type=whole(1), help="the workload's vocabulary V (default 8192; 256 with --smoke)")
    if batch:
        b.add_argument("--batch", type=whole(2), help="the throughput batch (default 32; 4 with --smoke)")
    b.add_argument("--cpu", default="generic", help="--iree-llvmcpu-target-cpu (default generic)")
    b.add_argument("--smoke", action="store_true", help="a second local device stands in for the GPU; tiny sizes")


def _counts(p, text: list[str] | None, default: tuple[int, ...], blocks: int, option: str, what: str) -> tuple:
    """``--splits`` or ``--fits``: block counts from 0 to ``blocks``, each once, in order."""
    try:
        counts = tuple(sorted({int(k) for k in text})) if text else default
    except ValueError:
        p.error(f"{option}: expected whole numbers, comma separated, got {','.join(text)!r}")
    if not counts or not all(0 <= k <= blocks for k in counts):
        p.error(f"{option}: each {what} must be from 0 to the block count {blocks}")
    return counts


def _workload_build_options(b) -> None:
    _stack_size_options(b)
    b.add_argument("--splits", type=comma_list, help="blocks on the CPU, comma separated (default 0,N/4,N/2,3N/4,N)")
    b.add_argument("--models", type=comma_list, default=["sync", "async"],
                   help="execution models, comma separated: sync, async (async-external); default both")
    b.add_argument("--seed", type=whole(0), default=Stack().seed, help="the weights' and ids' seed")
    b.add_argument("--layout", choices=["out_in", "in_out"], default=Stack().layout,
                   help="how each weight matrix is stored: out_in (torch.nn.Linear's, y = x @ W.T; default) "
                        "or in_out (y = x @ W, the first kits')")
    b.add_argument("--dtype", choices=list(DTYPES), default=Stack().dtype,
                   help="every float's type, in the program and the weights: f32 (default) or f16")
    b.add_argument("--mdc-flag", action="append", default=[], metavar="FLAG",
                   help="one more mdc-compile flag for the split modules (repeatable; it applies to both "
                        "devices' code), e.g. --mdc-flag=--iree-llvmcpu-enable-ukernels=all")


def _workload_run_options(r) -> None:
    r.add_argument("--calls", type=whole(1), default=20, help="timed calls at batch 1 (default 20)")
    r.add_argument("--batch-calls", type=whole(1), default=5, help="timed calls at the larger batch (default 5)")
    r.add_argument("--stream", type=whole(0), default=32,
                   help="batch-1 inputs per stream of the pipelined table (default 32; 0: no such table)")
    r.add_argument("--depth", type=whole(2), default=2, help="calls in flight in the pipelined table (default 2)")
    r.add_argument("--workers", type=whole(0), default=0,
                   help="local-task worker threads (IREE's --task_topology_group_count; 0: IREE's choice)")
    runtime_flag_option(r)


def _workload(p: argparse.ArgumentParser, a: argparse.Namespace, config: Config) -> int:
    from . import workload, workload_kit

    if a.step == "run":
        configure(p, a)
        return workload.run(config, a.dir, a.calls, a.batch_calls, a.stream, a.depth)
    small = a.smoke
    stack = Stack(hidden=a.hidden or (64 if small else 2048), blocks=a.blocks or (4 if small else 24),
                  vocab=a.vocab or (256 if small else 8192), seed=a.seed, layout=a.layout, dtype=a.dtype)
    splits = _counts(p, a.splits, workload_kit.default_splits(stack.blocks), stack.blocks, "--splits", "k")
    unknown = [m for m in a.models if m not in workload_kit.MODELS]
    if unknown or not a.models:
        p.error(f"--models: expected sync and/or async, got {','.join(a.models)!r}")
    plan = workload_kit.Plan(stack, (1, a.batch or (4 if small else 32)), splits,
                             tuple(dict.fromkeys(a.models)), a.cpu, small, tuple(a.mdc_flag))
    return workload_kit.build(plan, a.dir)


def _grid_options(sp, tokens_default: str) -> None:
    """The placement kit's grid (placement_format.py): models, token
    counts, dtypes; on ``run``, the part of the kit to run."""
    from .placement_format import DTYPES as GRID_DTYPES, MODELS

    sp.add_argument("--models", type=comma_list, help=f"comma separated, of {','.join(MODELS)} (default: all)")
    sp.add_argument("--tokens", "--batches", dest="tokens", type=comma_list,
                    help=f"token ids a call, comma separated (default: {tokens_default})")
    sp.add_argument("--dtypes", type=comma_list, help=f"comma separated, of {','.join(GRID_DTYPES)} (default: all)")


def _grid(p, a) -> tuple[tuple, tuple, tuple | None]:
    """(models, dtypes, tokens) of the grid options; tokens None where not given."""
    from .placement_format import DTYPES as GRID_DTYPES, MODELS

    def pick(option: str, given: list[str] | None, known: tuple) -> tuple:
        unknown = [x for x in given or [] if x not in known]
        if unknown or (given is not None and not given):
            p.error(f"--{option}: expected some of {','.join(known)}, comma separated, got {','.join(given)!r}")
        return tuple(dict.fromkeys(given)) if given else known

    tokens = None
    if a.tokens is not None:
        try:
            tokens = tuple(sorted({int(t) for t in a.tokens}))
        except ValueError:
            tokens = ()
        if not tokens or min(tokens) < 1:
            p.error(f"--tokens: expected whole numbers of at least 1, comma separated, got {','.join(a.tokens)!r}")
    return pick("models", a.models, MODELS), pick("dtypes", a.dtypes, GRID_DTYPES), tokens


def _placement_build_options(b) -> None:
    _stack_size_options(b, batch=False)
    _grid_options(b, "1,16; 1,4 with --smoke")
    b.add_argument("--place-profile", metavar="FILE.json", help="the machine profile (default: the built-in one)")
    b.add_argument("--program-kits", action="store_true",
                   help="instead of the kit: each variant's program and its mdc-profile --program kit (VARIANT/), "
                   "for the GPU machine to time into costs_VARIANT.json (bench/gpu_placement_costs.sh)")
    b.add_argument("--place-costs", metavar="DIR",
                   help="a folder of costs_VARIANT.json, one per variant (mdc-profile --program-kit's): every "
                   "module compiled with --place-costs, so each estimate is measured where the file has it")
    b.add_argument("--fits", type=comma_list, help="the block counts the budgets fit, comma separated, for every "
                                                   "model (default 0,N/4,N/2,3N/4,N of each model's N blocks)")
    b.add_argument("--jobs", type=whole(1), default=os.cpu_count() or 1,
                   help="compiles at a time (default: the CPU count)")


def _placement_run_options(r) -> None:
    _grid_options(r, "every one of the kit's")
    r.add_argument("--calls", type=whole(1), default=10, help="timed calls at batch 1 (default 10)")
    r.add_argument("--batch-calls", type=whole(1), default=5, help="timed calls at larger batches (default 5)")


def _placement(p: argparse.ArgumentParser, a: argparse.Namespace, config: Config) -> int:
    from . import placement, placement_costs, placement_kit
    from .placement_format import SMOKE_TOKENS, TOKENS

    models, dtypes, tokens = _grid(p, a)
    if a.step == "run":
        return placement.run(config, a.dir, a.calls, a.batch_calls, (models, dtypes, tokens))
    stacks = placement_kit.stacks(models, dtypes, a.smoke, dict(hidden=a.hidden, blocks=a.blocks, vocab=a.vocab))
    fits = None
    if a.fits:
        least = min(s.blocks for by_dtype in stacks.values() for s in by_dtype.values())
        fits = _counts(p, a.fits, (), least, "--fits", "count")
    plan = placement_kit.Plan(stacks, tokens or (SMOKE_TOKENS if a.smoke else TOKENS), fits, a.cpu, a.smoke,
                              a.place_profile, a.jobs, a.place_costs)
    if a.program_kits:
        return placement_costs.program_kits(plan, a.dir)
    return placement_kit.build(plan, a.dir)


def _models_build_options(b) -> None:
    b.add_argument("--batch", type=whole(2), default=16, help="the larger batch size beside 1 (default 16)")
    b.add_argument("--cpu", help="--iree-llvmcpu-target-cpu of the CPU modules (default x86-64-v4, the GPU "
                                 "machine's AVX-512; host with --smoke)")
    b.add_argument("--smoke", action="store_true", help="tiny sizes; a CPU module stands in for the GPU's")


def _models_run_options(r) -> None:
    r.add_argument("--calls", type=whole(1), default=20, help="timed calls a line (default 20)")
    runtime_flag_option(r)


def _models(p: argparse.ArgumentParser, a: argparse.Namespace, config: Config) -> int:
    from . import models, models_kit

    if a.step == "run":
        check_runtime_flag_forms(p, a)
        return models.run(config, a.dir, a.calls, tuple(a.runtime_flag))
    plan = models_kit.Plan(models_kit.default_stacks(a.smoke), (1, a.batch),
                           a.cpu or ("host" if a.smoke else models_kit.CPU_TARGET), a.smoke)
    return models_kit.build(plan, a.dir)


def fractions(text: str) -> list[float]:
    """An option type: budget fractions from 0 to 1, comma separated."""
    try:
        out = [float(t) for t in text.split(",") if t]
    except ValueError:
        out = []
    if not out or not all(0 <= f <= 1 for f in out):
        raise argparse.ArgumentTypeError(f"expected fractions from 0 to 1, comma separated (0,0.25,0.5), got {text!r}")
    return out


def _generate_build_options(b) -> None:
    b.add_argument("--smoke", action="store_true", help="the tiny config on a staged CPU pair (no GPU needed)")
    b.add_argument("--budgets", type=fractions, help="budget fractions (default 0,0.25,0.5,0.75,1; 0.5,1 with --smoke)")
    b.add_argument("--place-profile", metavar="FILE.json", help="the machine profile (default bench/profiles/h100.json)")
    b.add_argument("--place-costs", metavar="FILE.json", help="mdc-compile --place-costs for every placed module")
    b.add_argument("--cpu", help="--iree-llvmcpu-target-cpu (default x86-64-v4; host with --smoke)")
    b.add_argument("--jobs", type=whole(1), default=os.cpu_count() or 1,
                   help="compiles at a time (default: the CPU count)")


def _generate_run_options(r) -> None:
    r.add_argument("--only", type=comma_list, default=["mdc", "torch", "hand", "accelerate"],
                   help="the tools to run, comma separated: mdc, torch, hand, accelerate (default all)")
    r.add_argument("--budgets", type=fractions, help="the kit's budget fractions to run (default all)")
    r.add_argument("--new-tokens", type=whole(2), default=32, help="new tokens a generation (default 32)")
    r.add_argument("--line-timeout", type=whole(1), default=240, help="seconds a line may take (default 240)")
    r.add_argument("--deadline", type=whole(1), default=560,
                   help="seconds the run may take; lines not started by then are listed (default 560)")
    r.add_argument("--scratch", metavar="DIR", help="keep the weights, reference ids and results here, for a run "
                   "split across calls (default: a temporary folder, removed)")


def _generate(p: argparse.ArgumentParser, a: argparse.Namespace, config: Config) -> int:
    from . import generate, generate_kit

    if a.step == "run":
        unknown = [t for t in a.only if t not in generate.TOOLS]
        if unknown or not a.only:
            p.error(f"--only: expected some of {','.join(generate.TOOLS)}, got {','.join(a.only)!r}")
        return generate.run(config, a.dir, a.only, a.budgets, a.new_tokens, a.line_timeout, a.deadline, a.scratch)
    plan = generate_kit.Plan(tuple(a.budgets or (generate_kit.SMOKE_FRACTIONS if a.smoke else generate_kit.FRACTIONS)),
                             a.cpu or ("host" if a.smoke else generate_kit.CPU_TARGET), a.smoke, a.place_profile,
                             a.place_costs, a.jobs)
    return generate_kit.build(plan, a.dir)


KITS = {
    "workload": TwoStep("a transformer-like stack split between the CPU and the GPU",
                        "workload build DIR (here, with the compiler), then workload run DIR (on the GPU machine, "
                        "runtime only); see bench/workload.py",
                        _workload_build_options, _workload_run_options, _workload),
    "placement": TwoStep("--place=auto against every contiguous split and greedy fill, by GPU budget",
                         "placement build DIR (here, with the compiler), then placement run DIR (on the GPU "
                         "machine, runtime only); see bench/placement.py",
                         _placement_build_options, _placement_run_options, _placement),
    "models": TwoStep("whole models at 1 and 16 tokens, mdc against torch on the GPU and on the CPU",
                      "models build DIR (here, with the compiler), then models run DIR (on the GPU machine, "
                      "runtime only; torch when present); see bench/models.py",
                      _models_build_options, _models_run_options, _models),
    "generate": TwoStep("generation under a GPU memory budget: mdc --place=auto, torch, its hand split, accelerate",
                        "generate build DIR (here, with the compiler), then generate run DIR (on the GPU machine: "
                        "runtime, torch, transformers, accelerate); see bench/generate.py (issue 46 item 4)",
                        _generate_build_options, _generate_run_options, _generate),
}


def add_kits(sub) -> list[argparse.ArgumentParser]:
    """``NAME build DIR`` and ``NAME run DIR`` of every kit of KITS; -> the
    run steps' parsers."""
    runs = []
    for name, kit in KITS.items():
        steps = sub.add_parser(name, help=kit.help, description=kit.description).add_subparsers(
            dest="step", required=True)
        b = steps.add_parser("build", help="compile the kit (here)")
        b.add_argument("dir")
        kit.build_options(b)
        r = steps.add_parser("run", help="measure the kit (on the GPU machine)")
        r.add_argument("dir")
        kit.run_options(r)
        runs.append(r)
    return runs
