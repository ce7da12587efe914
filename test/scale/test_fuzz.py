"""Fuzzing mdc-compile, mdc-opt and mdc-run with bad inputs (harness.fuzz).

MDC_FUZZ_COUNT cases (default 300) from the seed MDC_FUZZ_SEED (default: the
time; printed at the start, in the summary and in every failure), run on
MDC_FUZZ_JOBS workers (default 2). Every case must obey fuzz.check's rule: no
traceback, no hang, no crash signal, no partial output, and on failure a
non-zero exit with a short message whose first line names the problem.
Violations already reported (fuzz.KNOWN, each with its pending lit test)
are xfail.

Reproduce and shrink one case outside pytest:
    python test/e2e/fuzz.py show --seed SEED --index I
    python test/e2e/fuzz.py minimize --seed SEED --index I
"""

from __future__ import annotations

import collections
import os
import time

import pytest

from harness import fuzz

SEED = fuzz.default_seed()
COUNT = int(os.environ.get("MDC_FUZZ_COUNT", "300"))
JOBS = int(os.environ.get("MDC_FUZZ_JOBS", "2"))
CASES = fuzz.make_cases(SEED, COUNT)


class _Summary:
    def __init__(self):
        self.lines: list[str] = []

    def pytest_terminal_summary(self, terminalreporter):
        terminalreporter.section("fuzzing mdc's command lines")
        for line in self.lines:
            terminalreporter.write_line(line)


@pytest.fixture(scope="session")
def results(request, tmp_path_factory):
    summary = _Summary()
    request.config.pluginmanager.register(summary, "mdc-fuzz-summary")
    head = f"MDC_FUZZ_SEED={SEED} (set MDC_FUZZ_SEED to repeat): {COUNT} cases, {JOBS} workers"
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    if reporter:
        reporter.write_line("")
        reporter.write_line(head)
    start = time.time()
    out = fuzz.run_all(CASES, str(tmp_path_factory.mktemp("fuzz")), JOBS)
    elapsed = time.time() - start
    per_tool = collections.Counter((r.case.tool, "exit 0" if r.returncode == 0 else "failed") for r in out)
    slowest = max(out, key=lambda r: r.seconds)
    summary.lines += [head, f"ran in {elapsed:.0f}s; " + ", ".join(f"{t} {k}: {n}" for (t, k), n in sorted(per_tool.items())),
                      f"slowest case {slowest.case.index} ({slowest.case.tool}): {slowest.seconds:.1f}s"]
    summary.lines += [f"VIOLATION case {r.case.index} ({r.case.tool}): {'; '.join(r.violations)}"
                      + (f" [known: {fuzz.known_issue(r)}]" if fuzz.known_issue(r) else "")
                      for r in out if not r.ok]
    return {r.case.index: r for r in out}


def test_cases_are_deterministic():
    again = fuzz.make_cases(SEED, min(COUNT, 40))
    for a, b in zip(again, CASES):
        assert (a.tool, a.argv, a.files) == (b.tool, b.argv, b.files), f"MDC_FUZZ_SEED={SEED} case {a.index}"


def test_cases_cover_every_tool():
    if COUNT < 200:
        pytest.skip("coverage is only asserted for 200 cases or more")
    tools = collections.Counter(c.tool for c in CASES)
    assert all(tools[t] >= 20 for t in fuzz.TOOLS), tools


def test_run_cases_include_vulkan_modules():
    """mdc-run is fuzzed on local + Vulkan modules too (run in iree-run-module
    through their host entry points)."""
    if COUNT < 200:
        pytest.skip("coverage is only asserted for 200 cases or more")
    vulkan = [c for c in CASES if c.tool == "mdc-run" and c.what.split(",")[0].endswith("_vk")]
    assert len(vulkan) >= 10, len(vulkan)


@pytest.mark.parametrize("index", range(COUNT), ids=[f"c{c.index}-{c.tool}" for c in CASES])
def test_fuzz_case(index, results):
    r = results[index]
    if r.ok:
        return
    known = fuzz.known_issue(r)
    if known:
        pytest.xfail(f"known, {known}:\n" + r.report(SEED))
    pytest.fail(r.report(SEED), pytrace=False)
