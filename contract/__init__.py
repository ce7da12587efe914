"""What mdc-compile (pipeline/) and the runtime shim (runtime_shim/) must
agree on, with no IREE import, so either side can use it without the other:
the manifest's format, keys and seal (manifest.py) and its typed record,
which both sides write and read it through (manifest_record.py), reading
IREE's declaration text (declaration_text.py), running a body in a forked
child (forked.py), writing an output file atomically (atomic_write.py), the
one-line user error every tool prints (errors.py), the machine profile
that mdc-profile writes and automatic placement reads (machine_profile.py,
with mdc's built-in numbers in default_machine_profile.py), and the values
of ``--place`` and ``--place-objective``, which mdc-compile's options check
and the assign-devices pass acts on (place_options.py)."""
