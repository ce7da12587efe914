"""mdc's Python passes over IREE's stream and HAL IR.

One pass per module, each a pass_base.ModulePass that declares the analyses
it requires and the facts of the IR it needs and provides; pipeline_order.py
derives the order they run in from those, pass_manager.py runs them with
their analyses (the memory model, the placement) computed once, and
registry.py finds them by name. transfer_insertion.py
runs place_unplaced_ops.py and stage_crossings.py, which lowers each
crossing with one of lowering/ (copy, emplace, small in place, pinned
arguments); abi.py is the pinned-argument record the verifier, the CLI and
the manifest read.
"""
