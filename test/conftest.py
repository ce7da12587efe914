"""Shared by test/e2e and test/scale: the Vulkan device the tests use when
there is one (lavapipe, Mesa's Vulkan on the CPU: a device with memory of
its own on a CPU-only machine).

Tests that need it carry ``@pytest.mark.vulkan``. Without a Vulkan device
they are skipped, and the run's summary says how many and why, in one line
that starts with WARNING: a skipped net must never pass silently.
scripts/test.sh installs lavapipe where it can and passes its verdict in
MDC_VULKAN ("lavapipe", or the reason there is none); run alone, pytest
asks the runtime itself.
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys

import pytest

_PROBE = "import iree.runtime as rt; rt.get_driver('vulkan').create_default_device(); print('ok')"


@functools.lru_cache(maxsize=None)
def vulkan_unavailable() -> str:
    """'' when a Vulkan device answers, else why not."""
    verdict = os.environ.get("MDC_VULKAN")
    if verdict:
        return "" if verdict == "lavapipe" else verdict
    try:
        r = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        return "creating a Vulkan device timed out"
    if r.returncode == 0 and r.stdout.strip() == "ok":
        return ""
    last = (r.stderr.strip().splitlines() or ["no output"])[-1]
    return f"no Vulkan device ({last[:160]}); apt-get install mesa-vulkan-drivers libvulkan1 gives lavapipe"


def pytest_configure(config):
    config.addinivalue_line("markers", "vulkan: needs a Vulkan device (lavapipe on a CPU-only machine)")


def pytest_collection_modifyitems(config, items):
    marked = [item for item in items if item.get_closest_marker("vulkan")]
    config._mdc_vulkan_tests = len(marked)
    why = vulkan_unavailable() if marked else ""
    if why:
        skip = pytest.mark.skip(reason=f"Vulkan: {why}")
        for item in marked:
            item.add_marker(skip)


def pytest_terminal_summary(terminalreporter, config):
    if not getattr(config, "_mdc_vulkan_tests", 0):
        return

    def vulkan_reports(kind):
        return {r.nodeid for r in terminalreporter.stats.get(kind, []) if "vulkan" in getattr(r, "keywords", {})}

    skipped = len(vulkan_reports("skipped"))
    why = vulkan_unavailable()
    if why:
        terminalreporter.write_line(f"WARNING: {skipped} Vulkan tests SKIPPED: {why}", red=True, bold=True)
        return
    count = skipped + len(set().union(*(vulkan_reports(k) for k in ("passed", "failed", "xfailed", "xpassed", "error"))))
    terminalreporter.write_line(
        f"Vulkan: {count} tests on a Vulkan device (lavapipe on a CPU-only machine): {count - skipped} ran, "
        f"{skipped} skipped" + (" (each skip says why; -rs lists them)" if skipped else ""),
        yellow=bool(skipped))
