#!/usr/bin/env bash
# The proof that a refactoring changed no output: builds every gpu_kit case
# and one full seed of random programs (both execution models, cuda and
# vulkan beside a local CPU) and prints the sha256 of every .vmfb, one line
# each, sorted. A vmfb holds the paths of its sources (locations), and its
# ZIP checksums and mdc's seal cover them: build before and after from a
# checkout at the same path, into the same OUT_DIR, and diff the two lists:
#     bash test/e2e/vmfb_digests.sh /tmp/vd > before.txt
#     ... change, in the same checkout ...
#     bash test/e2e/vmfb_digests.sh /tmp/vd > after.txt && diff before.txt after.txt
# (python test/e2e/vmfb_digests.py DIR re-hashes a finished build.)
# SEED and COUNT pick the random programs (default 20261213, 160).
# ONLY=programs builds only every program in test/ and examples/
# (vmfb_digests_programs.py), the quick part of the proof; ONLY=kit skips it.
# EVERY=K builds only every K-th of those programs (a check while working).
set -euo pipefail
out=${1:?usage: vmfb_digests.sh OUT_DIR}
seed=${SEED:-20261213}
count=${COUNT:-160}
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$out" && mkdir -p "$out"
python "$here/vmfb_digests_programs.py" "$out/programs" --every "${EVERY:-1}" >"$out/programs.log" 2>&1
if [ "${ONLY:-}" = programs ]; then python "$here/vmfb_digests.py" "$out"; exit 0; fi
python "$here/gpu_kit.py" build "$out/kit" >"$out/kit.log" 2>&1
python "$here/gpu_random.py" build "$out/random_cuda" --seed "$seed" --count "$count" >"$out/random_cuda.log" 2>&1
python "$here/gpu_random.py" build "$out/random_vulkan" --seed "$seed" --count "$((count / 4))" --gpu vulkan \
    >"$out/random_vulkan.log" 2>&1
# A random program's vmfb holds its source path (locations): hash each with
# OUT_DIR's path replaced, so two builds in different folders compare.
python "$here/vmfb_digests.py" "$out"
