#!/usr/bin/env bash
# Runs on a machine with an NVIDIA GPU: records the driver's exports and answers into $1 (default $OUT/driver).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$OUT/driver}
mkdir -p "$out"
lib=$(ldconfig -p | awk '/libcuda.so.1 /{print $NF; exit}')
echo "libcuda: $lib" > "$out/libcuda-path.txt"
readlink -f "$lib" >> "$out/libcuda-path.txt"
nm -D --defined-only "$lib" | awk '{print $3}' | sed 's/@.*//' | sort -u > "$out/exports.txt"
g++ -O1 -std=c++17 -Wno-deprecated-declarations -I/usr/local/cuda/include "$here/record.cpp" -o /tmp/record -ldl -lcuda
/tmp/record "$here/query-names.txt" "$out/exports.txt" "$out"
nvidia-smi -q > "$out/nvidia-smi.txt" 2>&1 || true
