#!/usr/bin/env bash
# Formats the tree's C and C++ sources with .clang-format: `tools/format.sh` rewrites them, `tools/format.sh
# --check` lists the files that differ and fails (CTest `format.clean`). Left alone: include/ (laid out by
# tools/gen-cuda-h from NVIDIA's headers), generated tables, and the PTX corpora.
set -u
cd "$(dirname "$0")/.."
command -v clang-format >/dev/null || { echo "clang-format not installed: not checked"; exit 77; }
mapfile -t files < <(git ls-files '*.cpp' '*.h' | grep -v -e '^include/' -e 'generated' -e '/corpus/')
if [ "${1:-}" = "--check" ]; then
  bad=()
  for f in "${files[@]}"; do
    clang-format --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
  done
  if [ ${#bad[@]} -gt 0 ]; then
    printf 'not formatted (run tools/format.sh): %s\n' "${bad[@]}"
    exit 1
  fi
  echo "${#files[@]} files formatted ($(clang-format --version))"
  exit 0
fi
clang-format -i "${files[@]}"
