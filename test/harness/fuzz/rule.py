"""The rule every case must obey (the package docstring states it), and
the violations already reported."""

from __future__ import annotations

import dataclasses
import os
import re
from typing import Optional

import numpy as np

from .cases import Case
from .tools import MAX_CHARS, MAX_LINES, TIMEOUT


@dataclasses.dataclass
class Result:
    case: Case
    cmd: list[str]
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    out_files: list[str]
    violations: list[str]

    @property
    def ok(self) -> bool:
        return not self.violations

    def report(self, seed: int) -> str:
        c = self.case
        lines = [f"MDC_FUZZ_SEED={seed} case {c.index} ({c.tool}): {c.what}",
                 f"reproduce: python test/e2e/fuzz.py show --seed {seed} --index {c.index}",
                 "violations: " + "; ".join(self.violations),
                 f"command: {' '.join(self.cmd)}",
                 f"exit status {self.returncode} after {self.seconds:.1f}s; output dir: {self.out_files}",
                 "--- stderr (first 40 lines) ---", *self.stderr.splitlines()[:40],
                 "--- stdout (first 10 lines) ---", *self.stdout.splitlines()[:10]]
        return "\n".join(lines)


WARNING = re.compile(r"^(\S+: )?warning: |^\S+:\d+:\d+: warning: ")
# A tool's note on how it took a flag comes when the flag is taken, so
# before a later error's line (mdc-run --trace_execution).
NOTE = re.compile(r"^(mdc-compile|mdc-opt|mdc-run): note: ")
FIRST_LINE = re.compile(r"^(mdc-compile: error: |mdc-opt: error: |mdc-run: error: |\S.*?:\d+:\d+: error: )")
INTERNAL = re.compile(r"^(mdc-compile|mdc-opt|mdc-run): internal error: ")


def check(case: Case, returncode: int, stdout: str, stderr: str, outdir: str) -> tuple[list[str], list[str]]:
    """The rule. -> (violations, files left in the output directory)."""
    v = []
    text = stdout + stderr
    if "Traceback (most recent call last)" in text:
        v.append("Python traceback")
    if returncode == -999:
        v.append(f"hang: no exit within {TIMEOUT:.0f}s")
    elif returncode < 0:
        v.append(f"killed by signal {-returncode}")
    left = []
    for base, _, files in os.walk(outdir):
        left += [os.path.relpath(os.path.join(base, f), outdir) for f in files]
    left.sort()
    if returncode == 0:
        expected = [case.output] if case.output else []
        extra = [f for f in left if f not in expected and not f.startswith("stages/")]
        if extra:
            v.append(f"unexpected files in the output directory: {extra}")
        for f in expected:
            if f not in left:
                v.append(f"exit 0 but no {f}")
            else:
                bad = _incomplete(os.path.join(outdir, f))
                if bad:
                    v.append(f"{f} is incomplete: {bad}")
                elif stat_mode_problem(os.path.join(outdir, f)):
                    v.append(stat_mode_problem(os.path.join(outdir, f)))
    elif returncode > 0:
        partial = [f for f in left if not f.startswith("stages/")]
        if partial:
            v.append(f"failed (exit {returncode}) but left {partial}")
        msg = [line for line in stderr.splitlines() if line.strip()]
        if not msg:
            msg = [line for line in stdout.splitlines() if line.strip()]
        first = next((line for line in msg if not WARNING.match(line) and not NOTE.match(line)), "")
        if not msg:
            v.append("failed with no message")
        elif INTERNAL.match(first):
            v.append(f"internal error (a bug in mdc): {first[:200]!r}")
        elif not FIRST_LINE.match(first):
            v.append(f"first line does not name the problem: {first[:200]!r}")
        if len(msg) > MAX_LINES or len(stderr) > MAX_CHARS:
            v.append(f"message too long: {len(msg)} lines, {len(stderr)} characters")
    return v, left


def stat_mode_problem(path: str) -> Optional[str]:
    """An output should get the mode any new file gets (0666 & ~umask).
    Checked only when MDC_FUZZ_CHECK_MODE=1: mdc-compile's outputs are 0600
    (test/lit/pending/output_file_mode.test)."""
    if os.environ.get("MDC_FUZZ_CHECK_MODE") != "1":
        return None
    umask = os.umask(0)
    os.umask(umask)
    mode = os.stat(path).st_mode & 0o777
    want = 0o666 & ~umask
    return None if mode == want else f"{os.path.basename(path)} has mode {mode:o}, not {want:o}"


def _incomplete(path: str) -> Optional[str]:
    if os.path.getsize(path) == 0:
        return "empty"
    if path.endswith(".vmfb"):
        try:
            import iree.runtime as rt

            rt.VmModule.mmap(rt.VmInstance(), path)
        except Exception as e:  # noqa: BLE001 - any load failure means a bad file
            return f"IREE cannot load it: {str(e)[:200]}"
    elif path.endswith(".npy"):
        try:
            np.load(path, allow_pickle=False)
        except Exception as e:  # noqa: BLE001
            return f"numpy cannot read it: {e}"
    elif path.endswith(".mlir"):
        with open(path, "rb") as f:
            data = f.read()
        if not data.rstrip().endswith(b"}"):
            return "IR does not end with a closing brace"
    return None


# Violations already reported, each with its pending lit test: test_fuzz.py
# marks them xfail instead of failing. Remove an entry when its test moves to
# test/lit/regress/.
# Violations already reported, each with its XFAIL test in test/lit/pending:
# (pending test, tool, regex on the stderr, regex on the case description).
# Empty: every violation found so far is fixed (test/lit/regress).
KNOWN: list = []


def known_issue(res: "Result") -> Optional[str]:
    for test, tool_name, err, what in KNOWN:
        if res.case.tool != tool_name:
            continue
        if err and not re.search(err, res.stderr):
            continue
        if what and not (re.search(what, res.case.what)
                         and any(v.startswith(("killed by signal", "hang")) for v in res.violations)):
            continue
        return test
    return None
