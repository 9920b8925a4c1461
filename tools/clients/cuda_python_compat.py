"""pytest plugin for cuda-python's own tests (run-cuda-python-suite.sh): the tests come from the repository (the
wheels have none), from a commit close to, but not exactly, the installed release. Two things the tests import are
missing from the installed wheels, on any driver (a third part, at the end, applies on cuemu only):
  - cuda.bindings._test_helpers (a source-only package): its folder is $CUEMU_CUDA_BINDINGS_SOURCE/_test_helpers,
    found by adding that folder to the cuda.bindings package's path;
  - cuda.core._memory.IPCBufferDescriptor, which cuda.core 1.2.2 defines in cuda.core._memory._ipc but does not
    re-export.
"""
import os

import cuda.bindings

_source = os.environ.get("CUEMU_CUDA_BINDINGS_SOURCE")
if _source and _source not in cuda.bindings.__path__:
    cuda.bindings.__path__.append(_source)

try:
    import cuda.core._memory as _memory

    if not hasattr(_memory, "IPCBufferDescriptor"):
        from cuda.core._memory._ipc import IPCBufferDescriptor

        _memory.IPCBufferDescriptor = IPCBufferDescriptor
except ImportError:
    pass

# On cuemu only (its libcuda exports cuemuGetDeterministic): cuda.core's tests build their kernels with
# Program.compile("cubin"), SASS that cuemu cannot run (README.md, real clients: NVRTC must produce PTX, which is
# what a cuemu user compiles). There the plugin makes such a compile produce PTX for the same architecture, so the
# tests exercise the driver; a test that inspects the cubin itself still differs (cuda-python-known-differences.txt).
# CUEMU_CUBIN_AS_PTX=0 turns this off.
def _on_cuemu():
    import ctypes

    try:
        return hasattr(ctypes.CDLL("libcuda.so.1"), "cuemuGetDeterministic")
    except OSError:
        return False


if os.environ.get("CUEMU_CUBIN_AS_PTX", "1") != "0" and _on_cuemu():
    import cuda.core

    class _ProgramCompilingPtx(cuda.core.Program):
        def compile(self, target_type, *args, **kwargs):
            return super().compile("ptx" if target_type == "cubin" else target_type, *args, **kwargs)

    _ProgramCompilingPtx.__name__ = _ProgramCompilingPtx.__qualname__ = "Program"
    cuda.core.Program = _ProgramCompilingPtx
