#!/bin/bash
# On a machine with a GPU: logs what cuFFT (tests/libraries' cuFFT cases, and CuPy's cupy.fft) does with the
# driver's export tables, through the logging libcuda.so.1 of shim.cpp in front of the machine's real driver, and
# records the cuFFT cases' results for tests/libraries/recorded/.
# Usage: run-on-gpu.sh OUTDIR [PYTHON]   Writes OUTDIR/exportlog17.txt and OUTDIR/nvidia-gpu-cufft.txt.
set -u
out=${1:?usage: run-on-gpu.sh OUTDIR [PYTHON]}
python=${2:-python3}
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
cuda=$(dirname "$(dirname "$(command -v nvcc)")")
real=${SHIM_REAL_LIBCUDA:-$(ldconfig -p | awk '/libcuda\.so\.1 /{print $NF; exit}')}
real=$(readlink -f "$real")
work=$(mktemp -d)
log=$out/exportlog17.txt
{
  echo "real driver: $real"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null
  ls -la "$cuda"/lib64/libcufft.so* 2>/dev/null
} > "$log"
"$here/build.sh" "$real" "$work/shim" >> "$log" 2>&1 || { echo "shim build failed" >> "$log"; exit 1; }
g++ -std=c++17 -O1 -I"$cuda/include" "$repo/tests/libraries/library_calls.cpp" -o "$work/library-calls" \
  -L"$cuda/lib64" -lcublasLt -lcublas -lcurand -lcusparse -lcufft -lcudart -Wl,-rpath,"$cuda/lib64" >> "$log" 2>&1 ||
  { echo "library-calls build failed" >> "$log"; exit 1; }
rm -f "$out/nvidia-gpu-cufft.txt"
cases=$("$work/library-calls" list | grep '^cufft\.')
for c in $cases; do
  timeout 120 "$work/library-calls" record "$out/nvidia-gpu-cufft.txt" "$c" >> "$log" 2>&1
done
shimmed() {  # TAG COMMAND...
  local tag=$1
  shift
  mkdir -p "$work/logs"
  echo "===== $tag: $*" >> "$log"
  SHIM_LOG="$work/logs/$tag" SHIM_LOG_CALLS=1 SHIM_REAL_LIBCUDA="$real" LD_LIBRARY_PATH="$work/shim${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    timeout 120 "$@" >> "$log" 2>&1
  echo "===== $tag exit $?" >> "$log"
  for f in "$work/logs/$tag".*; do
    [ -e "$f" ] || continue
    echo "----- log $(basename "$f")" >> "$log"
    grep -v '^call cuDeviceGetAttribute' "$f" | head -c 3000000 >> "$log"
  done
}
for c in $cases; do shimmed "$c" "$work/library-calls" run "$c"; done
shimmed cupy.fft "$python" -c '
import cupy, numpy
print("cupy", cupy.__version__, "cufft", cupy.cuda.cufft.getVersion())
x = numpy.arange(64, dtype=numpy.complex64) * (1 + 0.5j)
y = cupy.fft.fft(cupy.asarray(x)).get()
print("max abs diff to numpy", float(numpy.abs(y - numpy.fft.fft(x)).max()))
r = cupy.fft.rfft(cupy.arange(100, dtype=cupy.float32)).get()
print("rfft diff", float(numpy.abs(r - numpy.fft.rfft(numpy.arange(100, dtype=numpy.float32))).max()))
'
exit 0
