"""Loads the module named on the command line and tries a two-lane map of
@accumulate (manifest_mutable_globals.test)."""
import sys

from mdc.runtime_shim import ShimError, load

m = load(sys.argv[1], ["local-task", "local-sync"])
print("globals", m.manifest.mutable_globals)
try:
    m.accumulate.map([])
except ShimError as e:
    print("refused:", e)
m.close()
