"""mdc's compiler: ``mdc.pipeline.compile`` (driver.py), the Python twin of
``mdc.runtime_shim.load``; ``mdc.pipeline.run_passes`` (pass_driver.py), mdc's
passes on one module's IR; and the ``mdc-compile`` and ``mdc-opt`` command
lines (cli.py), which map their arguments onto them and their results onto
files and exit statuses. Importing it loads no IREE."""

from .driver import CompileError, CompileOptions, CompileResult, CompileWarning, MlirText, compile
from .pass_driver import PassesResult, run_passes

__all__ = ["CompileError", "CompileOptions", "CompileResult", "CompileWarning", "MlirText", "PassesResult",
           "compile", "run_passes"]
