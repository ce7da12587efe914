"""One 32x2048 by 2048x2048 matmul on cuda: build here, run there (test/harness/gpu_matmul.py says how).

    python test/e2e/gpu_matmul.py --help
"""

import sys

import _harness_path  # noqa: F401  (test/ and the checkout on sys.path)
from harness.gpu_matmul import main

if __name__ == "__main__":
    sys.exit(main())
