#!/usr/bin/env bash
# Checks what cuemu installs, from outside the build tree: check_install.sh BUILD_DIR PROBE.
#  1. `cmake --install` into a fresh prefix: the files of packaging/install.cmake; the installed `cuemu` finds the
#     installed library; a program run through it gets cuemu; a CMake project using find_package(cuemu) builds
#     against the installed headers and library and runs a kernel; pkg-config gives flags that build it too.
#  2. The Debian package (cpack -G DEB): its contents are under /usr (library in /usr/lib/cuemu, never where a
#     driver lives), and unpacked into a scratch root (dpkg-deb -x; no root needed) the command and library work.
# Exit 77 (ctest: skipped) when the disk has too little room to stage the library.
set -u
build=$(cd "$1" && pwd)
probe=$2
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
unset LD_LIBRARY_PATH CUEMU_LIBRARY_DIR
require_free_mb "$(staged_mb "$build")" "$work"

prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" >"$work/install.log" 2>&1
check "cmake --install succeeds" '[ $? -eq 0 ]'
for f in bin/cuemu lib/cuemu/libcuda.so.1 lib/cuemu/libcuda.so lib/cuemu/libnvJitLink.so.13 lib/cuemu/libnvrtc.so.13 \
  lib/cuemu/libnvidia-ml.so.1 lib/cuemu/libcuemu-dev-files.so lib/cuemu/cuemu-nvjitlink-lto lib/cuemu/cuemu-ptxas lib/cuemu/cuemu-nvcc include/cuemu/cuda.h \
  include/cuemu/cuemu.h lib/cmake/cuemu/cuemuConfig.cmake lib/cmake/cuemu/cuemuConfigVersion.cmake \
  lib/pkgconfig/cuemu.pc share/doc/cuemu/README.md; do
  check "installs $f" "[ -e '$prefix/$f' ]"
done
# CuPy finds the toolkit from the real file of the libnvrtc.so.13 it loaded (packaging/install.cmake)
check "libnvrtc.so.13 is a link into lib/cuemu/toolkit/lib64" \
  "[ \"\$(readlink -f '$prefix/lib/cuemu/libnvrtc.so.13')\" = '$prefix/lib/cuemu/toolkit/lib64/libnvrtc.so.13' ]"
if grep -q '^CUEMU_TOOLKIT_ROOT:PATH=/' "$build/CMakeCache.txt"; then
  check "the toolkit layout reaches libcudadevrt.a, nvcc and cuda.h" \
    "[ -e '$prefix/lib/cuemu/toolkit/lib64/libcudadevrt.a' ] && [ -x '$prefix/lib/cuemu/toolkit/bin/nvcc' ] && [ -e '$prefix/lib/cuemu/toolkit/include/cuda.h' ]"
  check "the nvcc-shim root reaches the toolkit's libcudadevrt.a and cuda.h (PyCUDA finds them from nvcc's folder)" \
    "[ -e '$prefix/lib/cuemu/nvcc-shim/lib64/libcudadevrt.a' ] && [ -e '$prefix/lib/cuemu/nvcc-shim/include/cuda.h' ]"
  check "the ptx-toolkit root's ptxas is cuemu-ptxas, with libdevice" \
    "[ \"\$(readlink -f '$prefix/lib/cuemu/ptx-toolkit/bin/ptxas')\" = '$prefix/lib/cuemu/cuemu-ptxas' ] && [ -e '$prefix/lib/cuemu/ptx-toolkit/nvvm/libdevice/libdevice.10.bc' ]"
fi
check "lib/cuemu/nvcc-shim/bin/nvcc is cuemu-nvcc (what \`cuemu run\` puts first on PATH)" \
  "[ \"\$(readlink -f '$prefix/lib/cuemu/nvcc-shim/bin/nvcc')\" = '$prefix/lib/cuemu/cuemu-nvcc' ]"
check "installs nothing called libcuda outside lib/cuemu" \
  '[ -z "$(find "$prefix" -name "libcuda*" -not -path "$prefix/lib/cuemu/*")" ]'
"$prefix/bin/cuemu" info >"$work/info" 2>&1
check "the installed command finds the installed library" "grep -q 'library: $prefix/lib/cuemu/libcuda.so.1 (cuemu' '$work/info'"
"$prefix/bin/cuemu" run -- "$probe" sum >"$work/out" 2>&1
check "a program run through the installed command gets cuemu" 'grep -qx "result 2080" "$work/out"'
if [ -e "$build/ptx-interp/libcuemu-native.so" ]; then  # the build has the native tier (LLVM 14 found)
  check "the native tier's compiler is installed beside the library, and the installed command says it loads" \
    "grep -q '^native tier (CUEMU_NATIVE=on): $prefix/lib/cuemu/libcuemu-native.so (loads)' '$work/info'"
fi

cmake -S "$here/consumer" -B "$work/consumer" -DCMAKE_PREFIX_PATH="$prefix" >"$work/consumer.log" 2>&1 &&
  cmake --build "$work/consumer" >>"$work/consumer.log" 2>&1
check "find_package(cuemu) builds a project against the installed library" '[ $? -eq 0 ] || { cat "$work/consumer.log"; false; }'
"$work/consumer/consumer" >"$work/out" 2>&1
check "that project runs a kernel on cuemu" 'grep -q "^consumer ok 0\." "$work/out" || { cat "$work/out"; false; }'
if command -v pkg-config >/dev/null && command -v cc >/dev/null; then
  flags=$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs cuemu)
  cc "$here/consumer/main.c" $flags -o "$work/pc-consumer" 2>"$work/pc.log" && "$work/pc-consumer" >"$work/out" 2>&1
  check "pkg-config's flags build and run it too" 'grep -q "^consumer ok" "$work/out" || { cat "$work/pc.log"; false; }'
fi

if command -v cpack >/dev/null && command -v dpkg-deb >/dev/null; then
  build_deb "$build" "$work"
  if [ -n "$deb" ]; then
    dpkg-deb -c "$deb" >"$work/contents"
    check "the package puts the library in /usr/lib/cuemu" 'grep -q " ./usr/lib/cuemu/libcuda.so.1$" "$work/contents"'
    check "the package puts the command in /usr/bin" 'grep -q " ./usr/bin/cuemu$" "$work/contents"'
    check "the package holds no libcuda outside /usr/lib/cuemu" \
      '! grep "libcuda" "$work/contents" | grep -v " ./usr/lib/cuemu/" | grep -q .'
    dpkg-deb -f "$deb" Package Version Depends Suggests >"$work/control"
    check "the package's control fields" 'grep -q "^Package: cuemu" "$work/control" && grep -q "^Depends: .*libzstd1" "$work/control"'
    if [ -e "$build/ptx-interp/libcuemu-native.so" ]; then
      check "the package holds the native tier's compiler and suggests LLVM 14 for it" \
        'grep -q " ./usr/lib/cuemu/libcuemu-native.so$" "$work/contents" && grep -q "^Suggests: libllvm14" "$work/control"'
    fi
    dpkg-deb -x "$deb" "$work/root"
    "$work/root/usr/bin/cuemu" run -- "$probe" sum >"$work/out" 2>&1
    check "unpacked, the package's command runs a program on its library" 'grep -qx "result 2080" "$work/out"'
    if [ -e "$build/ptx-interp/libcuemu-native.so" ]; then
      # the tier binds compiled kernels through libcuda.so.1's symbol table, which the package must keep
      CUEMU_NATIVE_HOT_LAUNCHES=1 CUEMU_NATIVE_BACKGROUND=0 CUEMU_NATIVE_CACHE_DISABLE=1 CUEMU_NATIVE_TIMING=1 \
        "$work/root/usr/bin/cuemu" run --native on -- "$probe" sum >"$work/out" 2>&1
      check "unpacked, the package's native tier compiles a kernel" \
        'grep -qx "result 2080" "$work/out" && grep -q "^native: codegen" "$work/out" || { cat "$work/out"; false; }'
    fi
  fi
else
  echo "skipped: the Debian package (no cpack or dpkg-deb)"
fi
echo "$failures failure(s)"
[ "$failures" -eq 0 ]
