"""The values of ``--place`` and ``--place-objective``: mdc-compile's
options (pipeline/options.py) check them, and automatic device assignment
(passes/transforms/assign_devices.py, passes/assignment/) acts on them.

* ``--place``: ``MANUAL`` (the program as written), ``AUTO`` (the search),
  or the path of an assignment file;
* ``--place-objective``: one of ``OBJECTIVES``, the first the default
  (passes/assignment/estimate.py says what each estimates).
"""

MANUAL, AUTO = "manual", "auto"
OBJECTIVES = ("latency", "throughput")
