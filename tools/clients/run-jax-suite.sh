#!/usr/bin/env bash
# Runs JAX's own tests (repository tag jax-v0.10.2, folder tests/) on cuemu or on JAX's CPU backend and writes
# OUT.tsv ("node-id<TAB>status") and OUT.log through run-pytest-suite.sh (per-test time limit, failures rerun alone).
# On cuemu:  CUEMU=build/emu/cuemu JAX_SRC=/tmp/jax-src tools/clients/run-jax-suite.sh /tmp/jax-cuemu [TEST...]
#            (the whole run goes through `cuemu run --device-profile gb10`: XLA's built-in kernels are compute_120
#            PTX, cuDNN's compute_121)
# CPU:       JAX_SRC=/tmp/jax-src tools/clients/run-jax-suite.sh /tmp/jax-cpu [TEST...]   (JAX_PLATFORMS=cpu)
# Then:      tools/clients/compare.py /tmp/jax-cpu.tsv /tmp/jax-cuemu.tsv
# TEST defaults to the files below. JAX_NUM_GENERATED_CASES (default 1) is how many cases each parametrised test
# draws; the draw is seeded, so both runs get the same cases. Python: $PYTHON (default python3) with
# jax[cuda13-local] 0.10.2, NVIDIA's cuDNN/cuBLAS/cuSOLVER/cuFFT/cuSPARSE wheels and build/test-requirements.txt
# (absl-py, hypothesis, pytest-timeout). One worker (JOBS, default 1).
# Source tree: git --git-dir=<jax clone> archive jax-v0.10.2 tests build conftest.py pyproject.toml | tar -x -C DIR
set -uo pipefail
out=${1:?usage: run-jax-suite.sh OUTPREFIX [TEST...]}
shift
src=${JAX_SRC:?set JAX_SRC to a jax-v0.10.2 source tree}
tests=("$@")
[ ${#tests[@]} -eq 0 ] && tests=(tests/lax_test.py tests/lax_numpy_reducers_test.py tests/lax_control_flow_test.py
  tests/random_lax_test.py tests/linalg_test.py tests/fft_test.py tests/api_test.py)
here=$(cd "$(dirname "$0")" && pwd)
export JAX_NUM_GENERATED_CASES=${JAX_NUM_GENERATED_CASES:-1} PYTHON=${PYTHON:-python3}
if [ -n "${CUEMU:-}" ]; then
  cuemu=$(cd "$(dirname "$CUEMU")" && pwd)/$(basename "$CUEMU")
  log=()
  [ -n "${CUEMU_RUN_LOG:-}" ] && log=(--log "$CUEMU_RUN_LOG")
  exec "$cuemu" run --device-profile gb10 "${log[@]}" -- "$here/run-pytest-suite.sh" "$out" "${JOBS:-1}" "$src" "${tests[@]}"
fi
JAX_PLATFORMS=cpu exec "$here/run-pytest-suite.sh" "$out" "${JOBS:-1}" "$src" "${tests[@]}"
