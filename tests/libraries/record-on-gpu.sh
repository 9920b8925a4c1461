#!/bin/bash
# Records NVIDIA's libraries' results on a GPU, for tests/libraries/recorded/ (run on a machine with a GPU, its
# driver, the CUDA toolkit and, optionally, CuPy):
#   tests/libraries/record-on-gpu.sh OUTDIR
# Writes OUTDIR/nvidia-gpu.txt (C libraries), OUTDIR/nvidia-gpu-cupy.txt (CuPy) and their logs. Each C case runs
# in its own process, so a case that crashes loses only itself.
set -u
out=${1:?usage: record-on-gpu.sh OUTDIR}
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
cuda=$(dirname "$(dirname "$(command -v nvcc)")")
bin=$(mktemp -d)/library-calls
g++ -std=c++17 -O1 -I"$cuda/include" "$here/library_calls.cpp" -o "$bin" -L"$cuda/lib64" -lcublasLt -lcublas \
  -lcurand -lcusparse -lcufft -lcusolver -lcudart -Wl,-rpath,"$cuda/lib64" || exit 1
rm -f "$out/nvidia-gpu.txt"
for name in $("$bin" list); do
  timeout 120 "$bin" record "$out/nvidia-gpu.txt" "$name" >> "$out/record-log.txt" 2>&1 ||
    echo "case $name: recorder exit $?" >> "$out/record-log.txt"
done
CUPY_ACCELERATORS=cub timeout 240 python3 "$here/cupy_calls.py" record "$out/nvidia-gpu-cupy.txt" \
  > "$out/cupy-log.txt" 2>&1 || echo "cupy recorder exit $?" >> "$out/cupy-log.txt"
