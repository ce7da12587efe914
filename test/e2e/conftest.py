"""Shared fixtures for the end-to-end tests: building modules and running
command-line tools."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

# What every CPU test module is built for. `host` is fine here: these
# modules are built and run on the same machine.
CPU_FLAGS = ("--iree-hal-local-target-device-backends=llvm-cpu",
             "--iree-llvmcpu-target-cpu=host")
TWO_LOCAL = {"device_a": "local[0]", "device_b": "local[1]"}


def compile_mlir(source: Path, output: Path, devices: dict[str, str], *,
                 async_external: bool = False, flags=CPU_FLAGS) -> None:
    """The one place test modules are compiled.

    Stock iree-compile today; switch to mdc-compile (`--device=a=local[0]
    ... --link=a:b=staged`) here when it exists.
    """
    cmd = ["iree-compile", str(source), "-o", str(output), *flags,
           *(f"--iree-hal-target-device={name}={spec}" for name, spec in devices.items())]
    if async_external:
        cmd.append("--iree-execution-model=async-external")
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        pytest.fail(f"{' '.join(cmd)} failed:\n{proc.stderr[-4000:]}")


@pytest.fixture(scope="session")
def build_vmfb(tmp_path_factory):
    """build_vmfb(name, mlir_text, devices=TWO_LOCAL, async_external=False,
    flags=CPU_FLAGS) -> path of the .vmfb, built once per session."""
    root = tmp_path_factory.mktemp("vmfb")
    built: dict[tuple, Path] = {}

    def build(name: str, mlir: str, devices=None, *, async_external: bool = False,
              flags=CPU_FLAGS) -> Path:
        devices = dict(TWO_LOCAL if devices is None else devices)
        key = (name, mlir, tuple(devices.items()), async_external, tuple(flags))
        if key not in built:
            digest = hashlib.sha1(repr(key).encode()).hexdigest()[:8]
            source = root / f"{name}-{digest}.mlir"
            source.write_text(mlir)
            output = root / f"{name}-{digest}{'-ext' if async_external else ''}.vmfb"
            compile_mlir(source, output, devices, async_external=async_external, flags=flags)
            built[key] = output
        return built[key]

    return build


@pytest.fixture(scope="session")
def run_tool():
    """run_tool(argv, timeout=120) -> CompletedProcess, text mode, run from the
    repository root with the repository importable."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))

    def run(argv, timeout: float = 120, cwd=REPO):
        return subprocess.run([str(a) for a in argv], capture_output=True, text=True,
                              timeout=timeout, cwd=cwd, env=env)

    return run


@pytest.fixture(scope="session")
def mdc_run(run_tool):
    """mdc_run(*flags) runs `python -m runtime_shim` (what `mdc-run` runs)."""
    def run(*flags, timeout: float = 120, cwd=REPO):
        return run_tool([sys.executable, "-m", "runtime_shim", *flags], timeout=timeout, cwd=cwd)

    return run
