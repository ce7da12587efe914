"""mdc's benchmarks: ``python -m bench --help`` lists them.

One module per measurement (transfer.py for ``run``, pieces.py, pinned.py,
latency.py, queue_latency.py, components.py, compile_time.py, kit.py for
``build``, workload.py for ``workload run`` and workload_kit.py for
``workload build``, placement.py with placement_table.py for ``placement
run`` and placement_kit.py with placement_plan.py, placement_splits.py and
placement_costs.py for ``placement build`` (placement_format.py is what
both share), models.py with
models_child.py for ``models run`` and models_kit.py with swiglu.py for
``models build``), helpers they share in common.py. kit_commands.py holds
the command lines of the kits of their own (``workload``, ``placement``,
``models``: a new one is one more entry of its KITS);
kitframe.py is the build-here, run-there framework these kits share with
test/e2e's GPU scripts. The measuring modules need only the runtime wheel
(and numpy; torch when present): the GPU machine has no compiler.
"""
