#!/usr/bin/env bash
# The Debian package installed into the machine, as a CI image gets it: check_deb_install.sh BUILD_DIR PROBE.
# Builds the package (cpack), installs it with dpkg -i, and from a folder outside the build tree runs a program and a
# numba-cuda kernel (in a fresh virtual environment) through /usr/bin/cuemu; removes the package again at the end.
# Exit 77 (ctest: skipped) without root (or password-less sudo), when a cuemu package is installed already (it is
# left alone), when PyPI cannot be reached, or when the disk has too little room. CTest `packaging.deb_install`.
set -u
build=$(cd "$1" && pwd)
probe=$(realpath "$2")
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
. "$here/common.sh"
sudo=()
if [ "$(id -u)" -ne 0 ]; then
  sudo -n true 2>/dev/null || { echo "SKIP: dpkg -i needs root or password-less sudo"; exit 77; }
  sudo=(sudo -n)
fi
command -v dpkg >/dev/null && command -v cpack >/dev/null || { echo "SKIP: no dpkg or cpack"; exit 77; }
if dpkg-query -W -f='${Status}' cuemu 2>/dev/null | grep -q "install ok installed"; then
  echo "SKIP: a cuemu package is installed on this machine already; it is left alone"
  exit 77
fi
installed=0
cleanup() {
  [ "$installed" = 1 ] && "${sudo[@]}" dpkg -r cuemu >/dev/null 2>&1
  rm -rf "$work"
}
trap cleanup EXIT
require_free_mb $(($(staged_mb "$build") + 500)) "$work"  # and numba-cuda
unset LD_LIBRARY_PATH CUEMU_LIBRARY_DIR CUEMU_PYTEST
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda} PYTHONDONTWRITEBYTECODE=1 NUMBA_CACHE_DIR=$work/numba-cache
if ! { python3 -m venv "$work/env" &&
  "$work/env/bin/pip" install -q --disable-pip-version-check numpy "numba-cuda>=0.30" >"$work/pip.log" 2>&1; }; then
  echo "SKIP: cannot install numba-cuda from PyPI"
  exit 77
fi

build_deb "$build" "$work"
[ -n "$deb" ] || exit 1
"${sudo[@]}" dpkg -i "$deb" >"$work/dpkg.log" 2>&1
check "dpkg -i installs it" '[ $? -eq 0 ] || { cat "$work/dpkg.log"; false; }'
installed=1
check "dpkg knows its files under /usr/lib/cuemu" 'dpkg -L cuemu | grep -qx /usr/lib/cuemu/libcuda.so.1'

mkdir -p "$work/user" && cd "$work/user" || exit 2
/usr/bin/cuemu info >"$work/out" 2>&1
check "/usr/bin/cuemu finds /usr/lib/cuemu" 'grep -q "library: /usr/lib/cuemu/libcuda.so.1 (cuemu" "$work/out" || { cat "$work/out"; false; }'
if dpkg -L cuemu | grep -qx /usr/lib/cuemu/libcuemu-native.so; then  # built where LLVM 14 is (a suggested package)
  check "the native tier's compiler is installed beside the library and loads" \
    'grep -q "^native tier (CUEMU_NATIVE=on): /usr/lib/cuemu/libcuemu-native.so (loads)" "$work/out" || { cat "$work/out"; false; }'
fi
/usr/bin/cuemu run -- "$probe" sum >"$work/out" 2>&1
check "a program runs through the installed package" 'grep -qx "result 2080" "$work/out"'
/usr/bin/cuemu run -- "$work/env/bin/python" "$here/numba_kernel.py" >"$work/out" 2>&1
check "a numba-cuda kernel runs through the installed package" \
  'grep -qx "numba block sums 499500 on cuemu" "$work/out" || { tail -20 "$work/out"; false; }'

"${sudo[@]}" dpkg -r cuemu >"$work/dpkg.log" 2>&1
check "dpkg -r removes it" '[ $? -eq 0 ] && [ ! -e /usr/lib/cuemu/libcuda.so.1 ] && [ ! -e /usr/bin/cuemu ]'
installed=0
echo "$failures failure(s)"
[ "$failures" -eq 0 ]
