#!/usr/bin/env bash
# NVIDIA's own CuTe DSL examples (CUTLASS's examples/python/CuTeDSL) on cuemu, through `cuemu run`: the Hopper GEMMs
# (wgmma, TMA with multicast across clusters, warp-specialised pipelines, persistent tile schedulers, FP8 with two
# accumulators and a GELU epilogue, grouped GEMMs whose tensor maps are updated in global or shared memory). Each
# checks its result against PyTorch on the host and prints PASS. Kept out of CI: the examples are not on PyPI (a
# checkout of github.com/NVIDIA/cutlass is needed) and they need PyTorch (about 5 GB).
# Usage: tools/clients/run-cute-dsl-examples.sh BUILD_DIR CUTLASS_CHECKOUT [VENV]
#   VENV: a virtual environment with torch and nvidia-cutlass-dsl (default: BUILD_DIR/clients-venv-cute-dsl-torch,
#   made when missing).
# Not listed: the examples that make or check their data with PyTorch's own CUDA kernels (Ampere tensorop_gemm and
# sgemm, flash_attention_v2, the Hopper fmha), which are SASS only and cannot run on cuemu; the Blackwell ones
# (tcgen05). Results of a run: tools/clients/results/cute-dsl-examples-*.txt.
set -uo pipefail
build=$(cd "${1:?usage: $0 BUILD_DIR CUTLASS_CHECKOUT [VENV]}" && pwd) || exit 2
cutlass=$(cd "${2:?usage: $0 BUILD_DIR CUTLASS_CHECKOUT [VENV]}" && pwd) || exit 2
venv=${3:-$build/clients-venv-cute-dsl-torch}
examples=$cutlass/examples/python/CuTeDSL
[ -d "$examples/cute/hopper" ] || { echo "no $examples/cute/hopper: not a CUTLASS checkout with the CuTe DSL examples"; exit 2; }
if [ ! -f "$venv/.complete" ]; then
  rm -rf "$venv"
  python3 -m venv "$venv" && "$venv/bin/python" -m pip install -q --no-cache-dir torch nvidia-cutlass-dsl &&
    touch "$venv/.complete" || { echo "cannot install torch and nvidia-cutlass-dsl into $venv"; exit 2; }
fi
"$venv/bin/python" -m pip list 2>/dev/null | grep -iE '^(torch|nvidia-cutlass-dsl) ' | tr -s ' ' | sed 's/^/  /'

gemm=$examples/cute/hopper/kernel/dense_gemm
grouped=$examples/cute/hopper/kernel/grouped_gemm
small="--mnkl 256,256,256,1 --iterations 1"
groups=(--num_groups 3 --problem_sizes_mnkl '(256,128,128,1),(128,256,64,1),(64,64,192,1)')
runs=("$gemm/dense_gemm.py $small"
      "$gemm/dense_gemm.py $small --cluster_shape_mn 2,1"
      "$gemm/dense_gemm.py $small --cluster_shape_mn 1,2 --tile_shape_mn 128,256"
      "$gemm/dense_gemm.py $small --a_major m --b_major n --c_major m"
      "$gemm/dense_gemm.py --mnkl 192,128,320,2 --iterations 1 --tile_shape_mn 64,64"
      "$gemm/dense_gemm.py $small --a_dtype Float8E4M3FN --b_dtype Float8E4M3FN --c_dtype Float16"
      "$gemm/dense_gemm_persistent.py $small"
      "$gemm/dense_gemm_persistent.py $small --cluster_shape_mn 2,1"
      "$gemm/dense_gemm_fp8_2xacc.py $small"
      "$gemm/dense_gemm_fp8_gelu_persistent.py $small")
failed=0
for run in "${runs[@]}"; do
  # shellcheck disable=SC2086
  out=$("$build/emu/cuemu" run --kernel-timeout 300 -- "$venv/bin/python" -W ignore $run 2>&1)
  if [ "$(tail -1 <<< "$out")" = "PASS" ]; then
    echo "PASS: ${run#"$examples"/}"
  else
    echo "FAIL: ${run#"$examples"/}"
    tail -5 <<< "$out" | sed 's/^/    /'
    failed=1
  fi
done
for mode in GMEM SMEM; do
  out=$("$build/emu/cuemu" run --kernel-timeout 300 -- "$venv/bin/python" -W ignore "$grouped/grouped_gemm.py" \
    "${groups[@]}" --tensormap_update_mode "$mode" 2>&1)
  if [ "$(tail -1 <<< "$out")" = "PASS" ]; then
    echo "PASS: grouped_gemm.py, three groups, tensor maps updated in $mode"
  else
    echo "FAIL: grouped_gemm.py, tensor maps updated in $mode"
    tail -5 <<< "$out" | sed 's/^/    /'
    failed=1
  fi
done
exit $failed
