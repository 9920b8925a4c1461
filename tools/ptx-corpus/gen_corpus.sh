#!/bin/sh
# Generates the PTX corpus: every source in src/ compiled by nvcc -ptx for several targets and modes.
# Usage: gen_corpus.sh OUTDIR [NVCC] [JOBS]
# Output names: <source>.<arch>.<mode>.ptx with mode O3 (default optimisation), lineinfo, G (debug), rdc.
set -eu
out=${1:?output directory}
nvcc=${2:-nvcc}
jobs=${3:-2}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
list=$(mktemp)
trap 'rm -f "$list"' EXIT
for src in "$here"/src/*.cu; do
    name=$(basename "$src" .cu)
    case "$name" in
        cub_algos|thrust_algos) archs="sm_75 sm_80 sm_90"; modes="O3 lineinfo" ;;
        ptx_wrappers_sm90) archs="sm_90a"; modes="O3 lineinfo G" ;;
        ptx_wrappers_sm100) archs="sm_100a"; modes="O3" ;;
        *) archs="sm_75 sm_80 sm_86 sm_89 sm_90 sm_90a"; modes="O3 lineinfo G" ;;
    esac
    for arch in $archs; do
        for mode in $modes; do
            echo "$src $name $arch $mode" >> "$list"
        done
    done
    case "$name" in basic|coop) echo "$src $name sm_80 rdc" >> "$list" ;; esac
done
# The conformance suite's CUDA kernels, when that folder exists (sm_80, both optimised and with line info).
for src in "$here"/../../conformance/kernels/cu/*.cu; do
    [ -f "$src" ] || continue
    name=conformance_$(basename "$src" .cu)
    echo "$src $name sm_80 O3" >> "$list"
    echo "$src $name sm_90 lineinfo" >> "$list"
done
# G for the big template libraries once, it is large but exercises the debug-section grammar.
echo "$here/src/cub_algos.cu cub_algos sm_80 G" >> "$list"

status=0
while read -r src name arch mode; do
    printf '%s\0%s\0%s\0%s\0' "$src" "$name" "$arch" "$mode"
done < "$list" | xargs -0 -n4 -P "$jobs" "$here/compile_one.sh" "$out" "$nvcc" || status=1
exit $status
