# lit configuration for mdc: `lit test/lit` from the repository root.
import os
import shutil
import sys

import lit.formats

config.name = "mdc"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".mlir", ".test"]
config.excludes = ["Inputs", "programs", "examples", "build", ".venv"]

# The tools live next to the Python running lit (a venv's bin/).
bin_dir = os.path.dirname(sys.executable)
path = os.pathsep.join([bin_dir, os.environ.get("PATH", "")])
config.environment["PATH"] = path
# PYTHONPATH: so a worktree's tests run its own code, not the editable install's.
for var in ("HOME", "TMPDIR", "LANG", "LC_ALL", "PYTHONPATH"):
    if var in os.environ:
        config.environment[var] = os.environ[var]
# The tools import mdc from this checkout, whatever the venv was installed
# from (a second worktree's lit otherwise tests the first one's code).
config.environment["PYTHONPATH"] = os.pathsep.join(
    [os.path.dirname(os.path.abspath(__file__))] + ([os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else []))


def tool(name):
    found = shutil.which(name, path=path)
    if not found:
        lit_config.fatal(f"{name} not found on PATH ({path}); install with `pip install -e '.[test]'`")
    return found


config.substitutions.append(("%python", sys.executable))
config.substitutions.append(("%examples", os.path.join(os.path.dirname(__file__), "examples")))
config.substitutions.append(("%programs", os.path.join(os.path.dirname(__file__), "test", "e2e", "programs")))
# The committed iree-turbine exports (examples/pytorch/exported: MLIR, inputs, torch's outputs).
config.substitutions.append(("%pytorch", os.path.join(os.path.dirname(__file__), "examples", "pytorch", "exported")))
for name in ("mdc-compile", "mdc-opt", "iree-compile", "iree-run-module"):
    config.substitutions.append((f"\\b{name}\\b", tool(name)))
config.substitutions.append(("\\bFileCheck\\b", tool("filecheck")))
# `%print-manifest OUT.vmfb`: each function's declaration and the manifest, one fact a line.
config.substitutions.append(
    ("%print-manifest", f"{sys.executable} " + os.path.join(os.path.dirname(__file__), "test", "lit", "tools", "print_manifest.py"))
)
# `... 2>&1 | %no-traceback | FileCheck ...` fails the test on any traceback.
config.substitutions.append(
    ("%no-traceback", f"{sys.executable} " + os.path.join(os.path.dirname(__file__), "test", "lit", "tools", "no_traceback.py"))
)
