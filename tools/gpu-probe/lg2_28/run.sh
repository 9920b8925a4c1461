#!/usr/bin/env bash
# On the device machine: tools/gpu-probe/lg2_28/run.sh $OUT
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?OUT}
raw=/tmp/lg2_28
mkdir -p "$raw"
nvcc -O2 -arch=sm_90 "$here/probe.cu" -o /tmp/lg2_28-probe
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/gpu.txt"
/tmp/lg2_28-probe "$raw"
python3 "$here/pack.py" "$raw" "$out" | tee "$out/summary.txt"
