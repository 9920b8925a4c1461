#!/usr/bin/env bash
# Shared by run-cupy-suite.sh and run-cuda-python-suite.sh: runs pytest over an upstream suite and writes
# OUT.tsv ("node-id<TAB>status", read by compare.py) and OUT.log.
# Usage: run-pytest-suite.sh OUTPREFIX JOBS ROOTDIR PYTEST-ARGUMENT...   (run from the caller, not by hand)
# JOBS > 1 needs pytest-xdist. Every test has a time limit (pytest-timeout; CUEMU_TEST_TIMEOUT seconds, default
# 300). A kernel fault poisons the process it happens in, as on a GPU, so the tests that run after it in the same
# worker fail too: the failing tests then run again in fresh processes, one per test file (CUEMU_RERUN_EACH=1: one
# per test; at most CUEMU_RERUN_MAX tests, default 400; CUEMU_RERUN_ALONE=0 skips this), and one that passes there
# is marked "ok-alone".
# CUEMU_SUITE_LIMIT=SECONDS stops the whole pytest run after that long; the tests that ended are kept.
# The node ids are relative to ROOTDIR (--rootdir), also where ROOTDIR lies inside another project (whose
# pyproject.toml pytest would otherwise take for the root): lists of node ids (pytest_select.py) then match.
set -uo pipefail
out=$1 jobs=$2 root=$3
shift 3
python=$(command -v "${PYTHON:-python3}") || { echo "no python ${PYTHON:-python3}"; exit 2; }
python=$(cd "$(dirname "$python")" && pwd)/$(basename "$python")
here=$(cd "$(dirname "$0")" && pwd)
# The run changes directory: relative library folders (LD_LIBRARY_PATH=build/emu) become absolute first.
libpath=
IFS=: read -ra dirs <<< "${LD_LIBRARY_PATH:-}"
for d in "${dirs[@]}"; do [ -n "$d" ] && libpath+="${libpath:+:}$(cd "$d" 2>/dev/null && pwd || echo "$d")"; done
export LD_LIBRARY_PATH=$libpath
mkdir -p "$(dirname "$out")"
out=$(cd "$(dirname "$out")" && pwd)/$(basename "$out")
export PYTHONPATH="$here${PYTHONPATH:+:$PYTHONPATH}" PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
timeout_s=${CUEMU_TEST_TIMEOUT:-300}
common=(--rootdir "$root" -p pytest_tsv -p no:cacheprovider -p no:randomly -o addopts= -q -rN --continue-on-collection-errors --timeout="$timeout_s")
parallel=()
[ "$jobs" -gt 1 ] && parallel=(-n "$jobs")
cd "$root" || exit 2
SECONDS=0
limit=()
[ -n "${CUEMU_SUITE_LIMIT:-}" ] && limit=(timeout -k 10 "$CUEMU_SUITE_LIMIT")
if [ "${CUEMU_RERUN_ONLY:-0}" != 1 ]; then  # CUEMU_RERUN_ONLY=1: only rerun the failures of an existing OUT.tsv
  CUEMU_SUITE_TSV="$out.tsv" "${limit[@]}" "$python" -m pytest "${common[@]}" "${parallel[@]}" "$@" > "$out.log" 2>&1
  rc=$?
  echo "pytest exit $rc after $SECONDS s" >> "$out.log"
fi
[ -s "$out.tsv" ] || { echo "no results: see $out.log"; tail -20 "$out.log"; exit 1; }
"$python" - "$out.tsv" <<'PY'
import sys
counts, results = {}, {}
for line in open(sys.argv[1]):
    name, status = line.rstrip("\n").rsplit("\t", 1)
    results[name] = status
with open(sys.argv[1], "w") as f:  # sorted, one line a test (a stopped run leaves them in the order they ended)
    for name in sorted(results):
        f.write(f"{name}\t{results[name]}\n")
for line in open(sys.argv[1]):
    status = line.rstrip("\n").rsplit("\t", 1)[1]
    counts[status] = counts.get(status, 0) + 1
print(f"{sys.argv[1]}: {sum(counts.values())} tests: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
PY
if [ "${CUEMU_RERUN_ALONE:-1}" = 1 ]; then
  # One fresh process per test file runs that file's failing tests (at most CUEMU_RERUN_MAX in all); with
  # CUEMU_RERUN_EACH=1 each failing test gets a process of its own instead (slower: a process start per test).
  awk -F'\t' '($2 == "fail" || $2 == "error") && $1 !~ /\\[nt]/ && $1 ~ /::/ {print $1}' "$out.tsv" |
    head -n "${CUEMU_RERUN_MAX:-400}" > "$out.rerun"
  : > "$out.alone.log"
  alone=$(mktemp)
  if [ "${CUEMU_RERUN_EACH:-0}" = 1 ]; then
    groups=$(awk '{print NR}' "$out.rerun")
  else
    groups=$(awk -F'::' '{print $1}' "$out.rerun" | sort -u)
  fi
  for group in $groups; do
    if [ "${CUEMU_RERUN_EACH:-0}" = 1 ]; then
      mapfile -t batch < <(sed -n "${group}p" "$out.rerun")
    else
      mapfile -t batch < <(awk -F'::' -v f="$group" '$1 == f' "$out.rerun")
    fi
    : > "$alone"
    CUEMU_SUITE_TSV="$alone" timeout $((timeout_s * 10 + 60)) "$python" -m pytest "${common[@]}" "${batch[@]}" \
      >> "$out.alone.log" 2>&1
    "$python" - "$out.tsv" "$alone" <<'PY'
import sys
path, alone = sys.argv[1], sys.argv[2]
passed = set()
for line in open(alone):
    name, _, status = line.rstrip("\n").rpartition("\t")
    if status == "ok":
        passed.add(name)
lines = open(path).read().splitlines()
with open(path, "w") as f:
    for line in lines:
        name, status = line.rsplit("\t", 1)
        f.write(f"{name}\t{'ok-alone' if name in passed and status in ('fail', 'error') else status}\n")
PY
  done
  rm -f "$alone"
  echo "rerun in fresh processes: $(wc -l < "$out.rerun") tests, $(grep -c $'\tok-alone$' "$out.tsv") pass there" |
    tee -a "$out.log"
  rm -f "$out.rerun"
fi
exit 0
