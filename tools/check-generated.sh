#!/usr/bin/env bash
# Fails when a committed generated file differs from what its generator writes now, naming the command that
# regenerates it: docs/API-STATUS.md and conformance/COVERAGE.md always; emu/api/generated/{entries,procaddress,
# errors,device_runtime_errors}.def where clang and NVIDIA's headers are installed (the generator reads the toolkit's signatures).
set -u
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
stale=0
compare() {  # committed, generated, regenerate-command
  if ! diff -u "$1" "$2" >"$tmp/diff"; then
    echo "STALE: $1 differs from what its generator writes; run: $3"
    head -20 "$tmp/diff"
    stale=1
  else
    echo "current: $1"
  fi
}
python3 tools/gen-api/status_report.py "$tmp/API-STATUS.md" >/dev/null || exit 1
compare docs/API-STATUS.md "$tmp/API-STATUS.md" "python3 tools/gen-api/status_report.py"
python3 conformance/tools/coverage.py --cuda-h include/cuda.h --out "$tmp/COVERAGE.md" >/dev/null || exit 1
compare conformance/COVERAGE.md "$tmp/COVERAGE.md" "python3 conformance/tools/coverage.py"
toolkit=${CUDA_INCLUDE:-/usr/local/cuda/include}
if command -v clang >/dev/null && [ -f "$toolkit/cuda.h" ] && [ -f /usr/include/GL/gl.h ]; then
  mkdir -p "$tmp/generated"
  python3 tools/gen-api/gen_api.py --out "$tmp/generated" || exit 1
  for f in entries.def procaddress.def errors.def device_runtime_errors.def; do
    compare "emu/api/generated/$f" "$tmp/generated/$f" "python3 tools/gen-api/gen_api.py"
  done
else
  echo "not checked: emu/api/generated/*.def (needs clang, $toolkit/cuda.h and GL/gl.h)"
fi
exit $stale
