"""The passes that rewrite a module, one per file, each a
``ModulePass`` (infra/pass_base.py); infra/pipeline_order.py orders them."""
