#!/usr/bin/env bash
# CUTLASS's own Hopper and compute-capability-12 examples on cuemu: NVIDIA's GEMM library as a real client of the
# tensor-core instructions (wgmma with TMA, clusters and warp specialisation on the h100 profile; the sm_120
# block-scaled and sparse mma .kind, ldmatrix's 4/6-bit forms, TMA of the packed 4/6-bit tensor-map types, cluster
# launch control and the small-float conversions on rtx-pro-6000). The examples come from PyPI's nvidia-cutlass
# wheel (its C++ sources: include/, tools/util/include/, examples/), are built by the toolkit's nvcc as PTX only
# (compute_90a, compute_120a), and run through `cuemu run --device-profile P`; each checks its results against
# CUTLASS's host or device reference ("Disposition: Passed", "Passed validation", "verification passed", "[OK]"; most
# bit-exact: TensorEquals, BlockCompareEqual) and must print no failure.
# Usage: tests/clients/cutlass/run.sh BUILD_DIR [--all]
#   default (CI): 48 (Hopper warp-specialised f16 GEMM), 49 (seven Hopper kernel schedules), 52 (gather/scatter
#   fused into a GEMM along M, N and K: CuTe swizzles generic pointers to shared memory), 88 (Hopper flash attention,
#   three kernels), 79a (NVFP4 -> bf16), 79c (MXFP8 x MXFP6: the 16U6 tensor maps), 80a (sparse MXFP8);
#   --all: also 50 (int8 with an epilogue swizzle), 54 (Hopper FP8), 55 (int4 x bf16), 56 (pointer-array batched),
#   57 (Hopper grouped), 62 (Hopper sparse), 63 (weight prefetch), 67 (FP8 with blockwise scaling), 79b (NVFP4 output
#   with scale factors), 79d (grouped NVFP4), 80b (sparse NVFP4), 87a-c (FP8 with blockwise and groupwise scaling),
#   51 (tensor contraction, GETT), 53 (permutes fused into GEMMs), 68 (grouped FP8 with blockwise scaling), 69 (mixed
#   int4/FP8 x bf16 grouped GEMMs, two modes), 61 (top-K softmax fused into the epilogue: vector registers and
#   register ranges declared inside blocks of its inline assembly), and on the l4 profile (Ada) 64 (grouped FP8
#   GEMM: sm_89's FP8 mma.sync).
#   Not listed: 69's mode 2 prints nothing; 61 with batches (--l above 1), whose host reference checks batch 0 only,
#   and with --k=128, whose softmax differs from the host's by more than its 1e-5 threshold: both fail on an H200
#   with the same relative errors as on cuemu (tools/gpu-probe/results/cutlass61-h200-2026-11-28.txt).
# The wheel and the built examples stay under BUILD_DIR/clients-cutlass (rebuilt when nvcc or the wheel changes).
# Exit 77 (ctest: skipped) without nvcc or PyPI.
set -uo pipefail
build=$(cd "${1:-build}" && pwd) || exit 2
all=${2:-}
cuemu=$build/emu/cuemu
[ -x "$cuemu" ] || { echo "no $cuemu: build cuemu first"; exit 2; }
nvcc=${CUEMU_NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
[ -x "$nvcc" ] || { echo "SKIP: no nvcc"; exit 77; }
version=4.2.0.0
work=$build/clients-cutlass
src=$work/cutlass-$version
mkdir -p "$work"
if [ ! -f "$src/.complete" ]; then
  rm -rf "$src" "$work"/nvidia_cutlass-*.whl
  if ! python3 -m pip download -q --no-deps --disable-pip-version-check -d "$work" "nvidia-cutlass==$version"; then
    echo "SKIP: cannot download nvidia-cutlass $version from PyPI"
    exit 77
  fi
  python3 - "$work"/nvidia_cutlass-*.whl "$src" <<'PY' || exit 2
import sys, zipfile
wheel, out = sys.argv[1], sys.argv[2]
prefix = "cutlass_library/source/"
with zipfile.ZipFile(wheel) as z:
    for name in z.namelist():
        rest = name[len(prefix):] if name.startswith(prefix) else None
        if rest and rest.split("/")[0] in ("include", "tools", "examples"):
            z.extract(name, out + "/.unpack")
PY
  mv "$src/.unpack/cutlass_library/source"/* "$src"/ && rm -rf "$src/.unpack"
  touch "$src/.complete"
fi

# EXAMPLE:ARCH:PROFILE:ARGUMENTS (small problems: the interpreter)
small="--m=256 --n=256 --k=256 --iterations=0"
gather="--m=256 --n=256 --k=128 --index_size=128 --iterations=1"
examples=("48_hopper_warp_specialized_gemm/48_hopper_warp_specialized_gemm:90a:h100:$small"
          "49_hopper_gemm_with_collective_builder/49_collective_builder:90a:h100:--m=256 --n=256 --k=256"
          "52_hopper_gather_scatter_fusion/52_hopper_gather_scatter_fusion:90a:h100:$gather --mode=m"
          "52_hopper_gather_scatter_fusion/52_hopper_gather_scatter_fusion:90a:h100:$gather --mode=n"
          "52_hopper_gather_scatter_fusion/52_hopper_gather_scatter_fusion:90a:h100:$gather --mode=k"
          "88_hopper_fmha/88_hopper_fmha:90a:h100:--b=1 --h=2 --q=256 --k=256 --d=64 --verify"
          "79_blackwell_geforce_gemm/79a_blackwell_geforce_nvfp4_bf16_gemm:120a:rtx-pro-6000:$small"
          "79_blackwell_geforce_gemm/79c_blackwell_geforce_mixed_mxfp8_mxfp6_bf16_gemm:120a:rtx-pro-6000:$small"
          "80_blackwell_geforce_sparse_gemm/80a_blackwell_geforce_mxfp8_bf16_sparse_gemm:120a:rtx-pro-6000:$small")
if [ "$all" = "--all" ]; then
  examples+=("54_hopper_fp8_warp_specialized_gemm/54_hopper_fp8_warp_specialized_gemm:90a:h100:$small"
             "50_hopper_gemm_with_epilogue_swizzle/50_hopper_gemm_with_epilogue_swizzle:90a:h100:--m=256 --n=256 --k=256"
             "55_hopper_mixed_dtype_gemm/55_hopper_int4_bf16_gemm:90a:h100:$small"
             "56_hopper_ptr_array_batched_gemm/56_hopper_ptr_array_batched_gemm:90a:h100:$small"
             "63_hopper_gemm_with_weight_prefetch/63_hopper_gemm_with_weight_prefetch:90a:h100:$small"
             "67_hopper_fp8_warp_specialized_gemm_with_blockwise_scaling/67_hopper_fp8_warp_specialized_gemm_with_blockwise_scaling:90a:h100:$small"
             "57_hopper_grouped_gemm/57_hopper_grouped_gemm:90a:h100:$small --groups=4"
             "62_hopper_sparse_gemm/62_hopper_sparse_gemm:90a:h100:$small"
             "79_blackwell_geforce_gemm/79b_blackwell_geforce_nvfp4_nvfp4_gemm:120a:rtx-pro-6000:$small"
             "79_blackwell_geforce_gemm/79d_blackwell_geforce_nvfp4_grouped_gemm:120a:rtx-pro-6000:$small"
             "80_blackwell_geforce_sparse_gemm/80b_blackwell_geforce_nvfp4_nvfp4_sparse_gemm:120a:rtx-pro-6000:$small"
             "87_blackwell_geforce_gemm_blockwise/87a_blackwell_geforce_fp8_bf16_gemm_blockwise:120a:rtx-pro-6000:$small"
             "87_blackwell_geforce_gemm_blockwise/87b_blackwell_geforce_fp8_bf16_gemm_groupwise:120a:rtx-pro-6000:$small"
             "87_blackwell_geforce_gemm_blockwise/87c_blackwell_geforce_fp8_bf16_grouped_gemm_groupwise:120a:rtx-pro-6000:$small"
             "51_hopper_gett/51_hopper_gett:90a:h100:--modeC=m,x,n,l --modeA=m,x,k,l --modeB=k,n,l --extents=m:64,x:4,n:128,k:64,l:2"
             "53_hopper_gemm_permute/53_hopper_gemm_permute:90a:h100:--m=256 --n=256 --k=512 --iterations=1"
             "68_hopper_fp8_warp_specialized_grouped_gemm_with_blockwise_scaling/68_hopper_fp8_warp_specialized_grouped_gemm_with_blockwise_scaling:90a:h100:$small --groups=2"
             "69_hopper_mixed_dtype_grouped_gemm/69_hopper_mixed_dtype_grouped_gemm:90a:h100:$small --groups=2 --mode=0"
             "69_hopper_mixed_dtype_grouped_gemm/69_hopper_mixed_dtype_grouped_gemm:90a:h100:$small --groups=2 --mode=1"
             "61_hopper_gemm_with_topk_and_softmax/61_hopper_gemm_with_topk_and_softmax:90a:h100:--m=256 --iterations=0"
             "64_ada_fp8_gemm_grouped/ada_fp8_gemm_grouped:89:l4:--groups=3 --m=256 --n=128 --k=256 --iterations=1")
fi

# Build (two at a time: each nvcc is one core for about a minute), keyed by nvcc's version.
stamp=$("$nvcc" --version | tail -1)
bin=$work/bin
mkdir -p "$bin"
toolkit=$(dirname "$(dirname "$nvcc")")
build_one() {  # EXAMPLE ARCH
  local name=${1##*/} out=$bin/${1##*/}
  if [ -x "$out" ] && [ "$(cat "$out.nvcc" 2>/dev/null)" = "$stamp" ]; then return 0; fi
  # (-lcuda: some examples call the driver API; the toolkit's stub links, cuemu's libcuda.so.1 runs)
  if ! (cd "$src" && "$nvcc" -std=c++17 -O2 -gencode "arch=compute_$2,code=compute_$2" --expt-relaxed-constexpr \
        -I include -I tools/util/include -I examples/common -I "examples/${1%/*}" -o "$out" "examples/$1.cu" \
        -L"$toolkit/lib64/stubs" \
        -lcuda > "$out.log" 2>&1); then
    echo "FAIL: building $name (log: $out.log)"
    return 1
  fi
  echo "$stamp" > "$out.nvcc"
}
status=0
pids=()
declare -A building
for entry in "${examples[@]}"; do
  IFS=: read -r e arch profile arguments <<< "$entry"
  [ -n "${building[$e]:-}" ] && continue  # an example run with several arguments is built once
  building[$e]=1
  build_one "$e" "$arch" &
  pids+=($!)
  if [ ${#pids[@]} -ge 2 ]; then wait "${pids[0]}" || status=1; pids=("${pids[@]:1}"); fi
done
for p in "${pids[@]}"; do wait "$p" || status=1; done
[ $status -eq 0 ] || exit 1

# Run, the kernel timeout turning a hang into a failure.
for entry in "${examples[@]}"; do
  IFS=: read -r e arch profile arguments <<< "$entry"
  name=${e##*/}
  start=$EPOCHREALTIME
  # shellcheck disable=SC2086
  out=$("$cuemu" run --device-profile "$profile" --kernel-timeout 300 -- "$bin/$name" $arguments 2>&1)
  rc=$?
  seconds=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { print b - a }')
  # ("Disposition: Passed", one "...: Passed" line per kernel variant in example 49, "Passed validation" in 52 and
  # 53, "verification passed" in 51, " [OK] " per kernel in 88, whose failures are "[FAIL]" or an unverified "[--]")
  if [ $rc -eq 0 ] && grep -qE "Passed|passed|\[OK\]" <<< "$out" &&
    ! grep -qE "Failed|failed|\[FAIL\]|\[--\]|cannot be used" <<< "$out"; then
    printf 'PASS: %s %s on %s (%.1f s)\n' "$name" "$arguments" "$profile" "$seconds"
  else
    printf 'FAIL: %s on %s (exit %d)\n%s\n' "$name" "$profile" "$rc" "$(tail -20 <<< "$out" | cut -c1-400)"
    status=1
  fi
done
exit $status
