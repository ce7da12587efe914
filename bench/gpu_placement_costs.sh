#!/bin/bash
# On the GPU machine: issue 45 item 3's measured costs. Each batch's
# placement program's units and crossings timed with the runtime alone
# (mdc-profile --program-kit), then, in a second trip, the placement kit
# built here with those costs, run there.
#
#   here:  python -m bench placement build .gpu/pcosts --program-kits --cpu=x86-64-v4
#   there: bash bench/gpu_placement_costs.sh [KIT] [SECONDS]     (writes $OUT/costs_bB.json)
#   here:  copy costs_b1.json and costs_b32.json into .gpu/pcosts, then
#          python -m bench placement build .gpu/placement_costs --cpu=x86-64-v4 --place-costs=.gpu/pcosts
#          (with --place-profile=FILE.json too where the machine was profiled)
#   there: python -m bench placement run .gpu/placement_costs
#
# KIT defaults to .gpu/pcosts; carry it and .whl (the runtime wheel). Each
# batch's timing is under a timeout of SECONDS (default 240).
set -u
kit=${1:-.gpu/pcosts}; limit=${2:-240}
timeout 60 pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl >/dev/null 2>&1 ||
  echo "the runtime wheel did not install from .whl/"
export PYTHONPATH=/tmp/site:$PWD
timeout 10 nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
timeout 10 lscpu | grep -m1 "Model name"
for dir in "$kit"/b*/; do
  b=$(basename "$dir")
  timeout "$limit" python -m mdc.profiler --program-kit="$dir" -o "${OUT:-$kit}/costs_$b.json"
  echo "$b: exit status $?"
done
