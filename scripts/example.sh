#!/usr/bin/env bash
# Compiles the bundled example (a value moved device_a -> device_b -> device_a)
# with staging forced between two CPU devices, and runs it.
source "$(dirname "$0")/_venv.sh"
out=build/example
mkdir -p "$out"
set -x
mdc-compile examples/multi_device_mul.mlir --device=a=local[0] --device=b=local[1] \
  --link=a:b=staged -o "$out/multi_device_mul.vmfb"
mdc-run --module="$out/multi_device_mul.vmfb" --device=local-task --device=local-sync \
  --input=4xf32=10,11,12,13
