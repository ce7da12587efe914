"""mdc's Python passes over IREE's input, stream and HAL IR, in rooms:

* infra/: what a pass is, the manager that runs passes and owns their
  analyses, the pipeline's order, the registry, reports and errors;
* ir/: the typed view of IREE's IR and what a module says of its devices;
* analysis/: the memory model, the residence analysis (where hand-placed
  stream IR keeps each resource and runs each op), sizes, signatures;
* transforms/: one rewriting pass per file;
* lowering/: the lowerings of a staged crossing and their MLIR library;
* verifier/: the device-isolation verifier and its rules;
* assignment/: automatic device assignment (``--place``);
* targets/cuda/: what exists for cuda alone.

docs/DESIGN.md ("Where things are") maps the whole tree.
"""
