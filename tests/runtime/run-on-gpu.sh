#!/usr/bin/env bash
# Builds the runtime corpus exactly as CTest does (corpus.txt x variants.txt) and runs it against the machine's
# real driver (NVIDIA's libcuda.so.1), writing one log per test and a summary to an output folder.
#   tests/runtime/run-on-gpu.sh [OUTDIR]          (default: runtime-gpu-results)
# Environment: NVCC (default: nvcc on PATH or /usr/local/cuda/bin/nvcc), JOBS (default: nproc),
# ONLY (regex on program.variant to run a subset).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$(mkdir -p "${1:-runtime-gpu-results}" && cd "${1:-runtime-gpu-results}" && pwd)
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
jobs=${JOBS:-$(nproc)}
only=${ONLY:-.}
cudart_dir=$(cd "$(dirname "$nvcc")/../lib64" && pwd)
bin="$out/bin"
mkdir -p "$bin" "$out/logs"

field() { echo "$1" | awk -F'|' -v i="$2" '{ gsub(/^[ \t]+|[ \t]+$/, "", $i); print $i }'; }

declare -A variant_flags
all_variants=()
while IFS= read -r line; do
  [[ -z "$line" || "$line" == \#* ]] && continue
  name=$(field "$line" 1)
  variant_flags[$name]=$(field "$line" 2)
  [[ "$name" != sassonly ]] && all_variants+=("$name")
done < "$here/variants.txt"

# One line per test: program variant binary expect
tests=()
while IFS= read -r line; do
  [[ -z "$line" || "$line" == \#* ]] && continue
  program=$(field "$line" 1)
  sources=$(field "$line" 2)
  variants=$(field "$line" 3)
  extra=$(field "$line" 4)
  expect=$(field "$line" 5)
  [[ "$variants" == all ]] && variants="${all_variants[*]}"
  for variant in $variants; do
    [[ "$program.$variant" =~ $only ]] || continue
    mkdir -p "$bin/$variant"
    srcs=""
    for s in $sources; do srcs+=" $here/programs/$s"; done
    echo "$nvcc ${variant_flags[$variant]} $extra -I$here/programs -o $bin/$variant/$program $srcs" \
      "> $out/logs/build.$program.$variant.log 2>&1"
    tests+=("$program|$variant|$expect")
  done
done < "$here/corpus.txt" > "$out/build-commands.sh"

echo "building ${#tests[@]} binaries with $jobs jobs ($nvcc)"
xargs -P "$jobs" -I{} sh -c '{}' < "$out/build-commands.sh"

summary="$out/summary.tsv"
printf 'test\tresult\tms\n' > "$summary"
pass=0 fail=0 skip=0
for t in "${tests[@]}"; do
  IFS='|' read -r program variant expect <<< "$t"
  name="runtime.$program.$variant"
  log="$out/logs/$name.log"
  exe="$bin/$variant/$program"
  if [[ ! -x "$exe" ]]; then
    result=BUILD-FAILED; ms=0
  else
    start=$(date +%s%N)
    LD_LIBRARY_PATH="$cudart_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" timeout 300 "$exe" > "$log" 2>&1
    rc=$?
    ms=$(( ($(date +%s%N) - start) / 1000000 ))
    if [[ $rc == 77 ]]; then
      result=SKIP
    elif [[ $rc == 0 ]] && grep -q "^PASS " "$log" && { [[ -z "$expect" ]] || grep -Eq -- "$expect" "$log"; }; then
      result=PASS
    else
      result="FAIL(rc=$rc)"
    fi
  fi
  case $result in PASS) ((pass++));; SKIP) ((skip++));; *) ((fail++));; esac
  printf '%s\t%s\t%s\n' "$name" "$result" "$ms" >> "$summary"
  printf '%-45s %s\n' "$name" "$result"
done
nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader > "$out/gpu.txt" 2>&1 || true
echo "pass=$pass fail=$fail skip=$skip  (summary: $summary, logs: $out/logs)"
[[ $fail == 0 ]]
