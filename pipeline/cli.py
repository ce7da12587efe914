"""Command lines: ``mdc-compile`` and ``mdc-opt``.

User mistakes end in a short error whose first line names the problem (with
its source location where there is one), exit status 1 (2 for bad command
lines), no Python traceback, and no output file left behind.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time

from mdc.contract.version import IREE_COMPILER, add_version_argument
from mdc.contract.atomic_write import CannotWrite, remove_output, why_unwritable, write_atomically
from mdc.passes.infra.diagnostics import MdcError, render_warning

from . import dropin, options, placement_options
from .cli_errors import (USAGE_STATUS, reporting_errors,
                         survive_compiler_crashes, survive_pass_crashes, CONST_EVAL_OFF)
from .options import UsageError
from .paths import check_not_input

# Everything that loads IREE's compiler (ireec, stages, report and mdc's
# passes) is imported where it is used: --help and command-line mistakes
# answer without it.

_COMPILE_HELP = """\
Compiles an MLIR program for several IREE devices, staging values that cross
between devices whose memories are incompatible (a CPU and a discrete GPU)
through pinned host memory. Any --iree-* flag is passed to IREE unchanged.

devices:
  --device=NAME=SPEC declares device symbol NAME (the program's @NAME; 'a' is
  short for 'device_a', and digits N for '__device_N', the devices of an
  iree-turbine export: --device=0=local[0] --device=1=cuda[0]) as IREE
  target SPEC: local[0], cuda[0], hip[0], ...
  Defaults: local -> llvm-cpu with --iree-llvmcpu-target-cpu=host, data
  tiling and ukernels (--iree-opt-data-tiling --iree-llvmcpu-enable-ukernels=all;
  --no-cpu-data-tiling drops them); for a vmfb meant for another machine
  name a CPU it has: x86-64-v3 (AVX2) keeps them fast, generic (any x86-64)
  gets neither and is slowest; cuda -> --iree-cuda-target=sm_80 (sm_90 does
  not compile in IREE 3.13.0); hip -> --iree-rocm-target=gfx942. Passing
  the flag overrides it.

binding at run time:
  IREE binds a declared device by kind and ordinal, not by the position of
  the runtime --device flags: local[1] is the second runtime device whose id
  matches local* (local-task and local-sync both do), cuda[0] the first cuda
  device. `mdc-run --device=local-task --device=cuda` binds local[0] and
  cuda[0] whatever their order.

memory model:
  local+local and two devices of one GPU driver share memory (left to IREE);
  local+GPU pairs are staged, the GPU owning the staging memory. GPUs of
  different drivers are staged through a local device: one the program names,
  or a --device=host=local[0] it need not name.
  --link=X:Y=staged forces staging both ways with Y owning staging memory;
  --link=X:Y=shared is refused where the runtime cannot share.
"""


class _ArgumentParser(argparse.ArgumentParser):
    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message}\n")


def _write_atomically(path: str, data: bytes) -> None:
    try:
        write_atomically(path, data)
    except CannotWrite as e:
        raise MdcError(f"cannot write {path}: {e}") from None


def _split_iree_flags(argv: list[str]) -> tuple[list[str], list[str]]:
    ours, iree = [], []
    for a in argv:
        (iree if a.startswith("--iree-") else ours).append(a)
    return ours, iree


def _compile_parser() -> argparse.ArgumentParser:
    parser = _ArgumentParser(
        prog="mdc-compile",
        description=_COMPILE_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        usage="mdc-compile INPUT.mlir --device=NAME=SPEC ... -o OUT.vmfb [options] [--iree-* ...]",
    )
    parser.add_argument("input", help="input MLIR file")
    parser.add_argument("-o", "--output", help="output file (vmfb, or IR with --compile-to)")
    parser.add_argument("--device", action="append", default=[], metavar="NAME=SPEC",
                        help="also spelled --iree-hal-target-device=NAME=SPEC, as iree-compile takes it")
    parser.add_argument("--link", action="append", default=[], metavar="X:Y=staged|shared")
    _add_staging_arguments(parser)
    parser.add_argument("--compile-to", choices=options.STAGE_NAMES, help="write the IR after this stage instead of a vmfb")
    parser.add_argument("--print-iree-flags", action="store_true", help="print the IREE flags mdc derives and exit")
    parser.add_argument("--no-manifest", action="store_true", help="do not embed the mdc device manifest")
    parser.add_argument(
        "--no-host-entry-points", action="store_true",
        help="do not add @F$host, the twin of each public function F with a value on a device "
        "whose memory the CPU cannot use, that takes and returns every tensor on the first local "
        "device (stock iree-run-module can call it with that device first; mdc-run uses it "
        "where the runtime cannot place values on the GPU itself)")
    parser.add_argument(
        "--no-result-storage-twins", action="store_true",
        help="do not add @F$into, the twin of each public function F with a result on a CPU device "
        "and a value on a GPU, that writes those results into storage the caller gives (mdc-run "
        "and runtime_shim give it in the GPU's pinned memory, so a result from the GPU is copied "
        "once, by the GPU, and returned without a copy)")
    parser.add_argument(
        "--no-generate-entry-point", action="store_true",
        help="do not add @generate, greedy generation in one call, to a module whose @prefill and "
        "@decode follow mdc.generate's convention (docs/mdc-generate.md; mdc.generate needs it where "
        "the module runs in iree-run-module, a Vulkan device beside another)")
    options.add_codegen_arguments(parser)
    options.add_cpu_code_arguments(parser)
    placement_options.add_placement_arguments(parser)
    parser.add_argument("--dump-stages", metavar="DIR", help="write the IR after every stage into DIR")
    parser.add_argument("--report", metavar="FILE.json|FILE.md", help="write the transfer report")
    parser.add_argument("--graph", metavar="FILE.svg|FILE.dot", help="draw where work runs and data crosses")
    parser.add_argument("--timings", action="store_true",
                        help="print each stage's name and wall-clock seconds on stderr (IREE's own "
                        "--mlir-timing passes through: one report per IREE step)")
    parser.add_argument("--verbose", action="store_true", help="show IREE's full diagnostics")
    add_version_argument(parser, (IREE_COMPILER,))
    return parser


def compile_main(argv: list[str] | None = None) -> int:
    started = time.perf_counter()
    argv = list(sys.argv[1:] if argv is None else argv)
    tool = "mdc-compile"
    try:
        translated = dropin.translate(argv)
    except UsageError as e:
        print(e.render(tool), file=sys.stderr)
        return USAGE_STATUS
    ours, iree_passthrough = _split_iree_flags(translated.argv)
    args = _compile_parser().parse_args(ours)
    timings = _Timings(started) if args.timings else None

    def body(passthrough: list[str]) -> int:
        try:
            return reporting_errors(tool, args.verbose, lambda: _compile(
                args, passthrough, translated.mlir_flags, timings))
        finally:
            if timings is not None:
                timings.print()
            for note in translated.notes:  # last: an error's first line names the problem
                print(note, file=sys.stderr)

    chose = any(f.split("=")[0] == CONST_EVAL_OFF.split("=")[0] for f in iree_passthrough)
    names = [flag.split("=", 1)[0] for flag in args.device or []]
    code = survive_compiler_crashes(tool, args.input, args.verbose, lambda: body(iree_passthrough),
                                    None if chose else lambda: body([*iree_passthrough, CONST_EVAL_OFF]), names)
    _remove_stale_outputs(code, args.output, args.report, args.graph)
    return code


def _remove_stale_outputs(code: int, *paths) -> None:
    """A failed compile leaves no output at all: an earlier run's file at
    one of ``paths`` is removed (regular files only; atomic_write.remove_output),
    so that a script does not run old code, as stock iree-compile removes its
    -o. A command line that was not understood (status 2) removes nothing:
    the tool never got to compile, as stock leaves -o after a bad flag."""
    if code in (0, USAGE_STATUS):
        return
    for path in paths:
        if path not in (None, "-"):
            remove_output(path)


class _Timings:
    """--timings: (step, seconds) in the order taken, printed on stderr."""

    def __init__(self, started: float):
        self.started, self.steps = started, []
        self._mark = started

    def lap(self, step: str) -> None:
        """Records the time since the last lap as ``step``."""
        now = time.perf_counter()
        self.steps.append((step, now - self._mark))
        self._mark = now

    def extend(self, steps: list) -> None:
        self.steps += steps
        self._mark = time.perf_counter()

    def print(self) -> None:
        width = max([len(s) for s, _ in self.steps] + [5])
        lines = [f"  {step:<{width}}  {seconds:7.3f}" for step, seconds in self.steps]
        lines.append(f"  {'total':<{width}}  {time.perf_counter() - self.started:7.3f}")
        print("mdc-compile: timings (wall-clock seconds):\n" + "\n".join(lines), file=sys.stderr)


def _compile(args, iree_flags: list[str], mlir_flags: list[str], timings) -> int:
    """mdc-compile's arguments in, driver.compile, its files and warnings out."""
    from . import driver

    opts = driver.CompileOptions(
        links=args.link, staging=args.staging, staging_pieces=args.staging_pieces,
        pinned_arguments=args.pinned_arguments, manifest=not args.no_manifest,
        host_entry_points=not args.no_host_entry_points, result_storage_twins=not args.no_result_storage_twins,
        generate_entry_point=not args.no_generate_entry_point,
        cuda_matmul_configs=not args.no_cuda_matmul_configs, cuda_matmul_table=args.cuda_matmul_table,
        cpu_data_tiling=not args.no_cpu_data_tiling,
        compile_to=args.compile_to, iree_flags=iree_flags, mlir_flags=mlir_flags, dump_stages=args.dump_stages,
        **_placement_options(args))
    driver.check_request(args.device, opts)
    _check_usage(args)
    if args.print_iree_flags:
        print("\n".join(driver.iree_flags_for(args.input, args.device, **dataclasses.asdict(opts))))
        return 0
    if timings:
        timings.lap("start (Python)")
    try:
        result = driver.compile(args.input, args.device, **dataclasses.asdict(opts))
        _print_warnings(result.warnings)
        _print_placement("mdc-compile", result.report.placement if result.report is not None else None)
        if timings:
            timings.extend(result.timings)
        _write_outputs(args, result)
    except driver.CompileError as e:
        _print_warnings(e.warnings)
        if timings:
            timings.extend(e.timings)
        print(e.render("mdc-compile", args.verbose), file=sys.stderr)
        return e.exit_code
    if timings:
        timings.lap("write outputs")
    return 0


def _placement_options(args) -> dict:
    """--place and its flags, as CompileOptions' (and run_passes') keywords."""
    return {"place": args.place, "gpu_memory": args.gpu_memory, "place_profile": args.place_profile,
            "place_costs": args.place_costs,
            "place_objective": args.place_objective, "max_dims": args.max_dim}


def _print_placement(tool: str, placement) -> None:
    """--place's one-line summary, on stderr."""
    if placement is not None and placement.get("summary"):
        print(f"{tool}: {placement['summary']}", file=sys.stderr)


def _print_warnings(warnings) -> None:
    for w in warnings:
        print(render_warning("mdc-compile", w.location, w.message), file=sys.stderr)


def _check_usage(args) -> None:
    """The flags make sense together and name places that can be written,
    before any work."""
    for flag, path, endings in (("--report", args.report, (".json", ".md")), ("--graph", args.graph, (".svg", ".dot"))):
        if path and not path.endswith(endings):
            raise UsageError(f"{flag}={path}: the file name must end in {' or '.join(endings)}")
    _check_report_stage(args)
    if args.print_iree_flags:
        return
    if not args.output:
        raise UsageError("no output file: pass -o OUT.vmfb (or -o - for IR on stdout with --compile-to)")
    if args.output == "-" and not args.compile_to:
        raise UsageError("-o - writes IR only: add --compile-to=STAGE, or name a .vmfb file")
    for flag, path in (("-o", args.output), ("--report", args.report), ("--graph", args.graph)):
        check_not_input(flag, path, args.input)
        _check_writable(flag, path)
    if args.dump_stages:
        for stage in ("source", *options.STAGE_NAMES):  # the files stages.run dumps
            check_not_input("--dump-stages", args.dump_stages, args.input,
                             os.path.join(args.dump_stages, f"{stage}.mlir"))


def _check_report_stage(args) -> None:
    """--report and --graph describe what mdc's stream-level passes did: a
    --compile-to that stops before them (input, flow, stream-tensor) leaves
    nothing to write, so asking for both is a contradiction, as the Python
    API's save_report says too."""
    if args.compile_to is None or options.STAGE_NAMES.index(args.compile_to) >= options.STAGE_NAMES.index("mdc"):
        return
    for flag, path in (("--report", args.report), ("--graph", args.graph)):
        if path:
            raise UsageError(f"{flag}={path} needs mdc's passes, which --compile-to={args.compile_to} stops before: "
                             "give --compile-to=mdc (or a later stage), or leave --compile-to out")


def _check_writable(flag: str, path) -> None:
    """An output can be written at ``path`` (atomic_write.why_unwritable)."""
    why = None if path in (None, "-") else why_unwritable(path)
    if why:
        raise UsageError(f"{flag} {path}: cannot write there: {why}")


def _write_outputs(args, result) -> None:
    """The report and graph (when the compile reached mdc's passes), then
    the IR or the vmfb."""
    if result.report is not None:
        for path in filter(None, (args.report, args.graph)):
            result.save_report(path)
    if args.output == "-":
        sys.stdout.write(result.text)
    else:
        result.save(args.output)


def _add_staging_arguments(parser: argparse.ArgumentParser) -> None:
    """--staging and --staging-pieces, which mdc-compile and mdc-opt share."""
    parser.add_argument(
        "--staging", choices=("copy", "emplace"), default="emplace",
        help="how a CPU device moves a value into and out of the pinned staging memory: "
        "emplace (default: the CPU's own dispatches, on all its workers; a value's producer "
        "writes it there when it can) or copy (one copy on the CPU's queue, one thread)",
    )
    parser.add_argument(
        "--staging-pieces", type=_staging_pieces, default=None, metavar="N",
        help="with --staging=emplace, copy a value into pinned memory in N pieces (1 to 64), so "
        "each piece's DMA overlaps the copy of the next (default: for a value a CPU copies on its "
        "way to a GPU, one piece per 16 MiB, at most 16; else 1; docs/PERFORMANCE.md has the "
        "measurements)",
    )
    parser.add_argument(
        "--pinned-arguments", action="store_true",
        help="the caller gives each argument that a CPU device passes on to a GPU in that GPU's "
        "pinned host memory (mdc-run and runtime_shim place it there; the manifest lists such "
        "arguments): the GPU copies it in with no host copy. A caller of the raw IREE runtime "
        "must allocate those arguments from the GPU's allocator as HostLocal|DeviceVisible",
    )


def _staging_pieces(text: str) -> int:
    try:
        pieces = int(text)
    except ValueError:
        pieces = 0
    if not 1 <= pieces <= 64:
        raise argparse.ArgumentTypeError(f"expected a whole number from 1 to 64, got '{text}'")
    return pieces


def opt_main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = _ArgumentParser(
        prog="mdc-opt",
        description="Runs mdc's registered Python passes on input-, stream- or HAL-level IR and prints the result.",
    )
    parser.add_argument("input", nargs="?", help="input MLIR file ('-' for stdin)")
    parser.add_argument("--pass", dest="passes", action="append", default=[], metavar="NAME[,NAME...]")
    parser.add_argument("--link", action="append", default=[], metavar="X:Y=staged|shared")
    parser.add_argument(
        "--device", action="append", default=[], metavar="NAME=SPEC",
        help="a device the module names but does not declare, as mdc-compile's --device: the program "
        "before IREE's phases, or IR from which IREE dropped the global of a device nothing runs on "
        "(a function's declaration may still name it)",
    )
    _add_staging_arguments(parser)
    placement_options.add_placement_arguments(parser)
    options.add_cuda_matmul_table_argument(parser)
    parser.add_argument("--list-passes", action="store_true")
    parser.add_argument(
        "--split-input-file", action="store_true",
        help="treat '// -----' lines as separators between independent inputs; "
        "an error in one is reported and the others still run",
    )
    parser.add_argument("-o", "--output", default="-")
    parser.add_argument("--verbose", action="store_true", help="show IREE's full diagnostics")
    add_version_argument(parser, (IREE_COMPILER,))
    args = parser.parse_args(argv)
    tool = "mdc-opt"
    if args.list_passes:
        from mdc.passes.infra import registry

        for p in registry.all_passes():
            print(f"{p.name:24} [{p.level}] {p.summary}")
        return 0
    what = "<stdin>" if args.input in (None, "-") else args.input
    code = survive_pass_crashes(tool, what, lambda: reporting_errors(tool, args.verbose, lambda: _opt(args)))
    _remove_stale_outputs(code, args.output)
    return code


def _opt(args) -> int:
    """mdc-opt's arguments in, pass_driver.run_passes on each input, its
    output and warnings out."""
    from . import pass_driver
    from .driver import CompileError

    if not args.input:
        raise UsageError("no input file")
    for flag in args.link:
        options.parse_link(flag)
    for flag in args.device:
        options.parse_device(flag)
    check_not_input("-o", args.output, args.input)
    _check_writable("-o", args.output)
    passes = pass_driver.lookup_passes([n for group in args.passes for n in group.split(",") if n])
    text, name = _read_opt_input(args.input)
    chunks = _split_chunks(text) if args.split_input_file else [(0, text)]
    outputs, failed = [], False
    for first_line, chunk in chunks:
        # Keep line numbers true to the file: pad each chunk to its start line.
        try:
            done = pass_driver.run_passes(
                "\n" * first_line + chunk, passes, name=name, devices=args.device, links=args.link,
                staging=args.staging, staging_pieces=args.staging_pieces, pinned_arguments=args.pinned_arguments,
                cuda_matmul_table=args.cuda_matmul_table, **_placement_options(args))
        except CompileError as e:
            print(e.render("mdc-opt", args.verbose), file=sys.stderr)
            if not args.split_input_file:
                return e.exit_code
            failed = True
            continue
        for w in done.warnings:
            print(render_warning("mdc-opt", w.location, w.message), file=sys.stderr)
        _print_placement("mdc-opt", done.placement)
        outputs.append(done.text)
    text = "// -----\n".join(outputs)
    if args.output == "-":
        sys.stdout.write(text)
    elif not failed:  # a failed run leaves no file that looks finished (opt_main removes an old one)
        _write_atomically(args.output, text.encode())
    return 1 if failed else 0


def _read_opt_input(path: str) -> tuple[str, str]:
    if path == "-":
        return sys.stdin.read(), "<stdin>"
    from .paths import check_input

    check_input(path)
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read(), path


def _split_chunks(text: str) -> list[tuple[int, str]]:
    chunks, current, start = [], [], 0
    for number, line in enumerate(text.splitlines(keepends=True)):
        if line.strip() == "// -----":
            chunks.append((start, "".join(current)))
            current, start = [], number + 1
        else:
            current.append(line)
    chunks.append((start, "".join(current)))
    return chunks
