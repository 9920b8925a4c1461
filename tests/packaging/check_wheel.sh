#!/usr/bin/env bash
# Builds the Python wheel from this checkout (pyproject.toml, scikit-build-core) and checks it in a fresh virtual
# environment: the `cuemu` script and `python -m cuemu` run a program on the wheel's library, `cuemu.version()`
# answers, and pytest's --cuemu option makes a test session's dlopen("libcuda.so.1") get cuemu (and without it
# there is no driver). Not part of tools/test.sh: the wheel compiles the library again (about 15 minutes on two
# cores; CUEMU_WHEEL_CCACHE=1 uses ccache). Usage: tests/packaging/check_wheel.sh PROBE (build/tests/cli/cuemu_cli_probe)
set -u
probe=$(realpath "$1")
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
check() {
  if eval "$2"; then echo "ok: $1"; else echo "FAIL: $1"; failures=$((failures + 1)); fi
}
unset LD_LIBRARY_PATH CUEMU_LIBRARY_DIR CUEMU_PYTEST
python3 -m venv "$work/build-env" && "$work/build-env/bin/pip" install -q scikit-build-core
launcher=()
[ "${CUEMU_WHEEL_CCACHE:-0}" = 1 ] && launcher=(-C cmake.define.CMAKE_CXX_COMPILER_LAUNCHER=ccache)
(cd "$root" && "$work/build-env/bin/pip" wheel . --no-build-isolation -w "$work/wheels" "${launcher[@]}" \
  >"$work/wheel.log" 2>&1)
check "pip wheel builds the wheel" '[ $? -eq 0 ] || { tail -30 "$work/wheel.log"; false; }'
python3 -m venv "$work/env" && "$work/env/bin/pip" install -q "$work"/wheels/cuemu-*.whl pytest
check "the wheel installs" '[ -x "$work/env/bin/cuemu" ]'
"$work/env/bin/cuemu" run -- "$probe" sum >"$work/out" 2>&1
check "the cuemu script runs a program on the wheel's library" 'grep -qx "result 2080" "$work/out"'
"$work/env/bin/python" -m cuemu run -- "$probe" sum >"$work/out" 2>&1
check "python -m cuemu does too" 'grep -qx "result 2080" "$work/out"'
"$work/env/bin/python" -c "import cuemu; print(cuemu.version())" >"$work/out" 2>&1
check "cuemu.version() answers" 'grep -q "^(0, " "$work/out"'
mkdir -p "$work/t" && cat >"$work/t/test_driver.py" <<'PY'
import ctypes

def test_runs_on_cuemu():
    lib = ctypes.CDLL("libcuda.so.1")
    assert hasattr(lib, "cuemuGetVersion")
    assert lib.cuInit(0) == 0
PY
(cd "$work/t" && "$work/env/bin/python" -m pytest -q --cuemu test_driver.py >"$work/out" 2>&1)
check "pytest --cuemu: the session gets cuemu" '[ $? -eq 0 ] || { cat "$work/out"; false; }'
(cd "$work/t" && "$work/env/bin/python" -m pytest -q -p no:cacheprovider test_driver.py >"$work/out" 2>&1)
check "without --cuemu it does not (no other driver here)" '[ $? -ne 0 ]'
echo "$failures failure(s)"
[ "$failures" -eq 0 ]
