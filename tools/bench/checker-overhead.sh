#!/usr/bin/env bash
# Measures what each `cuemu run --tool` costs on the checker workloads (tests/checkers/perf/workloads.cu): the
# minimum of RUNS runs per mode, and the ratio to the default mode.
# Usage: tools/bench/checker-overhead.sh [runs=3] [cuemu command=build/emu/cuemu] [threads=1]
set -eu
runs=${1:-3}
cuemu=${2:-build/emu/cuemu}
threads=${3:-1}
here=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
nvcc -O2 -lineinfo -gencode arch=compute_90,code=[sm_90,compute_90] -o "$work/workloads" "$here/tests/checkers/perf/workloads.cu"
declare -A best
modes="default memcheck racecheck initcheck synccheck"
for ((i = 0; i < runs; ++i)); do
  for mode in $modes; do
    args=()
    [ "$mode" != default ] && args=(--tool "$mode")
    while read -r name ms status; do
      [ "$status" = cudaSuccess ] || { echo "$mode $name: $status" >&2; continue; }
      key="$mode/$name"
      if [ -z "${best[$key]:-}" ] || awk "BEGIN{exit !($ms < ${best[$key]})}"; then best[$key]=$ms; fi
    done < <("$cuemu" run --threads "$threads" "${args[@]}" -- "$work/workloads" | grep -v '^=========')
  done
done
printf '%-10s' workload; for mode in $modes; do printf '%18s' "$mode"; done; echo
for name in vecadd matmul reduce; do
  printf '%-10s' "$name"
  for mode in $modes; do
    ms=${best[$mode/$name]:-?}
    base=${best[default/$name]:-}
    if [ "$mode" = default ] || [ -z "$base" ] || [ "$ms" = "?" ]; then printf '%15s ms' "$ms"
    else printf '%9s ms %4.1fx' "$ms" "$(awk "BEGIN{print $ms / $base}")"; fi
  done
  echo
done
