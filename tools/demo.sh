#!/usr/bin/env bash
# Builds cuemu and runs the main demo on it.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${CUEMU_BUILD_DIR:-build}
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
[ -f "$build/CMakeCache.txt" ] && generator=()
cmake -S . -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j"$(nproc)" --target cuemu-demo
LD_LIBRARY_PATH="$PWD/$build/emu" "$build/tests/demo/cuemu-demo"
