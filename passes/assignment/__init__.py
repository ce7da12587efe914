"""Automatic device assignment (``mdc-compile --place=auto``): which device
each unit of a program's work and each of its weights goes to, under an
accelerator memory budget, chosen by a cost model.

Not to be confused with passes/analysis/residence.py, the rule by which IREE's
resources already in stream IR get a device. This package works on the
program as written, before IREE assigns any device:

* work_graph.py: the program as units of work, weights and the values
  between them (what every other module here reads);
* constants.py and hoist.py: what becomes a weight before the graph is
  read (a table written inline; work that reads only weights, computed
  once at start-up);
* cost_model.py: seconds for a unit on a device and for a crossing, from a
  machine profile (contract/machine_profile.py);
* measured.py: those seconds measured on the program itself where a costs
  file (``--place-costs``, contract/place_costs.py) has them;
* budget.py: the accelerator bytes an assignment needs, and a module's;
* estimate.py: the estimated seconds of one call of an assignment;
* search.py: the assignment of least estimated time within the budget,
  and the baselines it is compared with (programme.py: its dynamic
  programme);
* report.py: what ``--report`` and the summary line say of an assignment;
* rewrite.py: an assignment written into the program as the affinities and
  flow.tensor.transfers hand-placed programs use;

and passes/transforms/assign_devices.py is the pass that strings them together.
"""
