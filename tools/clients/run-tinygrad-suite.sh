#!/usr/bin/env bash
# Runs tinygrad's own tests (repository tag v0.13.0, folders test/, extra/ and examples/) on cuemu, on a GPU or on
# tinygrad's CPU device and writes OUT.tsv ("node-id<TAB>status") and OUT.log through run-pytest-suite.sh (per-test
# time limit, failures rerun alone).
# On cuemu:  CUEMU=build/emu/cuemu TINYGRAD_SRC=/work/upstream/tinygrad tools/clients/run-tinygrad-suite.sh /tmp/tg-cuemu [TEST...]
#            (the whole run goes through `cuemu run`; tinygrad's CUDA device is chosen with DEV=CUDA, its renderer
#            with TINYGRAD_DEV: CUDA (default: C++ compiled by NVRTC to PTX), CUDA:PTX (tinygrad writes PTX itself),
#            CUDA:NVCC (nvcc -ptx, which `cuemu run` points at cuemu-nvcc))
# A GPU:     TINYGRAD_GPU=1 TINYGRAD_SRC=... tools/clients/run-tinygrad-suite.sh /tmp/tg-h200 [--more]   (DEV=CUDA, or
#            TINYGRAD_DEV; with JOBS=12 an H200 ran the first list in 208 s)
# CPU:       TINYGRAD_SRC=/work/upstream/tinygrad tools/clients/run-tinygrad-suite.sh /tmp/tg-cpu [TEST...]   (DEV=CPU)
# --more (after OUTPREFIX): the second list below instead of the first; it holds test_multitensor.py,
#            whose tests shard over CUDA:1..CUDA:5: on cuemu the runner asks for 6 devices (CUEMU_DEVICE_COUNT)
# Then:      tools/clients/compare.py /tmp/tg-cpu.tsv /tmp/tg-cuemu.tsv tools/clients/tinygrad-known-differences.txt
# TEST defaults to the files below. Python: $PYTHON (default python3) with tinygrad 0.13.0, pytest, pytest-timeout,
# hypothesis, numpy and torch 2.9.1 (the tests compare many operators with PyTorch on the host; PyPI's wheel, whose
# CUDA libraries are never used here). One worker (JOBS, default 1).
# tinygrad's CUDA device needs nothing from cuemu but its libcuda.so.1 and NVRTC on the loader path: tinygrad asks
# NVRTC for PTX (nvrtcGetPTX) for a device named CUDA, and its own PTX renderer hands PTX to cuModuleLoadData.
# Source tree: git --git-dir=<tinygrad clone> archive v0.13.0 test extra examples pyproject.toml | tar -x -C DIR
# (examples/: TestBatchNorm of test_multitensor.py imports it)
set -uo pipefail
out=${1:?usage: run-tinygrad-suite.sh OUTPREFIX [--more] [TEST...]}
shift
src=${TINYGRAD_SRC:?set TINYGRAD_SRC to a tinygrad v0.13.0 source tree}
more=0
[ "${1:-}" = --more ] && { more=1; shift; }
tests=("$@")
[ ${#tests[@]} -eq 0 ] && [ $more = 1 ] && tests=(test/backend/test_linearizer.py test/backend/test_graph.py
  test/backend/test_subbuffer.py test/backend/test_pickle.py test/backend/test_profiler.py
  test/backend/test_renderer_failures.py test/backend/test_softmax_fusion.py test/backend/test_tensor_variable.py
  test/backend/test_rangeify.py test/backend/test_opt_gemm.py test/backend/test_encodings.py test/backend/test_isel.py
  test/backend/test_jit_cases.py test/backend/test_jit_footguns.py test/backend/test_schedule.py
  test/backend/test_multitensor.py test/unit/test_assign.py test/unit/test_attention.py test/unit/test_conv.py
  test/unit/test_winograd.py test/unit/test_linalg.py test/unit/test_masked_tensor.py
  test/unit/test_rearrange_einops.py test/unit/test_tensor_data.py test/unit/test_setitem_schedule.py
  test/unit/test_function.py test/unit/test_call.py test/unit/test_invalid_tensor.py test/unit/test_allreduce.py)
[ ${#tests[@]} -eq 0 ] && tests=(test/backend/test_ops.py test/backend/test_dtype.py test/backend/test_dtype_alu.py
  test/backend/test_tensor.py test/backend/test_nn.py test/backend/test_optim.py test/backend/test_jit.py
  test/backend/test_randomness.py test/backend/test_uops.py test/backend/test_transcendental.py
  test/backend/test_setitem.py test/backend/test_edgecases.py test/backend/test_arange.py
  test/backend/test_const_folding.py test/backend/test_custom_kernel.py test/backend/test_symbolic_jit.py
  test/unit/test_indexing.py test/unit/test_gradient.py)
here=$(cd "$(dirname "$0")" && pwd)
export PYTHON=${PYTHON:-python3} CUEMU_TEST_TIMEOUT=${CUEMU_TEST_TIMEOUT:-300}
# tinygrad's compiled-kernel cache: a fresh one per run, so that each run compiles its kernels itself
export CACHEDB=${CACHEDB:-$(mktemp -d)/tinygrad-cache.db}
if [ -n "${CUEMU:-}" ]; then
  cuemu=$(cd "$(dirname "$CUEMU")" && pwd)/$(basename "$CUEMU")
  log=()
  [ -n "${CUEMU_RUN_LOG:-}" ] && log=(--log "$CUEMU_RUN_LOG")
  [ $more = 1 ] && export CUEMU_DEVICE_COUNT=${CUEMU_DEVICE_COUNT:-6}
  DEV=${TINYGRAD_DEV:-CUDA} exec "$cuemu" run "${log[@]}" -- "$here/run-pytest-suite.sh" "$out" "${JOBS:-1}" "$src" "${tests[@]}"
fi
[ "${TINYGRAD_GPU:-0}" = 1 ] && DEV=${TINYGRAD_DEV:-CUDA} exec "$here/run-pytest-suite.sh" "$out" "${JOBS:-1}" "$src" "${tests[@]}"
DEV=CPU exec "$here/run-pytest-suite.sh" "$out" "${JOBS:-1}" "$src" "${tests[@]}"
