"""The compile/run contract of an mdc-compiled vmfb: the manifest's format,
described here once, and its keys, named here only.

pipeline/manifest.py writes the manifest and runtime_shim/manifest.py reads
it, both through ``manifest_record.Manifest`` (its ``to_json`` and
``from_json``), which uses the key names below; neither side spells a key.

The manifest
------------

A JSON object, the string under ``KEY`` (``mdc.manifest``) in each public
function's ``iree.reflection`` dictionary, which survives IREE's ABI
wrapping and is readable with the runtime alone
(``VmModule.lookup_function(name).reflection``). The writer emits the keys
in the order listed, with no spaces (``separators=(",", ":")``), and leaves
out each optional key it has nothing for::

    {"format": "mdc.manifest/1",
     "devices": [{"name": "device_a", "spec": "local[0]", "kind": "local", "ordinal": 0}, ...],
     "default": "device_a",
     "staging": [{"from": "device_a", "to": "device_b", "owner": "device_b"}, ...],
     "pinned_arguments": {"f": {"0": "device_b"}},
     "host": "device_a", "host_entry_points": {"f": "f$host"},
     "no_host_entry_points": true,
     "result_storage": {"f": {"function": "f$into", "results": [0, 2]}},
     "functions": {"main": {"model": "sync", "arguments": [...], "results": [...]}},
     "tied_dims": {"main": [[[0, 0], [1, 0]]]},
     "argument_bounds": {"main": [[0, 0, 4096]]},
     "result_devices": {"f": {"0": "device_b"}},
     "mutable_globals": ["counter"],
     "state_by_function": {"step": ["counter"], "encode": []}}

* ``FORMAT_KEY`` (``"format"``): ``FORMAT``; the reader refuses any other.
* ``DEVICES``: every declared device, in ``--device`` order: its symbol
  name, the spec as ``--device`` gave it (``KIND`` or ``KIND[ORDINAL]``),
  its IREE kind (local, cuda, hip, vulkan, ...) and its ordinal among the
  runtime devices of that kind. The reader binds each to a runtime device
  by kind and ordinal; an older manifest without ``kind`` and ``ordinal``
  is read from ``spec``.
* ``DEFAULT`` (optional): the device IREE gives values without an
  affinity (the module's ``stream.affinity.default``:
  ``--iree-hal-default-device``, else the device whose name sorts first):
  the caller places an argument declared without a device there and reads
  such a result from there. Absent (a manifest written before mdc-compile
  recorded it): the first device stands for it.
* ``STAGING``: every ordered pair the memory model stages, with the device
  whose allocator provides the pinned staging memory (``owner``); a pair
  relayed through a local device has ``owner`` null and ``via`` naming it.
  The compiled program allocates its own staging buffers from the owner's
  allocator; the shim checks each owner is among the given devices.
* ``PINNED_ARGUMENTS`` (optional, with ``--pinned-arguments``):
  ``{"f": {"0": "device_b"}}`` says argument 0 of ``@f`` must be given in
  device_b's pinned memory (HostLocal|DeviceVisible, from its allocator);
  the shim places it there.
* ``HOST`` and ``HOST_ENTRY_POINTS`` (optional, together):
  ``{"f": "f$host"}`` names, for each public function that has one, its
  host twin (passes/transforms/host_entry_points.py): the same function with every
  tensor taken and returned on the local device ``HOST`` names. A
  coarse-fences function that a sync wrapper calls may share the
  wrapper's twin.
* ``NO_HOST_ENTRY_POINTS`` (optional): ``true`` when mdc-compile was given
  ``--no-host-entry-points``, so that the shim says so only then when a
  function it must run through a host entry point has none.
* ``RESULT_STORAGE`` (optional): each function's result-storage twin
  (passes/transforms/result_storage_twins.py). ``f$into`` takes ``f``'s arguments,
  then one output argument (``iree.abi.output``) per listed result index of
  ``f``, in that order, and returns what ``f`` returns, each listed result
  written into its storage. ``pinned_arguments`` says in which device's
  pinned memory the caller gives a storage argument; one it does not list
  is given in the memory of the result's own (CPU) device.
* ``FUNCTIONS`` (optional): the public functions IREE wrote no
  ``iree.abi.declaration`` for (a program whose input already speaks the
  buffer-view ABI, such as IREE's torch input conversion of an
  iree-turbine export); such a function gets an ``iree.reflection``
  holding only the manifest::

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
  The types and devices are read off the stream IR
  (passes/analysis/stub_signatures.py).
* ``TIED_DIMS`` (optional): per public function, the groups of argument
  dimensions the program requires to be equal (passes/analysis/tied_dims.py says
  how they are found). Each group is a list of ``[argument index,
  dimension]`` pairs (two or more); the example ties dimension 0 of
  arguments 0 and 1, one dynamic batch. The shim refuses a call given
  different sizes for a group. Absent: nothing is checked.
* ``ARGUMENT_BOUNDS`` (optional, with ``--place`` and ``--max-dim``): per
  public function, ``[argument index, dimension, bound]`` for each dynamic
  dimension of a tensor argument that ``--max-dim=argI.dJ=N`` bounded
  (passes/assignment/dim_names.py): the placement and its accelerator
  budget assumed no call exceeds it, so the shim refuses a call that
  does, naming the argument, its size and the bound. A sync function that
  only calls a coarse-fences one (``calls``) carries that one's bounds.
  Absent (no bound given, or a manifest written before mdc-compile
  recorded them): nothing is checked.
* ``RESULT_DEVICES`` (optional): for each public function IREE declared,
  the device each tensor result lives on where its declaration names none
  (``{"f": {"0": "device_b"}}``): such a result ends wherever the program
  put it (a move, its producer's device, mdc's placement), read off the
  stream IR (stub_signatures.undeclared_result_devices), so the shim
  fetches it from there. A result it does not list lives on its declared
  device, else on the default device.
* ``MUTABLE_GLOBALS``: the program's own mutable globals, state one call
  leaves for the next (``[]`` for none; module_facts.mutable_globals). The
  shim's pipelined ``map`` runs calls in separate VM contexts, each with
  its own globals, so it refuses more than one lane for a program that has
  any, and for a manifest without the entry (written before mdc-compile
  wrote it: whether the program keeps state is not known).
* ``STATE_BY_FUNCTION`` (optional, only with mutable globals): which of
  them each public function refers to, itself or through what it calls
  (module_facts.state_by_function): ``map`` runs a function that refers to
  none in more than one lane. Absent: every function is taken to keep the
  state.

The integrity seal
------------------

A vmfb is a ZIP archive; its comment, the last ``SEAL_LENGTH`` bytes of the
file, is ``SEAL_PREFIX`` and the hex SHA-256 of every byte before it (the
comment length field included).

Device facts
------------

A device of IREE kind ``local`` uses host memory; at run time the drivers
``local-task`` and ``local-sync`` are such devices.
"""

from __future__ import annotations

KEY = "mdc.manifest"
FORMAT = "mdc.manifest/1"

# The manifest's keys, in the order the writer emits them.
FORMAT_KEY = "format"
DEVICES = "devices"
DEFAULT = "default"
STAGING = "staging"
PINNED_ARGUMENTS = "pinned_arguments"
HOST = "host"
HOST_ENTRY_POINTS = "host_entry_points"
NO_HOST_ENTRY_POINTS = "no_host_entry_points"
RESULT_STORAGE = "result_storage"
FUNCTIONS = "functions"
TIED_DIMS = "tied_dims"
ARGUMENT_BOUNDS = "argument_bounds"
RESULT_DEVICES = "result_devices"
MUTABLE_GLOBALS = "mutable_globals"
STATE_BY_FUNCTION = "state_by_function"
TOP_LEVEL_KEYS = (FORMAT_KEY, DEVICES, DEFAULT, STAGING, PINNED_ARGUMENTS, HOST, HOST_ENTRY_POINTS,
                  NO_HOST_ENTRY_POINTS, RESULT_STORAGE, FUNCTIONS, TIED_DIMS, ARGUMENT_BOUNDS, RESULT_DEVICES,
                  MUTABLE_GLOBALS, STATE_BY_FUNCTION)

# The keys of a "devices" entry.
DEVICE_NAME, DEVICE_SPEC, DEVICE_KIND, DEVICE_ORDINAL = "name", "spec", "kind", "ordinal"
# The keys of a "staging" entry.
STAGING_FROM, STAGING_TO, STAGING_OWNER, STAGING_VIA = "from", "to", "owner", "via"
# The keys of a "result_storage" entry.
STORAGE_FUNCTION, STORAGE_RESULTS = "function", "results"
# The keys of a "functions" entry, and of each of its values.
FUNCTION_MODEL, FUNCTION_ARGUMENTS, FUNCTION_RESULTS, FUNCTION_CALLS = "model", "arguments", "results", "calls"
VALUE_TYPE, VALUE_DEVICE = "type", "device"
NESTED_KEYS = (DEVICE_NAME, DEVICE_SPEC, DEVICE_KIND, DEVICE_ORDINAL, STAGING_FROM, STAGING_TO, STAGING_OWNER,
               STAGING_VIA, STORAGE_FUNCTION, STORAGE_RESULTS, FUNCTION_MODEL, FUNCTION_ARGUMENTS, FUNCTION_RESULTS,
               FUNCTION_CALLS, VALUE_TYPE, VALUE_DEVICE)

MODEL_SYNC = "sync"
MODEL_COARSE_FENCES = "coarse-fences"  # IREE's name for it (iree.abi.model)

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
