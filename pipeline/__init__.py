"""mdc's compiler: ``mdc.pipeline.compile`` (driver.py), the Python twin of
``mdc.runtime_shim.load``, and the ``mdc-compile`` and ``mdc-opt`` command
lines (cli.py) that map their arguments onto it."""

from .driver import CompileError, CompileOptions, CompileResult, CompileWarning, MlirText, compile

__all__ = ["CompileError", "CompileOptions", "CompileResult", "CompileWarning", "MlirText", "compile"]
