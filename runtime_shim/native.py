"""Modules the in-process runtime cannot open, run by stock iree-run-module.

IREE 3.13's Python runtime cannot open a Vulkan device beside another
device (devices.create_hal_module says why); the native ``iree-run-module``
that ships in the same iree-base-runtime wheel can. It allocates every
argument on its first ``--device`` and reads every result back with that
device's queue, so ``load`` and ``mdc-run`` call the host twin ``@F$host``
that mdc-compile adds to a function with values on a device the CPU cannot
reach (its manifest's ``host_entry_points``): the same function with every
tensor on the local ``host`` device, whose runtime device goes first. The
twin's moves to and from the GPU are crossings mdc-compile staged.

Each call is one run of iree-run-module: numpy arrays in and out through
.npy files in a private temporary directory. No value stays on a device
between calls, so ``Function.place`` and ``--benchmark`` are not offered
here.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from typing import Optional, Sequence

import numpy as np

from . import devices as dev
from . import values
from .errors import ShimError
from .manifest import Manifest, Signature


def iree_run_module() -> str:
    """The iree-run-module executable of the installed runtime wheel."""
    from iree._runtime import libs

    path = os.path.join(libs.library_path, "iree-run-module")
    if not os.access(path, os.X_OK):
        raise ShimError(f"this iree-base-runtime has no iree-run-module ({path}), which runs "
                        "modules the Python runtime cannot open")
    return path


def entry_point(manifest: Optional[Manifest], signatures: dict[str, Signature], function: str,
                binding: dict[str, int], uris: Sequence[str]) -> tuple[str, list[str]]:
    """(VM function to call, runtime devices in the order to give them) for
    calling @function with every value in host memory."""
    twin = manifest.host_entry_point(function) if manifest is not None else None
    name = twin or function
    if twin is not None:
        first = binding[manifest.host]
    else:
        signature = signatures[function]
        places = {v.affinity or (manifest.default_device if manifest else None)
                  for v in signature.args + signature.results if v.is_tensor}
        foreign = sorted(p for p in places if p is not None and p in binding
                         and not dev.is_local(uris[binding[p]]))
        if foreign:
            raise ShimError(
                f"@{function} declares values on {', '.join(foreign)} "
                f"({', '.join(uris[binding[p]] for p in foreign)}), which stock iree-run-module cannot "
                "place beside another device, and the module has no host entry point for it: "
                "compile it again without --no-host-entry-points")
        first = next((i for i, u in enumerate(uris) if dev.is_local(u)), 0)
    order = [uris[first]] + [u for i, u in enumerate(uris) if i != first]
    return name, order


def run(path: str, function: str, devices: Sequence[str], inputs: Sequence[str],
        outputs: Sequence[str], flags: Sequence[str] = (), timeout_s: Optional[float] = None
        ) -> subprocess.CompletedProcess:
    """iree-run-module on ``function`` with ``inputs`` and ``outputs`` as
    its own flags take them; raises RuntimeError (one line) when it fails."""
    cmd = [iree_run_module(), f"--module={path}", f"--function={function}",
           *[f"--device={d}" for d in devices], *flags,
           *[f"--input={i}" for i in inputs], *[f"--output={o}" for o in outputs]]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        raise TimeoutError(f"iree-run-module did not finish @{function} within {timeout_s:g} s") from None
    if r.returncode:
        lines = [line.strip() for line in r.stderr.splitlines() if line.strip()]
        why = next((line for line in lines if re.search(r"[A-Z_]+;", line)), lines[0] if lines else "")
        raise RuntimeError(f"iree-run-module failed on @{function} (exit {r.returncode}): {why[:400]}")
    return r


class FunctionTable:
    """Looking a module's functions up by name, as ``m.function("f")``,
    ``m["f"]`` or ``m.f``; ``function_names`` leaves out the host twins
    mdc-compile adds, which still answer to their names. A module class
    sets ``path``, ``signatures``, ``manifest`` and ``_functions``, and
    makes its function objects in ``_new_function``."""

    @property
    def function_names(self) -> list[str]:
        return user_functions(self.signatures, self.manifest)

    def function(self, name: str):
        if name not in self.signatures:
            raise ShimError(f"unknown function '{name}' (module exports: "
                            f"{', '.join(self.function_names) or 'nothing'})")
        if name not in self._functions:
            self._functions[name] = self._new_function(name)
        return self._functions[name]

    def __getitem__(self, name: str):
        return self.function(name)

    def __getattr__(self, name: str):
        if name.startswith("_") or "signatures" not in self.__dict__:
            raise AttributeError(name)
        if name not in self.signatures:
            raise AttributeError(f"module {self.path} has no function '{name}'")
        return self.function(name)


class NativeModule(FunctionTable):
    """What ``load`` returns for devices the Python runtime cannot open
    together: the same functions, each call a run of iree-run-module."""

    def __init__(self, path: str, uris: Sequence[str], manifest: Optional[Manifest],
                 signatures: dict[str, Signature], binding: dict[str, int], reason: str,
                 flags: Sequence[str] = (), timeout_s: Optional[float] = 300.0):
        self.path, self.uris, self.manifest = path, list(uris), manifest
        self.signatures, self.binding, self.reason = signatures, binding, reason
        self.flags, self.timeout_s = list(flags), timeout_s
        self._functions: dict[str, NativeFunction] = {}

    def _new_function(self, name: str) -> "NativeFunction":
        return NativeFunction(self, name)

    def describe(self) -> str:
        lines = [f"module {self.path} on {', '.join(self.uris)} (run by iree-run-module: {self.reason})"]
        lines += [f"  {self.signatures[n].text}" for n in self.function_names]
        return "\n".join(lines)

    def close(self) -> None:
        self._functions.clear()

    def __enter__(self) -> "NativeModule":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<runtime_shim.NativeModule {self.path} on {self.uris}>"


def user_functions(signatures: dict[str, Signature], manifest: Optional[Manifest]) -> list[str]:
    """The module's functions less the host twins mdc-compile added."""
    twins = {t for _, t in manifest.host_entry_points} if manifest is not None else set()
    return [n for n in signatures if n not in twins]


class NativeFunction:
    def __init__(self, module: NativeModule, name: str):
        self.module, self.name = module, name
        self.signature = module.signatures[name]
        self._entry, self._devices = entry_point(module.manifest, module.signatures, name,
                                                 module.binding, module.uris)
        for v in self.signature.args + self.signature.results:
            if not (v.is_tensor or v.type in values.SCALAR_TYPES):
                raise ShimError(f"@{name}: %{v.name} has type {v.type}, which a module run by "
                                "iree-run-module cannot take or return here")
        if any(not v.is_tensor for v in self.signature.results):
            raise ShimError(f"@{name} returns a scalar, which a module run by iree-run-module "
                            "cannot return here")

    def __repr__(self) -> str:
        return f"<runtime_shim.NativeFunction {self.signature.text}>"

    def __call__(self, *args):
        results = [array for array, _ in self.call(args)]
        if len(results) == 1:
            return results[0]
        return tuple(results) if results else None

    def prepare(self, args: Sequence) -> list[tuple[object, object]]:
        sig = self.signature
        if len(args) != len(sig.args):
            raise ShimError(f"@{sig.name} takes {len(sig.args)} input(s), {len(args)} given")
        out = []
        for i, (value, arg) in enumerate(zip(sig.args, args)):
            where = f"@{sig.name} input {i} (%{value.name}: {value.type})"
            if not value.is_tensor:
                out.append((values.check_scalar(arg, value.type, where), value.type))
                continue
            out.append(values.checked_tensor(arg, value, where))
        return out

    def call(self, args: Sequence, *, prepared: bool = False) -> list[tuple[object, object]]:
        inputs = args if prepared else self.prepare(args)
        m = self.module
        with tempfile.TemporaryDirectory(prefix="mdc-run-") as work:
            flags = []
            for i, (arg, kind) in enumerate(inputs):
                if isinstance(kind, str):
                    flags.append(str(int(arg) if not kind.startswith("f") else float(arg)))
                    continue
                path = os.path.join(work, f"in{i}.npy")
                np.save(path, np.ascontiguousarray(arg))
                flags.append(f"@{path}")
            outs = [os.path.join(work, f"out{k}.npy") for k in range(len(self.signature.results))]
            run(m.path, self._entry, self._devices, flags, [f"@{p}" for p in outs], m.flags, m.timeout_s)
            results = []
            for value, path in zip(self.signature.results, outs):
                array = np.load(path)
                results.append((array, values.element_type(value.type.element)))
            return results
