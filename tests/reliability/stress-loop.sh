#!/usr/bin/env bash
# Runs a program many times and reports hangs with every thread's stack (issue 24's intermittent livelock hunt).
#   stress-loop.sh RUNS LIMIT_SECONDS OUTDIR -- PROGRAM [ARGS...]
# Each run gets CUEMU_THREADS from 1..8 in turn (unless set). A run that exceeds LIMIT_SECONDS is a HANG: its
# threads' backtraces go to OUTDIR/hang-<n>.txt (gdb), then it is killed. Prints one summary line at the end.
set -u
runs=$1 limit=$2 out=$3
shift 4
mkdir -p "$out"
ok=0 hang=0 fail=0
for ((i = 1; i <= runs; i++)); do
  threads=${CUEMU_THREADS:-$((1 + i % 8))}
  start=$(date +%s.%N)
  CUEMU_THREADS=$threads "$@" >"$out/last.log" 2>&1 &
  pid=$!
  hung=0
  while kill -0 "$pid" 2>/dev/null; do
    if [ "$(echo "$(date +%s.%N) - $start > $limit" | bc)" = 1 ]; then
      hung=1
      gdb -p "$pid" -batch -ex 'thread apply all bt' >"$out/hang-$i.txt" 2>&1
      kill -9 "$pid"
      break
    fi
    sleep 0.05
  done
  wait "$pid"
  rc=$?
  elapsed=$(echo "$(date +%s.%N) - $start" | bc)
  if [ $hung = 1 ]; then
    hang=$((hang + 1))
    echo "run $i threads=$threads HANG after ${elapsed}s: $out/hang-$i.txt"
  elif [ $rc != 0 ]; then
    fail=$((fail + 1))
    cp "$out/last.log" "$out/fail-$i.log"
    echo "run $i threads=$threads FAIL rc=$rc: $out/fail-$i.log"
  else
    ok=$((ok + 1))
    echo "run $i threads=$threads ok ${elapsed}s"
  fi
done
echo "SUMMARY runs=$runs ok=$ok fail=$fail hang=$hang"
