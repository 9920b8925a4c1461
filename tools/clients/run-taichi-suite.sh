#!/usr/bin/env bash
# Runs Taichi's own tests (repository tag v1.7.4, folder tests/) on cuemu (Taichi's CUDA backend) or on Taichi's CPU
# backend (the reference: no Taichi on the GPU machine) and writes OUT.tsv ("node-id<TAB>status") and OUT.log through
# run-pytest-suite.sh (per-test time limit, failures rerun alone).
# On cuemu:  CUEMU=build/emu/cuemu TAICHI_TESTS=/work/upstream/taichi/tests tools/clients/run-taichi-suite.sh /tmp/ti-cuemu [TEST...]
#            (the whole run goes through `cuemu run`, TI_WANTED_ARCHS=cuda: Taichi's LLVM writes PTX, which it loads
#            through the driver API, on the default profile)
# CPU:       TAICHI_TESTS=/work/upstream/taichi/tests tools/clients/run-taichi-suite.sh /tmp/ti-cpu [TEST...]
#            (TI_WANTED_ARCHS=cpu)
# Then:      tools/clients/compare.py /tmp/ti-cpu.tsv /tmp/ti-cuemu.tsv tools/clients/taichi-known-differences.txt
# Source:    git --git-dir=<taichi clone> archive v1.7.4 tests | tar -x -C /work/upstream/taichi
# Python:    $PYTHON (default python3) with taichi 1.7.4, pytest, pytest-timeout and what the tests import:
#            pytest-rerunfailures (conftest.py imports it), psutil, Pillow, scipy, autograd, requests.
# TEST defaults to every file of tests/python (names relative to TAICHI_TESTS, e.g. python/test_ad_basics.py).
# `ti.test()` parametrises each test by the architectures in TI_WANTED_ARCHS, so its node id names the backend
# ("[arch=x64]", "[arch=cuda]", "[arch=cuda-<lambda>0]"); a test the backend is excluded from is one skipped item
# without it. So that both runs name a test alike, OUT.tsv drops the architecture from the ids (test_abs[arch=cuda]
# is test_abs, test_poly[arch=x64-<lambda>0] is test_poly[<lambda>0], test_f[dtype0-8-arch=cuda] is test_f[dtype0-8]); OUT-raw.tsv and OUT-raw.log keep pytest's own
# ids and output. Running each test that still fails alone, in a process of its own (after a grid that never ends,
# the tests of the same file that follow it fail in the per-file rerun too):
#   CUEMU_RERUN_ONLY=1 CUEMU_RERUN_EACH=1 CUEMU=... tools/clients/run-taichi-suite.sh OUT
# One worker (JOBS, default 1); CUEMU_TEST_TIMEOUT defaults to 120 s here. On cuemu every grid has a time limit too
# (CUEMU_KERNEL_TIMEOUT, default 60 s; its CUDA_ERROR_LAUNCH_TIMEOUT is sticky, as a GPU watchdog's): pytest-timeout
# cannot stop a test whose Python thread waits in cuStreamSynchronize for a grid that never ends. Taichi keeps one
# CUDA context for the whole process (ti.reset() does not end it), so the tests after a fault or a time-out in the
# same process fail too: failures run again in a fresh process per file (run-pytest-suite.sh; CUEMU_RERUN_MAX
# defaults to 5000 here). Time on the 2 shared cores of the
# development machine (loaded by other work; 2026-11-28): CPU 33 minutes, cuemu 72 (9 for the first pass, which a
# grid that never ended poisoned, the rest for the per-file reruns). Taichi compiles each kernel with its LLVM on
# both; cuemu then parses its PTX, which carries the parts of Taichi's runtime the kernel calls.
set -uo pipefail
out=${1:?usage: run-taichi-suite.sh OUTPREFIX [TEST...]}
shift
src=${TAICHI_TESTS:?set TAICHI_TESTS to the tests folder of a taichi v1.7.4 source tree}
src=$(cd "$src" && pwd)
tests=("$@")
[ ${#tests[@]} -eq 0 ] && tests=(python)
here=$(cd "$(dirname "$0")" && pwd)
export PYTHON=${PYTHON:-python3} TI_OFFLINE_CACHE=0 CUEMU_TEST_TIMEOUT=${CUEMU_TEST_TIMEOUT:-120}
export CUEMU_RERUN_MAX=${CUEMU_RERUN_MAX:-5000}
mkdir -p "$(dirname "$out")"
out=$(cd "$(dirname "$out")" && pwd)/$(basename "$out")
if [ -n "${CUEMU:-}" ]; then
  cuemu=$(cd "$(dirname "$CUEMU")" && pwd)/$(basename "$CUEMU")
  CUEMU_KERNEL_TIMEOUT=${CUEMU_KERNEL_TIMEOUT:-60} TI_WANTED_ARCHS=cuda "$cuemu" run -- "$here/run-pytest-suite.sh" "$out-raw" "${JOBS:-1}" "$src" "${tests[@]}"
else
  TI_WANTED_ARCHS=cpu "$here/run-pytest-suite.sh" "$out-raw" "${JOBS:-1}" "$src" "${tests[@]}"
fi
rc=$?
[ -s "$out-raw.tsv" ] || exit "$rc"
"$PYTHON" - "$out-raw.tsv" "$out.tsv" <<'PY'
import re, sys
raw, path = sys.argv[1], sys.argv[2]
results = {}
for line in open(raw):
    name, status = line.rstrip("\n").rsplit("\t", 1)
    name = re.sub(r"\[arch=(x64|arm64|cuda)\]$", "", name)
    name = re.sub(r"\[arch=(x64|arm64|cuda)-", "[", name)
    name = re.sub(r"-arch=(x64|arm64|cuda)(?=[-\]])", "", name)  # the arch after other parameters
    results[name] = status
with open(path, "w") as f:
    for name in sorted(results):
        f.write(f"{name}\t{results[name]}\n")
counts = {}
for s in results.values():
    counts[s] = counts.get(s, 0) + 1
print(f"{path}: {len(results)} tests: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
PY
exit $rc
