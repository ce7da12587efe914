"""Running a body in a forked child, so that a crash inside IREE's native
code (compiler or runtime) becomes a one-line error from the parent instead
of a dead process. No IREE imports: mdc-compile and mdc-run both use it."""

from __future__ import annotations

import os
import signal
import sys
from typing import Callable, Optional


def _fork(body: Callable[[], int]) -> int:
    """Runs ``body`` in a forked child; returns its wait status. Output the
    child writes goes to the inherited stdout/stderr. ^C is left to the
    child."""
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        code = 70
        try:
            code = body()
        except SystemExit as e:  # --help and argparse's own exits keep their status
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        finally:
            try:
                sys.stdout.flush()
                sys.stderr.flush()
            finally:
                os._exit(code)
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        _, status = os.waitpid(pid, 0)
    finally:
        signal.signal(signal.SIGINT, previous)
    return status


def _outcome(status: int) -> tuple[int, Optional[str]]:
    """(exit code, None), or (1, signal name) when the child died of a signal."""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            return 1, signal.Signals(sig).name
        except ValueError:
            return 1, f"signal {sig}"
    return os.waitstatus_to_exitcode(status), None


def _threads() -> int:
    """The process's OS threads (native ones too: IREE's compiler and
    runtime start their own), where the platform tells."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        import threading

        return threading.active_count()


def _compiler_threads() -> bool:
    """Whether IREE's compiler has run in this process beside other
    threads: its thread pool's threads then exist, and a lock one of them
    held at a fork is never released in the child, which hangs (seen
    after an in-process ``mdc.pipeline.compile``). The tools fork before
    they load the compiler; a caller that compiled in process runs the
    body in process, without the crash isolation."""
    loaded = any(name.startswith("iree.compiler._mlir_libs") for name in sys.modules)
    return loaded and _threads() > 1


def _can_fork() -> bool:
    return hasattr(os, "fork") and not os.environ.get("MDC_NO_FORK") and not _compiler_threads()


def run_forked(body: Callable[[], int]) -> tuple[int, Optional[str]]:
    """Runs ``body`` in a child where the platform allows (not when
    MDC_NO_FORK is set, nor after IREE's compiler ran here beside other
    threads) and returns (exit code, None), or (1, signal name)
    when the child died of a signal. Output written by the child goes
    straight to the inherited stdout/stderr."""
    if not _can_fork():
        return body(), None
    return _outcome(_fork(body))


def run_forked_captured(body: Callable[[], int]) -> tuple[int, Optional[str], bool, str]:
    """Like run_forked, with the child's stderr captured rather than shown:
    returns (exit code, signal name or None, whether ``body`` returned,
    what the child wrote to stderr). ``body`` not returning while the
    child exited on its own means native code called exit() (LLVM's fatal
    errors do, after printing their own lines)."""
    import tempfile

    if not _can_fork():
        return body(), None, True, ""
    with tempfile.TemporaryFile() as captured:
        returned_r, returned_w = os.pipe()

        def child() -> int:
            os.close(returned_r)
            os.dup2(captured.fileno(), 2)
            code = body()
            os.write(returned_w, b"1")
            return code

        status = _fork(child)
        os.close(returned_w)
        returned = os.read(returned_r, 1) == b"1"
        os.close(returned_r)
        captured.seek(0)
        text = captured.read().decode(errors="replace")
    code, crash = _outcome(status)
    return code, crash, returned and crash is None, text
