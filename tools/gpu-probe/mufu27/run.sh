#!/usr/bin/env bash
# On the device machine: tools/gpu-probe/mufu27/run.sh $OUT
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?OUT}
raw=/tmp/mufu27
mkdir -p "$raw"
nvcc -O2 -arch=sm_90 "$here/probe.cu" -o /tmp/mufu27-probe
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/gpu.txt"
/tmp/mufu27-probe "$raw"
python3 "$here/analyse.py" "$raw" "$out" | tee "$out/summary.txt"
