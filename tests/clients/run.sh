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
#   - NVIDIA Warp (warp-lang: its NVRTC and PTX compiler inside) through `cuemu run --driver-version V`, V the CUDA
#     version Warp was built with (it hands an older driver SASS): test_warp.py;
#   - with CUEMU_CLIENTS_EXTRA="tensorflow cudf nvmath" (environments of 6.3, 3.6 and 2.9 GB, left out of CI for
#     their time and disk): TensorFlow (tensorflow[and-cuda]: CUDA 12 libraries) and RAPIDS cuDF and cuML (cudf-cu13,
#     cuml-cu13) through `cuemu run --device-profile gb10`: test_tensorflow.py, test_cudf.py, test_cuml.py;
#     nvmath-python (nvmath-python[cu13-dx]: CUDA 13.5's cuBLAS and cuFFT, cuFFTDx/cuBLASDx through numba-cuda)
#     through `cuemu run --device-profile rtx-pro-6000`: test_nvmath.py.
# CUEMU_CLIENTS_SKIP="jax" leaves JAX's environment (2.6 GB) out.
# Usage: tests/clients/run.sh BUILD_DIR        Exit 77 (ctest: skipped) when the environments cannot be made
# (no network, no python3-venv). CUEMU_CLIENTS_REFRESH=1 reinstalls (picks up new releases).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-build}" && pwd) || exit 2
[ -e "$build/emu/libcuda.so.1" ] || { echo "no $build/emu/libcuda.so.1: build cuemu first"; exit 2; }

make_venv() {  # DIR PACKAGE...
  local dir=$1
  shift
  if [ -x "$dir/bin/python" ] && [ -f "$dir/.complete" ] && [ -z "${CUEMU_CLIENTS_REFRESH:-}" ]; then return 0; fi
  rm -rf "$dir"
  python3 -m venv "$dir" || return 1
  "$dir/bin/python" -m pip install -q --disable-pip-version-check "$@" || return 1
  touch "$dir/.complete"
}

newest=$build/clients-venv
cudart130=$build/clients-venv-cudart13.0
if ! make_venv "$newest" pytest numpy "numba-cuda>=0.30" "cuda-python>=13.4" cupy-cuda13x nvidia-ml-py; then
  echo "SKIP: cannot install the clients from PyPI into $newest"
  exit 77
fi
if ! make_venv "$cudart130" pytest numpy "cuda-bindings==13.0.*"; then
  echo "SKIP: cannot install cuda-bindings 13.0 into $cudart130"
  exit 77
fi
# Triton (its launcher is C that it compiles at first use: needs a C compiler and Python's headers)
triton=$build/clients-venv-triton
if ! make_venv "$triton" pytest numpy triton cupy-cuda13x; then
  echo "SKIP: cannot install Triton into $triton"
  exit 77
fi
# cuda.compute (cuda-cccl) brings PyPI's newest NVRTC and nvJitLink: a toolkit newer than driver 580
cccl=$build/clients-venv-cccl
if ! make_venv "$cccl" pytest numpy "cuda-cccl[cu13]" cupy-cuda13x; then
  echo "SKIP: cannot install cuda-cccl into $cccl"
  exit 77
fi
# JAX with only the CUDA libraries it uses here (2.6 GB; jax[cuda13] installs 4.4 GB). Not the toolkit's: a cuDNN
# there of another version would shadow the sublibraries of the wheel's (CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED).
skipped() { [[ " ${CUEMU_CLIENTS_SKIP:-} " == *" $1 "* ]]; }
jax=$build/clients-venv-jax
if ! skipped jax && ! make_venv "$jax" pytest "jax[cuda13-local]" nvidia-cudnn-cu13 nvidia-cuda-runtime; then
  echo "SKIP: cannot install JAX into $jax"
  exit 77
fi

taichi=$build/clients-venv-taichi
if ! make_venv "$taichi" pytest numpy taichi; then
  echo "SKIP: cannot install Taichi into $taichi"
  exit 77
fi
warp=$build/clients-venv-warp
if ! make_venv "$warp" pytest numpy warp-lang; then
  echo "SKIP: cannot install Warp into $warp"
  exit 77
fi
extra() { [[ " ${CUEMU_CLIENTS_EXTRA:-} " == *" $1 "* ]]; }
tf=$build/clients-venv-tensorflow
if extra tensorflow && ! make_venv "$tf" pytest "tensorflow[and-cuda]"; then
  echo "SKIP: cannot install TensorFlow into $tf"
  exit 77
fi
cudf=$build/clients-venv-cudf
if extra cudf && ! make_venv "$cudf" pytest cudf-cu13 cuml-cu13; then
  echo "SKIP: cannot install cuDF into $cudf"
  exit 77
fi
nvmath=$build/clients-venv-nvmath
if extra nvmath && ! make_venv "$nvmath" pytest "nvmath-python[cu13-dx]"; then
  echo "SKIP: cannot install nvmath-python into $nvmath"
  exit 77
fi

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
for v in "$newest" "$cudart130" "$cccl" "$triton" "$jax" "$taichi" "$warp" "$tf" "$cudf" "$nvmath"; do
  [ -x "$v/bin/python" ] || continue
  "$v/bin/python" -m pip list 2>/dev/null | grep -iE '^(cuda-bindings|cuda-core|cuda-cccl|numba-cuda|cupy-cuda13x|nvidia-cuda-nvrtc|nvidia-ml-py|triton|jax|jaxlib|jax-cuda13-plugin|tensorflow|cudf-cu13|cuml-cu13|taichi|warp-lang|nvmath-python) ' |
    tr -s ' ' | sed 's/^/  /'
done
run "newest" "$newest" test_cuda_python.py
run "newest" "$newest" test_numba_cuda.py
run "newest" "$newest" test_cupy.py
run "cudart 13.0" "$cudart130" test_cuda_python.py
run "newest" "$newest" test_nvml.py
# every CUDA 13 runtime on PyPI against one program (its wheels are small; kept in the build folder)
if command -v nvcc >/dev/null && nvcc -gencode arch=compute_90,code=compute_90 -cudart shared \
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
if "$triton/bin/python" -c 'import sysconfig, os, sys; sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))'; then
  echo "=== Triton, through cuemu run: test_triton.py"
  (cd "$here" && TRITON_CACHE_DIR="$build/clients-cache/triton" "$build/emu/cuemu" run -- "$triton/bin/python" -m pytest -q \
    -p no:cacheprovider -W ignore::UserWarning test_triton.py) || failed=1
  echo "=== Triton on the gb10 profile (sm_120's block-scaled mma): test_triton.py -k dot_scaled"
  (cd "$here" && TRITON_CACHE_DIR="$build/clients-cache/triton" "$build/emu/cuemu" run --device-profile gb10 -- \
    "$triton/bin/python" -m pytest -q -p no:cacheprovider -W ignore::UserWarning -k dot_scaled test_triton.py) || failed=1
else
  echo "=== Triton: skipped (Python's headers are missing: Triton compiles its launcher; Debian: python3-dev)"
fi
echo "=== cuda-cccl, through cuemu run: test_cuda_compute.py, test_numba_cuda_mlir.py"
(cd "$here" && "$build/emu/cuemu" run -- "$cccl/bin/python" -m pytest -q -p no:cacheprovider \
  -W ignore::DeprecationWarning -W ignore::RuntimeWarning test_cuda_compute.py test_numba_cuda_mlir.py) || failed=1
# XLA's own kernels carry PTX for compute_120 only, cuDNN's for compute_121 only: compute capability 12.1 runs both
if ! skipped jax; then
  echo "=== JAX, through cuemu run --device-profile gb10: test_jax.py"
  (cd "$here" && "$build/emu/cuemu" run --device-profile gb10 -- \
    "$jax/bin/python" -m pytest -q -p no:cacheprovider test_jax.py) || failed=1
fi
echo "=== Taichi, through cuemu run: test_taichi.py"
(cd "$here" && "$build/emu/cuemu" run -- "$taichi/bin/python" -m pytest -q -p no:cacheprovider test_taichi.py) || failed=1
# Warp gives the driver its PTX only when the driver is at least as new as the CUDA it was built with (13.4 for
# warp-lang 1.19); else it compiles SASS itself. Its kernel cache is kept in the build folder.
echo "=== Warp, through cuemu run --driver-version: test_warp.py"
warp_ctk=$("$warp/bin/python" -c 'import warp; warp.config.quiet = True; warp.init()
print("%d.%d" % warp._src.context.runtime.toolkit_version)' | tail -1)
(cd "$here" && WARP_CACHE_PATH="$build/clients-cache/warp" "$build/emu/cuemu" run --driver-version "${warp_ctk:-13.9}" -- \
  "$warp/bin/python" -m pytest -q -p no:cacheprovider test_warp.py) || failed=1
# TensorFlow's kernels have compute_90 PTX, its CUDA 12 cuBLAS/cuDNN compute_120/121 PTX only. Its libraries' search
# path lacks the cuSOLVER wheel's folder (TensorFlow then registers no GPU): named here, as on a GPU machine.
if extra tensorflow; then
  echo "=== TensorFlow, through cuemu run --device-profile gb10: test_tensorflow.py"
  solver=$("$tf/bin/python" -c 'import nvidia.cusolver, os; print(os.path.join(list(nvidia.cusolver.__path__)[0], "lib"))')
  (cd "$here" && LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$solver" TF_CPP_MIN_LOG_LEVEL=2 "$build/emu/cuemu" run \
    --device-profile gb10 -- "$tf/bin/python" -m pytest -q -p no:cacheprovider test_tensorflow.py) || failed=1
fi
# libcudf carries PTX for compute_120 only
if extra cudf; then
  echo "=== cuDF and cuML, through cuemu run --device-profile gb10: test_cudf.py, test_cuml.py"
  (cd "$here" && "$build/emu/cuemu" run --device-profile gb10 -- "$cudf/bin/python" -m pytest -q -p no:cacheprovider \
    -W ignore::UserWarning test_cudf.py test_cuml.py) || failed=1
fi
# cuBLASLt's kernels are compute_120 PTX; nvmath's device APIs refuse compute capability 12.1: 12.0 runs both
if extra nvmath; then
  echo "=== nvmath-python, through cuemu run --device-profile rtx-pro-6000: test_nvmath.py"
  (cd "$here" && "$build/emu/cuemu" run --device-profile rtx-pro-6000 \
    -- "$nvmath/bin/python" -m pytest -q -p no:cacheprovider -W ignore::DeprecationWarning test_nvmath.py) || failed=1
fi
exit $failed
