"""PyCUDA (pycuda from PyPI, built from its source against the toolkit) on cuemu, run as a user starts it:
`cuemu run -- python`.

PyCUDA compiles every kernel (SourceModule, and the kernels of gpuarray, ElementwiseKernel, ReductionKernel and the
scan kernels) with `nvcc --cubin` and loads the file with cuModuleLoadData. `cuemu run` puts cuemu-nvcc first on PATH,
whose "cubin" is the kernel's PTX (emu/nvcc/nvcc.cpp). Results are compared with numpy, exactly where the arithmetic
is exact.
"""

import os
import subprocess
import tempfile

import numpy as np
import pytest

cuda = pytest.importorskip("pycuda.driver")
compiler = pytest.importorskip("pycuda.compiler")


@pytest.fixture(scope="module", autouse=True)
def context():
    try:
        version = subprocess.run(["nvcc", "--version"], capture_output=True, text=True).stdout
    except OSError:
        version = ""
    if "cuemu-nvcc" not in version:
        pytest.skip("run through `cuemu run`, which puts cuemu-nvcc first on PATH")
    cuda.init()
    ctx = cuda.Device(0).make_context()
    # a cache folder of this run's own: a cubin cached by another nvcc would be SASS
    cache = tempfile.TemporaryDirectory()
    globals()["CACHE"] = cache.name
    yield ctx
    ctx.pop()
    cache.cleanup()


def source_module(source, **kwargs):
    return compiler.SourceModule(source, cache_dir=CACHE, **kwargs)


def test_source_module_kernel_with_shared_memory_and_a_barrier():
    module = source_module(
        """
        __global__ void reverse_blocks(float* out, const float* in) {
          __shared__ float tile[256];
          const int i = blockIdx.x * blockDim.x + threadIdx.x;
          tile[threadIdx.x] = in[i] * 2.0f + 1.0f;
          __syncthreads();
          out[i] = tile[blockDim.x - 1 - threadIdx.x];
        }
        """
    )
    kernel = module.get_function("reverse_blocks")
    x = np.arange(1024, dtype=np.float32)
    out = np.zeros_like(x)
    kernel(cuda.Out(out), cuda.In(x), block=(256, 1, 1), grid=(4, 1))
    expected = (x * 2 + 1).reshape(4, 256)[:, ::-1].reshape(-1)
    np.testing.assert_array_equal(out, expected)


def test_driver_memory_streams_events_and_prepared_calls():
    module = source_module(
        """
        __global__ void axpy(int n, float a, const float* x, float* y) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) y[i] = a * x[i] + y[i];
        }
        """
    )
    axpy = module.get_function("axpy")
    axpy.prepare("ifPP")
    n = 10000
    x = np.linspace(0, 1, n, dtype=np.float32)
    y = np.full(n, 3.0, dtype=np.float32)
    dx = cuda.mem_alloc(x.nbytes)
    dy = cuda.mem_alloc(y.nbytes)
    stream = cuda.Stream()
    start, end = cuda.Event(), cuda.Event()
    host = cuda.pagelocked_empty_like(y)
    cuda.memcpy_htod_async(dx, x, stream)
    cuda.memcpy_htod_async(dy, y, stream)
    start.record(stream)
    axpy.prepared_async_call(((n + 255) // 256, 1), (256, 1, 1), stream, np.int32(n), np.float32(0.5), dx, dy)
    end.record(stream)
    cuda.memcpy_dtoh_async(host, dy, stream)
    stream.synchronize()
    assert end.time_since(start) >= 0
    np.testing.assert_array_equal(host, np.float32(0.5) * x + y)
    free, total = cuda.mem_get_info()
    assert 0 < free <= total


def test_gpuarray_arithmetic_elementwise_and_reductions():
    import pycuda.gpuarray as gpuarray
    from pycuda.elementwise import ElementwiseKernel
    from pycuda.reduction import ReductionKernel

    a = np.arange(5000, dtype=np.int32)
    b = (np.arange(5000, dtype=np.int32) * 7) % 13
    ga, gb = gpuarray.to_gpu(a), gpuarray.to_gpu(b)
    np.testing.assert_array_equal((ga + gb * 3).get(), a + b * 3)
    np.testing.assert_array_equal((ga - gb).get(), a - b)
    assert int(gpuarray.sum(ga).get()) == int(a.sum())
    assert int(gpuarray.max(gb).get()) == int(b.max())
    assert int(gpuarray.dot(ga, gb).get()) == int(np.dot(a.astype(np.int64), b))

    clamp = ElementwiseKernel("int *out, const int *x, int lo, int hi", "out[i] = min(max(x[i], lo), hi)", "clamp")
    out = gpuarray.empty_like(ga)
    clamp(out, ga, np.int32(100), np.int32(4000))
    np.testing.assert_array_equal(out.get(), np.clip(a, 100, 4000))

    sum_of_squares = ReductionKernel(
        np.int64, neutral="0", reduce_expr="a+b", map_expr="(long long)x[i]*x[i]", arguments="const int *x"
    )
    assert int(sum_of_squares(ga).get()) == int((a.astype(np.int64) ** 2).sum())

    f = np.linspace(-3, 3, 4096, dtype=np.float32)
    gf = gpuarray.to_gpu(f)
    np.testing.assert_array_equal((gf * 2.0 + 1.0).get(), f * np.float32(2) + np.float32(1))
    np.testing.assert_array_equal(abs(gf).get(), np.abs(f))


def test_scan_kernels():
    import pycuda.gpuarray as gpuarray
    from pycuda.scan import ExclusiveScanKernel, InclusiveScanKernel

    x = (np.arange(10007, dtype=np.int32) * 37) % 101
    inclusive = InclusiveScanKernel(np.int32, "a+b")
    g = gpuarray.to_gpu(x)
    inclusive(g)
    np.testing.assert_array_equal(g.get(), np.cumsum(x, dtype=np.int32))
    exclusive = ExclusiveScanKernel(np.int32, "a+b", 0)
    g = gpuarray.to_gpu(x)
    exclusive(g)
    np.testing.assert_array_equal(g.get(), np.concatenate(([0], np.cumsum(x, dtype=np.int32)[:-1])))


def test_compile_errors_come_from_nvcc():
    with pytest.raises(cuda.CompileError) as error:
        source_module("__global__ void broken(int* p) { p[0] = undefined_name; }")
    assert "undefined_name" in str(error.value)
