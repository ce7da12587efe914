"""mdc-profile on a GPU machine with probes built here: build here, run there (test/harness/gpu_profile.py says how).

    python test/e2e/gpu_profile.py --help
"""

import sys

import _harness_path  # noqa: F401  (test/ and the checkout on sys.path)
from harness.gpu_profile import main

if __name__ == "__main__":
    sys.exit(main())
