"""Child processes: a plain captured run, and runs that cannot take the
machine down (an address-space limit, and a timeout that kills the whole
process group: progen's compiles and runs, fuzz's tool calls)."""

from __future__ import annotations

import os
import shutil
import subprocess


def limited(cmd: list[str], gigabytes: float) -> list[str]:
    """`cmd` under an address-space limit (ulimit -v in a shell that then
    execs it: preexec_fn is not safe with the worker threads)."""
    if gigabytes <= 0 or not shutil.which("bash"):
        return cmd
    return ["bash", "-c", f'ulimit -v {int(gigabytes * 2 ** 20)} && exec "$@"', "limited", *cmd]


def run_killing_group(cmd: list[str], timeout: float, text: bool = True, **kw) -> subprocess.CompletedProcess:
    """subprocess.run, but a timeout kills the whole process group (mdc-compile
    forks a child that would outlive its parent). returncode -999: timed out."""
    import signal

    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=text,
                         start_new_session=True, **kw)
    try:
        out, err = p.communicate(timeout=timeout)
        return subprocess.CompletedProcess(cmd, p.returncode, out, err)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out, err = p.communicate()
        note = f"TIMEOUT after {timeout:.0f}s"
        return subprocess.CompletedProcess(cmd, -999, out, (err + "\n" + note) if text else err + note.encode())


def run_captured(cmd, **kw) -> subprocess.CompletedProcess:
    """subprocess.run with its output captured as text."""
    return subprocess.run(cmd, capture_output=True, text=True, **kw)
