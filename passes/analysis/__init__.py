"""Analyses: facts computed from a module that passes read and never
change. The memory model (which devices share memory), the residence (where
each resource lives and each op runs on hand-placed stream IR) and its
picture (residence_graph), the sizes of crossing values, tied dimensions,
public signatures (stub_signatures), the crossing plan (crossings) and the
pinned-argument ABI record (abi)."""
