#!/bin/sh
# Bounded fuzzing run for ctest: replays the committed corpus, then fuzzes for RUNS inputs (a fixed count, so the
# test's length does not depend on the machine's speed) seeded from it. Fails on any crash, sanitizer report,
# out-of-memory or per-input timeout; libFuzzer leaves the input in WORK/artifacts/ (commit it to the corpus
# with the fix).
# run_fuzz.sh FUZZER WORK RUNS CORPUS_DIR
set -eu
fuzzer=$1 work=$2 runs=$3 corpus=$4
rm -rf "$work"
mkdir -p "$work/new" "$work/artifacts"
exec "$fuzzer" -rss_limit_mb=2048 -malloc_limit_mb=1100 -timeout=20 -artifact_prefix="$work/artifacts/" \
  -runs="$runs" -max_len=65536 -seed=1 -print_final_stats=1 "$work/new" "$corpus"
