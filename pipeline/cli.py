"""Command lines: ``mdc-compile`` and ``mdc-opt``.

User mistakes end in a short error whose first line names the problem (with
its source location where there is one), exit status 1 (2 for bad command
lines), no Python traceback, and no output file left behind.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile

from mdc.passes import registry
from mdc.passes.diagnostics import MdcError, format_location
from mdc.passes.ir_util import top_level_ops
from mdc.passes.module_facts import Device, defined_devices, referenced_devices

from . import options, report, stages
from .ireec import Compiler, IreeCompileError, module_text

_COMPILE_HELP = """\
Compiles an MLIR program for several IREE devices, staging values that cross
between devices whose memories are incompatible (a CPU and a discrete GPU)
through pinned host memory. Any --iree-* flag is passed to IREE unchanged.

devices:
  --device=NAME=SPEC declares device symbol NAME (the program's @NAME; 'a' is
  short for 'device_a') as IREE target SPEC: local[0], cuda[0], hip[0], ...
  Defaults: local -> llvm-cpu with --iree-llvmcpu-target-cpu=host (pass
  --iree-llvmcpu-target-cpu=generic or x86-64-v3 for a vmfb meant for another
  machine); cuda -> --iree-cuda-target=sm_80 (sm_90 does not compile in IREE
  3.13.0); hip -> --iree-rocm-target=gfx942. Passing the flag overrides it.

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


_LOC_PREFIX = re.compile(r"^(.*?:\d+:\d+): (.*)$", re.S)


def _render_iree_error(tool: str, err: IreeCompileError, verbose: bool) -> str:
    errors = [d for d in err.diagnostics if d.severity == "error"]
    if not errors:
        return f"{tool}: error: {err.what}"
    lines = []
    for diag in errors if verbose else errors[:1]:
        text = diag.message
        if not verbose:
            text = _strip_op_dumps(text)
        first, *rest = text.splitlines() or [""]
        m = _LOC_PREFIX.match(first)
        if m:
            lines.append(f"{m.group(1)}: error: {m.group(2)}")
        else:
            lines.append(f"{tool}: error: {first}")
        rest = [r for r in rest if r.strip()]
        if not verbose:
            rest = rest[:4]
        lines += ["  " + r.strip() for r in rest]
    if not verbose:
        lines.append(f"  note: {err.what}; --verbose shows all of IREE's diagnostics")
        if len(errors) > 1:
            lines.append(f"  note: {len(errors) - 1} more error(s) not shown")
    else:
        lines += [f"{d.severity}: {d.message}" for d in err.diagnostics if d.severity != "error"]
    return "\n".join(lines)


def _strip_op_dumps(text: str) -> str:
    # IREE appends "see current operation:" and a dump of the op (often the
    # whole module) to a diagnostic: keep what comes before it.
    out = []
    for line in text.splitlines():
        if "see current operation:" in line:
            break
        out.append(line)
    return "\n".join(out)


def _write_atomically(path: str, data: bytes) -> None:
    directory = os.path.dirname(os.path.abspath(path)) or "."
    if os.path.isdir(path):
        raise MdcError(f"cannot write {path}: it is a directory")
    try:
        fd, tmp = tempfile.mkstemp(prefix=".mdc-", dir=directory)
    except OSError as e:
        raise MdcError(f"cannot write {path}: {e.strerror} ({directory})") from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        # mkstemp makes the file 0600; give it the mode any new file gets.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _check_defined_devices(devices, flags: list[str], defined: dict) -> None:
    """A --device must agree with the program's own definition of that device:
    IREE may keep either one, while the manifest always records the flag."""
    for d, flag in zip(devices, flags):
        if d.name not in defined:
            continue
        kind, ordinal, loc = defined[d.name]
        if kind == d.kind and ordinal in (None, d.ordinal):
            continue
        program = kind if ordinal is None else f"{kind}[{ordinal}]"
        raise MdcError(
            f"the program defines device '@{d.name}' as {program}, but --device={flag} says {d.spec}: "
            "make them agree, or drop the program's util.global",
            location=format_location(loc),
        )


def _split_iree_flags(argv: list[str]) -> tuple[list[str], list[str]]:
    ours, iree = [], []
    for a in argv:
        (iree if a.startswith("--iree-") else ours).append(a)
    return ours, iree


def _check_input(path: str) -> None:
    if not os.path.exists(path):
        raise MdcError(f"no such input file: {path}")
    if os.path.isdir(path):
        raise MdcError(f"input is a directory: {path}")


def compile_main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    ours, iree_passthrough = _split_iree_flags(argv)
    parser = _ArgumentParser(
        prog="mdc-compile",
        description=_COMPILE_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        usage="mdc-compile INPUT.mlir --device=NAME=SPEC ... -o OUT.vmfb [options] [--iree-* ...]",
    )
    parser.add_argument("input", help="input MLIR file")
    parser.add_argument("-o", "--output", help="output file (vmfb, or IR with --compile-to)")
    parser.add_argument("--device", action="append", default=[], metavar="NAME=SPEC")
    parser.add_argument("--link", action="append", default=[], metavar="X:Y=staged|shared")
    _add_staging_arguments(parser)
    parser.add_argument("--compile-to", choices=stages.STAGE_NAMES, help="write the IR after this stage instead of a vmfb")
    parser.add_argument("--print-iree-flags", action="store_true", help="print the IREE flags mdc derives and exit")
    parser.add_argument("--no-manifest", action="store_true", help="do not embed the mdc device manifest")
    parser.add_argument(
        "--no-host-entry-points", action="store_true",
        help="do not add @F$host, the twin of each public function F with a value on a device "
        "whose memory the CPU cannot use, that takes and returns every tensor on the first local "
        "device (stock iree-run-module can call it with that device first; mdc-run uses it "
        "where the runtime cannot place values on the GPU itself)")
    parser.add_argument("--dump-stages", metavar="DIR", help="write the IR after every stage into DIR")
    parser.add_argument("--report", metavar="FILE.json|FILE.md", help="write the transfer report")
    parser.add_argument("--graph", metavar="FILE.svg|FILE.dot", help="draw where work runs and data crosses")
    parser.add_argument("--verbose", action="store_true", help="show IREE's full diagnostics")
    args = parser.parse_args(ours)
    tool = "mdc-compile"

    return _survive_compiler_crashes(
        tool, args.input, args.verbose,
        lambda: _reporting_errors(tool, args.verbose, lambda: _compile(args, iree_passthrough)),
    )


def _reporting_errors(tool: str, verbose: bool, body) -> int:
    """Runs ``body``; user mistakes and IREE failures become short messages
    (exit 1), a bug in mdc one line (exit 70)."""
    try:
        return body()
    except MdcError as e:
        print(e.render(tool), file=sys.stderr)
        return 1
    except IreeCompileError as e:
        print(_render_iree_error(tool, e, verbose), file=sys.stderr)
        return 1
    except Exception as e:  # a bug in mdc: say so in one line
        return _internal_error(tool, e, verbose)


def _internal_error(tool: str, error: Exception, verbose: bool) -> int:
    if verbose:
        import traceback

        traceback.print_exception(error)
    print(f"{tool}: internal error: {type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}\n"
          "  note: this is a bug in mdc; --verbose shows where", file=sys.stderr)
    return 70


def _survive_compiler_crashes(tool: str, what: str, verbose: bool, body) -> int:
    """Runs ``body`` in a forked child where the platform allows.

    IREE's compiler library can crash on some inputs (e.g. 3.13.0 segfaults
    in its global constant evaluator on an initializer that moves a computed
    value between devices, plain iree-compile included). In process, that
    would kill mdc with no message; here the parent reports it. Outputs are
    written atomically by the child, so a crash leaves none behind.
    """
    from mdc.contract.forked import run_forked_captured

    code, crash, returned, stderr = run_forked_captured(body)
    if crash or returned:
        sys.stderr.write(stderr)
    if crash:
        print(
            f"{tool}: error: IREE's compiler crashed ({crash}) while compiling {what}\n"
            "  note: this is a bug in IREE 3.13.0, not in the input; nothing was written\n"
            "  note: crashes seen so far come from constant evaluation of initializers: "
            "try --iree-opt-const-eval=false",
            file=sys.stderr,
        )
    elif not returned:
        # Native code ended the process itself (LLVM's fatal errors print
        # their own lines, then exit(1)): one error line, then what LLVM said.
        lines = [line for line in stderr.splitlines() if line.strip()]
        ours = [line for line in lines if line.startswith(f"{tool}: warning:")]
        theirs = [line for line in lines if not line.startswith(f"{tool}: ")]
        fatal = next((line for line in theirs if "ERROR" in line), theirs[-1] if theirs else "")
        if ours:
            print("\n".join(ours), file=sys.stderr)
        print(f"{tool}: error: IREE's compiler stopped while compiling {what}: {fatal.strip()[:200]}", file=sys.stderr)
        if theirs and theirs[0] != fatal:
            print(f"  note: it first said: {theirs[0].strip()[:200]}", file=sys.stderr)
        if verbose:
            print("\n".join(theirs), file=sys.stderr)
        else:
            print("  note: an unknown --iree-llvmcpu-target-cpu does this; --verbose shows all it said; "
                  "nothing was written", file=sys.stderr)
        code = code or 1
    return code


def _compile(args, iree_passthrough: list[str]) -> int:
    devices = [options.parse_device(d) for d in args.device]
    links = [options.parse_link(l) for l in args.link]
    if not devices:
        raise MdcError("no --device given; e.g. --device=a=local[0]")
    if args.print_iree_flags:
        return _print_iree_flags(args.input, devices, iree_passthrough)
    _check_outputs(args)
    devices, hops = _resolve_devices(args.input, devices, args.device)
    link_overrides = options.resolve_link_names(links, devices)
    compiler = Compiler(options.iree_flags(devices, iree_passthrough))
    ctx = _pipeline_context(args, devices, link_overrides, hops)
    result = stages.run(compiler, args.input, ctx, args.compile_to)
    _write_outputs(args, ctx, devices, result)
    return 0


def _print_iree_flags(path: str, devices, iree_passthrough: list[str]) -> int:
    # Names resolve against the program, so read it when it is there.
    if os.path.exists(path):
        devices, _ = options.resolve_names(devices, referenced_devices(Compiler([]).parse_file(path)))
    print("\n".join(options.iree_flags(devices, iree_passthrough)))
    return 0


def _check_outputs(args) -> None:
    """The input exists and the output flags make sense, before any work."""
    _check_input(args.input)
    for flag, path, endings in (("--report", args.report, (".json", ".md")), ("--graph", args.graph, (".svg", ".dot"))):
        if path and not path.endswith(endings):
            raise MdcError(f"{flag}={path}: the file name must end in {' or '.join(endings)}")
    if not args.output:
        raise MdcError("no output file: pass -o OUT.vmfb (or -o - for IR on stdout with --compile-to)")
    if args.output == "-" and not args.compile_to:
        raise MdcError("-o - writes IR only: add --compile-to=STAGE, or name a .vmfb file")


def _resolve_devices(path: str, devices, flags: list[str]):
    """The --device names resolved against the program, checked against the
    devices it defines and names; returns them and the devices it never
    names that must still reach mdc's passes (see options.staging_hops).
    Warns of --device flags the program has no use for."""
    # Device names resolve against the program, so read it first with a
    # flag-free session; the real session gets exactly --print-iree-flags.
    program = Compiler([]).parse_file(path)
    referenced = referenced_devices(program)
    devices, warnings = options.resolve_names(devices, referenced)
    _check_defined_devices(devices, flags, defined_devices(program))
    given = {d.name for d in devices}
    for name, loc in referenced.items():
        if name not in given:
            raise MdcError(
                f"the program uses device '@{name}', but no --device gives it",
                location=format_location(loc),
                notes=[f"add --device={name}=SPEC (e.g. local[0] or cuda[0])"],
            )
    hops = options.staging_hops(devices, referenced)
    for w in warnings:
        if not any(f"device '{h}'" in w for h in hops):
            print(f"mdc-compile: warning: {w}", file=sys.stderr)
    return devices, hops


def _pipeline_context(args, devices, link_overrides: dict, hops: list[str]) -> stages.PipelineContext:
    """What the stages need from the command line: the pass options, the
    manifest's devices, the stage dumps."""
    if args.pinned_arguments and args.no_manifest:
        raise MdcError("--pinned-arguments needs the manifest: it is how the runtime learns which "
                       "arguments to place in pinned memory", notes=["drop --no-manifest"])
    settings = registry.CompileSettings(
        links=link_overrides, staging=args.staging, staging_pieces=args.staging_pieces,
        pinned_arguments=args.pinned_arguments, devices={d.name: Device(d.name, d.kind, d.ordinal) for d in devices},
        host_entry_points=not args.no_host_entry_points)
    ctx = stages.PipelineContext(settings, keep_devices=hops,
                                 manifest_devices=None if args.no_manifest else devices)
    if args.dump_stages:
        ctx.dump = _stage_dumper(args.dump_stages)
    return ctx


def _stage_dumper(directory: str):
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError as e:
        raise MdcError(f"--dump-stages={directory}: cannot create the directory: {e.strerror}") from None

    def dump(stage_name, module):
        _write_atomically(os.path.join(directory, f"{stage_name}.mlir"), module_text(module).encode())

    return dump


def _write_outputs(args, ctx: stages.PipelineContext, devices, result) -> None:
    """The report and graph (when the run reached mdc's passes), then the IR
    or the vmfb."""
    reached_mdc = not args.compile_to or stages.STAGE_NAMES.index(args.compile_to) >= stages.STAGE_NAMES.index("mdc")
    for path in filter(None, (args.report, args.graph)):
        if reached_mdc:
            _write_atomically(path, report.render(path, ctx.report, devices, args.input))
    if not args.compile_to:
        _write_atomically(args.output, result)
    elif args.output == "-":
        sys.stdout.write(module_text(result))
    else:
        _write_atomically(args.output, module_text(result).encode())


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
    parser.add_argument("--list-passes", action="store_true")
    parser.add_argument(
        "--split-input-file", action="store_true",
        help="treat '// -----' lines as separators between independent inputs; "
        "an error in one is reported and the others still run",
    )
    parser.add_argument("-o", "--output", default="-")
    parser.add_argument("--verbose", action="store_true", help="show IREE's full diagnostics")
    args = parser.parse_args(argv)
    tool = "mdc-opt"
    if args.list_passes:
        for p in registry.all_passes():
            print(f"{p.name:24} [{p.level}] {p.summary}")
        return 0
    return _reporting_errors(tool, args.verbose, lambda: _opt(args))


def _opt(args) -> int:
    if not args.input:
        raise MdcError("no input file")
    names = [n for group in args.passes for n in group.split(",") if n]
    passes = []
    for n in names:
        cls = registry.lookup(n)
        if cls is None:
            known = ", ".join(p.name for p in registry.all_passes())
            raise MdcError(f"unknown pass '{n}'", notes=[f"registered passes: {known}"])
        passes.append(cls)
    if args.input == "-":
        text, name = sys.stdin.read(), "<stdin>"
    else:
        _check_input(args.input)
        with open(args.input, encoding="utf-8", errors="replace") as f:
            text, name = f.read(), args.input
    chunks = _split_chunks(text) if args.split_input_file else [(0, text)]
    outputs, failed = [], False
    for first_line, chunk in chunks:
        # Keep line numbers true to the file: pad each chunk to its start line.
        try:
            outputs.append(_opt_one("\n" * first_line + chunk, name, passes, args.link, args.staging,
                                    args.staging_pieces, args.pinned_arguments, args.device))
        except MdcError as e:
            if not args.split_input_file:
                raise
            print(e.render("mdc-opt"), file=sys.stderr)
            failed = True
        except IreeCompileError as e:
            if not args.split_input_file:
                raise
            print(_render_iree_error("mdc-opt", e, args.verbose), file=sys.stderr)
            failed = True
    text = "// -----\n".join(outputs)
    if args.output == "-":
        sys.stdout.write(text)
    elif not failed:  # a failed run leaves no file that looks finished
        _write_atomically(args.output, text.encode())
    return 1 if failed else 0


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


def _opt_one(text: str, name: str, passes, link_flags, staging: str = "emplace",
             staging_pieces: int | None = None, pinned_arguments: bool = False,
             device_flags: list[str] = ()) -> str:
    from mdc.passes.module_facts import declared_devices, hal_devices

    compiler = Compiler([])
    module = compiler.parse_text(text, name)
    nested = [op for op in top_level_ops(module) if op.name == "builtin.module"]
    if len(nested) > 1:
        raise MdcError(
            f"the input holds {len(nested)} modules; mdc's passes work on one module with its own devices",
            location=format_location(nested[1].location),
            notes=["separate the modules with '// -----' lines and pass --split-input-file"],
        )
    # Stream-level IR declares devices by initial value; at the HAL level
    # their initializers say what they are.
    devices = dict(declared_devices(module) or hal_devices(module))
    # What the module declares stands; --device adds the devices it does not.
    given, _ = options.resolve_names([options.parse_device(d) for d in device_flags], referenced_devices(module))
    for d in given:
        devices.setdefault(d.name, Device(d.name, d.kind, d.ordinal))
    links = [options.parse_link(l) for l in link_flags]
    known = [options.DeviceOption(n, "", d.driver, d.ordinal) for n, d in devices.items()]
    link_overrides = options.resolve_link_names(links, known)
    settings = registry.CompileSettings(links=link_overrides, staging=staging, staging_pieces=staging_pieces,
                                        pinned_arguments=pinned_arguments, devices=devices)
    with compiler.context, module.location:
        for cls in passes:
            registry.run_pass(cls, module, settings, registry.Report())
        try:
            module.verify()
        except Exception as e:
            raise MdcError(f"passes produced invalid IR: {e}") from None
    return module_text(module)
