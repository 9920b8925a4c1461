#!/usr/bin/env bash
# Real clients on cuemu. Installs cuda-python, numba-cuda and CuPy from PyPI into virtual environments under the
# build folder (once; later runs reuse them) and runs tests/clients/test_*.py against cuemu's libcuda.so.1:
#   - the newest releases: test_cuda_python.py, test_numba_cuda.py, test_cupy.py (each in its own process);
#   - cuda-bindings 13.0 (cudart 13.0): test_cuda_python.py again;
#   - cuda-cccl's cuda.compute and CuPy with PyPI's newest NVRTC/nvJitLink, and the numba-cuda-mlir it installs,
#     through `cuemu run`: test_cuda_compute.py, test_numba_cuda_mlir.py;
#   - Triton with CuPy arrays, through `cuemu run`: test_triton.py (where Python's headers are installed), and its
#     tl.dot_scaled tests again on the gb10 profile (sm_120's block-scaled mma);
#   - every nvidia-cuda-runtime 13.x wheel on PyPI against one nvcc-built program: cudart_versions.cu;
#   - NVIDIA's NVML binding (nvidia-ml-py) against cuemu's libnvidia-ml.so.1: test_nvml.py;
#   - JAX (jax[cuda13-local] with NVIDIA's cuDNN and CUDA runtime wheels; cuBLAS and NVRTC come with cuDNN's) through
#     `cuemu run --device-profile gb10`: test_jax.py;
#   - Taichi (its own LLVM writes PTX) through `cuemu run`: test_taichi.py;
#   - tinygrad (NVRTC's PTX, and its own PTX renderer) through `cuemu run`: test_tinygrad.py;
#   - NVIDIA Warp (warp-lang: its NVRTC and PTX compiler inside) through `cuemu run --driver-version V`, V the CUDA
#     version Warp was built with (it hands an older driver SASS): test_warp.py;
#   - PyCUDA (built from PyPI's source against the toolkit; its kernels compile with `nvcc --cubin`, which cuemu-nvcc
#     makes PTX) through `cuemu run`: test_pycuda.py;
#   - CUTLASS's CuTe DSL (nvidia-cutlass-dsl, with CuPy arrays) through `cuemu run`: test_cute_dsl.py;
#   - with CUEMU_CLIENTS_EXTRA="tensorflow cudf nvmath" (environments of 6.3, 3.6 and 2.9 GB, left out of CI for
#     their time and disk): TensorFlow (tensorflow[and-cuda]: CUDA 12 libraries) and RAPIDS cuDF and cuML (cudf-cu13,
#     cuml-cu13) through `cuemu run --device-profile gb10`: test_tensorflow.py, test_cudf.py, test_cuml.py;
#     nvmath-python (nvmath-python[cu13-dx]: CUDA 13.5's cuBLAS and cuFFT, cuFFTDx/cuBLASDx through numba-cuda)
#     through `cuemu run --device-profile rtx-pro-6000`: test_nvmath.py.
# CUEMU_CLIENTS_SKIP="jax" leaves JAX's environment (2.6 GB) out.
# Usage: tests/clients/run.sh BUILD_DIR        Exit 77 (ctest: skipped) when an environment cannot be made
# (no network, no python3-venv, too little disk; the others still run, and a failure among them exits 1).
# CUEMU_CLIENTS_REFRESH=1 reinstalls (picks up new releases).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-build}" && pwd) || exit 2
[ -e "$build/emu/libcuda.so.1" ] || { echo "no $build/emu/libcuda.so.1: build cuemu first"; exit 2; }

# Disk: each environment is made only while it leaves CUEMU_CLIENTS_RESERVE_GB (default 3) free for the rest of the
# test suite (the packaging checks stage the library twice); pip keeps no cache (it would double the footprint). An
# environment that cannot be made (no network, no disk) is removed again and its tests are skipped; the others run,
# and the script exits 77 (ctest: skipped) when any was skipped and nothing failed.
reserve_gb=${CUEMU_CLIENTS_RESERVE_GB:-3}
free_gb() { df -P -BG "$build" | awk 'NR == 2 { sub("G", "", $4); print $4 }'; }
skipped_envs=()
make_venv() {  # NAME DIR GB PACKAGE...: GB is about what the environment takes on disk
  local name=$1 dir=$2 need=$3
  shift 3
  if [ -x "$dir/bin/python" ] && [ -f "$dir/.complete" ] && [ -z "${CUEMU_CLIENTS_REFRESH:-}" ]; then return 0; fi
  rm -rf "$dir"
  local free
  free=$(free_gb)
  if [ "${free:-0}" -lt $((need + reserve_gb)) ]; then
    echo "SKIP $name: ${free:-?} GB free under $build; the environment takes about $need GB and $reserve_gb GB stay free"
    skipped_envs+=("$name")
    return 1
  fi
  if ! { python3 -m venv "$dir" &&
    "$dir/bin/python" -m pip install -q --no-cache-dir --disable-pip-version-check "$@"; }; then
    rm -rf "$dir"
    echo "SKIP $name: cannot install $* from PyPI into $dir ($(free_gb) GB free now)"
    skipped_envs+=("$name")
    return 1
  fi
  touch "$dir/.complete"
}
ready() { [ -f "$1/.complete" ]; }

newest=$build/clients-venv
make_venv newest "$newest" 1 pytest numpy "numba-cuda>=0.30" "cuda-python>=13.4" cupy-cuda13x nvidia-ml-py
cudart130=$build/clients-venv-cudart13.0
make_venv "cudart 13.0" "$cudart130" 1 pytest numpy "cuda-bindings==13.0.*"
# Triton (its launcher is C that it compiles at first use: needs a C compiler and Python's headers)
triton=$build/clients-venv-triton
make_venv Triton "$triton" 2 pytest numpy triton cupy-cuda13x
# cuda.compute (cuda-cccl) brings PyPI's newest NVRTC and nvJitLink: a toolkit newer than driver 580
cccl=$build/clients-venv-cccl
make_venv cuda-cccl "$cccl" 2 pytest numpy "cuda-cccl[cu13]" cupy-cuda13x
# JAX with only the CUDA libraries it uses here (2.6 GB; jax[cuda13] installs 4.4 GB). Not the toolkit's: a cuDNN
# there of another version would shadow the sublibraries of the wheel's (CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED).
skipped() { [[ " ${CUEMU_CLIENTS_SKIP:-} " == *" $1 "* ]]; }
jax=$build/clients-venv-jax
skipped jax || make_venv JAX "$jax" 3 pytest "jax[cuda13-local]" nvidia-cudnn-cu13 nvidia-cuda-runtime
taichi=$build/clients-venv-taichi
make_venv Taichi "$taichi" 1 pytest numpy taichi
tinygrad=$build/clients-venv-tinygrad
make_venv tinygrad "$tinygrad" 1 pytest numpy tinygrad
warp=$build/clients-venv-warp
make_venv Warp "$warp" 1 pytest numpy warp-lang
# PyCUDA is built from its source against the toolkit (CUDA_ROOT), which takes a few minutes once
pycuda=$build/clients-venv-pycuda
CUDA_ROOT=${CUDA_HOME:-/usr/local/cuda} make_venv PyCUDA "$pycuda" 1 pytest numpy pycuda
cutedsl=$build/clients-venv-cute-dsl
make_venv "CuTe DSL" "$cutedsl" 1 pytest numpy nvidia-cutlass-dsl cupy-cuda13x
extra() { [[ " ${CUEMU_CLIENTS_EXTRA:-} " == *" $1 "* ]]; }
tf=$build/clients-venv-tensorflow
extra tensorflow && make_venv TensorFlow "$tf" 7 pytest "tensorflow[and-cuda]"
cudf=$build/clients-venv-cudf
extra cudf && make_venv cuDF "$cudf" 4 pytest cudf-cu13 cuml-cu13
nvmath=$build/clients-venv-nvmath
extra nvmath && make_venv nvmath-python "$nvmath" 3 pytest "nvmath-python[cu13-dx]"

export LD_LIBRARY_PATH="$build/emu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export CUDA_PATH=${CUDA_PATH:-/usr/local/cuda} CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
export CUPY_COMPILE_WITH_PTX=1 CUPY_ACCELERATORS= CUPY_CACHE_DIR="$build/clients-cache/cupy"
export NUMBA_CACHE_DIR="$build/clients-cache/numba" NUMBA_DISABLE_PERFORMANCE_WARNINGS=1
export PYTHONDONTWRITEBYTECODE=1

failed=0
run() {  # LABEL VENV FILE
  echo "=== $1: $(basename "$3")"
  (cd "$here" && "$2/bin/python" -m pytest -q -p no:cacheprovider -W ignore::DeprecationWarning "$3") || failed=1
}
for v in "$newest" "$cudart130" "$cccl" "$triton" "$jax" "$taichi" "$tinygrad" "$warp" "$pycuda" "$cutedsl" "$tf" "$cudf" "$nvmath"; do
  [ -x "$v/bin/python" ] || continue
  "$v/bin/python" -m pip list 2>/dev/null | grep -iE '^(cuda-bindings|cuda-core|cuda-cccl|numba-cuda|cupy-cuda13x|nvidia-cuda-nvrtc|nvidia-ml-py|triton|jax|jaxlib|jax-cuda13-plugin|tensorflow|cudf-cu13|cuml-cu13|taichi|tinygrad|warp-lang|pycuda|nvmath-python|nvidia-cutlass-dsl) ' |
    tr -s ' ' | sed 's/^/  /'
done
if ready "$newest"; then
  run "newest" "$newest" test_cuda_python.py
  run "newest" "$newest" test_numba_cuda.py
  run "newest" "$newest" test_cupy.py
  echo "=== newest, through cuemu run (its nvcc is cuemu-nvcc): test_cupy.py -k nvcc_backend"
  (cd "$here" && "$build/emu/cuemu" run -- "$newest/bin/python" -m pytest -q -p no:cacheprovider \
    -W ignore::DeprecationWarning -k nvcc_backend test_cupy.py) || failed=1
  run "newest" "$newest" test_nvml.py
fi
ready "$cudart130" && run "cudart 13.0" "$cudart130" test_cuda_python.py
# every CUDA 13 runtime on PyPI against one program (its wheels are small; kept in the build folder)
if ! ready "$newest"; then
  echo "=== every cudart 13.x: skipped (its pip is the newest environment's)"
elif command -v nvcc >/dev/null && nvcc -gencode arch=compute_90,code=compute_90 -cudart shared \
    "$here/cudart_versions.cu" -o "$build/clients-cudart-versions" 2>/dev/null; then
  echo "=== every cudart 13.x from PyPI: cudart_versions.cu"
  versions=$("$newest/bin/python" -m pip index versions nvidia-cuda-runtime 2>/dev/null |
    sed -n 's/^Available versions: //p' | tr ',' '\n' | tr -d ' ' | grep '^13\.')
  [ -n "$versions" ] || { echo "  (no versions listed by PyPI)"; failed=1; }
  for v in $versions; do
    wheel=$build/clients-cudart/$v
    if [ ! -e "$wheel/.complete" ]; then
      rm -rf "$wheel" && mkdir -p "$wheel" &&
        "$newest/bin/python" -m pip download -q --no-deps --only-binary=:all: "nvidia-cuda-runtime==$v" -d "$wheel" &&
        (cd "$wheel" && "$newest/bin/python" -m zipfile -e ./*.whl .) && touch "$wheel/.complete" ||
        { echo "  cudart $v: cannot download"; failed=1; continue; }
    fi
    lib=$(dirname "$(find "$wheel" -name 'libcudart.so.13' | head -1)")
    LD_LIBRARY_PATH="$lib:$LD_LIBRARY_PATH" "$build/clients-cudart-versions" || { echo "  cudart $v: FAILED"; failed=1; }
  done
else
  echo "=== every cudart 13.x: skipped (no nvcc)"
fi
# as a user starts them: `cuemu run` (cuemu's nvJitLink preloaded, CUEMU_PTX_ISA=newest, Triton's ptxas cuemu's)
if ! ready "$triton"; then
  :
elif "$triton/bin/python" -c 'import sysconfig, os, sys; sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))'; then
  echo "=== Triton, through cuemu run: test_triton.py"
  (cd "$here" && TRITON_CACHE_DIR="$build/clients-cache/triton" "$build/emu/cuemu" run -- "$triton/bin/python" -m pytest -q \
    -p no:cacheprovider -W ignore::UserWarning test_triton.py) || failed=1
  echo "=== Triton on the gb10 profile (sm_120's block-scaled mma): test_triton.py -k dot_scaled"
  (cd "$here" && TRITON_CACHE_DIR="$build/clients-cache/triton" "$build/emu/cuemu" run --device-profile gb10 -- \
    "$triton/bin/python" -m pytest -q -p no:cacheprovider -W ignore::UserWarning -k dot_scaled test_triton.py) || failed=1
else
  echo "=== Triton: skipped (Python's headers are missing: Triton compiles its launcher; Debian: python3-dev)"
fi
if ready "$cccl"; then
  echo "=== cuda-cccl, through cuemu run: test_cuda_compute.py, test_numba_cuda_mlir.py"
  (cd "$here" && "$build/emu/cuemu" run -- "$cccl/bin/python" -m pytest -q -p no:cacheprovider \
    -W ignore::DeprecationWarning -W ignore::RuntimeWarning test_cuda_compute.py test_numba_cuda_mlir.py) || failed=1
fi
# XLA's own kernels carry PTX for compute_120 only, cuDNN's for compute_121 only: compute capability 12.1 runs both
if ready "$jax"; then
  echo "=== JAX, through cuemu run --device-profile gb10: test_jax.py"
  (cd "$here" && "$build/emu/cuemu" run --device-profile gb10 -- \
    "$jax/bin/python" -m pytest -q -p no:cacheprovider test_jax.py) || failed=1
fi
if ready "$taichi"; then
  echo "=== Taichi, through cuemu run: test_taichi.py"
  (cd "$here" && "$build/emu/cuemu" run -- "$taichi/bin/python" -m pytest -q -p no:cacheprovider test_taichi.py) ||
    failed=1
fi
if ready "$tinygrad"; then
  echo "=== tinygrad, through cuemu run: test_tinygrad.py"
  (cd "$here" && "$build/emu/cuemu" run -- "$tinygrad/bin/python" -m pytest -q -p no:cacheprovider test_tinygrad.py) ||
    failed=1
fi
# Warp gives the driver its PTX only when the driver is at least as new as the CUDA it was built with (13.4 for
# warp-lang 1.19); else it compiles SASS itself. Its kernel cache is kept in the build folder.
if ready "$warp"; then
  echo "=== Warp, through cuemu run --driver-version: test_warp.py"
  warp_ctk=$("$warp/bin/python" -c 'import warp; warp.config.quiet = True; warp.init()
print("%d.%d" % warp._src.context.runtime.toolkit_version)' | tail -1)
  (cd "$here" && WARP_CACHE_PATH="$build/clients-cache/warp" "$build/emu/cuemu" run --driver-version \
    "${warp_ctk:-13.9}" -- "$warp/bin/python" -m pytest -q -p no:cacheprovider test_warp.py) || failed=1
fi
# PyCUDA compiles every kernel with `nvcc --cubin`: under `cuemu run` that nvcc is cuemu-nvcc, whose cubins are PTX
if ready "$pycuda"; then
  echo "=== PyCUDA, through cuemu run: test_pycuda.py"
  (cd "$here" && "$build/emu/cuemu" run -- "$pycuda/bin/python" -m pytest -q -p no:cacheprovider test_pycuda.py) ||
    failed=1
fi
# CUTLASS's CuTe DSL loads SASS it compiled itself: `cuemu run` has it keep the PTX (emu/core/companion_ptx.h)
if ready "$cutedsl"; then
  echo "=== CuTe DSL, through cuemu run: test_cute_dsl.py"
  (cd "$here" && "$build/emu/cuemu" run -- "$cutedsl/bin/python" -m pytest -q -p no:cacheprovider \
    -W ignore::UserWarning test_cute_dsl.py) || failed=1
fi
# TensorFlow's kernels have compute_90 PTX, its CUDA 12 cuBLAS/cuDNN compute_120/121 PTX only. Its libraries' search
# path lacks the cuSOLVER wheel's folder (TensorFlow then registers no GPU): named here, as on a GPU machine.
if extra tensorflow && ready "$tf"; then
  echo "=== TensorFlow, through cuemu run --device-profile gb10: test_tensorflow.py"
  solver=$("$tf/bin/python" -c 'import nvidia.cusolver, os; print(os.path.join(list(nvidia.cusolver.__path__)[0], "lib"))')
  (cd "$here" && LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$solver" TF_CPP_MIN_LOG_LEVEL=2 "$build/emu/cuemu" run \
    --device-profile gb10 -- "$tf/bin/python" -m pytest -q -p no:cacheprovider test_tensorflow.py) || failed=1
fi
# libcudf carries PTX for compute_120 only
if extra cudf && ready "$cudf"; then
  echo "=== cuDF and cuML, through cuemu run --device-profile gb10: test_cudf.py, test_cuml.py"
  (cd "$here" && "$build/emu/cuemu" run --device-profile gb10 -- "$cudf/bin/python" -m pytest -q -p no:cacheprovider \
    -W ignore::UserWarning test_cudf.py test_cuml.py) || failed=1
fi
# cuBLASLt's kernels are compute_120 PTX; nvmath's device APIs refuse compute capability 12.1: 12.0 runs both
if extra nvmath && ready "$nvmath"; then
  echo "=== nvmath-python, through cuemu run --device-profile rtx-pro-6000: test_nvmath.py"
  (cd "$here" && "$build/emu/cuemu" run --device-profile rtx-pro-6000 \
    -- "$nvmath/bin/python" -m pytest -q -p no:cacheprovider -W ignore::DeprecationWarning test_nvmath.py) || failed=1
fi
[ "$failed" = 0 ] || exit 1
if [ ${#skipped_envs[@]} -gt 0 ]; then
  echo "skipped environments: ${skipped_envs[*]}"
  exit 77
fi
