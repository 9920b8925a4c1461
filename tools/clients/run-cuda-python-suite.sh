#!/usr/bin/env bash
# Runs cuda-python's own tests (cuda_bindings/tests, then cuda_core/tests, each in its own pytest session as
# upstream does) and writes "node-id<TAB>status" per test to OUT.tsv and the logs to OUT.*.log.
#   CUDA_PYTHON_SOURCE=/path   a tree of the cuda-python repository with cuda_bindings/tests, cuda_core/tests,
#                              cuda_python_test_helpers, cuda_bindings/cuda/bindings/_test_helpers and the top
#                              pytest.ini and conftest.py (git archive of those paths is enough; the wheels carry
#                              no tests)
# On cuemu:   LD_LIBRARY_PATH=build/emu tools/clients/run-cuda-python-suite.sh /tmp/cuda-python-cuemu [JOBS]
# On a GPU:   tools/clients/run-cuda-python-suite.sh $OUT/cuda-python-gpu 16
# Then:       tools/clients/compare.py GPU.tsv CUEMU.tsv tools/clients/cuda-python-known-differences.txt
# Left out, on both drivers: the Cython tests (they need a compiler build of .pyx files), NVML (cuda_bindings/tests/
# nvml, cuda_core/tests/system: NVIDIA's management library is not the CUDA driver), nvFatbin (a toolkit library
# the wheels do not bring), cuDLA (Tegra). Python: $PYTHON (default python3) with cuda-python, numpy, pytest,
# pytest-timeout and (JOBS > 1) pytest-xdist.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: run-cuda-python-suite.sh OUTPREFIX [JOBS] [TEST...]}
jobs=${2:-$(nproc)}
shift $(( $# >= 2 ? 2 : $# ))
src=$(cd "${CUDA_PYTHON_SOURCE:?set CUDA_PYTHON_SOURCE to a cuda-python source tree}" && pwd) || exit 2
export CUDA_PATH=${CUDA_PATH:-/usr/local/cuda} CUDA_HOME=${CUDA_HOME:-${CUDA_PATH:-/usr/local/cuda}}
export CUEMU_CUDA_BINDINGS_SOURCE=$src/cuda_bindings/cuda/bindings
export PYTHONPATH="$src/cuda_python_test_helpers${PYTHONPATH:+:$PYTHONPATH}"
# Every pytest run, the reruns of failing tests alone included, loads the compatibility plugin.
export PYTEST_ADDOPTS="-p cuda_python_compat${PYTEST_ADDOPTS:+ $PYTEST_ADDOPTS}"
# CuPy is used by some cuda.core tests: on cuemu its kernels must be PTX (README, real clients).
export CUPY_COMPILE_WITH_PTX=${CUPY_COMPILE_WITH_PTX-1} CUPY_ACCELERATORS=${CUPY_ACCELERATORS-}
skip=(--ignore=cuda_bindings/tests/cython --ignore=cuda_core/tests/cython --ignore=cuda_bindings/tests/nvml
  --ignore=cuda_core/tests/system --ignore=cuda_bindings/tests/test_nvfatbin.py
  --ignore=cuda_bindings/tests/legacy_api/test_legacy_nvfatbin.py --ignore=cuda_bindings/tests/cudla)
status=0
if [ $# -gt 0 ]; then
  "$here/run-pytest-suite.sh" "$out" "$jobs" "$src" "${skip[@]}" "$@" || status=1
  exit $status
fi
for part in cuda_bindings cuda_core; do
  "$here/run-pytest-suite.sh" "$out.$part" "$jobs" "$src" "${skip[@]}" "$part/tests" || status=1
done
cat "$out.cuda_bindings.tsv" "$out.cuda_core.tsv" > "$out.tsv" 2>/dev/null
echo "$out.tsv: $(wc -l < "$out.tsv") tests"
exit $status
