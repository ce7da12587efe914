"""mdc-run: iree-run-module for mdc programs.

    mdc-run --module=out.vmfb --device=local-task --device=cuda \\
            --function=multi_device_mul --input=4xf32=10,11,12,13

Same flags and output as iree-run-module (`EXEC @fn`, `result[0]:
hal.buffer_view`, `4xf32=0 55 144 273`), plus placement of every argument and
result on its declared device, i1 input literals, and --benchmark=N. Devices
IREE 3.13's Python runtime cannot open together (Vulkan beside another
device) run in the wheel's own iree-run-module, through the function's host
entry point (native.py). Every
user error is one line, `mdc-run: error: ...`, with exit status 2; a failure
inside the runtime is one line with exit status 1.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from typing import Optional, Sequence

import numpy as np

from .errors import ShimError, short


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, no usage block
        raise ShimError(message)


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="mdc-run", allow_abbrev=False,
                description="Run a function of an mdc-compiled .vmfb on several devices.")
    p.add_argument("--module", required=True, help="the .vmfb to load")
    p.add_argument("--function", help="function to run (default: the only one)")
    p.add_argument("--device", action="append", default=[],
                   help="runtime device URI, repeated: local-task, local-sync, cuda, cuda://1, hip")
    p.add_argument("--input", action="append", default=[],
                   help="4xf32=1,2,3,4, 2x2xf32=[1 2][3 4], or @file.npy; one per input")
    p.add_argument("--output", action="append", default=None,
                   help="@file.npy, - (print) or empty (skip); one per result")
    p.add_argument("--trace_execution", type=_boolean, default=False,
                   help="not supported here (IREE's Python runtime has no VM tracing): says so")
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
    return p


def _count(text: str) -> int:
    try:
        value = int(text, 10)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a whole number (0 or more), got {text!r}")
    return value


def _boolean(text: str) -> bool:
    """A boolean flag's value as IREE's flags take it: true/false, 1/0."""
    table = {"true": True, "1": True, "false": False, "0": False}
    if text.lower() not in table:
        raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}")
    return table[text.lower()]


def main(argv: Optional[Sequence[str]] = None) -> int:
    module = None
    try:
        args = _parser().parse_args(argv)
        if args.trace_execution:
            raise ShimError("--trace_execution is not supported: IREE 3.13's Python runtime, which "
                            "mdc-run runs on, has no VM execution tracing; trace the host entry point "
                            "with stock iree-run-module --trace_execution (README, \"Host entry points\")")
        if not args.device:
            raise ShimError("no --device given: name at least one, e.g. --device=local-task")
        from .module import load  # after flag errors: they need no runtime

        flags = []
        if args.task_topology_group_count is not None:
            flags.append(f"--task_topology_group_count={args.task_topology_group_count}")
        module = load(args.module, args.device, flags=flags)
        if args.list_functions:
            print(module.describe())
            return 0
        return _run(module, args)
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
        if "--verbose" in (argv if argv is not None else sys.argv[1:]):
            raise
        first = str(e).splitlines()[0] if str(e) else ""
        print(f"mdc-run: internal error: {type(e).__name__}: {first}\n"
              "  note: this is a bug in mdc; --verbose shows where", file=sys.stderr)
        return 70
    finally:
        if module is not None:
            module.close()


def console_main() -> int:
    """mdc-run's entry point: ``main`` in a forked child, so that a crash
    inside IREE's runtime ends in a one-line error. (A module damaged after
    mdc-compile sealed it is refused before IREE sees it; an unsealed one,
    e.g. stock iree-compile output, can pass IREE's verifier and crash the
    VM, stock iree-run-module too.)"""
    from mdc.contract.forked import run_forked

    code, crash = run_forked(main)
    if crash:
        print(f"mdc-run: error: IREE's runtime crashed ({crash}) while loading or running the module\n"
              "  note: a module damaged on disk can do this (stock iree-run-module too); mdc-run "
              "refuses modules whose mdc-compile seal does not match, so with a sealed module "
              "this is a bug in IREE or mdc",
              file=sys.stderr)
    return code


def _run(module, args) -> int:
    if args.function is None:
        if len(module.function_names) != 1:
            raise ShimError("--function is required; the module exports: "
                            + ", ".join(module.function_names))
        args.function = module.function_names[0]
    function = module.function(args.function)
    if args.benchmark and not hasattr(function, "place"):
        raise ShimError(f"--benchmark: @{function.name} runs in stock iree-run-module here "
                        f"({module.reason}), where each call is a process of its own; time it there")
    n_results = len(function.signature.results)
    if args.output is not None and len(args.output) != n_results:
        raise ShimError(f"{len(args.output)} --output given but @{function.name} "
                        f"returns {n_results} result(s)")
    for target in args.output or []:
        if target not in ("", "-") and not target.startswith("@"):
            raise ShimError(f"--output={target}: expected @file.npy, - or nothing")
        directory = os.path.dirname(os.path.abspath(target[1:]))
        if target.startswith("@") and not os.path.isdir(directory):
            raise ShimError(f"--output={target}: cannot write there: no directory {directory}")
    signature = function.signature
    if len(args.input) != len(signature.args):
        raise ShimError(f"@{function.name} takes {len(signature.args)} input(s), "
                        f"{len(args.input)} --input given")
    inputs = function.prepare([read_input(text, value, i)
                               for i, (text, value) in enumerate(zip(args.input, signature.args))])

    print(f"EXEC @{function.name}", flush=True)
    results = function._invoke(inputs)
    for i, (result, kind) in enumerate(results):
        text = _format(result, kind, args.output_max_element_count)
        target = args.output[i] if args.output is not None else None
        if target is None:
            print(f"result[{i}]: {text}" if isinstance(kind, str)
                  else f"result[{i}]: hal.buffer_view\n{text}")
        elif target == "-":
            print(text if isinstance(kind, str) else f"hal.buffer_view\n{text}")
        elif target:
            _save_atomically(target[1:], np.asarray(result))

    if args.benchmark:
        # As iree-benchmark-module, tensor inputs are placed once and reused
        # (Function.place; for a --pinned-arguments argument, in its GPU's
        # pinned memory); each call still fetches its results.
        placed = [(function.place(i, arg), None) if isinstance(kind, int) and signature.args[i].is_tensor
                  else (arg, kind) for i, (arg, kind) in enumerate(inputs)]
        times = []
        for _ in range(args.benchmark):
            start = time.perf_counter()
            function._invoke(placed)
            times.append((time.perf_counter() - start) * 1e3)
        print(f"BENCHMARK @{function.name}: {len(times)} calls, per call "
              f"min {min(times):.4f} ms, median {statistics.median(times):.4f} ms, "
              f"max {max(times):.4f} ms")
    return 0


def read_input(text: str, value, index: int):
    """One --input (literal, bare scalar or @file.npy) for declared `value`."""
    from . import values

    if value.type in values.SCALAR_TYPES:
        return values.parse_scalar(text, value.type, f"input {index} (%{value.name})")
    if text.startswith("@"):
        path = text[1:]
        try:
            with open(path, "rb") as f:
                magic = f.read(6)
        except OSError as e:
            raise ShimError(f"--input={text}: cannot read {path}: {e.strerror}") from None
        if magic != b"\x93NUMPY":
            # As iree-run-module: @file is a .npy file, nothing else (np.load
            # would call a text file "pickled data").
            raise ShimError(f"--input={text}: {path} is not a .npy file (no numpy header); only "
                            "numpy .npy files are supported, e.g. written by numpy.save")
        try:
            array = np.load(path, allow_pickle=False)
        except (OSError, ValueError, EOFError) as e:
            raise ShimError(f"--input={text}: cannot read {path}: {short(e)}") from None
        if not isinstance(array, np.ndarray):
            raise ShimError(f"--input={text}: {path} is not a single .npy array")
        return values.aligned_array(array)
    array, _ = values.parse_literal(text)
    return array


def _format(result, kind, limit: int) -> str:
    from . import values

    if isinstance(kind, str):
        return values.format_scalar(result, kind)
    return values.format_array(result, kind, limit)


def _save_atomically(path: str, array: np.ndarray) -> None:
    """Write the .npy next to its destination, then rename it into place, so a
    reader never sees a partial file."""
    directory = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(prefix=".mdc-run-", suffix=".npy", dir=directory)
    except OSError as e:
        raise ShimError(f"--output=@{path}: cannot write there: {e.strerror}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            np.save(f, array, allow_pickle=False)
            f.flush()
            os.fsync(f.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes it 0600; np.save would not
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
