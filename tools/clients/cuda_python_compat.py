"""pytest plugin for cuda-python's own tests (run-cuda-python-suite.sh): the tests come from the repository (the
wheels have none), from a commit close to, but not exactly, the installed release. Two things the tests import are
missing from the installed wheels, on any driver:
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
