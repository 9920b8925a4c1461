"""cuemu: a CUDA driver (libcuda.so.1) that runs CUDA programs on the CPU.

The wheel holds cuemu's install tree inside this package: ``bin/cuemu`` (the command), ``lib/cuemu/libcuda.so.1``
and ``lib/cuemu/libnvJitLink.so.13``. Programs get cuemu when they run through the command (``cuemu run -- ...``,
``python -m cuemu run -- ...``), or, inside a Python process, when :func:`preload` runs before anything loads a CUDA
driver (the pytest option ``--cuemu`` calls it).
"""
import ctypes
import os

__all__ = ["library_dir", "command", "preload", "version"]

_HERE = os.path.dirname(os.path.abspath(__file__))


def library_dir():
    """The directory holding cuemu's libcuda.so.1 and libnvJitLink.so.13."""
    return os.path.join(_HERE, "lib", "cuemu")


def command():
    """The path of the ``cuemu`` command."""
    return os.path.join(_HERE, "bin", "cuemu")


_preloaded = None


def preload():
    """Loads cuemu's libcuda.so.1 (and libnvJitLink.so.13) into this process, so that every later
    ``dlopen("libcuda.so.1")`` (cuda-python, numba-cuda, CuPy, ctypes) gets it: the loader matches a library already
    loaded by its soname. It must run before any CUDA driver is loaded; if NVIDIA's is loaded already, it raises
    RuntimeError. Returns the ctypes handle of the driver."""
    global _preloaded
    if _preloaded is not None:
        return _preloaded
    driver = ctypes.CDLL(os.path.join(library_dir(), "libcuda.so.1"), mode=ctypes.RTLD_GLOBAL)
    if not hasattr(driver, "cuemuGetVersion"):
        raise RuntimeError("libcuda.so.1 in this process is not cuemu's (another CUDA driver was loaded first)")
    jitlink = os.path.join(library_dir(), "libnvJitLink.so.13")
    if os.path.exists(jitlink):
        ctypes.CDLL(jitlink, mode=ctypes.RTLD_GLOBAL)
    _preloaded = driver
    return driver


def version():
    """cuemu's version as (major, minor, patch), asked from the library."""
    driver = preload()
    values = [ctypes.c_int(), ctypes.c_int(), ctypes.c_int()]
    driver.cuemuGetVersion(*[ctypes.byref(v) for v in values])
    return tuple(v.value for v in values)
