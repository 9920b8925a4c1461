#!/usr/bin/env bash
# racecheck's optional global-memory races (`cuemu run --tool racecheck --racecheck-global yes`): builds each
# program here and checks the RACECHECK SUMMARY against the program's first line ("// expect: E errors W
# warnings"); without --racecheck-global the same programs must report no global race. The corpus program
# rc_global_race (two CTAs writing and reading the same words) must report races with it.
# Usage: tests/checkers/global/run.sh CUEMU_COMMAND WORK [NVCC]
set -u
here=$(cd "$(dirname "$0")" && pwd)
cuemu=$(realpath "${1:?usage: run.sh CUEMU_COMMAND WORK [NVCC]}")
work=${2:?usage: run.sh CUEMU_COMMAND WORK [NVCC]}
nvcc=${3:-nvcc}
mkdir -p "$work"
failures=0
summary() { grep -o 'RACECHECK SUMMARY: .*' "$1" | sed -E 's/.*\(([0-9]+) errors?, ([0-9]+) warnings?\)/\1 \2/'; }
check() {  # name source expected-errors expected-warnings global
  local name=$1 src=$2 errors=$3 warnings=$4 global=$5 out="$work/$1.$5.txt"
  if [ ! -x "$work/$name" ] || [ "$src" -nt "$work/$name" ]; then
    "$nvcc" -O1 -lineinfo -gencode arch=compute_90,code=[sm_90,compute_90] -o "$work/$name" "$src" || {
      echo "FAIL $name: build"
      failures=$((failures + 1))
      return
    }
  fi
  "$cuemu" run --tool racecheck --racecheck-global "$global" -- "$work/$name" > "$out" 2>&1
  local got
  got=$(summary "$out")
  if [ "$got" != "$errors $warnings" ]; then
    echo "FAIL $name (--racecheck-global $global): expected $errors errors $warnings warnings, got '$got'"
    cat "$out"
    failures=$((failures + 1))
    return
  fi
  if [ "$global" = yes ] && [ $((errors + warnings)) -gt 0 ] && ! grep -q 'in __global__ memory' "$out"; then
    echo "FAIL $name: the reports do not say 'in __global__ memory'"
    failures=$((failures + 1))
    return
  fi
  echo "ok   $name (--racecheck-global $global): $errors errors, $warnings warnings"
}
for src in "$here"/*.cu; do
  name=$(basename "$src" .cu)
  read -r errors warnings < <(head -1 "$src" | sed -E 's|// expect: ([0-9]+) errors ([0-9]+) warnings|\1 \2|')
  check "$name" "$src" "$errors" "$warnings" yes
  check "$name" "$src" 0 0 no
done
check rc_global_race "$here/../programs/rc_global_race.cu" 2 0 yes
check rc_global_race "$here/../programs/rc_global_race.cu" 0 0 no
if [ "$failures" -ne 0 ]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "all global-race checks passed"
