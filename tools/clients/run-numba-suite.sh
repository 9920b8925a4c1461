#!/usr/bin/env bash
# Runs numba-cuda's own test suite (numba.cuda.tests, shipped in the numba-cuda wheel) and writes one line per
# test, "name<TAB>status" (ok, fail, error, skip, xfail, xpass), to OUT.tsv, plus the whole log to OUT.log.
# On cuemu:   LD_LIBRARY_PATH=build/emu tools/clients/run-numba-suite.sh /tmp/numba-cuemu [JOBS] [FILTER...]
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
exit 0
