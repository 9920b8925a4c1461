#!/usr/bin/env bash
# Tests of the `cuemu` command: cli_test.sh CUEMU SCHEDULE_PROBE. Each check prints ok/FAIL; exits 1 on a failure.
set -u
cuemu=$1
probe=$2
failures=0
check() {  # name, condition (a command)
  if eval "$2"; then echo "ok: $1"; else echo "FAIL: $1"; failures=$((failures + 1)); fi
}
out=$(mktemp)
err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
unset NVCC CUEMU_NVCC_SHIM TRITON_PTXAS_PATH TRITON_PTXAS_BLACKWELL_PATH TRITON_LIBCUDA_PATH LD_PRELOAD LD_LIBRARY_PATH CUEMU_DETERMINISTIC CUEMU_SCHEDULE_SEED CUEMU_DEVICE_PROFILE CUDA_FORCE_PTX_JIT CUPY_COMPILE_WITH_PTX CUEMU_PTX_ISA CUEMU_DEVICE_COUNT CUEMU_DEV_FILES CUDA_ROOT JAX_SKIP_CUDA_CONSTRAINTS_CHECK XLA_FLAGS

# Without the command the probe finds no driver; through it, cuemu's.
"$probe" sum >/dev/null 2>&1
check "the probe alone finds no libcuda.so.1" '[ $? -eq 3 ]'
"$cuemu" run -- "$probe" sum >"$out" 2>"$err"
check "run: the program gets cuemu's library" '[ $? -eq 0 ] && grep -qx "result 2080" "$out"'
"$cuemu" run --seed 5 --device-profile gb10 -- sh -c 'echo "$CUEMU_SCHEDULE_SEED $CUEMU_DEVICE_PROFILE ${LD_LIBRARY_PATH%%:*}"' >"$out"
check "run: options become the library's variables, children inherit them" \
  'grep -q "^5 gb10 /" "$out" && [ -f "$(cut -d" " -f3 "$out")/libcuda.so.1" ]'
"$cuemu" run -- sh -c 'echo "force=$CUDA_FORCE_PTX_JIT"' >"$out"
check "run: NVIDIA's libraries are told to choose PTX kernels (CUDA_FORCE_PTX_JIT=1)" 'grep -qx "force=1" "$out"'
CUDA_FORCE_PTX_JIT=0 "$cuemu" run -- sh -c 'echo "force=$CUDA_FORCE_PTX_JIT"' >"$out"
check "run: a CUDA_FORCE_PTX_JIT the user set stays" 'grep -qx "force=0" "$out"'
"$cuemu" run -- sh -c 'echo "cupy=$CUPY_COMPILE_WITH_PTX isa=$CUEMU_PTX_ISA"' >"$out"
check "run: CuPy makes PTX, and newer toolkits' PTX is compiled (CUPY_COMPILE_WITH_PTX=1, CUEMU_PTX_ISA=newest)" \
  'grep -qx "cupy=1 isa=newest" "$out"'
LD_PRELOAD=libm.so.6 "$cuemu" run -- sh -c 'echo "preload=$LD_PRELOAD"' >"$out"
check "run: cuemu's device files and nvJitLink are preloaded, before the program's own LD_PRELOAD" \
  'grep -q "^preload=/.*/libcuemu-dev-files.so:/.*/libnvJitLink.so.13:libm.so.6$" "$out"'
# NVIDIA's device files appear for clients that look for them (JAX), one /dev/nvidiaN per device; never on a machine
# that has them already (a GPU machine), where the real ones answer.
if [ ! -e /dev/nvidiactl ] && [ ! -e /dev/nvidia0 ]; then
  "$cuemu" run -- sh -c 'test -c /dev/nvidiactl && test -c /dev/nvidia0 && ! test -e /dev/nvidia1 && echo shown' >"$out"
  check "run: /dev/nvidiactl and /dev/nvidia0 appear as character devices, /dev/nvidia1 not with one device" \
    'grep -qx shown "$out"'
  "$cuemu" run --device-count 2 -- sh -c 'test -c /dev/nvidia1 && ! test -e /dev/nvidia2 && echo shown' >"$out"
  check "run: --device-count 2 shows /dev/nvidia1" 'grep -qx shown "$out"'
  "$cuemu" run -- python3 -c 'import os; st = os.stat("/dev/nvidia0"); print(os.major(st.st_rdev), os.minor(st.st_rdev), os.access("/dev/nvidia0", os.R_OK | os.W_OK))' >"$out"
  check "run: Python sees /dev/nvidia0 as NVIDIA's device 195,0, readable and writable" 'grep -qx "195 0 True" "$out"'
  "$cuemu" run -- sh -c 'cat /dev/nvidia0 2>/dev/null || echo "cannot open"' >"$out"
  check "run: opening a device file still fails (nothing pretends to be the kernel driver)" 'grep -qx "cannot open" "$out"'
  "$cuemu" run --dev-files off -- sh -c 'test -e /dev/nvidia0 || echo absent; echo "$LD_PRELOAD"' >"$out"
  check "run: --dev-files off shows the machine's own /dev" 'grep -qx absent "$out" && ! grep -q dev-files "$out"'
fi
# An installation without the ptx-toolkit links (a wheel): the root is made of links in the user's cache folder.
lib=$(mktemp -d)
cache=$(mktemp -d)
here_lib=$(cd "$(dirname "$cuemu")" && pwd)
ln -s "$here_lib/libcuda.so.1" "$here_lib/cuemu-ptxas" "$here_lib/cuemu-nvcc" "$lib/"
CUEMU_LIBRARY_DIR=$lib XDG_CACHE_HOME=$cache "$cuemu" run -- sh -c 'echo "$CUDA_ROOT"; "$CUDA_ROOT/bin/ptxas" --version' >"$out"
check "run: without an installed ptx-toolkit, CUDA_ROOT is one made in the cache folder, whose ptxas is cuemu-ptxas" \
  'grep -q "^$cache/cuemu/ptx-toolkit-" "$out" && grep -q "release 13.0," "$out"'
CUEMU_LIBRARY_DIR=$lib XDG_CACHE_HOME=$cache "$cuemu" run -- sh -c 'echo "$CUDA_ROOT"' >"$err"
check "run: a second run uses the same cached root" 'cmp -s <(head -1 "$out") "$err"'
CUEMU_LIBRARY_DIR=$lib XDG_CACHE_HOME=$cache "$cuemu" run -- sh -c 'command -v nvcc' >"$out"
check "run: without an installed nvcc-shim, nvcc on PATH is a link to cuemu-nvcc made in the cache folder" \
  'grep -q "^$cache/cuemu/nvcc-shim-.*/bin/nvcc$" "$out" && [ "$(readlink "$(cat "$out")")" = "$lib/cuemu-nvcc" ]'
rm -rf "$lib" "$cache"
# nvcc: cuemu-nvcc first on PATH (emu/nvcc/nvcc.cpp); its cubins are PTX, SASS-only targets get PTX too
shim_dir="$(cd "$(dirname "$cuemu")" && pwd)/nvcc-shim/bin"
"$cuemu" run -- sh -c 'command -v nvcc; echo "$NVCC"' >"$out"
check "the nvcc-shim folder is a CUDA root: bin/../lib64/libcudadevrt.a is the toolkit's (PyCUDA links it)" \
  '[ -e "$shim_dir/../lib64/libcudadevrt.a" ] || [ ! -e /usr/local/cuda/lib64/libcudadevrt.a ]'
check "run: nvcc on PATH and CuPy's NVCC are cuemu-nvcc" \
  '[ "$(sed -n 1p "$out")" = "$shim_dir/nvcc" ] && [ "$(sed -n 2p "$out")" = "$shim_dir/nvcc" ]'
NVCC=/opt/my/nvcc "$cuemu" run --nvcc off -- sh -c 'echo "${PATH%%:*} $NVCC"' >"$out"
check "run: --nvcc off leaves PATH alone, and an NVCC the user set stays" \
  '! grep -q nvcc-shim "$out" && grep -q " /opt/my/nvcc$" "$out"'
if [ -x /usr/local/cuda/bin/nvcc ] || command -v nvcc >/dev/null; then
  work=$(mktemp -d)
  printf 'extern "C" __global__ void fill(int* out) { out[threadIdx.x] = threadIdx.x * 3 + 1; }\n' >"$work/k.cu"
  (cd "$work" && "$cuemu" run -- nvcc --version) >"$out" 2>&1
  check "nvcc --version: the toolkit's text and a line naming cuemu-nvcc" \
    'grep -q "release 13" "$out" && grep -q "^cuemu-nvcc: " "$out"'
  (cd "$work" && "$cuemu" run -- nvcc --cubin -arch sm_90 k.cu) >"$out" 2>&1
  check "nvcc --cubin (PyCUDA's way) writes k.cubin, the kernel's PTX for compute_90" \
    '[ -f "$work/k.cubin" ] && grep -aq "^.target sm_90" "$work/k.cubin" && grep -aq ".entry fill" "$work/k.cubin"'
  "$cuemu" run -- "$probe" file "$work/k.cubin" >"$out" 2>&1
  check "the PTX cubin loads with cuModuleLoadData and runs" 'grep -qx "result 1520" "$out"'
  (cd "$work" && "$cuemu" run -- nvcc --cubin -gencode arch=compute_80,code=sm_80 -o other.cubin k.cu) >"$out" 2>&1
  check "nvcc --cubin with -gencode and -o: PTX for the gencode's architecture" \
    'grep -aq "^.target sm_80" "$work/other.cubin"'
  (cd "$work" && "$cuemu" run -- nvcc --cubin -arch sm_80 -arch sm_90 k.cu) >"$out" 2>&1
  check "nvcc --cubin for two architectures is refused, as nvcc refuses it" \
    '[ $? -ne 0 ] && grep -q "one architecture" "$out"'
  (cd "$work" && "$cuemu" run -- nvcc --fatbin -gencode arch=compute_90,code=sm_90 -o k.fatbin k.cu) >"$out" 2>&1
  "$cuemu" run -- "$probe" file "$work/k.fatbin" >"$out" 2>&1
  check "nvcc --fatbin of a SASS-only -gencode embeds the PTX too: the fatbinary runs" 'grep -qx "result 1520" "$out"'
  (cd "$work" && "$cuemu" run --nvcc off -- nvcc --fatbin -gencode arch=compute_90,code=sm_90 -o sass.fatbin k.cu \
    || /usr/local/cuda/bin/nvcc --fatbin -gencode arch=compute_90,code=sm_90 -o sass.fatbin k.cu) >/dev/null 2>&1
  "$cuemu" run -- "$probe" file "$work/sass.fatbin" >"$out" 2>&1
  check "the toolkit's nvcc, for comparison: SASS only, which cuemu refuses" '[ $? -eq 4 ]'
  (cd "$work" && "$cuemu" run -- nvcc --cubin -arch sm_90 broken.cu) >"$out" 2>&1
  check "nvcc's own errors come through (a missing input)" '[ $? -ne 0 ] && grep -q "broken.cu" "$out"'
  rm -rf "$work"
fi
# cuemu inspect: a binary's device code and the profiles that run it
data="$(cd "$(dirname "$0")/../emu-fatbin/data" && pwd)"
"$cuemu" inspect "$data/sm90.fatbin" "$data/sassonly.fatbin" >"$out"
check "inspect: PTX for compute_90 runs on every profile of compute capability 9 or more" \
  'grep -q "PTX   compute_90 " "$out" && [ "$(grep -c "1 of 1 fatbinaries have PTX it runs$" "$out")" -eq 4 ]'
check "inspect: the Ada profile (8.9) runs none of it" \
  'grep -q "profile l4 .*(compute capability 8.9): 0 of 1 fatbinaries have PTX it runs (none" "$out"'
check "inspect: SASS-only code runs on no profile (and compute_90 PTX not on l4)" \
  'grep -c "(none: this code cannot run there)" "$out" | grep -qx 6'
"$cuemu" inspect /nonexistent/lib.so >"$out"
check "inspect: a file that cannot be read gives 1 and says why" '[ $? -eq 1 ] && grep -q "cannot read" "$out"'
"$cuemu" run --dev-files maybe -- true 2>"$err"
check "run: an invalid --dev-files mode is refused" '[ $? -eq 2 ] && grep -q "CUEMU_DEV_FILES=maybe" "$err"'
"$cuemu" run -- sh -c 'echo "jax=$JAX_SKIP_CUDA_CONSTRAINTS_CHECK"' >"$out"
check "run: JAX skips its CUPTI version check (JAX_SKIP_CUDA_CONSTRAINTS_CHECK=1)" 'grep -qx "jax=1" "$out"'
if [ -e "$(dirname "$cuemu")/ptx-toolkit/bin/ptxas" ]; then
  "$cuemu" run -- sh -c 'echo "$CUDA_ROOT"; "$CUDA_ROOT/bin/ptxas" --version; ls "$CUDA_ROOT/nvvm/libdevice"' >"$out"
  check "run: CUDA_ROOT is a toolkit root whose ptxas is cuemu-ptxas, with libdevice (XLA assembles with it)" \
    'grep -q "/ptx-toolkit$" "$out" && grep -q "release 13.0," "$out" && grep -q "libdevice.10.bc" "$out"'
  CUDA_ROOT=/opt/mine "$cuemu" run -- sh -c 'echo "root=$CUDA_ROOT"' >"$out"
  check "run: a CUDA_ROOT the user set stays" 'grep -qx "root=/opt/mine" "$out"'
  XLA_FLAGS=--xla_dump_to=/tmp/x "$cuemu" run -- sh -c 'echo "$XLA_FLAGS"' >"$out"
  check "run: XLA_FLAGS gets the ptx-toolkit as XLA's CUDA data folder (TensorFlow) and no autotuning, after the user's flags" \
    'grep -q "^--xla_dump_to=/tmp/x --xla_gpu_cuda_data_dir=/.*/ptx-toolkit --xla_gpu_autotune_level=0$" "$out"'
  XLA_FLAGS="--xla_gpu_cuda_data_dir=/opt/mine --xla_gpu_autotune_level=4" "$cuemu" run -- sh -c 'echo "$XLA_FLAGS"' >"$out"
  check "run: a CUDA data folder and an autotune level the user's XLA_FLAGS name stay" \
    'grep -qx -- "--xla_gpu_cuda_data_dir=/opt/mine --xla_gpu_autotune_level=4" "$out"'
fi
"$cuemu" run -- sh -c 'echo "triton=${TRITON_PTXAS_PATH##*/} ${TRITON_PTXAS_BLACKWELL_PATH##*/} ${TRITON_LIBCUDA_PATH}"' >"$out"
check "run: Triton assembles with cuemu-ptxas and links cuemu's libcuda (TRITON_PTXAS_PATH, TRITON_LIBCUDA_PATH)" \
  'grep -qx "triton=cuemu-ptxas cuemu-ptxas $(cd "$(dirname "$cuemu")" && pwd)" "$out"'
# cuemu-ptxas: the "cubin" it writes is the PTX, checked first
ptxas="$(dirname "$cuemu")/cuemu-ptxas"
"$ptxas" --version >"$out"
check "ptxas: --version names CUDA 13.0 (driver 580's PTX ISA, 9.0)" 'grep -q "release 13.0," "$out"'
src=$(mktemp --suffix=.ptx)
printf '.version 9.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n  ret;\n}\n' >"$src"
"$ptxas" -lineinfo -v --regAllocOptLevel=2 --opt-level 3 --gpu-name=sm_90a "$src" -o "$out.o" 2>"$err"
check "ptxas: a valid module is written as its PTX, NUL-terminated" \
  '[ $? -eq 0 ] && cmp -s <(cat "$src"; printf "\0") "$out.o"'
printf '.version 9.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n  bogus.op;\n}\n' >"$src"
"$ptxas" --gpu-name=sm_90 "$src" -o "$out.o" 2>"$err"
check "ptxas: invalid PTX fails with 255 and the line" '[ $? -eq 255 ] && grep -q ":6:" "$err" && grep -q "bogus" "$err"'
"$ptxas" --gpu-name=sm_90 2>"$err"
check "ptxas: no input file gives 2" '[ $? -eq 2 ] && grep -q "no input file" "$err"'
rm -f "$src" "$out.o"
"$cuemu" run -- cat /proc/self/maps >"$out"
check "run: the preloaded nvJitLink does not load the driver into a process that does not use CUDA" \
  'grep -q "libnvJitLink.so.13" "$out" && ! grep -q "libcuda.so.1" "$out"'
"$cuemu" run --tool memcheck -- sh -c 'ls / >/dev/null' >"$out" 2>&1
check "run: a checker reports nothing for processes that do not use CUDA" '! grep -q "COMPUTE-SANITIZER" "$out"'
"$cuemu" run --ptx-isa driver -- sh -c 'echo "isa=$CUEMU_PTX_ISA"' >"$out"
check "run: --ptx-isa driver becomes CUEMU_PTX_ISA=driver" 'grep -qx "isa=driver" "$out"'
CUEMU_PTX_ISA=driver "$cuemu" run -- sh -c 'echo "isa=$CUEMU_PTX_ISA"' >"$out"
check "run: a CUEMU_PTX_ISA the user set stays" 'grep -qx "isa=driver" "$out"'
"$cuemu" run --ptx-isa 9.5 -- true 2>"$err"
check "run: an invalid --ptx-isa mode is refused" '[ $? -eq 2 ] && grep -q "CUEMU_PTX_ISA=9.5" "$err"'
"$cuemu" run --driver-version 13.4 -- sh -c 'echo "version=$CUEMU_DRIVER_VERSION"' >"$out"
check "run: --driver-version 13.4 becomes CUEMU_DRIVER_VERSION=13.4" 'grep -qx "version=13.4" "$out"'
"$cuemu" run --driver-version 12.8 -- true 2>"$err"
check "run: a driver version outside 13.0..13.9 is refused" '[ $? -eq 2 ] && grep -q "CUEMU_DRIVER_VERSION=12.8" "$err"'
"$cuemu" info --driver-version 13.4 >"$out"
check "info: shows the version the driver reports" 'grep -q "reports version 13.4" "$out"'
"$cuemu" run -- sh -c 'exit 7'
check "run: the exit status is the program's" '[ $? -eq 7 ]'
"$cuemu" run -- /nonexistent/program 2>"$err"
check "run: a missing program gives 127 and says why" '[ $? -eq 127 ] && grep -q "cannot run" "$err"'
"$cuemu" run --device-profile h999 -- true 2>"$err"
check "run: an invalid setting gives 2 and names it" '[ $? -eq 2 ] && grep -q "CUEMU_DEVICE_PROFILE=h999" "$err"'
"$cuemu" run --kernel-timeout soon -- true 2>"$err"
check "run: an invalid timeout is refused" '[ $? -eq 2 ] && grep -q "CUEMU_KERNEL_TIMEOUT" "$err"'
"$cuemu" run --ipc off -- sh -c 'echo "ipc=$CUEMU_IPC"' >"$out"
check "run: --ipc off becomes CUEMU_IPC=off" 'grep -qx "ipc=off" "$out"'
"$cuemu" run --ipc maybe -- true 2>"$err"
check "run: an invalid --ipc mode is refused" '[ $? -eq 2 ] && grep -q "CUEMU_IPC=maybe" "$err"'
"$cuemu" run --native maybe -- true 2>"$err"
check "run: an invalid --native mode is refused" '[ $? -eq 2 ] && grep -q "CUEMU_NATIVE=maybe" "$err"'
"$cuemu" info >"$out"
check "info: says whether the native tier's compiler loads" 'grep -Eq "^native tier \(CUEMU_NATIVE=on\): .*(loads|not installed|does not load)" "$out"'
infocache=$(mktemp -d)
: >"$infocache/0123.o" && : >"$infocache/4567.o"
CUEMU_NATIVE_CACHE_PATH="$infocache" CUEMU_NATIVE_CACHE_DISABLE=0 "$cuemu" info >"$out"
check "info: shows the native cache's folder and what it holds" \
  'grep -q "^native cache: $infocache (2 compiled kernels, 0.0 of 256 MiB" "$out"'
rm -rf "$infocache"
CUEMU_NATIVE_CACHE_DISABLE=1 "$cuemu" info >"$out"
check "info: says when the native cache is off" 'grep -q "^native cache: off" "$out"'
if grep -q "^native tier .*(loads)" "$out"; then
  # the tier compiles the kernel at its first launch and runs the compiled code (its timing lines say so), with
  # every handler inlined (libcuda.so's ops hold PLT entries of the handlers' clones), and a second process loads
  # the code from the cache
  cache=$(mktemp -d)
  CUEMU_NATIVE_HOT_LAUNCHES=1 CUEMU_NATIVE_BACKGROUND=0 CUEMU_NATIVE_CACHE_PATH="$cache" CUEMU_NATIVE_TIMING=1 \
    "$cuemu" run --native on -- "$probe" sum >"$out" 2>"$err"
  check "run: --native on compiles the kernel, with the interpreter's result" \
    '[ $? -eq 0 ] && grep -qx "result 2080" "$out" && grep -q "^native: codegen" "$err"'
  check "run: the driver's kernel has its handlers inlined (none called through its pointer)" \
    '! grep -q "calls an unnamed handler" "$err"'
  CUEMU_NATIVE_HOT_LAUNCHES=1 CUEMU_NATIVE_BACKGROUND=0 CUEMU_NATIVE_CACHE_PATH="$cache" CUEMU_NATIVE_TIMING=1 \
    "$cuemu" run --native on -- "$probe" sum >"$out" 2>"$err"
  check "run: a second process loads the compiled kernel from the cache" \
    '[ $? -eq 0 ] && grep -qx "result 2080" "$out" && ! grep -q "^native: codegen" "$err"'
  rm -rf "$cache"
fi

# --tool: compute-sanitizer's banner and summary around a clean run; an unknown tool is refused.
"$cuemu" run --tool memcheck -- "$probe" sum >"$out" 2>"$err"
check "tool: a clean run under memcheck reports 0 errors" \
  '[ $? -eq 0 ] && grep -q "^========= COMPUTE-SANITIZER" "$out" && grep -qx "result 2080" "$out" && grep -qx "========= ERROR SUMMARY: 0 errors" "$out"'
"$cuemu" run --tool racecheck -- "$probe" race >"$out" 2>"$err"
check "tool: racecheck has its own summary" 'grep -qx "========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)" "$out"'
"$cuemu" run --tool helgrind -- true 2>"$err"
check "tool: an unknown tool gives 2 and names it" '[ $? -eq 2 ] && grep -q "CUEMU_TOOL=helgrind" "$err"'
"$cuemu" run --progress -- "$probe" sum >"$out" 2>"$err"
check "progress: the program runs as without it" '[ $? -eq 0 ] && grep -qx "result 2080" "$out"'
# A grid of several seconds: the live line names the kernel and counts its CTAs, and is erased at the end.
"$cuemu" run --progress -- "$probe" slow >"$out" 2>"$err"
check "progress: a long grid shows CTAs done / total, then erases the line" \
  '[ $? -eq 0 ] && grep -qx "result 2839207360" "$out" && grep -q "\[cuemu\] spin: [0-9]*/64 CTAs ([0-9]*%)" "$err" && [ "$(tail -c 4 "$err" | od -An -c | tr -d " ")" = "\r033[K" ]'
"$cuemu" run -- "$probe" slow >"$out" 2>"$err"
check "progress: off unless asked for" '[ $? -eq 0 ] && ! grep -q "CTAs" "$err"'

# --explore: a race between CTAs is found, with the seed that replays it; a race-free program agrees.
"$cuemu" run --explore 8 -- "$probe" race >"$out" 2>"$err"
status=$?
check "explore: a schedule-dependent result is reported" \
  '[ $status -eq 1 ] && grep -q "differs from the default schedule" "$err"'
seed=$(sed -n 's/.*replay with: cuemu run --deterministic --seed \([0-9]*\) -- .*/\1/p' "$err")
"$cuemu" run --deterministic -- "$probe" race >"$out.0"
"$cuemu" run --deterministic --seed "${seed:-0}" -- "$probe" race >"$out.s"
check "explore: the replay command reproduces the difference" '[ -n "$seed" ] && ! cmp -s "$out.0" "$out.s"'
rm -f "$out.0" "$out.s"
"$cuemu" run --explore 8 --error-exitcode 9 -- "$probe" race >/dev/null 2>&1
check "explore: --error-exitcode" '[ $? -eq 9 ]'
"$cuemu" run --explore 6 -- "$probe" sum >"$out" 2>"$err"
check "explore: a race-free program agrees in every schedule" \
  '[ $? -eq 0 ] && grep -q "6 schedule(s) agree" "$err" && grep -qx "result 2080" "$out"'

# --timeline: a multi-stream program's timeline is valid trace-event JSON with the order and arrows it must have.
timeline=$(mktemp)
"$cuemu" run --timeline "$timeline" -- "$probe" streams >"$out" 2>"$err"
check "timeline: the program runs" '[ $? -eq 0 ] && grep -qx "result 2820030817" "$out"'
python3 "$(dirname "$0")/timeline_check.py" "$timeline" >"$err" 2>&1
status=$?
check "timeline: $(tail -1 "$err")" '[ $status -eq 0 ]'
rm -f "$timeline"

# devices and info.
"$cuemu" devices >"$out"
check "devices: lists every profile" 'grep -q "^h100 " "$out" && grep -q "^gb10 " "$out" && grep -q "12.0" "$out"'
"$cuemu" info --device-count 2 --device-profile rtx-pro-6000 >"$out"
check "info: names the library and its version" 'grep -q "^library: .*libcuda.so.1 (cuemu [0-9]" "$out"'
check "info: shows the configured machine" 'grep -q "^devices: 2" "$out" && grep -q "compute capability 12.0" "$out"'
CUEMU_LIBRARY_DIR=/nonexistent "$cuemu" run -- true 2>"$err"
check "run: no library gives 2 and says where it looked" '[ $? -eq 2 ] && grep -q "/nonexistent" "$err"'

echo "$failures failure(s)"
[ "$failures" -eq 0 ]
