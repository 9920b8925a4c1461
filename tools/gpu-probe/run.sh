#!/bin/bash
# Builds and runs the probes against the machine's NVIDIA driver. Usage: tools/gpu-probe/run.sh OUTDIR
set -u
out=${1:-/tmp/probe}
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
cuda=$(dirname "$(dirname "$(command -v nvcc)")")
g++ -std=c++20 -O1 -I"$cuda/include" "$here/probe.cpp" -o "$out/probe" -L"$cuda/lib64/stubs" -lcuda -lpthread \
  && "$out/probe" > "$out/probe.txt" 2>&1
echo "probe exit $?" >> "$out/probe.txt"
cat "$out/probe.txt"
