"""The pass infrastructure: what a pass is (pass_base), the manager that
runs passes and owns their analyses (pass_manager), the order they run in
(pipeline_order), the registry that finds them by name, and what they
report (outputs) and raise (diagnostics)."""
