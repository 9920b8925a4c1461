"""nvmath-python (nvmath-python[cu13-dx] from PyPI) on cuemu, run as a user starts it:
`cuemu run --device-profile rtx-pro-6000 -- python`.

nvmath's host APIs call cuBLASLt (`nvmath.linalg.advanced.matmul`) and cuFFT (`nvmath.fft`) from NVIDIA's CUDA 13
wheels (13.5: cuBLAS 13.10, cuFFT 12.5). cuBLASLt carries PTX for compute_120 only, so it needs a compute-capability-12
profile; cuFFT 12.5 has PTX for compute_75 to 90 as well and runs on every profile. Its device APIs
(`nvmath.device`: cuFFTDx and cuBLASDx through numba-cuda) have libmathdx write LTO-IR for the device, which numba
links with nvJitLink (cuemu's, under `cuemu run`, which has NVIDIA's turn it into PTX). They refuse compute capability
12.1 (nvmath 1.0 reads the gb10 profile's 12.1 as "12.1a", above its 12.1 maximum), so rtx-pro-6000 (12.0) runs
both. NumPy operands are copied to the device and the results back, as nvmath does for host arrays; each result is
compared with NumPy: exactly where the inputs make every product and sum exact, within the float32 dot-product and
FFT error bounds otherwise.
"""

import ctypes

import numpy as np
import pytest

nvmath = pytest.importorskip("nvmath")
from nvmath.linalg.advanced import MatmulEpilog, matmul  # noqa: E402


def _device():
    from cuda.core import Device

    d = Device(0)
    d.set_current()
    return d


def _on_cuemu():
    try:
        return hasattr(ctypes.CDLL("libcuda.so.1"), "cuemuGetDeterministic")
    except OSError:
        return False


try:
    DEVICE = _device()
except Exception as e:  # no driver, no device
    DEVICE = None
    REASON = f"no CUDA device: {e}"
else:
    REASON = "cuBLASLt has PTX for compute_120 only: run through `cuemu run --device-profile rtx-pro-6000`"

needs_cublaslt = pytest.mark.skipif(
    DEVICE is None or (_on_cuemu() and DEVICE.compute_capability.major < 12), reason=REASON
)
OPTIONS = {"device_id": 0}
CUDA = nvmath.fft.ExecutionCUDA(device_id=0)


@needs_cublaslt
def test_matmul_of_exact_operands_equals_numpy_in_float32_and_float64():
    rng = np.random.default_rng(1)
    for dtype in (np.float32, np.float64):
        a = rng.integers(-8, 9, (96, 64)).astype(dtype)
        b = rng.integers(-8, 9, (64, 40)).astype(dtype)
        np.testing.assert_array_equal(matmul(a, b, options=OPTIONS), a @ b)


@needs_cublaslt
def test_matmul_of_random_operands_within_the_dot_product_bound():
    rng = np.random.default_rng(2)
    a = rng.standard_normal((128, 200)).astype(np.float32)
    b = rng.standard_normal((200, 72)).astype(np.float32)
    c = rng.standard_normal((128, 72)).astype(np.float32)
    r = matmul(a, b, c, alpha=0.5, beta=2.0, options=OPTIONS)
    exact = 0.5 * (a.astype(np.float64) @ b.astype(np.float64)) + 2.0 * c
    bound = 200 * np.finfo(np.float32).eps * (np.abs(a) @ np.abs(b) + np.abs(c))
    assert (np.abs(r - exact) <= bound).all()


@needs_cublaslt
def test_matmul_with_a_bias_and_relu_epilogue():
    rng = np.random.default_rng(3)
    a = rng.integers(-4, 5, (64, 32)).astype(np.float32)
    b = rng.integers(-4, 5, (32, 48)).astype(np.float32)
    bias = rng.integers(-20, 21, (64, 1)).astype(np.float32)
    r = matmul(a, b, epilog=MatmulEpilog.RELU_BIAS, epilog_inputs={"bias": bias}, options=OPTIONS)
    np.testing.assert_array_equal(r, np.maximum(a @ b + bias, 0))


@needs_cublaslt
def test_batched_matmul():
    rng = np.random.default_rng(4)
    a = rng.integers(-4, 5, (5, 24, 16)).astype(np.float32)
    b = rng.integers(-4, 5, (5, 16, 8)).astype(np.float32)
    np.testing.assert_array_equal(matmul(a, b, options=OPTIONS), a @ b)


def fft_bound(n, x):
    """A bound on a single-precision FFT's error in the L-infinity norm: 2 log2(n) eps sqrt(n) |x|_2 per transform."""
    return 2 * np.log2(n) * np.finfo(np.float32).eps * np.sqrt(n) * np.linalg.norm(x, axis=-1, keepdims=True)


def test_fft_c2c_batched_forward_and_inverse_within_the_error_bound():
    rng = np.random.default_rng(5)
    n = 512
    x = (rng.standard_normal((4, n)) + 1j * rng.standard_normal((4, n))).astype(np.complex64)
    f = nvmath.fft.fft(x, axes=[1], execution=CUDA)
    assert (np.abs(f - np.fft.fft(x)) <= fft_bound(n, x)).all()
    back = nvmath.fft.ifft(f, axes=[1], execution=CUDA) / n  # nvmath's inverse is not normalised, as cuFFT's
    assert (np.abs(back - x) <= 2 * fft_bound(n, x) / np.sqrt(n)).all()


def test_fft_real_to_complex_and_back_and_2d():
    rng = np.random.default_rng(6)
    n = 360  # 2^3 3^2 5: mixed radix
    x = rng.standard_normal((3, n)).astype(np.float32)
    f = nvmath.fft.rfft(x, axes=[1], execution=CUDA)
    assert f.shape == (3, n // 2 + 1)
    assert (np.abs(f - np.fft.rfft(x)) <= fft_bound(n, x)).all()
    back = nvmath.fft.irfft(f, axes=[1], execution=CUDA, options={"last_axis_parity": "even"}) / n
    np.testing.assert_allclose(back, x, atol=1e-5)
    y = (rng.standard_normal((32, 48)) + 1j * rng.standard_normal((32, 48))).astype(np.complex64)
    f2 = nvmath.fft.fft(y, execution=CUDA)  # without axes: over all of them
    np.testing.assert_allclose(f2, np.fft.fft2(y), atol=2e-4 * np.abs(y).sum() / 32)


def _device_apis():
    if DEVICE is None:
        return None, "no CUDA device"
    if tuple(DEVICE.compute_capability) > (12, 0):
        return None, "nvmath's device APIs refuse compute capability 12.1 (read as 12.1a): use rtx-pro-6000 or h100"
    try:
        from numba import cuda

        import nvmath.device as dx
    except ImportError as e:
        return None, f"nvmath's device APIs need nvmath-python[cu13-dx] (numba-cuda, libmathdx): {e}"
    return (cuda, dx), ""


DX, DX_REASON = _device_apis()
needs_device_apis = pytest.mark.skipif(DX is None, reason=DX_REASON)


@needs_device_apis
def test_cufftdx_block_fft_in_a_numba_kernel():
    cuda, dx = DX
    size, per_block = 64, 2
    fft = dx.FFT(fft_type="c2c", size=size, precision=np.float32, direction="forward", ffts_per_block=per_block,
                 elements_per_thread=2, execution="Block")
    value_type, storage, stride, ept = fft.value_type, fft.storage_size, fft.stride, fft.elements_per_thread

    @cuda.jit
    def kernel(data):
        local = cuda.local.array(storage, dtype=value_type)
        row = cuda.blockIdx.x * per_block + cuda.threadIdx.y
        i = cuda.threadIdx.x
        for e in range(ept):
            local[e] = data[row, i]
            i += stride
        shared = cuda.shared.array(shape=(0,), dtype=value_type)
        fft.execute(local, shared)
        i = cuda.threadIdx.x
        for e in range(ept):
            data[row, i] = local[e]
            i += stride

    rng = np.random.default_rng(7)
    x = (rng.standard_normal((2 * per_block, size)) + 1j * rng.standard_normal((2 * per_block, size))).astype(np.complex64)
    d = cuda.to_device(x)
    kernel[2, fft.block_dim, 0, fft.shared_memory_size](d)
    assert (np.abs(d.copy_to_host() - np.fft.fft(x, axis=-1)) <= fft_bound(size, x)).all()


@needs_device_apis
def test_cublasdx_block_gemm_in_a_numba_kernel_is_exact():
    cuda, dx = DX
    m, n, k, threads = 16, 8, 32, 64
    mm = dx.Matmul(size=(m, n, k), precision=np.float32, data_type="real", block_size=threads, execution="Block",
                   arrangement=("col_major", "col_major", "col_major"))
    a_size, b_size, c_size = mm.a_size, mm.b_size, mm.c_size
    lda, ldb, ldc = mm.leading_dimension.a, mm.leading_dimension.b, mm.leading_dimension.c

    @cuda.jit
    def kernel(a, b, c, alpha, beta):
        sa = cuda.shared.array(shape=(a_size,), dtype=np.float32)
        sb = cuda.shared.array(shape=(b_size,), dtype=np.float32)
        sc = cuda.shared.array(shape=(c_size,), dtype=np.float32)
        t = cuda.threadIdx.x
        for i in range(t, m * k, threads):
            sa[i % m + i // m * lda] = a[i % m, i // m]
        for i in range(t, k * n, threads):
            sb[i % k + i // k * ldb] = b[i % k, i // k]
        for i in range(t, m * n, threads):
            sc[i % m + i // m * ldc] = c[i % m, i // m]
        cuda.syncthreads()
        mm.execute(alpha, sa, sb, beta, sc)
        cuda.syncthreads()
        for i in range(t, m * n, threads):
            c[i % m, i // m] = sc[i % m + i // m * ldc]

    rng = np.random.default_rng(8)
    a = rng.integers(-4, 5, (m, k)).astype(np.float32)
    b = rng.integers(-4, 5, (k, n)).astype(np.float32)
    c = rng.integers(-4, 5, (m, n)).astype(np.float32)
    dc = cuda.to_device(c)
    kernel[1, mm.block_dim](cuda.to_device(a), cuda.to_device(b), dc, 2.0, 3.0)
    np.testing.assert_array_equal(dc.copy_to_host(), 2 * a @ b + 3 * c)
