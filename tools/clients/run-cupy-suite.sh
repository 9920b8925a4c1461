#!/usr/bin/env bash
# Runs a subset of CuPy's own test suite (its repository's tests/ folder: the wheel has no tests) and writes
# "node-id<TAB>status" per test to OUT.tsv and the log to OUT.log (tools/clients/run-pytest-suite.sh does the run).
#   CUPY_TESTS=/path/to/cupy/tests   the tests of the installed CuPy's release, e.g. for cupy-cuda13x 14.2.0:
#                                    git --git-dir=<cupy clone> archive v14.2.0 tests | tar -x -C /work/upstream/cupy
# On cuemu:   build/emu/cuemu run -- tools/clients/run-cupy-suite.sh /tmp/cupy-cuemu [JOBS] [--more | --cupyx | TEST...]
#             (through `cuemu run`, CuPy's NVCC is cuemu-nvcc: backend='nvcc' and cupyx.jit's thrust calls need it)
# On a GPU:   tools/clients/run-cupy-suite.sh $OUT/cupy-gpu 16
# Then:       tools/clients/compare.py GPU.tsv CUEMU.tsv tools/clients/cupy-known-differences.txt
# --more runs the second list instead (4507 tests; about an hour with one worker on 2 shared cores): the driver's
# own areas in cuda_tests (memory and async pools, streams, events, graphs, devices, textures, compilers; not
# cuTENSOR or NCCL), random_tests, and the rest of core_tests (RawKernel/RawModule, fusion, scans, CUB reductions,
# DLPack, __cuda_array_interface__, flags, internals, structured dtypes, gufuncs, ...).
# --cupyx runs the third list (tools/clients/lists/cupy-14.2.0-cupyx.txt, about 9,800 tests, read by the plugin
# pytest_select.py): the cupy_tests folders the other lists leave out (logic, binary, padding, polynomial, misc, io,
# functional, lib), cupyx.scipy's special, stats and interpolate, cupyx.jit and cupyx's top-level files whole, and
# every 8th test of cupyx.scipy.ndimage and every 4th of cupyx.scipy.signal (35,000 there), on both drivers the same.
# It needs SciPy (those tests compare CuPy with SciPy on the same machine).
# The default subset is array creation, manipulation, indexing, sorting and statistics (3064 tests, reductions
# included) and the ndarray core that users call most (core_tests: operators, reductions, indexing, copies and
# views, ufuncs, ElementwiseKernel/ReductionKernel, bfloat16: 1856 tests). Each CuPy kernel is compiled by NVRTC
# once and interpreted, and 2 shared cores run it slowly; the other folders are left out for time: the rest of core
# (fusion compiles a kernel per test, about 12 tests a minute here; test_raw's jitify and CCCL programs keep NVRTC
# busy for minutes, on the H100's machine too), math (10238 tests), random, FFT, linear algebra, cuBLAS (the last
# ones mostly NVIDIA's libraries). Python: $PYTHON (default python3) with cupy, numpy, pytest, pytest-timeout and (JOBS > 1) pytest-xdist.
# On cuemu (the libcuda.so.1 that Python finds exports cuemuGetDeterministic) the run uses the gb10 device profile
# and PTX JIT (CUEMU_DEVICE_PROFILE=gb10 CUDA_FORCE_PTX_JIT=1, as `cuemu run --device-profile gb10` runs a CuPy
# program): CuPy's bundled CUB/Thrust kernels and NVIDIA's libraries carry PTX for compute capability 12 only.
# Either variable set beforehand wins.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: run-cupy-suite.sh OUTPREFIX [JOBS] [TEST...]}
jobs=${2:-$(nproc)}
shift $(( $# >= 2 ? 2 : $# ))
tests=("$@")
core=cupy_tests/core_tests
cuda=cupy_tests/cuda_tests
if [ "${tests[0]:-}" = --more ]; then
  tests=($cuda --ignore=$cuda/test_cutensor.py --ignore=$cuda/test_nccl.py cupy_tests/random_tests
    $core/fusion_tests $core/test_raw.py $core/test_scan.py $core/test_cub_reduction.py $core/test_dlpack.py
    $core/test_ndarray_cuda_array_interface.py $core/test_function.py $core/test_carray.py $core/test_array_function.py
    $core/test_ndarray_owndata.py $core/test_internal.py $core/test_iter.py $core/test_nep50_examples.py
    $core/test_flags.py $core/test_include.py $core/test_syncdetect.py $core/test_multithreading.py $core/test_gufuncs.py
    $core/test_mdspan.py $core/test_ndarray_byteswap.py $core/test_ndarray_complex_ops.py
    $core/test_ndarray_contiguity.py $core/test_structured.py $core/test_ufunc_methods.py)
fi
if [ "${tests[0]:-}" = --cupyx ]; then
  sp=cupyx_tests/scipy_tests
  export CUEMU_SUITE_SELECT=${CUEMU_SUITE_SELECT:-$here/lists/cupy-14.2.0-cupyx.txt}
  tests=(-p pytest_select cupy_tests/logic_tests cupy_tests/binary_tests cupy_tests/padding_tests
    cupy_tests/polynomial_tests cupy_tests/misc_tests cupy_tests/io_tests cupy_tests/functional_tests cupy_tests/lib_tests
    $sp/special_tests $sp/stats_tests $sp/interpolate_tests cupyx_tests/jit_tests cupyx_tests/test_rsqrt.py
    cupyx_tests/test_runtime.py cupyx_tests/test_cupyx.py cupyx_tests/test_pinned_array.py cupyx_tests/test_time.py
    cupyx_tests/test_optimize.py $sp/ndimage_tests $sp/signal_tests)
  # A file's tests in one worker, in their order: test_cg_sync's plainly launched grid sync needs a cooperative
  # launch (test_grid_group) before it in the process, on either driver (README, Findings)
  [ "$jobs" -gt 1 ] && tests=(--dist loadfile "${tests[@]}")
fi
[ ${#tests[@]} -eq 0 ] && tests=(cupy_tests/creation_tests cupy_tests/manipulation_tests cupy_tests/indexing_tests
  cupy_tests/sorting_tests cupy_tests/statistics_tests
  $core/test_ndarray_elementwise_op.py $core/test_ndarray.py $core/test_elementwise.py $core/test_reduction.py
  $core/test_userkernel.py $core/test_ndarray_indexing.py $core/test_ndarray_copy_and_view.py
  $core/test_ndarray_ufunc.py $core/test_ndarray_math.py $core/test_ndarray_unary_op.py $core/test_ndarray_get.py
  $core/test_ndarray_conversion.py $core/test_core.py $core/test_bfloat16.py
  $core/test_ndarray_reduction.py $core/test_ndarray_adv_indexing.py $core/test_ndarray_scatter.py)
root=${CUPY_TESTS:?set CUPY_TESTS to the tests folder of the CuPy release that is installed}
if "${PYTHON:-python3}" -c 'import ctypes; ctypes.CDLL("libcuda.so.1").cuemuGetDeterministic' 2>/dev/null; then
  export CUEMU_DEVICE_PROFILE=${CUEMU_DEVICE_PROFILE-gb10} CUDA_FORCE_PTX_JIT=${CUDA_FORCE_PTX_JIT-1}
  # Its 4 GB array and the host copies it compares grow the process past 24 GB of host memory (device memory is
  # host memory here): on a smaller machine the kernel's OOM killer stops it, and maybe a neighbour too.
  tests+=(--deselect
    cupy_tests/creation_tests/test_from_data.py::TestCudaArrayInterfaceBigArray::test_with_over_size_array)
  echo "cuemu: device profile ${CUEMU_DEVICE_PROFILE:-default}, CUDA_FORCE_PTX_JIT=${CUDA_FORCE_PTX_JIT}"
fi
# On cuemu CuPy's kernels must be PTX and its reductions its own (README, real clients); harmless on a GPU.
export CUPY_COMPILE_WITH_PTX=${CUPY_COMPILE_WITH_PTX-1} CUPY_ACCELERATORS=${CUPY_ACCELERATORS-}
# The GPU machine has one GPU: CuPy's own switch skips its multi-GPU tests (without it they fail, or wait for a
# second device's thread forever, on either driver).
export CUPY_TEST_GPU_LIMIT=${CUPY_TEST_GPU_LIMIT-1}
export CUDA_PATH=${CUDA_PATH:-/usr/local/cuda} CUPY_CACHE_DIR=${CUPY_CACHE_DIR:-$(mktemp -d)}
exec "$here/run-pytest-suite.sh" "$out" "$jobs" "$root" "${tests[@]}"
