"""What both backends of a loaded module share: looking functions up by
name (FunctionTable), and a function's Python face (FunctionAPI): its
signature, docstring, calls returning values, and pipelined ``map``.

The in-process backend (module.py, function.py) and the one that runs
stock iree-run-module (native.py) each build on these classes; neither
depends on the other's file.
"""

from __future__ import annotations

import inspect
import keyword
from typing import Optional, Sequence

import numpy as np

from . import pipelined, values
from .errors import ShimError, ShimTypeError
from .manifest import Manifest, Signature, Value


class FunctionTable:
    """Looking a module's functions up by name, as ``m.function("f")``,
    ``m["f"]`` or ``m.f``; ``function_names`` leaves out the host twins
    mdc-compile adds, which still answer to their names. A module class
    sets ``path``, ``uris``, ``signatures``, ``manifest``, ``binding`` and
    ``_functions``, makes its function objects in ``_new_function``,
    describes itself in ``_description`` and sets ``_closed`` in
    ``close``."""

    _closed = False

    @property
    def closed(self) -> bool:
        """Whether ``close()`` was called: every call then raises ShimError."""
        return self._closed

    @property
    def function_names(self) -> list[str]:
        return user_functions(self.signatures, self.manifest)

    def function(self, name: str):
        """The function called ``name`` (also ``m[name]``, or ``m.name``)."""
        self._check_open()
        if name not in self.signatures:
            raise ShimError(f"unknown function '{name}' (module exports: "
                            f"{', '.join(self.function_names) or 'nothing'})")
        if name not in self._functions:
            self._functions[name] = self._new_function(name)
        return self._functions[name]

    def describe(self) -> None:
        """Print the module's devices and functions with their declarations."""
        print(self._description())

    def _check_open(self) -> None:
        if self._closed:
            raise ShimError(f"module {self.path} is closed; load it again to call it")

    def __getitem__(self, name: str):
        return self.function(name)

    def __getattr__(self, name: str):
        if name.startswith("_") or "signatures" not in self.__dict__:
            raise AttributeError(name)
        if name not in self.signatures:
            raise AttributeError(f"module {self.path} has no function '{name}'")
        return self.function(name)

    def __dir__(self):
        return sorted(set(super().__dir__()) | {n for n in self.function_names if n.isidentifier()})

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _repr(self, kind: str) -> str:
        return f"<mdc.runtime_shim.{kind} {self.path} on {self.uris}{', closed' if self._closed else ''}>"

    def _where(self, value: Value, signature: Signature) -> str:
        """The device a value is declared on, as a docstring names it."""
        if self.manifest is None:
            return f"on {self.uris[0]}" if self.uris else ""
        name = value.affinity or self.manifest.default_device
        spec = next((d.spec for d in self.manifest.devices if d.name == name), "?")
        uri = self.uris[self.binding[name]] if name in self.binding else "unbound"
        return f"on {name} ({spec}, runtime device {uri})"


def parameter_names(signature: Signature) -> list[str]:
    """Python parameter names for a function's arguments: the declared name
    where it is a usable identifier (IREE writes `input0`, ..., or the
    `iree.abi.name` given), else `input<i>`."""
    names: list[str] = []
    for i, v in enumerate(signature.args):
        name = v.name
        if not name.isidentifier() or keyword.iskeyword(name) or name in names:
            name = f"input{i}"
        while name in names:
            name += "_"
        names.append(name)
    return names


def describe_value(value: Value) -> str:
    """What a caller passes or gets for a declared value: its MLIR type, and
    the numpy dtype and shape (or Python scalar) it is given as."""
    if value.is_tensor:
        try:
            dtype = values.numpy_dtype(values.element_type(value.type.element)).name
        except ShimError:
            dtype = value.type.element
        dims = ", ".join("?" if d is None else str(d) for d in value.type.shape)
        shape = f"({dims},)" if len(value.type.shape) == 1 else f"({dims})"
        return f"{value.type}: numpy {dtype} array of shape {shape}"
    if value.type in values.SCALAR_TYPES:
        kind = "float" if str(value.type).startswith("f") else "int"
        return f"{value.type}: a Python {kind} (returned as numpy {np.dtype(values.SCALAR_TYPES[value.type]).name})"
    return str(value.type)


def _described(value: Value, where, signature: Signature) -> str:
    text = describe_value(value)
    return f"{text}, {where(value, signature)}" if value.is_tensor else text


class FunctionAPI:
    """What both function classes share: a Python signature
    (``inspect.signature(f)``: one parameter per declared argument,
    positional or keyword), a docstring built from the declaration, and
    calls returning values only. A subclass sets ``module``, ``name`` and
    ``signature``, then calls ``_init_api``, and implements ``prepare`` and
    ``_invoke``."""

    def _init_api(self, where) -> None:
        sig = self.signature
        names = parameter_names(sig)
        self._parameter_names = names
        self.__signature__ = inspect.Signature(
            [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=str(v.type))
             for n, v in zip(names, sig.args)],
            return_annotation=(str(sig.results[0].type) if len(sig.results) == 1 else
                               "(" + ", ".join(str(v.type) for v in sig.results) + ")"))
        lines = [f"{self.name}({', '.join(names)}): @{self.name} of {self.module.path}.", ""]
        if sig.args:
            lines.append("Arguments:")
            lines += [f"  {n}: {_described(v, where, sig)}" for n, v in zip(names, sig.args)]
        else:
            lines.append("No arguments.")
        if sig.results:
            lines.append("Returns a tuple of:" if len(sig.results) > 1 else "Returns:")
            lines += [f"  {v.name}: {_described(v, where, sig)}" for v in sig.results]
        else:
            lines.append("Returns None.")
        said_by = ("IREE declaration" if sig.declared_by == "iree"
                   else "declaration (from mdc's manifest; IREE wrote none)")
        lines += ["", f"{said_by}: {sig.text}"]
        self.__doc__ = "\n".join(lines)

    def bind_arguments(self, args: Sequence, kwargs: dict) -> list:
        """Positional and keyword arguments -> the arguments in order;
        ShimTypeError (a TypeError) as Python words it for a plain function."""
        if not kwargs and len(args) == len(self._parameter_names):
            return list(args)  # what bind gives, without its cost on every call
        try:
            unknown = [k for k in kwargs if k not in self._parameter_names]
            if unknown:  # before a missing argument, as Python itself reports it
                raise TypeError(f"got an unexpected keyword argument {unknown[0]!r}")
            bound = self.__signature__.bind(*args, **kwargs)
        except TypeError as e:
            raise ShimTypeError(f"@{self.name} takes {len(self._parameter_names)} input(s), "
                                f"{self.name}({', '.join(self._parameter_names)}): {e}") from None
        return list(bound.args)

    def __call__(self, *args, **kwargs):
        """Call with numpy inputs: the result, a tuple of results, or None."""
        results = self.call(*args, **kwargs)
        if len(results) == 1:
            return results[0]
        return results if results else None

    def call(self, *args, **kwargs) -> tuple:
        """Like calling the function, but always a tuple of its results (numpy
        arrays, and numpy scalars for scalar results), whatever their count."""
        inputs = self.prepare(self.bind_arguments(args, kwargs))
        return tuple(value for value, _ in self._invoke_for_caller(inputs))

    def _invoke_for_caller(self, inputs: list) -> list[tuple[object, object]]:
        """How a Python call runs: ``_invoke``, unless a subclass returns
        results in memory of its own."""
        return self._invoke(inputs)

    def map(self, *iterables, depth: int = 2):
        """Pipelined calls: an iterator over ``f(*args)`` for each ``args``
        of ``zip(*iterables)``, in order, with up to ``depth`` calls in
        flight, so that one call's CPU work overlaps another's GPU work
        (pipelined.py). Each result is what the call would return. A
        function that refers to state the program keeps between calls
        (mutable globals) takes ``depth=1`` only. ``depth`` and the state are checked now; the
        calls run as the iterator is read."""
        self.module._check_open()
        depth = pipelined.check_depth(self, depth)
        return pipelined.map_calls(self, iterables, depth)

    def _acquire_lanes(self, depth: int) -> list:
        """The lanes ``map`` runs in (pipelined.map_calls): one thread
        initializer per lane. Each run of iree-run-module is a process of
        its own, so any thread is a lane here."""
        return [None] * depth

    def _release_lanes(self) -> None:
        pass

    def _lane_call(self, *args):
        """A call as ``map`` makes it on a lane's thread."""
        return self(*args)

    def __repr__(self) -> str:
        return f"<mdc.runtime_shim.{type(self).__name__} {self.signature.text}>"


def user_functions(signatures: dict[str, Signature], manifest: Optional[Manifest]) -> list[str]:
    """The module's functions less the host twins mdc-compile added."""
    twins = manifest.twins() if manifest is not None else set()
    return [n for n in signatures if n not in twins]
