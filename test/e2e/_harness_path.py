"""The one path setup of the scripts run as ``python test/e2e/NAME.py``.

Each script imports this module first (Python puts the script's folder,
test/e2e, first on sys.path, so it is found) and then the harness package
(test/harness) and mdc. It puts test/ first on sys.path, for ``harness``,
and the checkout's root before it, so that ``mdc`` is this checkout's even
where it is not installed (a GPU machine with only the runtime wheel), and
``bench`` (bench/kitframe.py, the kit framework) is found.
pytest needs none of this: pyproject.toml's ``pythonpath`` names test/.
"""

import os
import sys

_TEST = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for _path in (_TEST, os.path.dirname(_TEST)):
    if _path not in sys.path:
        sys.path.insert(0, _path)
