#!/usr/bin/env bash
# Builds cuemu and runs every test (unit tests, ABI test, conformance suite on cuemu).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${CUEMU_BUILD_DIR:-build}
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
[ -f "$build/CMakeCache.txt" ] && generator=()
cmake -S . -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@"
cmake --build "$build" -j"$(nproc)"
ctest --test-dir "$build" --output-on-failure -j"$(nproc)"
