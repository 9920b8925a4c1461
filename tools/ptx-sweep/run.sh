#!/bin/sh
# PTX sweep of NVIDIA's headers: every public device function of cuda_fp16/bf16/fp8/fp6/fp4.h, the sm_*
# intrinsics, atomic and runtime headers, device_functions.h, and a set of cooperative_groups, cuda::std,
# cuda::ptx, CUB and Thrust uses, compiled with nvcc -ptx per architecture, assembled by ptxas (the oracle) and
# loaded by cuemu (parse + check + lower). See README.md here.
#   tools/ptx-sweep/run.sh [BUILD_DIR] [OUT_DIR] [ARCHS] [GROUPS]
# BUILD_DIR: a cuemu build with ptx_front_cli (default build); OUT_DIR (default BUILD_DIR/ptx-sweep): wrappers,
# PTX, sweep.log (every nvcc/ptxas/cuemu failure), summary.txt; ARCHS default 75,80,90,90a,121 (121 = the
# newest nvcc 13 knows); GROUPS default all (fp16,bf16,fp8,fp6,fp4,intrinsics,atomics,device_functions,
# cooperative_groups,cuda_std,cuda_ptx,cub,thrust). Exit status 1 when cuemu refuses a file ptxas accepts.
set -e
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-build}
out=${2:-$build/ptx-sweep}
archs=${3:-75,80,90,90a,121}
groups=${4:-}
cmake --build "$build" --target ptx_front_cli >/dev/null
exec python3 "$here/sweep.py" --cli "$build/tests/ptx-front/ptx_front_cli" --out "$out" --archs "$archs" \
  --groups "$groups" --jobs "${CUEMU_SWEEP_JOBS:-2}"
