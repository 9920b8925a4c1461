#!/usr/bin/env bash
# NVIDIA's CUDA samples (github.com/NVIDIA/cuda-samples, tag v13.0) as real programs nobody on this project wrote:
# runs every built sample once and writes one TSV line per sample: name, exit status, wall seconds, the last line
# it printed. The same script runs them on a GPU (RUNNER unset) and on cuemu (RUNNER="build/emu/cuemu run --").
#   tools/samples/run-samples.sh SAMPLES_BUILD_DIR OUT.tsv [TIMEOUT_SECONDS]
# Build the samples first (tools/samples/README.md): PTX and SASS for compute capability 9.0, cudart shared.
# A sample runs in its own folder (they find their data files relative to it); exit status 2 is the samples'
# EXIT_WAIVED (a requirement such as a second GPU is missing); 124 is the time limit. SAMPLES_SKIP="name ..."
# leaves samples out (written with status -1), e.g. the benchmarks known to run past the limit. With RUNNER set,
# the samples listed in device-profiles.txt (beside this script) run with CUEMU_DEVICE_PROFILE set to their profile.
set -u
profiles=$(cd "$(dirname "$0")" && pwd)/device-profiles.txt
build=$(cd "$1" && pwd)
out=$2
limit=${3:-120}
runner=(${RUNNER:-})
: >"$out"
find "$build/Samples" -type f -perm -u+x -not -name "*.so*" -not -path "*/CMakeFiles/*" | sort | while read -r exe; do
  name=$(basename "$exe")
  case "$name" in *.sh | *.py) continue ;; esac
  if [[ " ${SAMPLES_SKIP:-} " == *" $name "* ]]; then
    printf '%s\t-1\t0\tskipped\n' "$name" | tee -a "$out"
    continue
  fi
  dir=$(dirname "$exe")
  profile=
  if [[ ${#runner[@]} -gt 0 ]]; then
    profile=$(awk -v n="$name" '$1 == n { print $2 }' "$profiles")
  fi
  start=$(date +%s.%N)
  (cd "$dir" && timeout -k 5 "$limit" env ${profile:+CUEMU_DEVICE_PROFILE=$profile} "${runner[@]}" "./$name" \
    </dev/null >"$dir/$name.out" 2>&1)
  rc=$?
  end=$(date +%s.%N)
  last=$(grep -v '^\s*$' "$dir/$name.out" | tail -1 | tr '\t' ' ' | cut -c1-160)
  printf '%s\t%d\t%s\t%s\n' "$name" "$rc" "$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", b - a }')" "$last" | tee -a "$out"
done
