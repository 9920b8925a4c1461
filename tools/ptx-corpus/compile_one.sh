#!/bin/sh
# One corpus entry: compile_one.sh OUTDIR NVCC SOURCE NAME ARCH MODE (called by gen_corpus.sh).
out=$1; nvcc=$2; src=$3; name=$4; arch=$5; mode=$6
case "$mode" in
    O3) flags="" ;;
    lineinfo) flags="-lineinfo" ;;
    G) flags="-G" ;;
    rdc) flags="-rdc=true" ;;
    *) echo "unknown mode $mode" >&2; exit 1 ;;
esac
dst="$out/$name.$arch.$mode.ptx"
if [ -s "$dst" ] && [ "$dst" -nt "$src" ]; then exit 0; fi
if ! "$nvcc" -ptx -std=c++17 -arch="$arch" $flags "$src" -o "$dst.tmp" 2> "$dst.log"; then
    echo "FAILED: $name $arch $mode (see $dst.log)" >&2
    rm -f "$dst.tmp"
    exit 1
fi
mv "$dst.tmp" "$dst"
rm -f "$dst.log"
