"""mdc-run: iree-run-module for mdc programs.

    mdc-run --module=out.vmfb --device=local-task --device=cuda \\
            --function=multi_device_mul --input=4xf32=10,11,12,13

Same flags and output as iree-run-module (`EXEC @fn`, `result[0]:
hal.buffer_view`, `4xf32=0 55 144 273`; --input and --output files,
--expected_output, --parameters, --print_statistics, several --module, the
runtime's driver flags), plus placement of every argument and result on its
declared device, i1 input literals, and --benchmark=N. Devices IREE 3.13's
Python runtime cannot open together (Vulkan beside another device) run in
the wheel's own iree-run-module, through the function's host entry point
(native.py). Every user error is one line, `mdc-run: error: ...`, with exit
status 2; a failure inside the runtime is one line with exit status 1, and
so is a result that does not match its --expected_output. A closed
stdout (`mdc-run ... | head`) ends it quietly, killed by SIGPIPE, as it
ends cat and the wheel's iree-run-module binary.
"""

from __future__ import annotations

import argparse
import os
import shlex
import signal
import sys
import time
from typing import Optional, Sequence

from mdc.contract.version import IREE_RUNTIME, add_version_argument

from . import cli_flags, cli_io
from .errors import ShimError, short

TRACE_NOTE = ("mdc-run: note: --trace_execution: IREE 3.13.0's runtime wheel is built without VM "
              "execution tracing, so there is no trace to print (its own iree-run-module takes the "
              "flag and prints none); running without it")

# What ``main`` returns when stdout's reader went away: the status a shell
# shows for a process killed by SIGPIPE. console_main then ends that way.
PIPE_CLOSED = 128 + signal.SIGPIPE


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, no usage block
        raise ShimError(message)


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="mdc-run", allow_abbrev=False,
                description="Run a function of an mdc-compiled .vmfb on several devices.",
                epilog="Driver flags (--task_*, --cuda_*, --hip_*, --vulkan_*, --executable_plugin) "
                "pass to IREE's runtime; --flagfile=FILE reads flags from FILE; --list_drivers, "
                "--list_devices and --dump_devices print what iree-run-module prints.")
    p.add_argument("--module", action="append", required=True,
                   help="the .vmfb to load; repeated, earlier modules are loaded first and the last "
                   "one's functions may call theirs (the function runs in the last)")
    p.add_argument("--function", help="function to run (default: the only one)")
    p.add_argument("--device", action="append", default=[],
                   help="runtime device URI, repeated: local-task, local-sync, cuda, cuda://1, hip")
    p.add_argument("--input", action="append", default=[],
                   help="4xf32=1,2,3,4, 2x2xf32=[1 2][3 4], 4xf32=@raw.bin (+raw.bin: read on), "
                   "@file.npy (+file.npy: the next array, *file.npy: all left); one per input")
    p.add_argument("--output", action="append", default=None,
                   help="@file.npy or @file.bin (written afresh), +file.npy or +file.bin (appended; "
                   "other names are raw bytes), - (print) or empty (skip); one per result")
    _add_expected_arguments(p)
    p.add_argument("--parameters", action="append", default=[], metavar="[SCOPE=]FILE",
                   help="parameter archive (.irpa, .gguf, .safetensors) for the module's parameters")
    p.add_argument("--parameter_mode", choices=("file", "preload"), default="file",
                   help="file (default): map the parameter files; preload: read them into memory")
    p.add_argument("--module_mode", choices=("preload", "mmap"), default="preload",
                   help="accepted as iree-run-module takes it; mdc-run always maps the module file")
    p.add_argument("--print_statistics", type=_boolean, nargs="?", const=True, default=False,
                   help="print each device's allocator statistics on stderr at the end")
    p.add_argument("--trace_execution", type=_boolean, nargs="?", const=True, default=False,
                   help="accepted; this IREE runtime is built without VM tracing, so it prints a note")
    p.add_argument("--task_topology_group_count", type=_count, default=None,
                   help="worker threads of local-task devices (runtime flag)")
    p.add_argument("--benchmark", type=_count, default=0,
                   help="then time N more calls, with the tensor inputs placed once; print per-call "
                   "min, median, max")
    p.add_argument("--output_max_element_count", type=_count, default=1024,
                   help="elements printed per result, as iree-run-module")
    p.add_argument("--list_functions", action="store_true",
                   help="print the functions and their signatures, then exit")
    p.add_argument("--verbose", action="store_true",
                   help="show a traceback for internal errors (bugs in mdc)")
    add_version_argument(p, (IREE_RUNTIME,))
    return p


def _add_expected_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--expected_output", action="append", default=None,
                   help="the value a result must have, as --input spells values, or (ignored); one per "
                   "result: prints [SUCCESS] or each [FAILED] result and exits 1 on a mismatch")
    for name, default in (("f16", 0.001), ("bf16", 0.01), ("f32", 0.0001), ("f64", 0.0001)):
        p.add_argument(f"--expected_{name}_threshold", type=_number, default=default,
                       help=f"absolute tolerance for {name} in approximate mode (default {default})")
    p.add_argument("--expected_rtol", type=_number, default=1e-5,
                   help="relative tolerance for float types in approximate mode (default 1e-05)")
    p.add_argument("--equality_mode", choices=("approximate", "exact"), default="approximate",
                   help="approximate: |actual - expected| <= atol + rtol * |expected|, NaN equal to NaN; "
                   "exact: the bytes")


def _count(text: str) -> int:
    try:
        value = int(text, 10)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a whole number (0 or more), got {text!r}")
    return value


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None


def _boolean(text: str) -> bool:
    """A boolean flag's value as IREE's flags take it: true/false, 1/0."""
    table = {"true": True, "1": True, "false": False, "0": False}
    if text.lower() not in table:
        raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}")
    return table[text.lower()]


def main(argv: Optional[Sequence[str]] = None) -> int:
    module = None
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        module, args = _load(argv)
        if args is None:
            return module  # an informational flag's exit status
        if args.list_functions:
            module.describe()
            return 0
        return _run(module, args)
    except BrokenPipeError:
        return _stdout_closed()
    except ShimError as e:
        print(f"mdc-run: error: {e}", file=sys.stderr)
        return 2
    except (RuntimeError, ValueError, LookupError, TimeoutError, OSError) as e:
        # IREE statuses arrive as RuntimeError, ValueError, IndexError, KeyError...
        print(f"mdc-run: error: {short(e)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("mdc-run: interrupted", file=sys.stderr)
        return 130
    except Exception as e:  # a bug in mdc: say so in one line
        if "--verbose" in argv:
            raise
        first = str(e).splitlines()[0] if str(e) else ""
        print(f"mdc-run: internal error: {type(e).__name__}: {first}\n"
              "  note: this is a bug in mdc; --verbose shows where", file=sys.stderr)
        return 70
    finally:
        if module is not None and not isinstance(module, int):
            module.close()


def _stdout_closed() -> int:
    """stdout's reader is gone (`mdc-run ... | head -c 5`): nothing more
    is printed, no error either, as cat and iree-run-module stop there.
    stdout then points at /dev/null, so that what is still buffered is
    flushed nowhere rather than failing again at exit."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass
    return PIPE_CLOSED


def _end_by_sigpipe() -> None:
    """End this process as a C program that wrote to a closed pipe ends:
    killed by SIGPIPE (Python ignores the signal, so it is restored first)."""
    sys.stderr.flush()
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGPIPE)


def _note(text: str) -> None:
    """A one-line note on how a flag was taken, printed when it is taken:
    before the run, so that it comes before a fatal error's line too."""
    print(text, file=sys.stderr, flush=True)


def _load(argv: list[str]):
    """(loaded module, parsed flags), or (exit status, None) for a flag
    that only prints (--list_devices, ...)."""
    argv = cli_flags.expand_flagfiles(argv)
    status = cli_flags.run_info_flag(argv)
    if status is not None:
        return status, None
    for arg in argv:
        why = cli_flags.refused(arg)
        if why:
            raise ShimError(f"{arg.split('=', 1)[0]} is not supported: {why}")
    ours, driver_flags = cli_flags.split_driver_flags(argv)
    args = _parser().parse_args(ours)
    if args.trace_execution:
        _note(TRACE_NOTE)
    if not args.device:
        raise ShimError("no --device given: name at least one, e.g. --device=local-task")
    from .module import load  # after flag errors: they need no runtime

    flags = list(driver_flags)
    if args.task_topology_group_count is not None:
        flags.append(f"--task_topology_group_count={args.task_topology_group_count}")
    module = load(args.module[-1], args.device, flags=flags, dependencies=args.module[:-1],
                  parameters=args.parameters, preload_parameters=args.parameter_mode == "preload")
    from .native import NativeModule

    if args.print_statistics and isinstance(module, NativeModule):  # run by iree-run-module
        module.flags.append("--print_statistics=true")
    return module, args


def console_main() -> int:
    """mdc-run's entry point: ``main`` in a forked child, so that a crash
    inside IREE's runtime ends in a one-line error. (A module damaged after
    mdc-compile sealed it is refused before IREE sees it; an unsealed one,
    e.g. stock iree-compile output, can pass IREE's verifier and crash the
    VM, stock iree-run-module too.)"""
    from mdc.contract.forked import run_forked

    code, crash = run_forked(main)
    if code == PIPE_CLOSED or crash == "SIGPIPE":  # stdout closed, in the child or here
        _end_by_sigpipe()
    if crash:
        print(f"mdc-run: error: IREE's runtime crashed ({crash}) while loading or running the module\n"
              "  note: a module damaged on disk can do this (stock iree-run-module too); mdc-run "
              "refuses modules whose mdc-compile seal does not match, so with a sealed module "
              "this is a bug in IREE or mdc",
              file=sys.stderr)
    return code


def _run(module, args) -> int:
    from .native import NativeFunction

    function = _function(module, args)
    if args.benchmark and isinstance(function, NativeFunction):
        _read_inputs(function, args)  # the inputs checked first, as for a run
        raise ShimError(f"--benchmark: @{function.name} runs in stock iree-run-module here "
                        f"({module.reason}), where each call is a process of its own; time it with "
                        f"stock iree-benchmark-module: {_benchmark_command(function, args)}")
    signature = function.signature
    if args.expected_output is not None and args.output is not None:
        _note("mdc-run: note: --output is ignored with --expected_output, as iree-run-module "
              "ignores it")
        args.output = None
    cli_io.check_outputs(args.output, function.name, len(signature.results))
    inputs, expected = _read_inputs(function, args)

    print(f"EXEC @{function.name}", flush=True)
    results = function._invoke(inputs)
    status = 0
    if expected is not None:
        status = _check_expected(expected, results, args)
    else:
        _emit(results, args)
    if args.benchmark:
        _benchmark(function, inputs, args.benchmark)
    if args.print_statistics:
        sys.stdout.flush()
        print(module.statistics(), end="", file=sys.stderr)
    return status


def _benchmark_command(function, args) -> str:
    """The stock iree-benchmark-module command line that times what
    --benchmark=N asks, N calls: the module, its dependencies and the
    runtime flags given, the function's host entry point with the devices
    in native.py's order (the local one first), and the --input flags as
    given, each one quoted for a POSIX shell. An i1 literal in words
    (true/false, which stock does not read) is given as 0s and 1s."""
    m = function.module
    inputs = list(args.input)
    declared = function.signature.args
    if len(inputs) == len(declared):
        inputs = [_stock_literal(text, value, i) for i, (text, value) in enumerate(zip(inputs, declared))]
    flags = [f for f in m.flags if not f.startswith("--print_statistics")]
    cmd = ["iree-benchmark-module", *[f"--module={d}" for d in m.dependencies], f"--module={m.path}",
           f"--function={function._entry}", *[f"--device={d}" for d in function._devices], *flags,
           *[f"--input={i}" for i in inputs], f"--benchmark_min_time={args.benchmark}x"]
    return shlex.join(cmd)


def _stock_literal(text: str, value, index: int) -> str:
    """``text``, one --input for declared ``value``, as stock reads it."""
    import re

    if (not value.is_tensor or value.type.element != "i1" or text[:1] in "@+*"
            or not re.search(r"true|false", text, re.IGNORECASE)):
        return text
    array = read_input(text, value, index)
    shape = "x".join(str(d) for d in array.shape)
    return f"{shape + 'x' if shape else ''}i1=" + " ".join(str(int(v)) for v in array.reshape(-1))


def _function(module, args):
    if args.function is None:
        if len(module.function_names) != 1:
            raise ShimError("--function is required; the module exports: "
                            + ", ".join(module.function_names))
        args.function = module.function_names[0]
    return module.function(args.function)


def _read_inputs(function, args):
    """The function's inputs (checked as ``prepare`` checks them) and the
    expected results (None without --expected_output), read from the
    command line and the files it names."""
    signature = function.signature
    files = cli_io.FileReads()
    try:
        given = cli_io.read_values("--input", args.input, signature.args, files)
        if len(given) != len(signature.args):
            raise ShimError(f"@{function.name} takes {len(signature.args)} input(s), "
                            f"{len(given)} --input given")
        inputs = function.prepare([v[0] if isinstance(v, tuple) else v for v in given])
        expected = None
        if args.expected_output is not None:
            expected = cli_io.read_values("--expected_output", args.expected_output,
                                          signature.results, files)
    finally:
        files.close()
    return inputs, expected


def _check_expected(expected, results, args) -> int:
    from .expected import Tolerance, compare

    tolerance = Tolerance(args.equality_mode, args.expected_f16_threshold, args.expected_bf16_threshold,
                          args.expected_f32_threshold, args.expected_f64_threshold, args.expected_rtol)
    matched, report = compare(expected, results, tolerance)
    print(report, end="", flush=True)
    return 0 if matched else 1


def _emit(results, args) -> None:
    """Print or write each result as its --output says (all printed without)."""
    writes = []
    for i, (result, kind) in enumerate(results):
        target = args.output[i] if args.output is not None else None
        if target is None or target == "-":
            text = _format(result, kind, args.output_max_element_count)
            head = f"result[{i}]: " if target is None else ""
            print(f"{head}{text}" if isinstance(kind, str) else f"{head}hal.buffer_view\n{text}")
        elif target:
            writes.append((target, cli_io.encoded(result, kind, target[1:])))
    cli_io.write_outputs(writes)


def _benchmark(function, inputs, calls: int) -> None:
    """As iree-benchmark-module, tensor inputs are placed once and reused
    (Function.place; for a --pinned-arguments argument, in its GPU's
    pinned memory); each call still fetches its results."""
    import statistics

    signature = function.signature
    placed = [(function.place(i, arg), None) if isinstance(kind, int) and signature.args[i].is_tensor
              else (arg, kind) for i, (arg, kind) in enumerate(inputs)]
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        function._invoke(placed)
        times.append((time.perf_counter() - start) * 1e3)
    print(f"BENCHMARK @{function.name}: {len(times)} calls, per call "
          f"min {min(times):.4f} ms, median {statistics.median(times):.4f} ms, "
          f"max {max(times):.4f} ms")


def read_input(text: str, value, index: int):
    """One --input (literal, bare scalar, raw file or @file.npy) for
    declared `value`: an array or a number."""
    files = cli_io.FileReads()
    try:
        read = cli_io.read_values("--input", [text], [value], files)
    finally:
        files.close()
    if len(read) != 1:
        raise ShimError(f"--input={text}: input {index} takes one value, the file holds {len(read)}")
    return read[0][0] if isinstance(read[0], tuple) else read[0]


def _format(result, kind, limit: int) -> str:
    from . import literals

    if isinstance(kind, str):
        return literals.format_scalar(result, kind)
    return literals.format_array(result, kind, limit)
