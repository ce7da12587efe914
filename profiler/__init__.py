"""mdc-profile: measures a machine's devices into the machine profile
(contract/machine_profile.py) that automatic placement's cost model reads.

* probes.py: the probe programs and how each kind compiles them (no IREE);
* measure.py: one device timed through the stock runtime;
* memory.py: a device's memory read without IREE (NVML on an NVIDIA GPU,
  the host's own), and bench placement's CUDA sampler;
* open_cost.py: what opening a device costs, and its free memory,
  measured in a process of its own;
* prebuilt.py: probe modules built on one machine (--build-probes) and
  measured on another with the runtime alone (--probes);
* cli.py: the command line, the table it prints and the file it writes;
* program.py, program_units.py, program_timing.py, program_cli.py:
  ``--program``, a program's own units compiled (here) and timed (there)
  into a costs file (contract/place_costs.py) for ``--place-costs``.

It may import mdc.contract and mdc.runtime_shim; only bench/ and the
tests import it (memory.py's CudaMemory).
"""
