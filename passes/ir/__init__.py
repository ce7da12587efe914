"""The IR layer: a typed view of IREE's Python IR (ir_adapter), small
builders and readers over it (ir_util), and what a module says about its
devices (module_facts). Every other room reads IR through these."""
