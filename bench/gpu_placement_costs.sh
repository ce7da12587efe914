#!/bin/bash
# On the GPU machine: issue 45 item 3's measured costs. Each variant's
# placement program (model, dtype, token count: bench/placement_kit.py's
# grid) has its units and crossings timed with the runtime alone
# (mdc-profile --program-kit); then, in a second trip, the placement kit
# built here with those costs is run there.
#
#   here:  python -m bench placement build .gpu/pcosts --program-kits --cpu=x86-64-v4
#          (it prints each kit's units, crossings and expected time, and the sum)
#   there: bash bench/gpu_placement_costs.sh [KIT] [SECONDS] [VARIANT ...]
#          (writes $OUT/costs_VARIANT.json; VARIANT such as swiglu_f16_b16 times that kit alone,
#          so that the kits can be split across calls)
#   here:  copy every costs_VARIANT.json into .gpu/pcosts, then
#          python -m bench placement build .gpu/placement_costs --cpu=x86-64-v4 --place-costs=.gpu/pcosts
#          (with --place-profile=FILE.json too where the machine was profiled)
#   there: python -m bench placement run .gpu/placement_costs
#
# KIT defaults to .gpu/pcosts; carry it and .whl (the runtime wheel). Each
# variant's timing is under a timeout of SECONDS (default 240).
set -u
kit=${1:-.gpu/pcosts}; limit=${2:-240}
shift $(( $# < 2 ? $# : 2 ))
timeout 60 pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl >/dev/null 2>&1 ||
  echo "the runtime wheel did not install from .whl/"
export PYTHONPATH=/tmp/site:$PWD
timeout 10 nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
timeout 10 lscpu | grep -m1 "Model name"
if [ $# -gt 0 ]; then variants=("$@"); else
  variants=(); for dir in "$kit"/*/; do [ -f "$dir/program.json" ] && variants+=("$(basename "$dir")"); done
fi
echo "${#variants[@]} program kits: ${variants[*]}"
began=$SECONDS
for v in "${variants[@]}"; do
  start=$SECONDS
  timeout "$limit" python -m mdc.profiler --program-kit="$kit/$v" -o "${OUT:-$kit}/costs_$v.json"
  echo "$v: exit status $? ($((SECONDS - start)) s)"
done
echo "all: $((SECONDS - began)) s"
