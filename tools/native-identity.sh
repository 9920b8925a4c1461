#!/usr/bin/env bash
# The native tier's identity runs in full (docs/native-tier.md, "Identity"): what ctest's `native` label runs in part.
#
#   tools/native-identity.sh [generated N [FIRST]] [conformance] [golden] [runtime] [clients]
#   (no argument: all but clients, N = 2000)
#
# - generated: N generated kernels (seeds FIRST..FIRST+N-1, kernel_generator.h) run interpreted and compiled, their
#   memory compared byte for byte; in chunks of 100, each chunk a process, so a failure names its chunk and the
#   seed to reproduce it (CUEMU_NATIVE_GENERATED_FIRST=k CUEMU_NATIVE_GENERATED=1 build/tests/ptx-exec/ptx_exec_tests
#   --gtest_filter=NativeTier.Generated*);
# - conformance: every PTX case of the conformance suite but the golden forms, and the runtime programs, through
#   the driver with the tier on and every kernel compiled at its first launch, against the GPU's expectations;
# - golden: the golden forms (ptx.golden.*) the same way;
# - runtime: the runtime-API corpus (tests/runtime, nvcc-built programs; the default build variant of each) through
#   ctest with the tier on the same way (ctest's runtime-native-tiered and runtime-native-compiled run it with the
#   default hotness, and a subset with every kernel compiled);
# - clients: the real clients of tests/clients/run.sh (cuda-python, numba-cuda, CuPy, Triton, cuda-cccl, JAX, Taichi,
#   tinygrad, Warp, PyCUDA, CuTe DSL, every cudart 13.x) with the tier on the same way, their kernels' code cached
#   in a folder of this run ($build/native-identity-clients.cache) and the tier's statistics summed from
#   $build/native-identity-clients.stats (not part of "all": it needs the clients' environments, which ctest's
#   `clients` makes).
# Runs at nice 10; prints each part's time. CUEMU_BUILD_DIR: the build tree (default build).
set -uo pipefail
cd "$(dirname "$0")/.."
build=${CUEMU_BUILD_DIR:-build}
parts=("$@")
[ ${#parts[@]} -eq 0 ] && parts=(generated 2000 conformance golden runtime)
tier=(CUEMU_NATIVE=1 CUEMU_NATIVE_HOT_LAUNCHES=1 CUEMU_NATIVE_BACKGROUND=0 CUEMU_NATIVE_CACHE_DISABLE=1)
status=0

conformance() {  # name, case patterns
  local start=$SECONDS
  env "${tier[@]}" CUEMU_CONF_CASE_TIMEOUT=300 nice -n 10 cmake -DSUITE="$build/conformance/cuemu-conformance" \
    -DCOMPARE="$build/conformance/cuemu-conformance-compare" -DLIBDIR="$build/emu" \
    -DRESULTS="$build/conformance/results/native-identity-$1.json" -DEXPECT=conformance/expectations \
    -DKNOWN=conformance/known-differences.txt -DGOLDEN_DIR=conformance/golden -DCASES="$2" \
    -P conformance/cmake/run-conformance.cmake | grep -v '^note: ' || status=1
  echo "native-identity: $1 took $((SECONDS - start)) s"
}

i=0
while [ $i -lt ${#parts[@]} ]; do
  case "${parts[$i]}" in
    generated)
      count=2000 first=0
      [[ ${parts[$((i + 1))]:-} =~ ^[0-9]+$ ]] && count=${parts[$((i + 1))]} && i=$((i + 1))
      [[ ${parts[$((i + 1))]:-} =~ ^[0-9]+$ ]] && first=${parts[$((i + 1))]} && i=$((i + 1))
      start=$SECONDS
      [ -x "$build/tests/ptx-exec/ptx_exec_tests" ] || { echo "no $build/tests/ptx-exec/ptx_exec_tests" >&2; exit 2; }
      for ((chunk = first; chunk < first + count; chunk += 100)); do
        n=$((first + count - chunk < 100 ? first + count - chunk : 100))
        if ! CUEMU_NATIVE_GENERATED=$n CUEMU_NATIVE_GENERATED_FIRST=$chunk nice -n 10 \
          "$build/tests/ptx-exec/ptx_exec_tests" --gtest_filter='NativeTier.Generated*' >"$build/native-generated-$chunk.log" 2>&1; then
          echo "native-identity: generated kernels $chunk..$((chunk + n - 1)) differ: $build/native-generated-$chunk.log"
          status=1
        fi
      done
      echo "native-identity: $count generated kernels from $first took $((SECONDS - start)) s"
      ;;
    conformance)
      conformance ptx 'ptx.matrix*,ptx.contraction*,ptx.cluster*,ptx.async*,ptx.float*,ptx.integer*,ptx.convert*,ptx.bits*,ptx.warp*,ptx.atomic*,ptx.special*,ptx.memory*,ptx.control*,ptx.barrier*,runtime.*'
      ;;
    golden) conformance golden 'ptx.golden.*' ;;
    runtime)
      start=$SECONDS
      env "${tier[@]}" nice -n 10 ctest --test-dir "$build" -R '^runtime\..*\.default$' --output-on-failure || status=1
      echo "native-identity: the runtime corpus took $((SECONDS - start)) s"
      ;;
    clients)
      start=$SECONDS
      where=$(cd "$build" && pwd)  # (the clients' processes run in folders of their own)
      rm -rf "$where/native-identity-clients.cache" "$where/native-identity-clients.stats"
      env "${tier[@]}" CUEMU_NATIVE_CACHE_DISABLE=0 CUEMU_NATIVE_CACHE_PATH="$where/native-identity-clients.cache" \
        CUEMU_NATIVE_STATS="$where/native-identity-clients.stats" nice -n 10 tests/clients/run.sh "$where" || status=1
      python3 - "$where/native-identity-clients.stats" <<'PY'
import re, sys
total = {}
for line in open(sys.argv[1]):
    for key, value in re.findall(r"(\w+)=([\d.]+)", line):
        if key != "pid":
            total[key] = total.get(key, 0) + float(value)
print("native-identity: clients: {} kernels compiled, {} refused, {} launches compiled, {} interpreted".format(
    *(int(total.get(k, 0)) for k in ("kernels_compiled", "kernels_refused", "launches_compiled", "launches_interpreted"))))
PY
      echo "native-identity: the clients took $((SECONDS - start)) s"
      ;;
    *) echo "unknown part ${parts[$i]}" >&2; exit 2 ;;
  esac
  i=$((i + 1))
done
exit $status
