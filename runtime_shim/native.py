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
from typing import Optional, Sequence

import numpy as np

from mdc.contract.manifest import kind_uses_host_memory

from . import devices as dev
from . import values
from .errors import ShimError, ShimTypeError
from .manifest import Manifest, Signature
from .module_api import FunctionAPI, FunctionTable


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
                f"@{function} has values on {', '.join(foreign)} "
                f"({', '.join(uris[binding[p]] for p in foreign)}), which stock iree-run-module cannot "
                f"place beside another device, and the module has no host entry point for it: "
                f"{_why_no_host_entry_point(manifest, signature)}")
        first = next((i for i, u in enumerate(uris) if dev.is_local(u)), 0)
    order = [uris[first]] + [u for i, u in enumerate(uris) if i != first]
    return name, order


def _why_no_host_entry_point(manifest: Optional[Manifest], signature: Signature) -> str:
    """Why a function has no host twin, as far as the module says: what is
    missing, never a guess at which mdc-compile made it (the manifest does
    not record that)."""
    if manifest is None:
        return "the module has no mdc manifest (compile it with mdc-compile)"
    if manifest.no_host_entry_points:
        return "compile it again without --no-host-entry-points"
    if manifest.host is None and not any(kind_uses_host_memory(d.kind) for d in manifest.devices):
        return "the module declares no local device for one to take its values on"
    odd = [v.name for v in signature.args + signature.results
           if not (v.is_tensor or v.type in values.SCALAR_TYPES)]
    if odd:
        return ("mdc-compile makes one only for a function whose arguments and results are all "
                f"tensors or scalars ({', '.join('%' + n for n in odd)} not)")
    return f"its mdc manifest names none for @{signature.name}: compile it again with mdc-compile"


def run(path: str, function: str, devices: Sequence[str], inputs: Sequence[str],
        outputs: Sequence[str], flags: Sequence[str] = (), timeout_s: Optional[float] = None,
        dependencies: Sequence[str] = ()):
    """iree-run-module on ``function`` with ``inputs`` and ``outputs`` as
    its own flags take them, ``dependencies`` loaded before the module:
    the subprocess.CompletedProcess; raises RuntimeError (one line) when it
    fails."""
    import subprocess

    cmd = [iree_run_module(), *[f"--module={d}" for d in dependencies], f"--module={path}",
           f"--function={function}",
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


class NativeModule(FunctionTable):
    """What ``load`` returns for devices the Python runtime cannot open
    together: the same functions, each call a run of iree-run-module."""

    def __init__(self, path: str, uris: Sequence[str], manifest: Optional[Manifest],
                 signatures: dict[str, Signature], binding: dict[str, int], reason: str,
                 flags: Sequence[str] = (), timeout_s: Optional[float] = 300.0,
                 dependencies: Sequence[str] = ()):
        self.path, self.uris, self.manifest = path, list(uris), manifest
        self.signatures, self.binding, self.reason = signatures, binding, reason
        self.flags, self.timeout_s = list(flags), timeout_s
        self.dependencies = list(dependencies)
        self._functions: dict[str, NativeFunction] = {}
        self._last_stderr = ""

    def statistics(self) -> str:
        """The allocator statistics iree-run-module printed on its last run
        (with --print_statistics in ``flags``), in its own words."""
        self._check_open()
        text = self._last_stderr
        return text[text.find("Device: "):] if "Device: " in text else ""

    def _new_function(self, name: str) -> "NativeFunction":
        return NativeFunction(self, name)

    def _description(self) -> str:
        lines = [f"module {self.path} on {', '.join(self.uris)} (run by iree-run-module: {self.reason})"
                 + (", closed" if self._closed else "")]
        lines += [f"  {self.signatures[n].text}" for n in self.function_names]
        return "\n".join(lines)

    @property
    def devices(self) -> tuple:
        """Not offered: iree-run-module opens the devices, in another process."""
        raise ShimError(f"module {self.path} runs in iree-run-module ({self.reason}): its devices are "
                        "not opened in this process")

    def close(self) -> None:
        """Forget the functions; every call after this raises ShimError."""
        self._functions.clear()
        self._closed = True

    def __repr__(self) -> str:
        return self._repr("NativeModule")


class NativeFunction(FunctionAPI):
    """One function of a NativeModule: ``f(x, y)`` or ``f(x=..., y=...)``,
    numpy in and numpy out, each call one run of iree-run-module."""

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
        self._tied = module.manifest.tied(self.signature) if module.manifest is not None else ()
        self._bounds = module.manifest.bounds(self.signature) if module.manifest is not None else ()
        self._init_api(lambda v, sig: module._where(v, sig) + ", through iree-run-module")

    @property
    def pinned_arguments(self) -> dict[int, int]:
        """None: iree-run-module is given every argument in host memory."""
        return {}

    def place(self, index: int, arg):
        """Not offered: each call is one run of iree-run-module, so nothing
        placed stays on a device for the next call. ShimError saying so."""
        self.module._check_open()
        raise ShimError(f"@{self.name}.place: @{self.name} runs in iree-run-module ({self.module.reason}), "
                        "a process of its own for each call, so no input stays placed on a device between "
                        "calls: pass the array itself to each call")

    def call_on_devices(self, *args, **kwargs) -> tuple:
        """Not offered: each call is one run of iree-run-module, which
        leaves nothing on a device."""
        raise ShimError(f"@{self.name} runs in iree-run-module ({self.module.reason}), which leaves no "
                        "result on a device: call it for numpy results")

    def prepare(self, args: Sequence) -> list[tuple[object, object]]:
        """Check positional inputs against the declaration. -> (array, HAL
        element type as an int, iree.runtime.HalElementType's value) per
        tensor, (number, MLIR type name) per scalar."""
        sig = self.signature
        if len(args) != len(sig.args):
            raise ShimTypeError(f"@{sig.name} takes {len(sig.args)} input(s), {len(args)} given")
        out = []
        for i, (value, arg) in enumerate(zip(sig.args, args)):
            where = f"@{sig.name} input {i} (%{value.name}: {value.type})"
            if not value.is_tensor:
                out.append((values.check_scalar(arg, value.type, where), value.type))
                continue
            if type(arg).__name__ == "Placed":
                raise ShimError(f"{where}: given a Placed input, which a module run by "
                                "iree-run-module cannot take; pass the array")
            out.append(values.checked_tensor(arg, value, where))
        if self._tied or self._bounds:
            shapes = [np.shape(arg) for arg, _ in out]
            values.check_tied_dims(sig, self._tied, shapes)
            values.check_bounds(sig, self._bounds, shapes)
        return out

    def _invoke(self, inputs: list) -> list[tuple[object, object]]:
        """Run on inputs from ``prepare``: (value, type) per result, as
        ``prepare`` gives them."""
        import tempfile

        m = self.module
        m._check_open()
        with tempfile.TemporaryDirectory(prefix="mdc-run-") as work:
            flags = []
            for i, (arg, kind) in enumerate(inputs):
                if isinstance(kind, str):
                    flags.append(str(int(arg) if not kind.startswith("f") else float(arg)))
                    continue
                path = os.path.join(work, f"in{i}.npy")
                np.save(path, np.asarray(arg, order="C"))  # a 0-d input stays 0-d
                flags.append(f"@{path}")
            outs = [os.path.join(work, f"out{k}.npy") for k in range(len(self.signature.results))]
            done = run(m.path, self._entry, self._devices, flags, [f"@{p}" for p in outs], m.flags,
                       m.timeout_s, m.dependencies)
            m._last_stderr = done.stderr
            results = []
            for value, path in zip(self.signature.results, outs):
                array = np.load(path)
                results.append((array, values.element_type(value.type.element)))
            return results
