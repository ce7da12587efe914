"""What mdc-compile (pipeline/) and the runtime shim (runtime_shim/) must
agree on, with no IREE import, so either side can use it without the other:
the manifest's format, keys and seal (manifest.py) and its typed record,
which both sides write and read it through (manifest_record.py), reading
IREE's declaration text (declaration_text.py), running a body in a forked
child (forked.py), and writing an output file atomically (atomic_write.py)."""
