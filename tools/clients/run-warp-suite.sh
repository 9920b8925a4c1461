#!/usr/bin/env bash
# Runs NVIDIA Warp's own tests (in the wheel: warp/tests) on cuemu and writes OUT.tsv ("node-id<TAB>status") and
# OUT.log through run-pytest-suite.sh (per-test time limit, failures rerun alone), then splits them by device:
# Warp registers each test once per device, as <name>_cpu (Warp's CPU device: the reference, same process) and
# <name>_cuda_0 (cuemu), so OUT-cpu.tsv holds the CPU results of tests with a CUDA twin, under the twin's name, and
# OUT-cuda.tsv every other test but the CPU-only ones (OUT-cpu-only.tsv): the CUDA variants, tests for CUDA only,
# tests without a device:
#   CUEMU=build/emu/cuemu PYTHON=/tmp/warp-venv/bin/python tools/clients/run-warp-suite.sh /tmp/warp [TEST...]
#   tools/clients/compare.py /tmp/warp-cpu.tsv /tmp/warp-cuda.tsv tools/clients/warp-known-differences.txt
# The run goes through `cuemu run --driver-version V`, V the CUDA version Warp's library was built with (Warp hands
# an older driver SASS instead of PTX; README.md, real clients). Tests with no CPU variant (streams, graphs, memory
# pools, cuda/test_async.py's copies) are in OUT-cuda.tsv only: compare.py compares the others, and those are judged
# by their own status.
# TEST defaults to the files below (relative to the wheel's warp/tests). Python: $PYTHON with warp-lang, pytest and
# pytest-timeout. One worker (JOBS, default 1): Warp compiles every test module's kernels with NVRTC and, for the CPU,
# with its Clang, which the kernel cache (WARP_CACHE_PATH, default OUT.cache) keeps for later runs.
set -uo pipefail
out=${1:?usage: run-warp-suite.sh OUTPREFIX [TEST...]}
shift
here=$(cd "$(dirname "$0")" && pwd)
python=$(command -v "${PYTHON:-python3}") || { echo "no python ${PYTHON:-python3}"; exit 2; }
export PYTHON=$python
root=$("$python" -c 'import os, warp.tests; print(os.path.dirname(os.path.dirname(os.path.dirname(warp.tests.__file__))))') ||
  { echo "warp is not installed in $python"; exit 2; }
tests=("$@")
[ ${#tests[@]} -eq 0 ] && tests=(test_arithmetic.py test_array.py test_atomic.py test_func.py test_struct.py
  test_vec.py matrix/test_mat.py test_quat.py test_math.py test_rand.py test_grad.py test_tape.py test_launch.py
  test_utils.py test_sparse.py geometry/test_mesh_query_ray.py geometry/test_mesh_query_point.py geometry/test_bvh.py
  geometry/test_hash_grid.py tile/test_tile.py tile/test_tile_reduce.py cuda/test_streams.py cuda/test_mempool.py
  cuda/test_conditional_captures.py cuda/test_async.py test_graph.py test_conditional.py test_codegen.py test_fp16.py
  test_noise.py fem/test_fem_integrate.py)
# Warp's test files define their test bodies as module-level functions named test_*, which its TestCase classes call
# once per device: pytest must not collect those functions on their own.
args=(-o python_functions=no_module_level_functions)
for t in "${tests[@]}"; do args+=("warp/tests/$t"); done
mkdir -p "$(dirname "$out")"
out=$(cd "$(dirname "$out")" && pwd)/$(basename "$out")
export WARP_CACHE_PATH=${WARP_CACHE_PATH:-$out.cache}
ctk=$("$python" -c 'import warp; warp.config.quiet = True; warp.init(); print("%d.%d" % warp._src.context.runtime.toolkit_version)' 2>/dev/null | tail -1)
ctk=${ctk:-13.9}
if [ -n "${CUEMU:-}" ]; then
  cuemu=$(cd "$(dirname "$CUEMU")" && pwd)/$(basename "$CUEMU")
  "$cuemu" run --driver-version "$ctk" -- "$here/run-pytest-suite.sh" "$out" "${JOBS:-1}" "$root" "${args[@]}"
else
  "$here/run-pytest-suite.sh" "$out" "${JOBS:-1}" "$root" "${args[@]}"
fi
rc=$?
"$python" - "$out" <<'PY'
import re, sys
out = sys.argv[1]
results = {}
for line in open(out + ".tsv"):
    name, status = line.rstrip("\n").rsplit("\t", 1)
    results[name] = status
# A CPU result under its CUDA twin's name, where the test has one (some run on the CPU only: `*_cpu_blocks_cpu`)
cpu = {t: s for n, s in results.items() if n.endswith("_cpu") and (t := re.sub(r"_cpu$", "_cuda_0", n)) in results}
cuda = {n: s for n, s in results.items() if not n.endswith("_cpu")}  # with the CUDA-only and device-free tests
cpu_only = {n: s for n, s in results.items() if n.endswith("_cpu") and re.sub(r"_cpu$", "_cuda_0", n) not in cpu}
with open(out + "-cpu-only.tsv", "w") as f:
    for n in sorted(cpu_only):
        f.write(f"{n}\t{cpu_only[n]}\n")
for path, part in ((out + "-cpu.tsv", cpu), (out + "-cuda.tsv", cuda)):
    with open(path, "w") as f:
        for n in sorted(part):
            f.write(f"{n}\t{part[n]}\n")
    counts = {}
    for s in part.values():
        counts[s] = counts.get(s, 0) + 1
    print(f"{path}: {len(part)} tests: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
PY
exit $rc
