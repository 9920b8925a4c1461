#!/bin/bash
# int8 GEMMs through cuBLAS/cuBLASLt (issue 18 item 3): records the int8 cases of tests/libraries/library_calls.cpp,
# checks them against the host's exact results, and logs what cuBLASLt's heuristics choose for int8 shapes
# (heur.cpp) and which algorithms pass cublasLtMatmulAlgoCheck and compute the exact product (probe.cpp).
#   tools/gpu-probe/int8gemm18/run.sh            (on the GPU machine; OUT: where the recording goes)
# On cuemu the same programs run with LD_LIBRARY_PATH=build/emu:/usr/local/cuda/lib64 and
# CUEMU_DEVICE_PROFILE=rtx-pro-6000 or gb10 (with and without CUDA_FORCE_PTX_JIT=1).
# Result of 2026-11-27 on an H100: tools/gpu-probe/results/int8gemm18-h100-2026-11-27.txt.
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-/tmp}
cuda=$(dirname "$(dirname "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)")")
bin=$(mktemp -d)
echo "toolkit $cuda"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
link="-L$cuda/lib64 -Wl,-rpath,$cuda/lib64"
g++ -std=c++17 -O1 -I"$cuda/include" "$here/../../../tests/libraries/library_calls.cpp" -o "$bin/lc" $link \
  -lcublasLt -lcublas -lcurand -lcusparse -lcufft -lcusolver -lcudart &
g++ -O1 -I"$cuda/include" "$here/heur.cpp" -o "$bin/heur" $link -lcublasLt -lcudart &
g++ -O1 -I"$cuda/include" "$here/probe.cpp" -o "$bin/probe" $link -lcublasLt -lcudart &
wait
for c in m128n128k128 m64n16k40 m64n64k40; do
  timeout 60 "$bin/lc" record "$out/nvidia-gpu.txt" cublas.gemmex.int8.$c
  timeout 60 "$bin/lc" exact cublas.gemmex.int8.$c
done
timeout 60 "$bin/lc" check "$here/../../../tests/libraries/recorded/nvidia-h100.txt" cublas.gemmex.int8
for dims in "64 48 40" "64 64 40" "64 16 40" "128 128 128" "64 48 48"; do
  echo "== heuristics $dims"; CUBLASLT_LOG_LEVEL=5 timeout 30 "$bin/heur" $dims 2>&1 | grep -v "\]\[Api\]" | cut -c1-400
done
echo "== probe 64 48 40"; timeout 60 "$bin/probe" 64 48 40 2>&1 | grep -v "0 configurations\|0 tiles"
