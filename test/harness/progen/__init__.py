"""progen: random multi-device programs, with their inputs and numpy references.

    python test/e2e/progen.py show  --seed S --index I        # one program, its inputs, its reference
    python test/e2e/progen.py check --seed S [--count N | --index I] [--jobs 2] [--keep DIR]
    python test/e2e/progen.py minimize --seed S --index I [--target T]  # smallest program that still fails

A program is a ``func.func public`` whose arguments and results carry
``iree.abi.affinity = #hal.device.promise<@device_x>`` and whose body is a DAG
of linalg/arith/math/tensor ops (elementwise expressions, ``linalg.matmul``,
reductions, ``linalg.transpose``, ``tensor.collapse_shape``/``expand_shape``,
``linalg.broadcast``, conversions between f32/f16/i32/i8) on 2 or 3 devices
(``device_a``, ``device_b``, ``device_c``). Values move between devices with
``flow.tensor.transfer`` (with its dynamic dims), implicitly (an op reading
operands that live on different devices), through argument and result
affinities other than ``device_a``, and inside ``scf.for`` loops. Shapes mix
static and dynamic dimensions (dynamic argument dims are given at run time).

Everything comes from one list of statements: each statement both prints its
MLIR and evaluates itself with numpy, so the program text, the inputs
(seeded) and the reference cannot disagree. Floats are evaluated in float64
together with a per-element bound on the rounding error that a correct
implementation in the program's precision may make (a running error
analysis: f16 is looser than f32, matmuls and reductions looser than
elementwise ops), so the reference comparison needs no tuned tolerances.
Integers are exact: i32 programs never overflow (ops that would are not
generated), i8 arithmetic wraps (two's complement, the same everywhere).
Float magnitudes stay small and there are no float->int conversions, no float
comparisons that decide anything, and no division by a value that can be 0.

The differential check (``check``, used by test_random_programs.py) compiles
many programs into one module per (device count, execution model), once with
``mdc-compile`` with staging forced between every pair of local devices and
once with stock ``iree-compile`` for all-local devices, runs each function
with stock ``iree-run-module`` (``mdc-run`` when an argument lives on device_b
or device_c: stock iree-run-module puts every argument on the first device),
and compares (a) mdc against stock IREE, bit for bit, and (b) stock IREE
against the numpy reference within the error bound. Every compile and run
gets a timeout and an address-space limit (MDC_PROGEN_MEMORY_GB, default 6),
so a runaway compile fails alone. When stock iree-compile crashes in IREE's
const-eval, both sides are compiled again with --iree-opt-const-eval=false.

Known limits of the generator (deliberate): no scf.if/scf.while, no
globals or initializers, no float comparisons or float->int conversions
(they would turn rounding differences into large ones), loops carry at most
one dynamic dim and have init/result lifetimes stock IREE accepts (see
test/lit/regress/README.md), rank <= 3 and dims <= 8.

The modules, by concern: values.py (SSA values, number formats, rounding),
expr.py (elementwise expression trees), stmts.py (statements: MLIR text and
numpy evaluation), program.py (a program: text, inputs, reference),
draws.py, ops.py and generator.py (the seeded generator), staging.py (the
lowering each program gets), commands.py (compile and run command lines),
oracle.py (numpy and stock-IREE comparisons), vulkan.py (stock IREE's own
Vulkan failures), check.py (the differential check), minimize.py and
cli.py.
"""

from .check import KNOWN, Outcome, check_all, check_batch, default_seed, known_issue, mdc_runtime, write_inputs
from .commands import TARGETS, tool
from .generator import generate, module_text
from .minimize import failure_key, minimize
from .oracle import compare_bitwise, compare_reference
from .program import Arg, Program
from .staging import staging_of
from .values import DEVICES, FLOATS, NP, Value
from .vulkan import has_narrow_values, stock_wrong_on_vulkan_alone

__all__ = [
    "Arg", "DEVICES", "FLOATS", "KNOWN", "NP", "Outcome", "Program", "TARGETS", "Value", "check_all", "check_batch",
    "compare_bitwise", "compare_reference", "default_seed", "failure_key", "generate", "has_narrow_values",
    "known_issue", "mdc_runtime", "minimize", "module_text", "stock_wrong_on_vulkan_alone", "staging_of", "tool",
    "write_inputs",
]
