"""Build here, run on a GPU machine: mdc-compiled local+cuda programs (test/harness/gpu_kit.py says how).

    python test/e2e/gpu_kit.py --help
"""

import sys

import _harness_path  # noqa: F401  (test/ and the checkout on sys.path)
from harness.gpu_kit.cli import main

if __name__ == "__main__":
    sys.exit(main())
