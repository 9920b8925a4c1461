#!/usr/bin/env bash
# Records compute-sanitizer's findings for the checker corpus on a GPU: builds every program of programs/ with nvcc
# (SASS and PTX, line info), runs each natively and under the compute-sanitizer tools its name selects (mc_: memcheck,
# rc_: racecheck, ic_: initcheck, sc_: synccheck, clean_: all four), and writes OUTDIR/<program>.<tool>.txt (the
# whole output, then a line "exit: N") plus OUTDIR/environment.txt.
# Usage: tests/checkers/run-on-gpu.sh OUTDIR [JOBS]
set -u
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: run-on-gpu.sh OUTDIR [JOBS]}
jobs=${2:-8}
mkdir -p "$out/bin"
nvcc=${NVCC:-nvcc}
sanitizer=${COMPUTE_SANITIZER:-compute-sanitizer}
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  "$nvcc" --version | tail -2
  "$sanitizer" --version | tail -2
} > "$out/environment.txt" 2>&1

build() {
  local src=$1 name
  name=$(basename "$src" .cu)
  "$nvcc" -O1 -lineinfo -gencode arch=compute_90,code=[sm_90,compute_90] -I"$here/programs" -o "$out/bin/$name" "$src" \
    > "$out/$name.build.txt" 2>&1 || echo "build failed: $name"
}
export -f build
export out nvcc here
ls "$here"/programs/*.cu | xargs -P "$jobs" -I{} bash -c 'build {}'

tools_of() {
  case $1 in
    mc_*) echo memcheck ;;
    rc_*) echo racecheck ;;
    ic_*) echo initcheck ;;
    sc_*) echo synccheck ;;
    *) echo memcheck racecheck initcheck synccheck ;;
  esac
}
runs=()
for bin in "$out"/bin/*; do
  name=$(basename "$bin")
  runs+=("$name native")
  for tool in $(tools_of "$name"); do runs+=("$name $tool"); done
done
run_one() {
  local name=$1 tool=$2 file="$out/$1.$2.txt"
  if [ "$tool" = native ]; then
    (cd "$out" && timeout 120 "bin/$name") > "$file" 2>&1
  else
    local extra=()
    [ "$tool" = memcheck ] && extra=(--leak-check full)
    (cd "$out" && timeout 120 "$sanitizer" --tool "$tool" "${extra[@]}" --error-exitcode 99 "bin/$name") > "$file" 2>&1
  fi
  echo "exit: $?" >> "$file"
}
export -f run_one
export sanitizer
printf '%s\n' "${runs[@]}" | xargs -P "$jobs" -L1 bash -c 'run_one "$0" "$1"'
rm -rf "$out/bin"
echo "recorded $(ls "$out"/*.txt | wc -l) files in $out"
