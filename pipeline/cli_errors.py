"""How mdc-compile and mdc-opt report failures.

Exit status 2 for a malformed command line (options.UsageError, a flag IREE
does not take), 1 for a program that does not compile and any other
failure, 70 for a bug in mdc. The first line names the problem, with its
source location where there is one; for IREE's diagnostics the source line
and a caret follow, as iree-compile prints them. No traceback for user
mistakes.

Nothing here imports IREE: an error found before the compiler is loaded
must not wait for it.
"""

from __future__ import annotations

import itertools
import re
import sys
from typing import Callable, Optional

from mdc.passes.infra.diagnostics import MdcError

from .options import UsageError

USAGE_STATUS = 2
FAILURE_STATUS = 1
BUG_STATUS = 70

# The most of a source line an error shows around its column.
EXCERPT_WIDTH = 160

_LOC_PREFIX = re.compile(r"^(.*?:\d+:\d+): (.*)$", re.S)
_FILE_LINE_COL = re.compile(r"^(.*):(\d+):(\d+)$")


def source_excerpt(location: str) -> list[str]:
    """The source line at ``file:line:col`` and a caret under the column,
    as iree-compile prints them; nothing if the file cannot be read."""
    m = _FILE_LINE_COL.match(location)
    if not m:
        return []
    line, column = int(m.group(2)), int(m.group(3))
    try:
        with open(m.group(1), encoding="utf-8", errors="replace") as f:
            text = next(itertools.islice(f, line - 1, None), None) if line > 0 else None
    except OSError:
        return []
    if text is None:
        return []
    text = text.rstrip("\r\n")
    at = max(column - 1, 0)
    if len(text) > EXCERPT_WIDTH:
        # A long line (a generated or minified file) shows only the part
        # around the column, marked as cut with "...".
        start = max(0, min(at - EXCERPT_WIDTH // 2, len(text) - EXCERPT_WIDTH))
        end = start + EXCERPT_WIDTH
        text = ("..." if start else "") + text[start:end] + ("..." if end < len(text) else "")
        at += (3 if start else 0) - start
    # A tab in the line stays a tab under it, so the caret lines up.
    pad = "".join(c if c == "\t" else " " for c in text[:at])
    return [text, pad + "^"]


def render_iree_error(tool: str, err, verbose: bool) -> str:
    """An ireec.IreeCompileError: IREE's first error (all with --verbose),
    with its source line, and a note on what failed."""
    errors = [d for d in err.diagnostics if d.severity == "error"]
    if not errors:
        return f"{tool}: error: {err.what}"
    lines = []
    for diag in errors if verbose else errors[:1]:
        text = diag.message if verbose else strip_op_dumps(diag.message)
        first, *rest = text.splitlines() or [""]
        m = _LOC_PREFIX.match(first)
        if m:
            lines.append(f"{m.group(1)}: error: {m.group(2)}")
            lines += source_excerpt(m.group(1))
        else:
            lines.append(f"{tool}: error: {first}")
        rest = [r for r in rest if r.strip()]
        lines += ["  " + r.strip() for r in (rest if verbose else rest[:4])]
    if not verbose:
        lines.append(f"  note: {err.what}; --verbose shows all of IREE's diagnostics")
        if len(errors) > 1:
            lines.append(f"  note: {len(errors) - 1} more error(s) not shown")
    else:
        lines += [f"{d.severity}: {d.message}" for d in err.diagnostics if d.severity != "error"]
    return "\n".join(lines)


def strip_op_dumps(text: str) -> str:
    """What comes before IREE's "see current operation:" and the dump of the
    op (often the whole module) it appends to a diagnostic."""
    out = []
    for line in text.splitlines():
        if "see current operation:" in line:
            break
        out.append(line)
    return "\n".join(out)


def iree_error_types() -> tuple[tuple, tuple]:
    """(flag errors, compile errors) of pipeline/ireec.py, or nothing to
    catch when it was never imported (then no such error can be raised)."""
    ireec = sys.modules.get(f"{__package__}.ireec")
    if ireec is None:
        return (), ()
    return (ireec.IreeFlagError,), (ireec.IreeCompileError,)


def reporting_errors(tool: str, verbose: bool, body) -> int:
    """Runs ``body``; user mistakes and IREE failures become short messages
    with their exit status, a bug in mdc one line (exit 70)."""
    try:
        return body()
    except UsageError as e:
        print(e.render(tool), file=sys.stderr)
        return USAGE_STATUS
    except MdcError as e:
        print(e.render(tool), file=sys.stderr)
        return FAILURE_STATUS
    except Exception as e:
        flag_errors, compile_errors = iree_error_types()  # body imported it, if anything
        if isinstance(e, flag_errors):
            print(f"{tool}: error: {e.what}", file=sys.stderr)
            return USAGE_STATUS
        if isinstance(e, compile_errors):
            print(render_iree_error(tool, e, verbose), file=sys.stderr)
            return FAILURE_STATUS
        return internal_error(tool, e, verbose)


def internal_error(tool: str, error: Exception, verbose: bool) -> int:
    if verbose:
        import traceback

        traceback.print_exception(error)
    first = str(error).splitlines()[0] if str(error) else ""
    print(f"{tool}: internal error: {type(error).__name__}: {first}\n"
          "  note: this is a bug in mdc; --verbose shows where", file=sys.stderr)
    return BUG_STATUS


CONST_EVAL_OFF = "--iree-opt-const-eval=false"
CANNOT_PARSE = "cannot parse"  # how ireec's error for a program IREE cannot parse begins
# The error IREE 3.13.0's constant evaluation gives, instead of crashing,
# when its JIT module lacks a device global (regress/iree_undefined_device_global.test).
_LOST_DEVICE = re.compile(r"'util\.global\.load' op undefined global: @([\w$.-]+)")


def lost_device(stderr: str, device_names) -> Optional[str]:
    """The device global an IREE error says is undefined, where it is one
    of the compile's devices and the program parsed (a program's own
    undefined global is its mistake, found at the parse)."""
    if f"note: {CANNOT_PARSE}" in stderr:
        return None
    return next((m.group(1) for m in _LOST_DEVICE.finditer(stderr) if m.group(1) in device_names), None)


def survive_compiler_crashes(tool: str, what: str, verbose: bool, body,
                             without_const_eval: Optional[Callable[[], int]] = None, device_names=()) -> int:
    """Runs ``body`` in a forked child where the platform allows.

    IREE's compiler library can crash on some inputs. In process, that
    would kill mdc with no message; here the parent reports it. Outputs are
    written atomically by the child, so a crash leaves none behind.

    IREE 3.13.0 segfaults in its constant evaluation of an initializer
    that moves a computed value between devices, when the device it comes
    from is not in the JIT module it builds (plain iree-compile included:
    test/lit/regress/iree_const_eval_loses_device.test). Placement makes
    such initializers (a constant placed on the GPU, read by work placed on
    the CPU). The library prints no stack, so the crash's place is not
    known: after a crash, ``without_const_eval`` (the same compile with
    CONST_EVAL_OFF; None where the user set the flag) runs in its place,
    with a warning: the module then computes those values when it loads,
    as IREE does for initializers it does not evaluate. A crash there too
    is reported as any crash. The same JIT module can also fail without
    crashing, ``undefined global: @D`` of one of ``device_names``: that
    compile is retried the same way.
    """
    from mdc.contract.forked import run_forked_captured

    code, crash, returned, stderr = run_forked_captured(body)
    lost = lost_device(stderr, device_names) if returned and code else None
    retried = (crash or lost) and without_const_eval is not None
    if retried:
        why = f"crashed ({crash})" if crash else f"lost the device global @{lost} ('undefined global')"
        print(f"{tool}: warning: IREE's compiler {why} while compiling {what}; compiling "
              f"again with {CONST_EVAL_OFF} (IREE 3.13.0's constant evaluation loses a device on some "
              "programs; the module computes those constants when it loads)", file=sys.stderr)
        code, crash, returned, stderr = run_forked_captured(without_const_eval)
    if crash or returned:
        sys.stderr.write(stderr)
    if crash:
        print(
            f"{tool}: error: IREE's compiler crashed ({crash}) while compiling {what}\n"
            "  note: this is a bug in IREE 3.13.0, not in the input; nothing was written\n"
            + ("  note: it crashed with --iree-opt-const-eval=false too" if retried else
               "  note: crashes seen so far come from constant evaluation of initializers: "
               "try --iree-opt-const-eval=false"),
            file=sys.stderr,
        )
    elif not returned:
        code = _native_exit(tool, what, verbose, stderr, code)
    return code


def survive_pass_crashes(tool: str, what: str, body) -> int:
    """mdc-opt's counterpart of survive_compiler_crashes: ``body`` in a
    forked child where the platform allows, its stderr left as it is (so
    that each chunk's errors come out in order with its output), and one
    error line if the child dies of a signal inside IREE's native code."""
    from mdc.contract.forked import run_forked

    code, crash = run_forked(body)
    if crash:
        print(f"{tool}: error: IREE's compiler crashed ({crash}) while running passes on {what}\n"
              "  note: this is a bug in IREE 3.13.0, not in the input; nothing was written", file=sys.stderr)
    return code


def _native_exit(tool: str, what: str, verbose: bool, stderr: str, code: int) -> int:
    """Native code ended the process itself (LLVM's fatal errors, and its
    command-line parser on a flag it does not know, print their own lines,
    then exit(1)): one error line, then what LLVM said."""
    lines = [line for line in stderr.splitlines() if line.strip()]
    ours = [line for line in lines if line.startswith(f"{tool}: warning:") or line.startswith(f"{tool}: note:")]
    theirs = [line for line in lines if line not in ours]
    if ours:
        print("\n".join(ours), file=sys.stderr)
    unknown = next((line for line in theirs if "Unknown command line argument" in line), None)
    if unknown is not None:  # a --mlir-* flag LLVM does not know
        said = unknown.split(": ", 1)[-1].split("  Try:")[0].strip()  # its --help is not ours
        hint = next((line.split(": ", 1)[-1].strip() for line in theirs if "Did you mean" in line), "")
        print(f"{tool}: error: IREE rejected a flag: {said[:200]}{' ' + hint if hint else ''}",
              file=sys.stderr)
        return USAGE_STATUS
    fatal = next((line for line in theirs if "ERROR" in line), theirs[-1] if theirs else "")
    print(f"{tool}: error: IREE's compiler stopped while compiling {what}: {fatal.strip()[:200]}", file=sys.stderr)
    if theirs and theirs[0] != fatal:
        print(f"  note: it first said: {theirs[0].strip()[:200]}", file=sys.stderr)
    if verbose:
        print("\n".join(theirs), file=sys.stderr)
    else:
        print("  note: an unknown --iree-llvmcpu-target-cpu does this; --verbose shows all it said; "
              "nothing was written", file=sys.stderr)
    return code or FAILURE_STATUS
