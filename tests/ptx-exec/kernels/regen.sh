#!/bin/sh
# Regenerates the checked-in PTX from the CUDA sources (needs the CUDA toolkit).
set -e
cd "$(dirname "$0")"
for f in *.cu; do
  rdc=""
  [ "$f" = cdp.cu ] && rdc="-rdc=true"  # device-side launches need relocatable device code
  nvcc -ptx -arch=sm_80 $rdc "$f" -o "${f%.cu}.ptx"
done
