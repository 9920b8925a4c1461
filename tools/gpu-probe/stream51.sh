#!/bin/bash
# On a machine with a GPU, for cuBLAS/cuSOLVER/CuPy on cuemu (issue 18 item 3, issue 17):
#  1. what driver 580 answers in slots 51 and 39 of export table 21318c60 (stream51.cpp, one process per variant);
#  2. NVIDIA's libraries' results for tests/libraries/recorded/ (record-on-gpu.sh);
#  3. what cuBLAS, cuSOLVER and CuPy do with 21318c60 on the real driver (exportlog17's logging driver), and what
#     cuBLAS does with CUDA_FORCE_PTX_JIT=1 on the GPU (its kernels' PTX is compute_120 only).
# Usage: stream51.sh OUTDIR [PYTHON]
set -u
out=${1:?usage: stream51.sh OUTDIR [PYTHON]}
python=${2:-python3}
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
cuda=$(dirname "$(dirname "$(command -v nvcc)")")
work=$(mktemp -d)

{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null
  g++ -std=c++20 -O1 -I"$cuda/include" "$here/stream51.cpp" -o "$work/stream51" -L"$cuda/lib64/stubs" -lcuda \
    -lpthread || echo "stream51 build failed"
  for v in basic per-thread-flag-0 NULL-flag-1 blocking-flag-1 ctx-NULL ctx-NULL-blocking slot39-on-the-raw-handle \
    slot39-null-stream slot51-null-out slot39-null-out destroyed-stream capturing second-context; do
    timeout 30 "$work/stream51" "$v"
    echo "== $v exit $?"
  done
} > "$out/stream51.txt" 2>&1

CUPY_ACCELERATORS=cub "$repo/tests/libraries/record-on-gpu.sh" "$out/record"

real=${SHIM_REAL_LIBCUDA:-$(ldconfig -p | awk '/libcuda\.so\.1 /{print $NF; exit}')}
real=$(readlink -f "$real")
log=$out/shim.txt
{
  echo "real driver: $real"
  "$here/exportlog17/build.sh" "$real" "$work/shim" || echo "shim build failed"
  g++ -std=c++17 -O1 -I"$cuda/include" "$repo/tests/libraries/library_calls.cpp" -o "$work/library-calls" \
    -L"$cuda/lib64" -lcublasLt -lcublas -lcurand -lcusparse -lcufft -lcusolver -lcudart -Wl,-rpath,"$cuda/lib64" ||
    echo "library-calls build failed"
} > "$log" 2>&1
shimmed() {  # TAG COMMAND...
  local tag=$1
  shift
  mkdir -p "$work/logs"
  echo "===== $tag: $*" >> "$log"
  SHIM_LOG="$work/logs/$tag" SHIM_LOG_CALLS=1 SHIM_REAL_LIBCUDA="$real" LD_LIBRARY_PATH="$work/shim${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    timeout 60 "$@" >> "$log" 2>&1
  echo "===== $tag exit $?" >> "$log"
  for f in "$work/logs/$tag".*; do
    [ -e "$f" ] || continue
    echo "----- log $(basename "$f")" >> "$log"
    grep -v '^call cuDeviceGetAttribute\|^call cuGetProcAddress' "$f" | head -c 1500000 >> "$log"
  done
}
for c in cublas.sgemm cublas.gemmex.f16 cusolver.getrf_getrs.f32; do shimmed "$c" "$work/library-calls" run "$c"; done
shimmed cupy.matmul-solve "$python" -c '
import cupy, numpy
a = cupy.arange(64 * 40, dtype=cupy.float32).reshape(64, 40) % 7
print("matmul", float((a @ a.T).sum()))
m = cupy.eye(8, dtype=cupy.float64) * 2 + 0.5
print("solve", cupy.linalg.solve(m, cupy.ones(8)).get())
'
{
  for c in cublas.sgemm cublas.hgemm cublas.gemmex.f16; do
    echo "===== CUDA_FORCE_PTX_JIT=1 $c"
    CUDA_FORCE_PTX_JIT=1 CUBLASLT_LOG_LEVEL=5 timeout 60 "$work/library-calls" run "$c" 2>&1 | cut -c1-600 | tail -40
  done
} > "$out/force-ptx-jit.txt" 2>&1
exit 0
