#!/usr/bin/env bash
# Builds the test fatbinaries from kernel.cu with nvcc: make-fatbins.sh NVCC OUTDIR.
# The same script regenerates the checked-in copies: make-fatbins.sh nvcc tests/emu-fatbin/data
set -euo pipefail
nvcc=$1
out=$2
src=$(dirname "$0")/kernel.cu
mkdir -p "$out"
build() { local name=$1; shift; "$nvcc" -fatbin "$@" "$src" -o "$out/$name.fatbin"; }
build default                                      # sm_75 SASS + compute_75 PTX, ZSTD
build speed --compress-mode=speed                  # LZ4
build nocompress --no-compress
build sm90 -arch=sm_90                             # sm_90 SASS + compute_90 PTX
build sassonly -gencode arch=compute_90,code=sm_90 # no PTX
build rdc -rdc=true                                # compressed cubin + PTX with --compile-only
build debug -G
build lineinfo -lineinfo
build multi -gencode arch=compute_80,code=compute_80 -gencode arch=compute_90,code=compute_90 \
  -gencode arch=compute_90a,code=compute_90a -gencode arch=compute_100,code=compute_100 \
  -gencode arch=compute_75,code=sm_75
"$nvcc" -cubin -arch=sm_90 "$src" -o "$out/sm90.cubin"
# Host objects with device code, as cuLinkAddData takes them (CU_JIT_INPUT_OBJECT / CU_JIT_INPUT_LIBRARY).
"$nvcc" -dc "$src" -o "$out/dc.o"
rm -f "$out/dc.a"
ar rcs "$out/dc.a" "$out/dc.o"
