"""Bad inputs to mdc-compile, mdc-opt and mdc-run: show, run, minimize (test/harness/fuzz.py says how).

    python test/e2e/fuzz.py --help
"""

import sys

import _harness_path  # noqa: F401  (test/ and the checkout on sys.path)
from harness.fuzz.cli import main

if __name__ == "__main__":
    sys.exit(main())
