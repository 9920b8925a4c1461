#!/usr/bin/env bash
# Runs the checker corpus on cuemu and compares the findings with compute-sanitizer's recorded on a GPU (gpu/):
# builds programs/*.cu with nvcc into WORK/bin (once; rebuilt when the source is newer), runs each under
# `cuemu run --tool X` exactly as run-on-gpu.sh ran compute-sanitizer (--leak-check full for memcheck,
# --error-exitcode 99), writes WORK/out/<program>.<tool>.txt and calls compare.py.
# Usage: tests/checkers/run.sh CUEMU_COMMAND WORK [NVCC]
set -u
here=$(cd "$(dirname "$0")" && pwd)
cuemu=$(realpath "${1:?usage: run.sh CUEMU_COMMAND WORK [NVCC]}")
work=${2:?usage: run.sh CUEMU_COMMAND WORK [NVCC]}
nvcc=${3:-nvcc}
mkdir -p "$work/bin" "$work/out"
build() {
  local src=$1 name
  name=$(basename "$src" .cu)
  if [ ! -x "$work/bin/$name" ] || [ "$src" -nt "$work/bin/$name" ] || [ "$here/programs/common.h" -nt "$work/bin/$name" ]; then
    "$nvcc" -O1 -lineinfo -gencode arch=compute_90,code=[sm_90,compute_90] -I"$here/programs" -o "$work/bin/$name" "$src" ||
      echo "build failed: $name"
  fi
}
export -f build
export work nvcc here
ls "$here"/programs/*.cu | xargs -P 2 -I{} bash -c 'build {}'
rm -f "$work"/out/*.txt
for gpu in "$here"/gpu/*.txt; do
  run=$(basename "$gpu" .txt)
  case $run in environment | *.native) continue ;; esac
  name=${run%.*}
  tool=${run#*.}
  extra=()
  [ "$tool" = memcheck ] && extra=(--leak-check full)
  (cd "$work" && timeout 120 "$cuemu" run --tool "$tool" "${extra[@]}" --error-exitcode 99 -- "bin/$name") \
    > "$work/out/$run.txt" 2>&1
  echo "exit: $?" >> "$work/out/$run.txt"
done
python3 "$here/compare.py" "$here/gpu" "$work/out" "$here/known-differences.txt"
