#!/usr/bin/env bash
# ggml's own operator tests (test-backend-ops: every operator of ggml's CUDA backend compared with its CPU backend in
# the same process, thousands of shapes and types) on cuemu. ggml is llama.cpp's tensor library; its CUDA backend is
# about 150 .cu files (quantised matrix products with mma, flash attention, scans, convolutions) nobody here wrote.
#
#   tools/clients/run-ggml-backend-ops.sh GGML_SOURCE CUEMU_BUILD OUT [PROFILE] [OP...]
#
# GGML_SOURCE: a ggml checkout (github.com/ggml-org/ggml; llama.cpp's ggml/ folder works too). It is built once into
# OUT.build for compute_90 PTX only (CMAKE_CUDA_ARCHITECTURES=90-virtual: no SASS, about 15 minutes on 2 cores), with
# the toolkit's nvcc. Each operator then runs in a process of its own through `cuemu run --device-profile PROFILE`
# (default rtx-pro-6000: ggml's matrix products call cuBLAS, whose kernels carry PTX for compute capability 12 only),
# so that an abort (ggml stops the process at a CUDA error) loses one operator, not the run. Per-operator time limit:
# GGML_OP_TIMEOUT seconds (default 900). GGML_PARAMS: a regular expression; only tests whose parameters contain a
# match run (MUL_MAT's quantised types: GGML_PARAMS='type_a=(q|iq|mxfp|tq)').
# Writes OUT.tsv ("test<TAB>status": OK, FAIL, unsupported, abort: the process stopped in it, and the operator ran
# again without it; timeout: the operator's process ran out of time there) and OUT.log, and compares with tools/clients/ggml-known-differences.txt (globs, `pattern | reason`):
# exit 1 when a test fails or an operator aborts that the list does not explain.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "${1:?usage: run-ggml-backend-ops.sh GGML_SOURCE CUEMU_BUILD OUT [PROFILE] [OP...]}" && pwd) || exit 2
cuemu_build=$(cd "${2:?CUEMU_BUILD}" && pwd) || exit 2
out=${3:?OUT}
profile=${4:-rtx-pro-6000}
shift $(( $# >= 4 ? 4 : $# ))
cuemu=$cuemu_build/emu/cuemu
[ -x "$cuemu" ] || { echo "no $cuemu: build cuemu first"; exit 2; }
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
build=$out.build
if [ ! -x "$build/bin/test-backend-ops" ]; then
  echo "building ggml's CUDA backend for compute_90 PTX into $build"
  # libggml-cuda.so needs libcuda.so.1 at link time: cuemu's
  PATH="$(dirname "$nvcc"):$PATH" cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGGML_CUDA=ON \
    -DCMAKE_CUDA_ARCHITECTURES=90-virtual -DGGML_CUDA_NCCL=OFF -DGGML_NATIVE=OFF -DGGML_BUILD_TESTS=ON \
    -DGGML_BUILD_EXAMPLES=OFF -DCMAKE_EXE_LINKER_FLAGS="-Wl,-rpath-link,$cuemu_build/emu" >"$out.cmake.log" 2>&1 &&
    PATH="$(dirname "$nvcc"):$PATH" ninja -C "$build" test-backend-ops >"$out.build.log" 2>&1 ||
    { echo "the build failed: $out.cmake.log, $out.build.log"; exit 2; }
fi
run=("$cuemu" run --device-profile "$profile" -- "$build/bin/test-backend-ops")
ops=("$@")
[ ${#ops[@]} -eq 0 ] && mapfile -t ops < <("${run[@]}" --list-ops 2>/dev/null | sed -n 's/^  \([A-Z_0-9]*\)$/\1/p')
[ ${#ops[@]} -gt 0 ] || { echo "test-backend-ops lists no operators"; exit 2; }
: >"$out.tsv"
: >"$out.log"
start=$(date +%s)
# ggml stops the process at a CUDA error: the test it was in is recorded as "abort", and the operator runs again
# without it (test-backend-ops -p takes a regular expression over a test's parameters), up to GGML_OP_ATTEMPTS
# times (default 40).
escape() { printf '%s' "$1" | sed -e 's/[][\\.^$*+?(){}|]/\\&/g'; }
for op in "${ops[@]}"; do
  excluded=()
  attempts=${GGML_OP_ATTEMPTS:-40}
  for attempt in $(seq 1 "$attempts"); do
    pattern=^
    [ -n "${GGML_PARAMS:-}" ] && pattern+="(?=.*(${GGML_PARAMS}))"
    if [ ${#excluded[@]} -gt 0 ]; then
      alternatives=$(printf '%s|' "${excluded[@]}")
      pattern+="(?!(${alternatives%|})$)"
    fi
    filter=()
    [ "$pattern" != ^ ] && filter=(-p "$pattern")
    log=$(mktemp)
    timeout "${GGML_OP_TIMEOUT:-900}" "${run[@]}" -b CUDA0 -o "$op" "${filter[@]}" >"$log" 2>&1
    status=$?
    cat "$log" >>"$out.log"
    # "  OP(params): OK" (ANSI colours removed); "not supported [CUDA0]" lines are operators the backend declines;
    # a line with neither is the test the process ended in
    # (a failing test's line starts with the error: "[OP] ERR = 2.0 > 1e-07   OP(params): FAIL")
    sed -e 's/\x1b\[[0-9;]*m//g' "$log" | awk -v op="$op" '
      index($0, "  " op "(") == 1 || ($0 ~ /: FAIL$/ && index($0, " " op "(") > 0) {
        line = index($0, "  " op "(") == 1 ? substr($0, 3) : substr($0, index($0, " " op "(") + 1)
        if (line ~ /: OK$/) { sub(/: OK$/, "", line); print line "\tOK" }
        else if (line ~ /: FAIL$/) { sub(/: FAIL$/, "", line); print line "\tFAIL" }
        else if (line ~ /: not supported \[CUDA0\] *$/) { sub(/: not supported \[CUDA0\] *$/, "", line); print line "\tunsupported" }
        else { sub(/: .*$/, "", line); print line "\tended" }
      }' >"$log.rows"
    ended=$(awk -F'\t' '$2 == "ended" { t = $1 } END { print t }' "$log.rows")
    grep -v $'\tended$' "$log.rows" >>"$out.tsv"
    complete=0
    sed -e 's/\x1b\[[0-9;]*m//g' "$log" | grep -q '^  Backend CUDA0: \(OK\|FAIL\)' && complete=1
    rm -f "$log" "$log.rows"
    if [ $status -eq 124 ]; then
      printf '%s\ttimeout\n' "${ended:-$op}" >>"$out.tsv"
      break
    fi
    [ $complete -eq 1 ] && break
    printf '%s\tabort\n' "${ended:-$op}" >>"$out.tsv"
    [ -n "$ended" ] && [ "$attempt" -lt "$attempts" ] || break
    params=${ended#"$op("}
    excluded+=("$(escape "${params%)}")")
    # the tests before it ran already: drop their rows, which the next attempt writes again
    awk -F'\t' -v op="$op" -v keep="$ended" 'index($1, op "(") != 1 || $2 == "abort" || $1 == keep' "$out.tsv" >"$out.tsv.new"
    mv "$out.tsv.new" "$out.tsv"
  done
  printf '%-24s %s\n' "$op" "$(awk -F'\t' -v op="$op" 'index($1, op "(") == 1 || $1 == op { n[$2]++ }
    END { for (s in n) printf "%s %d  ", s, n[s] }' "$out.tsv")"
done
echo "$(date +%s) $start" | awk '{ printf "%d operators in %d s on the %s profile\n", '"${#ops[@]}"', $1 - $2, "'"$profile"'" }'
cut -f2 "$out.tsv" | sort | uniq -c
python3 - "$out.tsv" "$here/ggml-known-differences.txt" <<'EOF'
import fnmatch, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if "\t" in l]
known = []
for line in open(sys.argv[2]):
    line = line.strip()
    if line and not line.startswith("#"):
        pattern, _, reason = line.partition(" | ")
        known.append((pattern.strip(), reason.strip()))
bad = 0
for test, status in rows:
    if status in ("OK", "unsupported"):
        continue
    reason = next((r for p, r in known if fnmatch.fnmatchcase(test, p)), None)
    if reason:
        print(f"  KNOWN {test}: {status} ({reason})")
    else:
        print(f"  UNEXPLAINED {test}: {status}")
        bad += 1
print(f"{bad} unexplained")
sys.exit(1 if bad else 0)
EOF
