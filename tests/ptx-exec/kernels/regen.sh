#!/bin/sh
# Regenerates the checked-in PTX from the CUDA sources (needs the CUDA toolkit).
set -e
cd "$(dirname "$0")"
for f in *.cu; do nvcc -ptx -arch=sm_80 "$f" -o "${f%.cu}.ptx"; done
