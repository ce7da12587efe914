"""Build here, run on a GPU machine: mdc-compiled local+cuda programs.

    python test/e2e/gpu_kit.py build KIT_DIR     # here: needs the compiler
    python test/e2e/gpu_kit.py run KIT_DIR       # there: runtime only

``build`` compiles each case with mdc-compile for a local CPU device (with a
portable CPU target) and a cuda device, draws seeded inputs, and computes the
expected outputs with *stock* IREE on all-local devices on this machine.
``run`` executes every case with stock ``iree-run-module`` (cases whose
arguments and results live on local devices), with the runtime shim
(``python -m mdc.runtime_shim``), or with the shim's placed inputs (runner
``placed``: each input placed once with Function.place, then called with
its bytes overwritten in place, then restored, under a timeout, compares with the expected
outputs, and prints one table. With no cuda device it says so and exits
with status 2 (``--allow-no-gpu``: exit 0, a skip).

The modules: cases.py (the cases), build.py, run.py, runners.py (the shim's runners, each in a child
process), canaries.py (stock IREE's own wrong answers on cuda) and cli.py;
the pieces every kit shares (``compare``, the rule a result must meet,
``cuda_available``, NO_GPU_STATUS) are bench/kitframe.py's.
"""

from bench.kitframe import NO_GPU_STATUS, compare, cuda_available

from .build import build
from .canaries import MAXSI_VARIANTS, stock_cuda_canaries
from .run import run

__all__ = ["MAXSI_VARIANTS", "NO_GPU_STATUS", "build", "compare", "cuda_available", "run", "stock_cuda_canaries"]
