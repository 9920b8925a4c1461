#!/usr/bin/env bash
# The whole-program benchmark (issue 21 item 7): builds every program of programs.txt with nvcc and times each run
# (wall time of the whole process, the best of REPS runs), writing "program<TAB>result<TAB>best_ms<TAB>runs_ms".
#   On a GPU:   tests/bench/programs/run.sh OUT.tsv [REPS]
#   On cuemu:   RUNNER="build/emu/cuemu run --" tests/bench/programs/run.sh OUT.tsv [REPS]
#   Then:       tests/bench/programs/compare.py GPU.tsv CUEMU.tsv
# Environment: NVCC (default nvcc on PATH, else /usr/local/cuda/bin/nvcc), BUILD (binaries; default
# /tmp/cuemu-bench-programs), JOBS (parallel builds; default nproc), ONLY (regex of program names), TIMEOUT
# (seconds per run; default 600), RUNNER (a command prefix).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
out=${1:?usage: run.sh OUT.tsv [REPS]}
reps=${2:-3}
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
build=${BUILD:-/tmp/cuemu-bench-programs}
jobs=${JOBS:-$(nproc)}
only=${ONLY:-.}
limit=${TIMEOUT:-600}
read -r -a runner <<< "${RUNNER:-}"
mkdir -p "$build"
arch=(-gencode 'arch=compute_90,code=[sm_90,compute_90]')

names=()
while IFS='|' read -r name sources flags; do
  name=$(echo "$name" | sed "s/^[ \t]*//; s/[ \t]*$//")
  [[ -z "$name" || "$name" == \#* ]] && continue
  [[ "$name" =~ $only ]] || continue
  names+=("$name")
  srcs=()
  for s in $sources; do srcs+=("$root/$s"); done
  # shellcheck disable=SC2086
  ( "$nvcc" -O2 -std=c++17 "${arch[@]}" -I"$here" $flags "${srcs[@]}" -o "$build/$name" > "$build/$name.build.log" 2>&1 \
      || echo "build of $name failed (see $build/$name.build.log)" ) &
  while (( $(jobs -rp | wc -l) >= jobs )); do wait -n; done
done < "$here/programs.txt"
wait

printf 'program\tresult\tbest_ms\truns_ms\n' > "$out"
for name in "${names[@]}"; do
  if [[ ! -x "$build/$name" ]]; then
    printf '%s\tBUILD\t\t\n' "$name" >> "$out"
    continue
  fi
  best="" runs="" result=PASS
  for ((r = 0; r < reps; ++r)); do
    start=$(date +%s%N)
    timeout "$limit" "${runner[@]}" "$build/$name" > "$build/$name.run$r.log" 2>&1
    rc=$?
    ms=$(( ($(date +%s%N) - start) / 1000000 ))
    runs+="${runs:+,}$ms"
    if (( rc != 0 )); then result="EXIT$rc"; break; fi
    if [[ -z "$best" ]] || (( ms < best )); then best=$ms; fi
  done
  printf '%s\t%s\t%s\t%s\n' "$name" "$result" "$best" "$runs" >> "$out"
  printf '%-20s %-8s best %8s ms  (%s)\n' "$name" "$result" "$best" "$runs"
done
