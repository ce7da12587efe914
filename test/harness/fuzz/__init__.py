"""Fuzzing mdc's command lines with bad inputs.

    python test/e2e/fuzz.py run [--seed S] [--count N] [--jobs 2] [--keep DIR]
    python test/e2e/fuzz.py show --seed S --index I      # one case: files and command line
    python test/e2e/fuzz.py minimize --seed S --index I  # smallest input still breaking the rule

Drives ``mdc-compile``, ``mdc-opt`` and ``mdc-run`` with mutated lit and e2e
inputs (lines deleted, duplicated or swapped, characters flipped, files
truncated, binary garbage, absurd and negative shapes, unknown ops and
attributes), with inconsistent device and link flags, and, for mdc-run, with
garbage, truncated and bit-flipped vmfbs, wrong device counts, functions,
inputs and outputs. Every case is seeded (MDC_FUZZ_SEED, else the time) and
must obey one rule (``check``):

* no Python traceback in the output;
* no hang (each command has a 60 s timeout);
* no crash signal (a negative return code);
* no partial output: the output directory, fresh for each case, holds
  nothing, or on success only the named output, complete (a vmfb that IREE
  loads, IR ending in a closing brace, a .npy numpy reads);
* on failure: a non-zero exit status and a short message (at most
  ``MAX_LINES`` lines and ``MAX_CHARS`` characters) whose first line (after
  any ``warning:`` lines) names the problem: it starts with
  ``mdc-compile: error:``, ``mdc-opt: error:`` or ``mdc-run: error:``, or
  with a ``FILE:LINE:COL: error:`` location.

The modules: tools.py (the tools and the output limits), mutations.py (the
corpus and its mutations), cases.py (seeded cases), rule.py (the rule and
the violations already known), run.py (running cases), minimize.py and
cli.py.
"""

from .cases import Case, make_case, make_cases
from .minimize import minimize
from .rule import KNOWN, Result, check, known_issue
from .run import default_seed, prepare, run_all, run_case
from .tools import TOOLS

__all__ = ["Case", "KNOWN", "Result", "TOOLS", "check", "default_seed", "known_issue", "make_case", "make_cases",
           "minimize", "prepare", "run_all", "run_case"]
