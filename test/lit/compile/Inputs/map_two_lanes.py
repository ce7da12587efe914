"""Loads the module named on the command line and tries a two-lane map of
@accumulate and @doubled (manifest_mutable_globals.test)."""
import sys

import numpy as np

from mdc.runtime_shim import ShimError, load

m = load(sys.argv[1], ["local-task", "local-sync"])
print("globals", m.manifest.mutable_globals)
try:
    m.accumulate.map([])
except ShimError as e:
    print("refused:", e)
xs = [np.full(8, float(k), np.float32) for k in (1, 2, 3)]
print("doubled pipelined:", [float(y[0]) for y in m.doubled.map(xs, depth=2)])
m.close()
