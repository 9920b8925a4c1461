#!/bin/bash
# Runs cupy_calls.py with CuPy's cuemu settings: CuPy's own kernels as PTX, reductions and scans through CUB.
# Usage: run-cupy.sh BUILD_DIR ARGS...   (the interpreter: $CUEMU_LIBRARIES_PYTHON, BUILD_DIR/clients-venv, python3)
build=$1
shift
python=${CUEMU_LIBRARIES_PYTHON:-}
[ -z "$python" ] && [ -x "$build/clients-venv/bin/python" ] && python=$build/clients-venv/bin/python
[ -z "$python" ] && python=python3
export CUPY_COMPILE_WITH_PTX=1 CUPY_ACCELERATORS=cub CUPY_CACHE_DIR="$build/libraries-cupy-cache"
exec "$python" "$(dirname "$0")/cupy_calls.py" "$@"
