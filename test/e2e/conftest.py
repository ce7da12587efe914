"""Shared fixtures for the end-to-end tests: building modules and running
command-line tools."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.processes import HUNG, run_watched

REPO = Path(__file__).resolve().parents[2]

BIN = Path(sys.executable).parent

# The flags every CPU test module is built with. mdc-compile already
# defaults to llvm-cpu for local devices; the target CPU is passed through to
# IREE. `host` is fine here: these modules are built and run on the same
# machine.
CPU_FLAGS = ("--iree-llvmcpu-target-cpu=host",)


def _run_compiler(cmd: list[str]) -> None:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=REPO, env=env)
    if proc.returncode != 0:
        pytest.fail(f"{' '.join(cmd)} failed:\n{proc.stderr[-4000:]}")


def compile_mlir(source: Path, output: Path, devices, *, links=(),
                 async_external: bool = False, flags=CPU_FLAGS) -> None:
    """The one place test modules are compiled: with mdc-compile (run as
    `python -m mdc.pipeline`, so this checkout's code), which writes the
    mdc.manifest that runtime_shim reads.

    devices: `--device` values, e.g. ("a=local[0]", "b=local[1]") (`a` is
    short for the program's @device_a); links: `--link` values, e.g.
    ("a:b=staged",); flags: passed on to IREE.
    """
    _run_compiler([sys.executable, "-m", "mdc.pipeline", str(source), "-o", str(output),
                   *(f"--device={d}" for d in devices), *(f"--link={link}" for link in links),
                   *flags, *(["--iree-execution-model=async-external"] if async_external else [])])


# Stock iree-compile needs the local backend named; mdc-compile defaults it.
STOCK_CPU_FLAGS = ("--iree-hal-local-target-device-backends=llvm-cpu", *CPU_FLAGS)


def compile_mlir_with_stock_iree(source: Path, output: Path, devices: dict[str, str], *,
                                 async_external: bool = False, flags=STOCK_CPU_FLAGS) -> None:
    """Stock iree-compile: a module with no mdc.manifest and no seal, for the
    tests of what runtime_shim does with one. devices: {symbol: spec}."""
    tool = BIN / "iree-compile"
    _run_compiler([str(tool) if tool.exists() else (shutil.which("iree-compile") or "iree-compile"),
                   str(source), "-o", str(output), *flags,
                   *(f"--iree-hal-target-device={name}={spec}" for name, spec in devices.items()),
                   *(["--iree-execution-model=async-external"] if async_external else [])])


def _session_builder(tmp_path_factory, stem: str, compile_one):
    root = tmp_path_factory.mktemp(stem)
    built: dict[str, Path] = {}

    def build(name: str, mlir: str, devices, **options) -> Path:
        key = repr((name, mlir, devices, sorted(options.items())))
        if key not in built:
            digest = hashlib.sha1(key.encode()).hexdigest()[:8]
            source = root / f"{name}-{digest}.mlir"
            source.write_text(mlir)
            output = root / f"{name}-{digest}{'-ext' if options.get('async_external') else ''}.vmfb"
            compile_one(source, output, devices, **options)
            built[key] = output
        return built[key]

    return build


@pytest.fixture(scope="session")
def build_vmfb(tmp_path_factory):
    """build_vmfb(name, mlir_text, devices, links=(), async_external=False,
    flags=CPU_FLAGS) -> path of the mdc-compiled .vmfb, built once per
    session (compile_mlir says what the arguments are)."""
    build = _session_builder(tmp_path_factory, "vmfb", compile_mlir)

    def build_mdc(name: str, mlir: str, devices, *, links=(), async_external: bool = False,
                  flags=CPU_FLAGS) -> Path:
        return build(name, mlir, tuple(devices), links=tuple(links), async_external=async_external,
                     flags=tuple(flags))

    return build_mdc


@pytest.fixture(scope="session")
def build_stock_vmfb(tmp_path_factory):
    """build_stock_vmfb(name, mlir_text, devices, async_external=False,
    flags=STOCK_CPU_FLAGS) -> path of a .vmfb built by stock iree-compile,
    once per session; devices: {symbol: spec}."""
    build = _session_builder(tmp_path_factory, "stock_vmfb", compile_mlir_with_stock_iree)

    def build_stock(name: str, mlir: str, devices: dict[str, str], *, async_external: bool = False,
                    flags=STOCK_CPU_FLAGS) -> Path:
        return build(name, mlir, dict(devices), async_external=async_external, flags=tuple(flags))

    return build_stock


@pytest.fixture(scope="session")
def run_tool():
    """run_tool(argv, timeout=120, quiet=None) -> CompletedProcess, text mode,
    run from the repository root with the repository importable. A child
    still running after ``timeout`` seconds, or silent on stdout and stderr
    for ``quiet`` seconds, is taken as hung: it is made to write its Python
    stacks, killed with its process group, and the test fails with them
    (harness.processes.run_watched)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))

    def run(argv, timeout: float = 120, cwd=REPO, quiet: float | None = None):
        r = run_watched(argv, timeout, quiet, env=env, cwd=cwd)
        if r.returncode == HUNG:
            pytest.fail(f"{' '.join(str(a) for a in argv)} hung:\n{r.stdout[-2000:]}\n{r.stderr[-8000:]}",
                        pytrace=False)
        return r

    return run


@pytest.fixture(scope="session")
def mdc_run(run_tool):
    """mdc_run(*flags) runs `python -m mdc.runtime_shim` (what `mdc-run` runs)."""
    def run(*flags, timeout: float = 120, cwd=REPO):
        return run_tool([sys.executable, "-m", "mdc.runtime_shim", *flags], timeout=timeout, cwd=cwd)

    return run
