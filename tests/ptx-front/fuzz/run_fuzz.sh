#!/bin/sh
# Bounded fuzzing run for ctest: replays the checked-in regression inputs, then fuzzes for SECONDS seeded from
# the given directories. Fails on any crash, leak, sanitizer report, out-of-memory or per-input timeout
# (libFuzzer exits non-zero and leaves the input in WORK/artifacts/).
# run_fuzz.sh FUZZER DICT WORK SECONDS REGRESSION_DIR SEED_DIR...
set -eu
fuzzer=$1 dict=$2 work=$3 seconds=$4 regressions=$5
shift 5
rm -rf "$work"
mkdir -p "$work/new" "$work/artifacts"
common="-rss_limit_mb=2048 -malloc_limit_mb=1024 -timeout=20 -artifact_prefix=$work/artifacts/"
# Regression inputs run whole (the fuzzing run below truncates inputs to -max_len).
inputs=$(find "$regressions" -type f ! -name README.md | sort)
if [ -n "$inputs" ]; then
  # shellcheck disable=SC2086
  "$fuzzer" $common $inputs
fi
# shellcheck disable=SC2086
exec "$fuzzer" $common -dict="$dict" -max_total_time="$seconds" -max_len=65536 -print_final_stats=1 \
  "$work/new" "$@"
