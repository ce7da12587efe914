"""What mdc-compile (pipeline/) and the runtime shim (runtime_shim/) must
agree on, with no IREE import, so either side can use it without the other:
the manifest's key, format and seal (manifest.py), reading IREE's
declaration text (declaration_text.py), running a body in a forked
child (forked.py), and writing an output file atomically (atomic_write.py)."""
