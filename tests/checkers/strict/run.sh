#!/usr/bin/env bash
# synccheck's strict mode (`cuemu run --tool synccheck --synccheck-strict yes`): the checks compute-sanitizer does
# not make (warp-collective masks naming exited, non-converged or differently-masked lanes or leaving out the thread
# itself; named barriers reached by more threads than their count). Builds every synccheck program of the corpus and
# checks its ERROR SUMMARY and headlines against expected.txt; without the option each must report what
# compute-sanitizer reports on an H100 (the corpus test compares that in detail; here: the error count of its
# recorded output).
# Usage: tests/checkers/strict/run.sh CUEMU_COMMAND WORK [NVCC]
set -u
here=$(cd "$(dirname "$0")" && pwd)
cuemu=$(realpath "${1:?usage: run.sh CUEMU_COMMAND WORK [NVCC]}")
work=${2:?usage: run.sh CUEMU_COMMAND WORK [NVCC]}
nvcc=${3:-nvcc}
programs=$here/../programs
mkdir -p "$work"
failures=0
fail() {
  echo "FAIL $*"
  failures=$((failures + 1))
}
errors() { grep -o 'ERROR SUMMARY: [0-9]*' "$1" | grep -o '[0-9]*$'; }
while read -r name count headlines; do
  case $name in '#'* | '') continue ;; esac
  src=$programs/$name.cu
  if [ ! -x "$work/$name" ] || [ "$src" -nt "$work/$name" ]; then
    "$nvcc" -O1 -lineinfo -gencode arch=compute_90,code=[sm_90,compute_90] -I"$programs" -o "$work/$name" "$src" ||
      { fail "$name: build"; continue; }
  fi
  out=$work/$name.strict.txt
  (cd "$work" && timeout 120 "$cuemu" run --tool synccheck --synccheck-strict yes -- "./$name") > "$out" 2>&1
  got=$(errors "$out")
  if [ "$got" != "$count" ]; then
    fail "$name (strict): expected $count errors, got '$got'"
    cat "$out"
    continue
  fi
  if [ -n "$headlines" ]; then
    IFS='|' read -ra wanted <<< "$headlines"
    for h in "${wanted[@]}"; do
      grep -qF -- "$h" "$out" || { fail "$name (strict): no report saying '$h'"; cat "$out"; }
    done
  fi
  plain=$work/$name.plain.txt
  (cd "$work" && timeout 120 "$cuemu" run --tool synccheck -- "./$name") > "$plain" 2>&1
  gpu=$(errors "$here/../gpu/$name.synccheck.txt")
  if [ "$(errors "$plain")" != "$gpu" ]; then
    fail "$name (without --synccheck-strict): $(errors "$plain") errors, compute-sanitizer on the H100 $gpu"
    continue
  fi
  echo "ok   $name: strict $count errors, plain $gpu as on the H100"
done < "$here/expected.txt"
if [ "$failures" -ne 0 ]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "all strict synccheck checks passed"
