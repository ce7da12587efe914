"""VM modules loaded beside the program, as iree-run-module loads them.

* Dependencies: earlier ``--module`` flags (``load(..., dependencies=[...])``),
  loaded in order before the program, so that the program (the last
  module) can call the functions they export (``func.func private
  @lib.f(...)`` in the program, ``module @lib`` in the dependency), as
  iree-run-module resolves them. A dependency is checked against its
  mdc-compile seal like the program.
* Parameters: ``--parameters=[SCOPE=]FILE`` (an .irpa, .gguf or
  .safetensors file), one index per scope, every file of a scope in the
  order given, and one ``io_parameters`` module over them, as
  iree-run-module builds it.
"""

from __future__ import annotations

import os
from typing import Sequence

import iree.runtime as rt

from .errors import ShimError, short
from .manifest import check_seal


def load_dependencies(instance: rt.VmInstance, paths: Sequence[str]) -> list[rt.VmModule]:
    """The VM modules of ``paths``, in order."""
    modules = []
    for path in paths:
        path = os.fspath(path)
        if not os.path.isfile(path):
            raise ShimError(f"module file not found: {path}")
        check_seal(path)
        try:
            modules.append(rt.VmModule.mmap(instance, path))
        except Exception as e:  # IREE maps statuses to several types (IndexError, ...)
            raise ShimError(f"cannot load module {path}: {short(e)}") from None
    return modules


def split_parameters(spec: str) -> tuple[str, str]:
    """``SCOPE=FILE`` or ``FILE`` (the anonymous scope '') -> (scope, file),
    split at the first '=' as iree-run-module splits it."""
    scope, sep, path = spec.partition("=")
    return (scope, path) if sep else ("", spec)


def parameter_modules(instance: rt.VmInstance, specs: Sequence[str],
                      preload: bool = False) -> list[rt.VmModule]:
    """[] without parameters, else the one io_parameters module over every
    scope's index: the files mapped, or read into memory (``preload``)."""
    if not specs:
        return []
    indices: dict[str, rt.ParameterIndex] = {}
    for spec in specs:
        scope, path = split_parameters(spec)
        if not os.path.isfile(path):
            raise ShimError(f"--parameters={spec}: no such file: {path}")
        index = indices.setdefault(scope, rt.ParameterIndex())
        try:
            index.load(path, mmap=not preload)
        except Exception as e:  # IREE statuses arrive as several types
            raise ShimError(f"--parameters={spec}: cannot read {path} as a parameter file "
                            f"(.irpa, .gguf or .safetensors): {short(e)}") from None
    providers = [index.create_provider(scope=scope) for scope, index in indices.items()]
    return [rt.create_io_parameters_module(instance, *providers)]


def statistics_text(devices: Sequence[rt.HalDevice]) -> str:
    """Each device's allocator statistics, as iree-run-module
    --print_statistics prints them."""
    parts = []
    for device in devices:
        parts.append(f"Device: {device!r}\n[[ iree_hal_allocator_t memory statistics ]]\n"
                     f"{device.allocator.formatted_statistics}\n")
    return "".join(parts)
