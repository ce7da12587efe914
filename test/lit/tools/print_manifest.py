"""Prints what a vmfb tells its runner about its public functions, one fact
a line, for FileCheck: each function's IREE declaration (or that it has
none), then the mdc manifest's top-level entries as compact JSON, and each
entry of its "functions" on a line of its own. Needs only the runtime.

    %python print_manifest.py MODULE.vmfb
"""
import json
import sys

import iree.runtime as rt

vm_module = rt.VmModule.mmap(rt.VmInstance(), sys.argv[1])
manifests = set()
for name in vm_module.function_names:
    if name.startswith("__"):
        continue
    reflection = vm_module.lookup_function(name).reflection
    print(f"function @{name}: " + reflection.get("iree.abi.declaration", "no iree.abi.declaration"))
    if "mdc.manifest" in reflection:
        manifests.add(reflection["mdc.manifest"])
if len(manifests) != 1:
    print(f"manifests: {len(manifests)} different ones")
    sys.exit(0)
data = json.loads(manifests.pop())
functions = data.pop("functions", {})
for key, value in data.items():
    print(f"{key}: {json.dumps(value)}")
for name, entry in functions.items():
    print(f"functions[{name}]: {json.dumps(entry)}")
