#!/bin/sh
# Regenerates the checked-in PTX from the CUDA sources (needs the CUDA toolkit).
set -e
cd "$(dirname "$0")"
for f in *.cu; do
  [ "$f" = async.cu ] && continue  # below: one PTX per architecture
  [ "$f" = cluster.cu ] && continue  # below: clusters need sm_90
  rdc=""
  [ "$f" = cdp.cu ] && rdc="-rdc=true"  # device-side launches need relocatable device code
  [ "$f" = cdp1.cu ] && rdc="-rdc=true -DCUDA_FORCE_CDP1_IF_SUPPORTED"
  nvcc -ptx -arch=sm_80 $rdc "$f" -o "${f%.cu}.ptx"
done
# asynchronous copies: cp.async and mbarrier waits on sm_80, bulk copies with transaction counts on sm_90
nvcc -ptx -arch=sm_80 async.cu -o async_sm80.ptx
nvcc -ptx -arch=sm_90 async.cu -o async_sm90.ptx
# thread-block clusters
nvcc -ptx -arch=sm_90 cluster.cu -o cluster.ptx
