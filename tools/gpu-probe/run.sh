#!/bin/bash
# Builds and runs one probe program against the machine's NVIDIA driver.
# Usage: [PROBE=name] tools/gpu-probe/run.sh OUTDIR   (runs tools/gpu-probe/$PROBE.cpp; default probe)
set -u
out=${1:-/tmp/probe}
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
cuda=$(dirname "$(dirname "$(command -v nvcc)")")
g++ -std=c++20 -O1 -I"$cuda/include" "$here/${PROBE:-probe}.cpp" -o "$out/probe" -L"$cuda/lib64/stubs" -lcuda -lpthread -ldl \
  && "$out/probe" > "$out/probe.txt" 2>&1
echo "probe exit $?" >> "$out/probe.txt"
cat "$out/probe.txt"
