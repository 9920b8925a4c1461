"""numba-cuda-mlir (NVIDIA's MLIR-based numba for CUDA, which cuda-cccl installs) on cuemu, through `cuemu run`
(tests/clients/run.sh). It compiles kernels to PTX and links them through the driver, as cuemu's nvJitLink reports
no version (README)."""
import math

import numpy as np

from numba_cuda_mlir import cuda


@cuda.jit
def axpy(a, x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]


@cuda.jit
def block_sums(x, out):
    shared = cuda.shared.array(128, dtype=np.float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * 128 + t
    shared[t] = x[i] if i < x.size else 0.0
    cuda.syncthreads()
    step = 64
    while step > 0:
        if t < step:
            shared[t] += shared[t + step]
        cuda.syncthreads()
        step //= 2
    if t == 0:
        out[cuda.blockIdx.x] = shared[0]


@cuda.jit
def special(x, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = math.exp(x[i]) + math.sqrt(abs(x[i]))


def test_axpy():
    n = 1000
    x, y = np.arange(n, dtype=np.float32), np.ones(n, dtype=np.float32)
    out = cuda.device_array(n, dtype=np.float32)
    axpy[(n + 127) // 128, 128](np.float32(2), cuda.to_device(x), cuda.to_device(y), out)
    np.testing.assert_array_equal(out.copy_to_host(), 2 * x + y)


def test_shared_memory_reduction():
    x = np.arange(1000, dtype=np.float32) % 7
    out = cuda.device_array(8, dtype=np.float32)
    block_sums[8, 128](cuda.to_device(x), out)
    np.testing.assert_array_equal(out.copy_to_host(), np.add.reduceat(np.pad(x, (0, 24)), np.arange(0, 1024, 128)))


def test_math_functions():
    x = np.linspace(-3, 3, 256).astype(np.float32)
    out = cuda.device_array(256, dtype=np.float32)
    special[2, 128](cuda.to_device(x), out)
    np.testing.assert_allclose(out.copy_to_host(), np.exp(x) + np.sqrt(np.abs(x)), rtol=2e-6)
