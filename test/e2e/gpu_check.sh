#!/usr/bin/env bash
# Every GPU check of test/e2e on kits built beforehand, each under `timeout`
# (the failure mode of this domain is a hang), ending in a table of exit
# statuses. Run it on the GPU machine from the repository root, with the
# runtime (iree-base-runtime 3.13.0) importable:
#
#   bash test/e2e/gpu_check.sh KITS checks      # gpu_kit, gpu_random (every KITS/r*), cuda+vulkan
#   bash test/e2e/gpu_check.sh KITS soak [S]    # S seconds (default 300) of gpu_random on the largest KITS/r*
#
# KITS holds what these built on a machine with the compiler:
#   python test/e2e/gpu_kit.py build KITS/kit
#   python test/e2e/gpu_external.py build KITS/ext
#   python test/e2e/gpu_vulkan_pair.py build KITS/pair
#   python test/e2e/gpu_random.py build KITS/rSEED --seed SEED --count 160      (any number of seeds)
#   python test/e2e/gpu_random.py build KITS/rvk --seed SEED --count 60 --gpu vulkan
#   python test/e2e/gpu_staging_ab.py build KITS/ab
#   python test/e2e/gpu_torch.py build KITS/torch
# NVIDIA's Vulkan driver beside cuda needs VK_DRIVER_FILES pointing at its ICD
# file (and libvulkan1 installed).
set -u
shopt -s nullglob
KITS=${1:?usage: gpu_check.sh KITS checks|soak [SECONDS]}
MODE=${2:-checks}
HERE=$(dirname "$0")
declare -a SUMMARY=()

check() {  # check LABEL SECONDS COMMAND...
  local label=$1 limit=$2
  shift 2
  echo "=== $label"
  local start=$SECONDS
  timeout --kill-after=10 "$limit" "$@"
  local rc=$?
  [ $rc -eq 124 ] && echo "=== $label: TIMED OUT after $limit s"
  SUMMARY+=("| $label | $rc | $((SECONDS - start)) s |")
}

if [ "$MODE" = soak ]; then
  first=$(du -s "$KITS"/r[0-9]* | sort -n | tail -1 | cut -f2)  # the largest kit
  check "gpu_random soak $(basename "$first")" $(( ${3:-300} + 240 )) \
    python "$HERE/gpu_random.py" run "$first" --soak "${3:-300}"
else
  [ -d "$KITS/kit" ] && check "gpu_kit" 300 python "$HERE/gpu_kit.py" run "$KITS/kit"
  [ -d "$KITS/ext" ] && check "gpu_external" 300 python "$HERE/gpu_external.py" run "$KITS/ext" --timeout 120
  [ -d "$KITS/ab" ] && check "gpu_staging_ab" 300 python "$HERE/gpu_staging_ab.py" run "$KITS/ab" --timeout 30
  [ -d "$KITS/torch" ] && check "gpu_torch" 600 python "$HERE/gpu_torch.py" run "$KITS/torch"
  for kit in "$KITS"/r[0-9]*; do
    check "gpu_random $(basename "$kit")" 300 python "$HERE/gpu_random.py" run "$kit"
  done
  [ -d "$KITS/pair" ] && check "gpu_vulkan_pair" 400 python "$HERE/gpu_vulkan_pair.py" run "$KITS/pair"
  [ -d "$KITS/rvk" ] && check "gpu_random on vulkan" 400 python "$HERE/gpu_random.py" run "$KITS/rvk"
fi
echo
echo "| check | exit status | time |"
echo "|---|---|---|"
printf '%s\n' "${SUMMARY[@]}"
