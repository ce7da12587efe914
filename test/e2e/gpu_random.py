"""Random programs on a GPU: build here, run there (test/harness/gpu_random.py says how).

    python test/e2e/gpu_random.py --help
"""

import sys

import _harness_path  # noqa: F401  (test/ and the checkout on sys.path)
from harness.gpu_random import main

if __name__ == "__main__":
    sys.exit(main())
