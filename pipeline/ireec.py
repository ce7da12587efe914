"""A thin, typed handle on IREE's in-process compiler (``iree.compiler.api``).

IREE's Python API lacks four things mdc needs, so they are reached here
through the exported C symbols and nowhere else:

* phases (``--compile-from`` / ``--compile-to`` are not session flags);
* diagnostics as data rather than text on the console;
* a check, before IREE's parser sees a source, that it does not nest so
  deep that the parser overflows its stack (source_nesting.py);
* a check that the invocation really succeeded (a failed mixed-device
  compile can return True from ``execute()`` and fail only when the vmfb is
  written; docs/DESIGN.md section 6).
"""

from __future__ import annotations

import ctypes
import dataclasses
import importlib
import sys
import types
from typing import Callable

from iree.compiler import ir
from iree.compiler.api import ctypes_dl as _c
from iree.compiler.api import Invocation, Output, Session, Source

from mdc.passes.infra.diagnostics import UsageError

from .cli_errors import CANNOT_PARSE
from .source_nesting import check_file_nesting, check_nesting

def _defer_linalg_python_module() -> None:
    """Keep MLIR's Python bindings from importing ``dialects.linalg`` the
    first time a pass looks at a linalg op (in an executable's body): that
    module builds its named ops with the Python op DSL at import, about a
    tenth of a second of every mdc-compile run, and mdc never uses its op
    classes. The bindings import a dialect's module by name; the module
    found is a placeholder that imports the real one on first use of any of
    its names, so code that does use linalg's Python API still gets it."""
    name = "iree.compiler.dialects.linalg"
    if name in sys.modules:
        return

    class _Deferred(types.ModuleType):
        def __getattr__(self, attr):
            if sys.modules.get(name) is self:
                del sys.modules[name]
            return getattr(importlib.import_module(name), attr)

    sys.modules[name] = _Deferred(name)


_defer_linalg_python_module()

_DIAG_CALLBACK = ctypes.CFUNCTYPE(
    None, ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_void_p
)
_SEVERITY = {0: "note", 1: "warning", 2: "error", 3: "remark"}

class IreeCompileError(Exception):
    """IREE reported errors. ``diagnostics`` holds them in order."""

    def __init__(self, what: str, diagnostics: list["Diagnostic"]):
        super().__init__(what)
        self.what = what
        self.diagnostics = diagnostics


class IreeFlagError(IreeCompileError):
    """IREE does not take one of the flags given (a command-line mistake)."""


@dataclasses.dataclass
class Diagnostic:
    severity: str
    message: str


def _bind_extra_symbols() -> None:
    _c._init_dylib()
    lib = _c._dylib
    if getattr(lib, "_mdc_bound", False):
        return
    lib.ireeCompilerInvocationSetCompileToPhase.restype = None
    lib.ireeCompilerInvocationSetCompileToPhase.argtypes = [
        ctypes.c_void_p,
        ctypes.c_char_p,
    ]
    lib.ireeCompilerInvocationSetCompileFromPhase.restype = None
    lib.ireeCompilerInvocationSetCompileFromPhase.argtypes = [
        ctypes.c_void_p,
        ctypes.c_char_p,
    ]
    lib.ireeCompilerInvocationEnableCallbackDiagnostics.restype = None
    lib.ireeCompilerInvocationEnableCallbackDiagnostics.argtypes = [
        ctypes.c_void_p,
        ctypes.c_int,
        _DIAG_CALLBACK,
        ctypes.c_void_p,
    ]
    lib._mdc_bound = True


# The global command line this process gave IREE, once set.
_global_flags: list[str] | None = None


def set_global_flags(program: str, flags: list[str]) -> None:
    """MLIR's own command-line options (``--mlir-timing``, ...), which IREE
    reads only from its global command line, as iree-compile sets it up:
    once per process, before any session (a second time, IREE aborts the
    process: "ireeCompileParseCL called multiple times"). So the same flags
    again (a compile mdc retries, in the same process) set nothing, and
    other flags raise UsageError. LLVM exits the process on a flag it does
    not know, after saying so."""
    global _global_flags
    if _global_flags is not None:
        if list(flags) != _global_flags:
            raise UsageError(f"MLIR's global flags are set once per process: this one already has "
                             f"{' '.join(_global_flags)}, not {' '.join(flags)}")
        return
    _c._init_dylib()
    _c._initializeGlobalCL(program, *flags)
    _global_flags = list(flags)


class Compiler:
    """One IREE compiler session with a fixed set of flags.

    Each method runs one step of IREE on a module and raises
    :class:`IreeCompileError` with IREE's diagnostics when the step fails.
    """

    def __init__(self, flags: list[str] | None, *, on_step: Callable[[str], None] | None = None):
        """``flags=None``: none yet; ``set_flags`` gives them before the first
        IREE step (a program parsed first keeps its module in this session).
        ``on_step`` is told each IREE step before it runs (its description)."""
        _bind_extra_symbols()
        self._session = Session()
        self._on_step = on_step
        if flags is not None:
            self.set_flags(flags)
        self.context: ir.Context = self._session.context
        self.context.allow_unregistered_dialects = False

    def set_flags(self, flags: list[str]) -> None:
        try:
            self._session.set_flags(*flags)
        except ValueError as e:
            raise IreeFlagError(f"IREE rejected a flag: {e}", []) from None

    def _step(self, description: str) -> None:
        if self._on_step is not None:
            self._on_step(description)

    # -- invocations -------------------------------------------------------

    def _invocation(self) -> tuple[Invocation, list[Diagnostic]]:
        inv = self._session.invocation()
        diags: list[Diagnostic] = []

        def on_diag(severity, message, size, _user):
            text = ctypes.string_at(message, size).decode("utf-8", "replace")
            diags.append(Diagnostic(_SEVERITY.get(severity, "error"), text))

        callback = _DIAG_CALLBACK(on_diag)
        inv._mdc_callback = callback  # keep alive as long as the invocation
        _c._dylib.ireeCompilerInvocationEnableCallbackDiagnostics(
            inv._inv_p, 0, callback, None
        )
        return inv, diags

    def parse_file(self, path: str) -> ir.Operation:
        """Parses ``path`` (its name is kept in locations) into a module."""
        check_file_nesting(path)
        inv, diags = self._invocation()
        try:
            source = Source.open_file(self._session, path)
        except ValueError as e:
            raise IreeCompileError(f"cannot read {path}: {e}", diags) from None
        if not inv.parse_source(source):
            raise IreeCompileError(f"{CANNOT_PARSE} {path}", diags)
        return inv.export_module()

    def parse_text(self, text: str, name: str) -> ir.Operation:
        check_nesting(text, name)
        inv, diags = self._invocation()
        source = Source.wrap_buffer(self._session, text.encode(), buffer_name=name)
        if not inv.parse_source(source):
            raise IreeCompileError(f"{CANNOT_PARSE} {name}", diags)
        return inv.export_module()

    def run_phases(self, module: ir.Operation, start: str, stop: str) -> ir.Operation:
        """Runs IREE's own pipeline from phase ``start`` to phase ``stop``."""
        self._step(f"IREE's phases {start} to {stop}")
        inv, diags = self._invocation()
        inv.import_module(module)
        _c._dylib.ireeCompilerInvocationSetCompileFromPhase(inv._inv_p, start.encode())
        _c._dylib.ireeCompilerInvocationSetCompileToPhase(inv._inv_p, stop.encode())
        ok = inv.execute()
        if not ok or _has_errors(diags):
            raise IreeCompileError(f"IREE failed between phases {start} and {stop}", diags)
        return inv.export_module()

    def run_passes(self, module: ir.Operation, pipeline: str) -> ir.Operation:
        """Runs a textual pass pipeline (anchored on the module) in place."""
        self._step(f"IREE's passes {pipeline}")
        inv, diags = self._invocation()
        inv.import_module(module)
        ok = inv.execute_text_pass_pipeline(pipeline)
        if not ok or _has_errors(diags):
            raise IreeCompileError(f"IREE pass pipeline failed: {pipeline}", diags)
        return inv.export_module()

    def emit_vmfb(self, module: ir.Operation, start: str) -> bytes:
        """Runs IREE from phase ``start`` to the end and returns the vmfb."""
        self._step(f"IREE's phases {start} to the vmfb")
        inv, diags = self._invocation()
        inv.import_module(module)
        _c._dylib.ireeCompilerInvocationSetCompileFromPhase(inv._inv_p, start.encode())
        _c._dylib.ireeCompilerInvocationSetCompileToPhase(inv._inv_p, b"end")
        ok = inv.execute()
        if ok and not _has_errors(diags):
            out = Output.open_membuffer()
            try:
                inv.output_vm_bytecode(out)
                data = bytes(out.map_memory())
            except ValueError as e:
                diags.append(Diagnostic("error", str(e)))
                data = None
            finally:
                out.close()
            if data is not None and not _has_errors(diags):
                return data
        raise IreeCompileError(f"IREE failed from phase {start} to the vmfb", diags)


def _has_errors(diags: list[Diagnostic]) -> bool:
    return any(d.severity == "error" for d in diags)


def module_text(module: ir.Operation, *, debug_info: bool = False) -> str:
    return module.get_asm(enable_debug_info=debug_info, assume_verified=False)

