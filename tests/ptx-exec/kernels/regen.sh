#!/bin/sh
# Regenerates the checked-in PTX from the CUDA sources (needs the CUDA toolkit).
set -e
cd "$(dirname "$0")"
for f in *.cu; do
  rdc=""
  [ "$f" = cdp.cu ] && rdc="-rdc=true"  # device-side launches need relocatable device code
  [ "$f" = cdp1.cu ] && rdc="-rdc=true -DCUDA_FORCE_CDP1_IF_SUPPORTED"
  nvcc -ptx -arch=sm_80 $rdc "$f" -o "${f%.cu}.ptx"
done
