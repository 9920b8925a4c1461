#!/usr/bin/env bash
# Builds cuemu with a sanitizer in a build folder of its own and runs the unit tests, the conformance suite and
# the reliability suite under it (issue 24). Run before every stop that touches concurrency or memory.
#
#   tools/sanitize.sh [address|thread|all] [--reduced] [--units REGEX]
#
#   address  CUEMU_SANITIZE=address (AddressSanitizer + UndefinedBehaviorSanitizer) in build-asan/
#   thread   CUEMU_SANITIZE=thread (ThreadSanitizer) in build-tsan/
#   all      both, one after the other (the default)
#   --reduced  the set meant for CI: the stream, context and interpreter-synchronisation unit tests and the
#              reliability suite's concurrency, fault and launch cases (README.md says how long it takes)
#   --units REGEX  only the unit-test binaries whose name matches (grep -E), e.g. 'stream|context'; conformance
#              and the reliability suite still run (a device-machine call that must stay under its time limit)
#
# Environment: CUEMU_SANITIZE_JOBS (build and test parallelism, default: number of cores, at most 2 on a
# shared machine if you set it so), CUEMU_SANITIZE_BUILD_PREFIX (default: build).
# The nvcc-built runtime corpus, the Python clients, benchmarks and fuzzers are not part of these builds: their
# binaries are not instrumented (an uninstrumented executable cannot load an ASan-built libcuda.so.1).
# Exit status: 0 when every part passed; the failing parts are listed at the end. Reports are in
# <build>/sanitize-logs/.
set -uo pipefail
cd "$(dirname "$0")/.."
kinds=(address thread)
reduced=0
units_regex=
while [ $# -gt 0 ]; do
  case "$1" in
    address | thread) kinds=("$1") ;;
    all) kinds=(address thread) ;;
    --reduced) reduced=1 ;;
    --units) units_regex=${2:?--units needs a regular expression}; shift ;;
    *) echo "usage: $0 [address|thread|all] [--reduced] [--units REGEX]" >&2; exit 2 ;;
  esac
  shift
done
jobs=${CUEMU_SANITIZE_JOBS:-$(nproc)}
prefix=${CUEMU_SANITIZE_BUILD_PREFIX:-build}
failed=()

# Leaks: the driver keeps process-wide tables and pools alive until exit on purpose.
# allocator_may_return_null: hostile-input cases ask for absurd sizes (cuMemAllocHost of 2^63 bytes) and must get
# an error code back, as from the plain allocator, not a sanitizer abort.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=0:halt_on_error=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=0:second_deadlock_stack=1:exitcode=66:allocator_may_return_null=1:suppressions=$PWD/tools/tsan-suppressions.txt}

# binary|gtest filter|environment (what the binary's ctest entries set)
context_env="CUEMU_CONFIG=$PWD/tests/emu-context/two_devices.conf"
unit_tests_full=(
  "tests/emu-stream/cuemu-stream-test|*|"
  "tests/emu-context/emu_context_tests|*|$context_env"
  "tests/emu-memory/emu-memory-tests|*|"
  "tests/emu-fatbin/cuemu-fatbin-test|*|"
  "tests/emu-fatbin/cuemu-image-load-fuzz-test|*|"
  "tests/emu-api/cuemu-api-test|*|"
  "tests/emu-export-tables/cuemu-export-tables-test|*|CUEMU_DEVICE_COUNT=2"
  "tests/ptx-exec/ptx_exec_tests|*|"
  "tests/ptx-front/ptx_front_tests|*|"
  "tests/ptx-link/cuemu-ptx-link-test|*|"
)
unit_tests_reduced=(
  "tests/emu-stream/cuemu-stream-test|*|"
  "tests/emu-context/emu_context_tests|*|$context_env"
  "tests/ptx-exec/ptx_exec_tests|PtxSync.*:PtxWatchdog.*|"
)
reliability_reduced=(concurrency_ faults_ launches_)

run_part() {  # name, log, command...
  local name=$1 log=$2
  shift 2
  local start=$SECONDS
  if "$@" >"$log" 2>&1; then
    echo "  pass  $name ($((SECONDS - start)) s)"
  else
    echo "  FAIL  $name ($((SECONDS - start)) s): $log"
    grep -m3 -E "ERROR: (Address|Thread|UndefinedBehavior)Sanitizer|WARNING: ThreadSanitizer|runtime error:" "$log" |
      sed 's/^/        /'
    failed+=("$name")
  fi
}

for kind in "${kinds[@]}"; do
  case "$kind" in
    address) build=$prefix-asan ;;
    thread) build=$prefix-tsan ;;
  esac
  logs=$build/sanitize-logs
  echo "== $kind sanitizer in $build"
  # Warnings are the normal build's business: gcc 13's flow analysis of sanitizer-instrumented code reports array
  # bounds that the plain build does not (a false -Warray-bounds in lower.cpp), so -Werror is off here.
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCUEMU_SANITIZE="$kind" -DCUEMU_WERROR=OFF \
    -DCUEMU_RUNTIME_CORPUS=OFF -DCUEMU_PTX_FUZZER=OFF -DCUEMU_FUZZERS=OFF \
    -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache >/dev/null || exit 1
  if [ $reduced = 1 ]; then
    units=("${unit_tests_reduced[@]}")
  else
    units=("${unit_tests_full[@]}")
  fi
  if [ -n "$units_regex" ]; then
    selected=()
    for entry in "${units[@]}"; do
      binary=${entry%%|*}
      if echo "${binary##*/}" | grep -qE "$units_regex"; then selected+=("$entry"); fi
    done
    units=("${selected[@]}")
  fi
  targets=(cuda cuemu-reliability-cases cuemu-reliability-run)
  for entry in "${units[@]}"; do
    binary=${entry%%|*}
    targets+=("${binary##*/}")
  done
  [ $reduced = 1 ] || targets+=(cuemu-conformance cuemu-conformance-compare)
  build_start=$SECONDS
  cmake --build "$build" -j"$jobs" --target "${targets[@]}" >"$build/sanitize-build.log" 2>&1 ||
    { echo "  build failed: $build/sanitize-build.log"; failed+=("$kind build"); continue; }
  echo "  built in $((SECONDS - build_start)) s"
  mkdir -p "$logs"
  for entry in "${units[@]}"; do
    IFS='|' read -r binary filter environment <<<"$entry"
    run_part "$kind ${binary##*/}" "$logs/${binary##*/}.log" \
      env $environment "$build/$binary" --gtest_filter="$filter"
  done
  if [ $reduced = 1 ]; then
    run_part "$kind reliability (reduced)" "$logs/reliability.log" "$build/tests/reliability/cuemu-reliability-run" \
      "$build/tests/reliability/cuemu-reliability-cases" --jobs "$jobs" --scale 4 "${reliability_reduced[@]}"
  else
    # The suite against the sanitized libcuda.so.1, compared with the GPU's expectations (as `ctest -R conformance`).
    run_part "$kind conformance" "$logs/conformance.log" ctest --test-dir "$build" -R '^conformance$' --output-on-failure
    run_part "$kind reliability" "$logs/reliability.log" "$build/tests/reliability/cuemu-reliability-run" \
      "$build/tests/reliability/cuemu-reliability-cases" --jobs "$jobs" --scale 4
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "sanitize: failed: ${failed[*]}"
  exit 1
fi
echo "sanitize: all passed"
