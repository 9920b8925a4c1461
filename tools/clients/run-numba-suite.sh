#!/usr/bin/env bash
# Runs numba-cuda's own test suite (numba.cuda.tests, shipped in the numba-cuda wheel) and writes one line per
# test, "name<TAB>status" (ok, fail, error, skip, xfail, xpass), to OUT.tsv, plus the whole log to OUT.log.
# On cuemu:   LD_LIBRARY_PATH=build/emu tools/clients/run-numba-suite.sh /tmp/numba-cuemu [JOBS] [FILTER...]
#             (failing tests run again alone afterwards; CUEMU_RERUN_ALONE=0 skips that)
# On a GPU:   tools/clients/run-numba-suite.sh $OUT/numba-gpu 16
# Then:       tools/clients/compare.py GPU.tsv CUEMU.tsv tools/clients/numba-known-differences.txt
# Python: $PYTHON (default python3) with numba-cuda, numpy and pytest importable.
set -uo pipefail
out=${1:?usage: run-numba-suite.sh OUTPREFIX [JOBS] [TEST...]}
jobs=${2:-$(nproc)}
shift $(( $# >= 2 ? 2 : $# ))
tests=("$@")
[ ${#tests[@]} -eq 0 ] && tests=(numba.cuda.tests)
python=${PYTHON:-python3}
mkdir -p "$(dirname "$out")"
cd "$(mktemp -d)" || exit 1  # numba writes caches into the working directory
export PYTHONUNBUFFERED=1 NUMBA_DISABLE_PERFORMANCE_WARNINGS=1 PYTHONWARNINGS=ignore::RuntimeWarning
# Some tests use CuPy: on cuemu its kernels must be PTX and its reductions its own (README, real clients).
export CUPY_COMPILE_WITH_PTX=${CUPY_COMPILE_WITH_PTX-1} CUPY_ACCELERATORS=${CUPY_ACCELERATORS-}
SECONDS=0
"$python" -m numba.runtests -v -m "$jobs" "${tests[@]}" > "$out.log" 2>&1
rc=$?
echo "numba.runtests exit $rc after $SECONDS s" >> "$out.log"
# unittest's verbose lines: "test_name (module.Class.test_name) ... ok" (possibly with a description line between).
"$python" - "$out.log" "$out.tsv" <<'PY'
import re, sys
# unittest's verbose lines: "test_name (module.Class.test_name) ... ok". Warnings printed while a test runs can sit
# between the " ... " and the status, so the status is the first line after the start that is a status.
status_of = {"ok": "ok", "FAIL": "fail", "ERROR": "error", "expected failure": "xfail", "unexpected success": "xpass"}
start = re.compile(r"^(test\w*) \(([\w.]+)\)(?:\s|$)")
ending = re.compile(r"(?:^|\.\.\. )(ok|FAIL|ERROR|skipped.*|expected failure|unexpected success)\s*$")
results, pending = {}, None
for line in open(sys.argv[1], errors="replace"):
    line = line.rstrip("\n")
    m = start.match(line)
    if m:
        name, where = m.groups()
        pending = where if where.endswith("." + name) else f"{where}.{name}"
    if pending:
        e = ending.search(line)
        if e:
            status = e.group(1)
            results[pending] = "skip" if status.startswith("skipped") else status_of[status]
            pending = None
with open(sys.argv[2], "w") as f:
    for key in sorted(results):
        f.write(f"{key}\t{results[key]}\n")
counts = {}
for s in results.values():
    counts[s] = counts.get(s, 0) + 1
print(f"{sys.argv[2]}: {len(results)} tests: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
PY
# A kernel fault poisons the worker process it happens in (as on a GPU), so the tests that run after it in that
# worker fail too. Each failing test runs again alone; one that passes then is marked "ok-alone" in OUT.tsv.
if [ "${CUEMU_RERUN_ALONE:-1}" = 1 ]; then
  awk -F'\t' '$2 == "fail" || $2 == "error" {print $1}' "$out.tsv" > "$out.rerun"
  : > "$out.alone.log"
  while read -r test; do
    if timeout 300 "$python" -m numba.runtests "$test" >> "$out.alone.log" 2>&1; then
      sed -i "s/^$test\t\(fail\|error\)$/$test\tok-alone/" "$out.tsv"
    fi
  done < "$out.rerun"
  echo "rerun alone: $(wc -l < "$out.rerun") tests, $(grep -c 'ok-alone$' "$out.tsv") pass alone" | tee -a "$out.log"
  rm -f "$out.rerun"
fi
exit 0
