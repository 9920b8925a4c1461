#!/usr/bin/env bash
# Runs a program many times, several at once, and counts the runs that fail (issue 24's nvjitlink_lto hunt).
#   parallel-stress.sh RUNS JOBS OUTDIR -- PROGRAM [ARGS...]
# Each run has 120 s; a failed run's output is kept as OUTDIR/fail-<n>.log. With MALLOC_CHECK=1 in the
# environment every run uses glibc's checking allocator (libc_malloc_debug.so.0, MALLOC_CHECK_=3), which reports
# a write into freed heap memory at the next free instead of now and then. Prints one summary line at the end and
# exits 1 when a run failed.
set -u
if [ $# -lt 5 ] || [ "$4" != -- ]; then
  echo "usage: $0 RUNS JOBS OUTDIR -- PROGRAM [ARGS...]" >&2
  exit 2
fi
runs=$1 jobs=$2 out=$3
shift 4
mkdir -p "$out"
rm -f "$out"/fail-*.log "$out"/verdicts
preload=
if [ "${MALLOC_CHECK:-0}" = 1 ]; then
  for candidate in /usr/lib/x86_64-linux-gnu/libc_malloc_debug.so.0 /usr/lib64/libc_malloc_debug.so.0; do
    [ -e "$candidate" ] && preload=$candidate && break
  done
  [ -n "$preload" ] || { echo "MALLOC_CHECK=1: libc_malloc_debug.so.0 not found" >&2; exit 2; }
fi
export preload out
one() {  # run number, program, args...
  local i=$1 log="$out/run-$1.log"
  shift
  if [ -n "$preload" ]; then
    LD_PRELOAD=$preload MALLOC_CHECK_=3 timeout 120 "$@" >"$log" 2>&1
  else
    timeout 120 "$@" >"$log" 2>&1
  fi
  local rc=$?
  if [ $rc = 0 ]; then
    rm -f "$log"
    echo ok >>"$out/verdicts"
  else
    mv "$log" "$out/fail-$i.log"
    echo "run $i: exit status $rc ($out/fail-$i.log)"
    echo fail >>"$out/verdicts"
  fi
}
export -f one
seq 1 "$runs" | xargs -P "$jobs" -I{} bash -c 'one "$@" 2>/dev/null' _ {} "$@"
ok=$(grep -c '^ok$' "$out/verdicts" 2>/dev/null)
fail=$(grep -c '^fail$' "$out/verdicts" 2>/dev/null)
echo "SUMMARY runs=$runs jobs=$jobs malloc_check=${MALLOC_CHECK:-0} ok=${ok:-0} fail=${fail:-0}"
[ "${fail:-0}" = 0 ]
