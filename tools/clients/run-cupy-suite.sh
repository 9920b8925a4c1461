#!/usr/bin/env bash
# Runs a subset of CuPy's own test suite (its repository's tests/ folder: the wheel has no tests) and writes
# "node-id<TAB>status" per test to OUT.tsv and the log to OUT.log (tools/clients/run-pytest-suite.sh does the run).
#   CUPY_TESTS=/path/to/cupy/tests   the tests of the installed CuPy's release, e.g. for cupy-cuda13x 14.2.0:
#                                    git --git-dir=<cupy clone> archive v14.2.0 tests | tar -x -C /work/upstream/cupy
# On cuemu:   LD_LIBRARY_PATH=build/emu tools/clients/run-cupy-suite.sh /tmp/cupy-cuemu [JOBS] [TEST...]
# On a GPU:   tools/clients/run-cupy-suite.sh $OUT/cupy-gpu 16
# Then:       tools/clients/compare.py GPU.tsv CUEMU.tsv tools/clients/cupy-known-differences.txt
# The default subset is array creation, manipulation, indexing, sorting and statistics (3064 tests, reductions
# included). Each CuPy kernel is compiled by NVRTC once and interpreted, and 2 shared cores run it slowly; the
# other folders (core 3421 tests, math 10238, random, FFT, linear algebra, cuBLAS) are left out for time; the last
# ones are mostly NVIDIA's libraries. Python: $PYTHON (default python3) with cupy, numpy,
# pytest, pytest-timeout and (JOBS > 1) pytest-xdist.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: run-cupy-suite.sh OUTPREFIX [JOBS] [TEST...]}
jobs=${2:-$(nproc)}
shift $(( $# >= 2 ? 2 : $# ))
tests=("$@")
[ ${#tests[@]} -eq 0 ] && tests=(cupy_tests/creation_tests cupy_tests/manipulation_tests cupy_tests/indexing_tests
  cupy_tests/sorting_tests cupy_tests/statistics_tests)
root=${CUPY_TESTS:?set CUPY_TESTS to the tests folder of the CuPy release that is installed}
# On cuemu CuPy's kernels must be PTX and its reductions its own (README, real clients); harmless on a GPU.
export CUPY_COMPILE_WITH_PTX=${CUPY_COMPILE_WITH_PTX-1} CUPY_ACCELERATORS=${CUPY_ACCELERATORS-}
export CUDA_PATH=${CUDA_PATH:-/usr/local/cuda} CUPY_CACHE_DIR=${CUPY_CACHE_DIR:-$(mktemp -d)}
exec "$here/run-pytest-suite.sh" "$out" "$jobs" "$root" "${tests[@]}"
