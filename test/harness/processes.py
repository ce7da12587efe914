"""Child processes: a plain captured run, and runs that cannot take the
machine down (an address-space limit, and a timeout that kills the whole
process group: progen's compiles and runs, fuzz's tool calls), and a
watched run that ends a hung child within a bound and says where it hung
(``run_watched``: the e2e ``run_tool`` fixture and close_stress.py)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import threading
import time


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


# How long a child given SIGABRT gets to write its stacks before SIGKILL.
DUMP_GRACE_S = 5.0
HUNG = -998  # returncode of a run_watched child that was ended as hung


def run_watched(cmd, timeout: float, quiet: float | None = None, *, env=None, cwd=None) -> subprocess.CompletedProcess:
    """subprocess.run (text, output captured, its own process group) that
    ends a child taken as hung: one running past ``timeout`` seconds, or
    writing nothing to stdout or stderr for ``quiet`` seconds (None: no such
    bound). A hung child is sent SIGABRT first: a Python child runs with
    PYTHONFAULTHANDLER=1, so it writes every thread's Python stack to
    stderr, even when stuck in C code; after DUMP_GRACE_S the whole group
    is killed. returncode HUNG then, and stderr ends with a line saying
    which bound was passed."""
    env = dict(os.environ if env is None else env, PYTHONFAULTHANDLER="1")
    cmd = [str(c) for c in cmd]
    if shutil.which("bash"):  # no core file from the SIGABRT
        cmd = ["bash", "-c", 'ulimit -c 0 2>/dev/null; exec "$@"', "watched", *cmd]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=env, cwd=cwd, start_new_session=True)
    chunks: dict[str, list[str]] = {"out": [], "err": []}
    last = [time.monotonic()]

    def pump(stream, into):
        for line in iter(stream.readline, ""):
            into.append(line)
            last[0] = time.monotonic()
        stream.close()

    readers = [threading.Thread(target=pump, args=(p.stdout, chunks["out"]), daemon=True),
               threading.Thread(target=pump, args=(p.stderr, chunks["err"]), daemon=True)]
    for r in readers:
        r.start()
    began = time.monotonic()
    why = None
    while p.poll() is None:
        now = time.monotonic()
        if now - began > timeout:
            why = f"HUNG: still running after {timeout:.0f} s"
        elif quiet is not None and now - last[0] > quiet:
            why = f"HUNG: no output for {quiet:.0f} s (after {now - began:.0f} s)"
        if why:
            _end_group(p)
            break
        time.sleep(0.1)
    for r in readers:
        r.join(timeout=DUMP_GRACE_S)
    out, err = "".join(chunks["out"]), "".join(chunks["err"])
    if why:
        return subprocess.CompletedProcess(p.args, HUNG, out, f"{err}\n{why}; its stacks, if it could "
                                           "write them, are above")
    return subprocess.CompletedProcess(p.args, p.returncode, out, err)


def _end_group(p: subprocess.Popen) -> None:
    """SIGABRT to ``p``'s group (a Python child dumps its stacks), then SIGKILL."""
    for sig, grace in ((signal.SIGABRT, DUMP_GRACE_S), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(p.pid, sig)
        except ProcessLookupError:
            return
        try:
            p.wait(timeout=grace)
            if sig == signal.SIGABRT:  # the group's other members may live on
                os.killpg(p.pid, signal.SIGKILL)
            return
        except subprocess.TimeoutExpired:
            continue
        except ProcessLookupError:
            return
