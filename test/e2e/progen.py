"""Random multi-device programs: show, check, minimize (test/harness/progen/ says how).

    python test/e2e/progen.py --help
"""

import sys

import _harness_path  # noqa: F401  (test/ and the checkout on sys.path)
from harness.progen.cli import main

if __name__ == "__main__":
    sys.exit(main())
