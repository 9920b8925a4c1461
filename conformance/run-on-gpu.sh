#!/usr/bin/env bash
# Builds the conformance suite on a machine with an NVIDIA GPU and the CUDA toolkit, runs it against NVIDIA's
# driver and writes the results into OUTDIR:
#   nvidia-<gpu>.json     the results (commit as conformance/expectations/nvidia-<gpu>.json)
#   run-on-gpu.log        everything this script printed
#   nvidia-smi.txt        the GPU and driver
#   build-checks.txt      the suite's own checks (kernel images current, compare tool)
#   golden-nvidia-<gpu>.txt  outputs of every ptx.golden case (commit as conformance/golden/nvidia-<gpu>.txt)
# Usage: conformance/run-on-gpu.sh OUTDIR [GTEST_SOURCE]
#   GTEST_SOURCE: a GoogleTest source tree (a copy of /usr/src/googletest) when no GTest package is installed;
#   default: $CUEMU_GTEST_SOURCE, else the first of .gtest/, shared/googletest, /usr/src/googletest that exists.
# Environment: CUEMU_CONF_BUILD (build folder, default build-conf-gpu/ at the repository root, which a warm device
#   machine keeps between calls), CUEMU_CONF_SKIP_BUILD=1 (reuse that build), CUEMU_CONF_JOBS (default 16),
#   CUEMU_CONF_CASES (a --cases filter, e.g. 'api.*' then 'ptx.*,runtime.*' to split a run in two),
#   CUEMU_CONF_CASE_TIMEOUT (seconds, default 120).
set -uo pipefail
if [ $# -lt 1 ]; then
  echo "usage: $0 OUTDIR [GTEST_SOURCE]" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
mkdir -p "$1"
out=$(cd "$1" && pwd)
exec > >(tee "$out/run-on-gpu.log") 2>&1
trap 'sleep 1' EXIT  # lets tee write the last lines of the log before the machine collects OUTDIR
set -x

gtest=${2:-${CUEMU_GTEST_SOURCE:-}}
if [ -z "$gtest" ]; then
  for candidate in "$root/.gtest" "$root/shared/googletest" "$root/../shared/googletest" /usr/src/googletest; do
    if [ -f "$candidate/CMakeLists.txt" ]; then
      gtest=$candidate
      break
    fi
  done
fi
build=${CUEMU_CONF_BUILD:-$root/build-conf-gpu}
jobs=${CUEMU_CONF_JOBS:-16}
timeout=${CUEMU_CONF_CASE_TIMEOUT:-120}

nvidia-smi > "$out/nvidia-smi.txt" 2>&1 || echo "nvidia-smi failed" >> "$out/nvidia-smi.txt"
which nvcc cmake ninja g++ || true
nvcc --version || true
echo "LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}"
ldconfig -p | grep libcuda || true

generator=()
if command -v ninja > /dev/null; then generator=(-G Ninja); fi
gtest_arg=()
if [ -n "$gtest" ]; then gtest_arg=(-DCUEMU_GTEST_SOURCE="$gtest"); fi
SECONDS=0
if [ "${CUEMU_CONF_SKIP_BUILD:-0}" != 1 ] || [ ! -x "$build/cuemu-conformance" ]; then
  rm -rf "$build"
  if ! cmake -S "$here" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo "${gtest_arg[@]}"; then
    echo "CONFIGURE FAILED"
    exit 1
  fi
  if ! cmake --build "$build" -j "$jobs"; then
    echo "BUILD FAILED"
    exit 1
  fi
fi
echo "build took $SECONDS s"

(cd "$build" && ctest -R 'conformance-(kernels-current|compare-selftest)' --output-on-failure) > "$out/build-checks.txt" 2>&1 || true
cat "$out/build-checks.txt"

name=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
slug=$(echo "$name" | tr 'A-Z' 'a-z' | grep -oE 'h100|h200|h20|gh200|b200|b100|a100|a10g|a10|l40s|l40|l4|t4|v100' | head -1)
if [ -z "$slug" ]; then slug=$(echo "${name:-unknown}" | tr 'A-Z' 'a-z' | tr -c 'a-z0-9\n' '-' | sed 's/--*/-/g; s/^-//; s/-$//'); fi
results="$out/nvidia-$slug.json"
golden="$out/golden-nvidia-$slug.txt"
rm -f "$golden"
echo "# cuemu golden numerics v1, recorded on ${name:-unknown}: case inputs-hash count outputs(hex)" > "$golden"

cases_arg=()
if [ -n "${CUEMU_CONF_CASES:-}" ]; then cases_arg=(--cases "$CUEMU_CONF_CASES"); fi
CUEMU_CONF_GOLDEN_RECORD="$golden" "$build/cuemu-conformance" --results "$results" --label "nvidia-$slug" --case-timeout "$timeout" "${cases_arg[@]}"
rc=$?
set +x
echo "suite took $SECONDS s in all"
if [ ! -s "$results" ]; then
  echo "NO RESULTS (suite exit $rc)"
  exit 1
fi
echo "suite exit status $rc (failing cases on the GPU are data, not an error of this script)"
grep -E '"(driver_library|driver_version|device_name|summary)"' "$results"
echo "results: $results"
echo "golden outputs: $golden ($(grep -vc '^#' "$golden") forms)"
exit 0
