#!/bin/bash
# On a machine with the CUDA toolkit and a GPU: ptxas's SASS of every gen.py kernel (the float arithmetic lines) and
# the driver JIT's results for them. Usage: tools/gpu-probe/fma27/run.sh OUTDIR
set -u
here=$(cd "$(dirname "$0")" && pwd)
out=$1
mkdir -p "$out/ptx"
python3 "$here/gen.py" "$out/ptx"
for f in "$out"/ptx/*.ptx; do
  ptxas -arch=sm_90 "$f" -o "$out/k.cubin" 2>&1 | head -3
  echo "== $(basename "$f")"
  cuobjdump -sass "$out/k.cubin" | grep -E "F(MUL|ADD|FMA)|D(MUL|ADD|FMA)|H(MUL2|ADD2|FMA2)|FMNMX|FSETP|DSETP|HSETP2|FSEL" | sed 's#/\*[0-9a-f]*\*/##; s/ *;.*//; s/^ *//'
done > "$out/sass.txt"
cuda=$(dirname "$(dirname "$(command -v nvcc)")")
g++ -std=c++20 -O1 -I"$cuda/include" "$here/probe.cpp" -o "$out/probe" -L"$cuda/lib64/stubs" -lcuda && "$out/probe" "$out/ptx" | sort > "$out/jit.txt"
rm -rf "$out/probe" "$out/k.cubin" "$out/ptx"
