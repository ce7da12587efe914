"""The compile/run contract of an mdc-compiled vmfb.

pipeline/manifest.py writes it, runtime_shim/manifest.py reads it; both take
these constants from here.

* ``KEY``: the ``iree.reflection`` entry of each public function holding the
  manifest, a JSON object whose ``"format"`` is ``FORMAT`` (the format the
  pipeline writes is documented in pipeline/manifest.py, what the shim
  accepts in runtime_shim/manifest.py).
* The integrity seal: a vmfb is a ZIP archive; its comment, the last
  ``SEAL_LENGTH`` bytes of the file, is ``SEAL_PREFIX`` and the hex SHA-256
  of every byte before it (the comment length field included).
* ``FUNCTIONS``: the optional manifest entry that describes the public
  functions IREE wrote no ``iree.abi.declaration`` for (a program whose
  input already speaks the buffer-view ABI, such as IREE's torch input
  conversion of an iree-turbine export)::

    "functions": {"main$async": {"model": "coarse-fences",
                                 "arguments": [{"type": "tensor<?x8xf32>", "device": "__device_1"}],
                                 "results": [{"type": "tensor<?x8xf32>", "device": "__device_1"}]},
                  "main": {"model": "sync", "calls": "main$async", ...}}

  ``model`` is ``MODEL_SYNC`` or ``MODEL_COARSE_FENCES`` (the VM function
  also takes a wait and a signal fence after the arguments listed, as for
  IREE's ``async func``); each value's ``type`` is its MLIR type
  (``!hal.buffer_view`` when mdc could not tell the tensor type) and
  ``device`` the declared device it lives on (null: not known, or not a
  tensor); ``calls``, on a sync function that only calls a coarse-fences
  one with its own arguments, names that function. Values are named
  ``input0``..., ``output0``... by position, as in IREE's declarations.
* ``RESULT_STORAGE``: the optional entry naming each function's
  result-storage twin (passes/result_storage_twins.py)::

    "result_storage": {"f": {"function": "f$into", "results": [0, 2]}}

  ``f$into`` takes ``f``'s arguments, then one output argument
  (``iree.abi.output``) per listed result index of ``f``, in that order,
  and returns what ``f`` returns, each listed result written into its
  storage. ``"pinned_arguments"`` says in which device's pinned memory the
  caller gives a storage argument; one it does not list is given in the
  memory of the result's own (CPU) device.
* ``RESULT_DEVICES``: the optional entry giving, for each public function
  IREE declared, the device each tensor result lives on where its
  declaration names none (``"result_devices": {"f": {"0": "device_b"}}``):
  such a result ends wherever the program put it (a move, its producer's
  device, mdc's placement), read off the stream IR. A result it does not
  list lives on its declared device, else on the default device.
* ``MUTABLE_GLOBALS``: the entry listing the program's own mutable
  globals, state one call leaves for the next
  (``"mutable_globals": ["counter"]``, ``[]`` for none). The shim's
  pipelined ``map`` runs calls in separate VM contexts, each with its own
  globals, so it refuses more than one lane for a program that has any,
  and for a manifest without the entry (written before mdc-compile wrote
  it: whether the program keeps state is not known).
* ``STATE_BY_FUNCTION``: with mutable globals, which of them each public
  function refers to, itself or through what it calls
  (``"state_by_function": {"step": ["counter"], "encode": []}``): ``map``
  runs a function that refers to none in more than one lane. Absent: every
  function is taken to keep the state.
* ``TIED_DIMS``: the optional entry listing, per public function, the
  groups of argument dimensions the program requires to be equal
  (passes/tied_dims.py says how they are found)::

    "tied_dims": {"main": [[[0, 0], [1, 0]]]}

  Each group is a list of ``[argument index, dimension]`` pairs (two or
  more); here dimension 0 of arguments 0 and 1, one dynamic batch. The shim
  refuses a call given different sizes for a group. Absent (an older
  mdc-compile, or no ties): nothing is checked.
* ``NO_HOST_ENTRY_POINTS``: ``true`` when mdc-compile was given
  ``--no-host-entry-points`` (absent otherwise), so that the shim says so
  only then when a function it must run through a host entry point has
  none.
* Device facts both sides need: a device of IREE kind ``local`` uses host
  memory; at run time the drivers ``local-task`` and ``local-sync`` are such
  devices.
"""

from __future__ import annotations

KEY = "mdc.manifest"
FORMAT = "mdc.manifest/1"

FUNCTIONS = "functions"
MODEL_SYNC = "sync"
MODEL_COARSE_FENCES = "coarse-fences"  # IREE's name for it (iree.abi.model)

RESULT_STORAGE = "result_storage"
RESULT_DEVICES = "result_devices"
MUTABLE_GLOBALS = "mutable_globals"
STATE_BY_FUNCTION = "state_by_function"
TIED_DIMS = "tied_dims"
NO_HOST_ENTRY_POINTS = "no_host_entry_points"

SEAL_PREFIX = b"mdc-sha256:"
SEAL_LENGTH = len(SEAL_PREFIX) + 64

LOCAL = "local"  # the IREE device kind whose memory is the host's


def kind_uses_host_memory(kind: str) -> bool:
    """Whether a declared device of IREE kind ``kind`` (local, cuda, ...)
    computes in host memory."""
    return kind == LOCAL


def driver_uses_host_memory(driver: str) -> bool:
    """Whether a runtime driver (local-task, local-sync, cuda, ...) runs a
    device that shares the host's memory."""
    return driver.startswith(LOCAL)
