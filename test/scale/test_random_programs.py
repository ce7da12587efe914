"""Differential testing with random multi-device programs (harness.progen).

Each run generates MDC_PROGEN_COUNT programs (default 120) from the seed
MDC_PROGEN_SEED (default: the time; printed at the start and in the summary,
and in every failure with the program text). Each program is compiled by
mdc-compile with staging forced between every pair of its local devices
(odd indices --staging=copy, the others emplace, index 2 mod 4 with
--staging-pieces=3: progen.staging_of) and
run on stock iree-run-module (mdc-run when an argument lives on device_b or
device_c, and for every fourth program), then compared bit for bit with
stock IREE compiled for all-local devices (with mdc-compile's CPU code
defaults, data tiling and ukernels: harness.progen.commands; without them
where mdc-compile dropped them for IREE's sake), and stock IREE with the numpy
reference within a per-element rounding-error bound. Programs are compiled
many to a module (MDC_PROGEN_BATCH, default 12) on MDC_PROGEN_JOBS workers
(default 2).

The same programs are then checked on a device with memory of its own
(progen's "vulkan" target, marked ``vulkan``): device_b on Vulkan (lavapipe
on a CPU-only machine) under the default memory model, every module
compiled and passed by mdc's verifier, and run on stock iree-run-module
with local-task + vulkan where IREE 3.13 lets it run (no result and no
argument on device_b: progen.mdc_runtime says why not); the
others are reported as skipped, with the reason and a count in the summary.
mdc's numbers are compared with numpy's and with stock IREE's on all-local
devices (within the rounding bound: other codegen). MDC_PROGEN_TARGETS
(default "local,vulkan") picks the targets.

Failures where stock IREE itself fails (compile, run, or disagrees with the
reference) are IREE's or the generator's, not mdc's, once mdc's own numbers
agree with numpy's, or on Vulkan are the wrong numbers stock IREE gives
with every device on Vulkan: they are reported as xfail with the
whole report, or fail with MDC_PROGEN_STRICT=1. Failures that
match an mdc bug already reported (progen.KNOWN, each with its pending lit
test) are xfail too.

Reproduce one program outside pytest:
    python test/e2e/progen.py check --seed SEED --index I
    python test/e2e/progen.py minimize --seed SEED --index I
"""

from __future__ import annotations

import collections
import os
import time

import pytest

from harness import progen

SEED = progen.default_seed()
COUNT = int(os.environ.get("MDC_PROGEN_COUNT", "120"))
JOBS = int(os.environ.get("MDC_PROGEN_JOBS", "2"))
BATCH = int(os.environ.get("MDC_PROGEN_BATCH", "12"))
STRICT = os.environ.get("MDC_PROGEN_STRICT") == "1"
TARGETS = [t for t in os.environ.get("MDC_PROGEN_TARGETS", "local,vulkan").split(",") if t]
# Not mdc's fault: stock IREE fails too, or disagrees with the reference.
STOCK_SIDE = ("stock-compile-failed", "stock-run-failed", "stock-vs-numpy-mismatch", "stock-vulkan-narrow",
              "stock-vulkan-compile-failed", "stock-vulkan-mismatch")

PROGRAMS = [progen.generate(SEED, i) for i in range(COUNT)]


class _Summary:
    def __init__(self, target: str):
        self.target = target
        self.lines: list[str] = []

    def pytest_terminal_summary(self, terminalreporter):
        terminalreporter.section(f"random multi-device programs (progen, target {self.target})")
        for line in self.lines:
            terminalreporter.write_line(line)


def _check(request, tmp_path_factory, target: str) -> dict:
    summary = _Summary(target)
    request.config.pluginmanager.register(summary, f"mdc-progen-summary-{target}")
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    head = (f"MDC_PROGEN_SEED={SEED} (set MDC_PROGEN_SEED to repeat), target {target}: {COUNT} programs, "
            f"batches of {BATCH}, {JOBS} workers")
    if reporter:
        reporter.write_line("")
        reporter.write_line(head)
    start = time.time()
    work = str(tmp_path_factory.mktemp(f"progen-{target}"))
    results = progen.check_all(PROGRAMS, work, jobs=JOBS, batch_size=BATCH, target=target)
    elapsed = time.time() - start
    by_status = collections.Counter(o.status for o in results)
    features = collections.Counter(f for p in PROGRAMS for f in p.features)
    runners = collections.Counter(p.runner for p in PROGRAMS)
    notes = collections.Counter(n for o in results for n in o.notes)
    summary.lines += [head, f"checked in {elapsed:.0f}s: " + ", ".join(f"{n} {s}" for s, n in by_status.most_common()),
                      "features: " + ", ".join(f"{f} {n}" for f, n in sorted(features.items()))]
    if target == "local":
        summary.lines.append("staged runs: " + ", ".join(f"{n} on {r}" for r, n in runners.most_common()))
    models = collections.Counter(o.program.model for o in results if o.ok)
    summary.lines.append("ran and matched, by execution model: "
                         + ", ".join(f"{n} {m}" for m, n in sorted(models.items())))
    summary.lines += [f"note ({n} programs): {text}" for text, n in notes.items()]
    summary.lines += [f"not ok: index {o.program.index}: {o.status}"
                      + (f" [known: {progen.known_issue(o)}]" if progen.known_issue(o) else "")
                      for o in results if not o.ok]
    return {o.program.index: o for o in results}


@pytest.fixture(scope="session")
def outcomes(request, tmp_path_factory):
    return _check(request, tmp_path_factory, "local")


@pytest.fixture(scope="session")
def vulkan_outcomes(request, tmp_path_factory):
    return _check(request, tmp_path_factory, "vulkan")


def test_generation_is_deterministic():
    """A seed means the same programs, inputs and references everywhere."""
    for i in range(0, COUNT, max(COUNT // 10, 1)):
        again = progen.generate(SEED, i)
        assert again.text() == PROGRAMS[i].text(), f"MDC_PROGEN_SEED={SEED} index {i}"
        for a, b in zip(again.inputs(), PROGRAMS[i].inputs()):
            assert str(a) == str(b)


def test_generator_covers_the_features():
    """The programs of a run together use every kind of op, crossing and
    type the generator knows (with 120 programs the rarest, arg_on_c, appears about 8 times)."""
    if COUNT < 100:
        pytest.skip("coverage is only asserted for runs of 100 programs or more")
    seen = collections.Counter(f for p in PROGRAMS for f in p.features)
    models = collections.Counter(p.model for p in PROGRAMS)
    wanted = ["matmul", "reduce", "transpose", "collapse", "expand", "broadcast", "convert", "cast", "loop",
              "loop_transient", "loop_external", "loop_dynamic_count", "dynamic", "transfer", "implicit_crossing",
              "constant", "ew_arith", "ew_generic", "arg_on_b", "arg_on_c", "result_on_b", "result_on_c",
              "result_elsewhere", "2dev", "3dev", "f32", "f16", "i32", "i8"]
    missing = [f for f in wanted if seen[f] == 0]
    assert not missing, f"MDC_PROGEN_SEED={SEED}: no program has {missing}"
    assert models["async-external"] and models["async-internal"]


def _judge(o) -> None:
    if o.ok:
        return
    if o.status.startswith(STOCK_SIDE) and not STRICT:
        pytest.xfail(o.report())
    known = progen.known_issue(o)
    if known:
        pytest.xfail(f"known mdc bug, {known}:\n" + o.report())
    pytest.fail(o.report(), pytrace=False)


@pytest.mark.skipif("local" not in TARGETS, reason="MDC_PROGEN_TARGETS leaves out local")
@pytest.mark.parametrize("index", range(COUNT), ids=[f"p{i}" for i in range(COUNT)])
def test_random_program(index, outcomes):
    _judge(outcomes[index])


@pytest.mark.vulkan
@pytest.mark.skipif("vulkan" not in TARGETS, reason="MDC_PROGEN_TARGETS leaves out vulkan")
@pytest.mark.parametrize("index", range(COUNT), ids=[f"p{i}" for i in range(COUNT)])
def test_random_program_on_vulkan(index, vulkan_outcomes):
    _judge(vulkan_outcomes[index])
