"""Triton kernels on cuemu, through `cuemu run` (tests/clients/run.sh), with CuPy arrays (no PyTorch).

Triton compiles a kernel to PTX, assembles it with the ptxas that TRITON_PTXAS_PATH names and loads the result
with cuModuleLoadData. `cuemu run` names cuemu-ptxas, whose "cubin" is the PTX, checked by cuemu's front end.
"""
import numpy as np
import pytest

import cupy as cp
import triton
import triton.language as tl


class Pointer:
    """What Triton reads of a tensor argument: data_ptr() and dtype (CuPy's arrays have neither spelled so)."""

    def __init__(self, array):
        self.array = array
        self.dtype = array.dtype

    def data_ptr(self):
        return self.array.data.ptr


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


@triton.jit
def softmax_kernel(out_ptr, in_ptr, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(in_ptr + row * stride + cols, mask=cols < n_cols, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    tl.store(out_ptr + row * stride + cols, e / tl.sum(e, axis=0), mask=cols < n_cols)


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pm, pn = tl.program_id(0), tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)


@triton.jit
def scaled_matmul_kernel(a_ptr, as_ptr, b_ptr, bs_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr,
                         A_FMT: tl.constexpr, B_FMT: tl.constexpr):
    # microscaled operands: A (M x K) and B (K x N), e2m1 packed two to a byte along K; one e8m0 factor per 32 of K
    A_DIV: tl.constexpr = 2 if A_FMT == "e2m1" else 1
    B_DIV: tl.constexpr = 2 if B_FMT == "e2m1" else 1
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rs = tl.arange(0, K // 32)
    a = tl.load(a_ptr + rm[:, None] * (K // A_DIV) + tl.arange(0, K // A_DIV)[None, :])
    b = tl.load(b_ptr + tl.arange(0, K // B_DIV)[:, None] * N + rn[None, :])
    sa = tl.load(as_ptr + rm[:, None] * (K // 32) + rs[None, :])
    sb = tl.load(bs_ptr + rn[:, None] * (K // 32) + rs[None, :])
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], tl.dot_scaled(a, sa, A_FMT, b, sb, B_FMT))


@triton.jit
def histogram_kernel(x_ptr, bins_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.atomic_add(bins_ptr + tl.load(x_ptr + offs, mask=mask), 1, mask=mask)


def test_vector_add():
    n = 10000
    x, y = cp.arange(n, dtype=cp.float32), cp.full(n, 0.5, dtype=cp.float32)
    out = cp.empty_like(x)
    add_kernel[(triton.cdiv(n, 1024),)](Pointer(x), Pointer(y), Pointer(out), n, BLOCK=1024)
    np.testing.assert_array_equal(out.get(), np.arange(n, dtype=np.float32) + 0.5)


def test_softmax_rows():
    x = np.random.default_rng(0).standard_normal((64, 100)).astype(np.float32)
    d_x, d_out = cp.asarray(x), cp.empty((64, 100), cp.float32)
    softmax_kernel[(64,)](Pointer(d_out), Pointer(d_x), 100, 100, BLOCK=128)
    want = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(d_out.get(), want / want.sum(axis=1, keepdims=True), rtol=1e-5)


def test_matmul_with_tensor_cores():
    rng = np.random.default_rng(1)
    a = rng.integers(-4, 5, (64, 64)).astype(np.float16)
    b = rng.integers(-4, 5, (64, 64)).astype(np.float16)
    d_c = cp.empty((64, 64), cp.float32)
    matmul_kernel[(2, 2)](Pointer(cp.asarray(a)), Pointer(cp.asarray(b)), Pointer(d_c), 64, 64, 64, BM=32, BN=32, BK=32)
    np.testing.assert_array_equal(d_c.get(), a.astype(np.float32) @ b.astype(np.float32))  # small integers: exact


def test_pipelined_matmul_with_warpgroup_mma():
    # 128 x 128 x 64 tiles, 8 warps and 3 stages: on sm_90 Triton writes wgmma fed by cp.async pipelines
    rng = np.random.default_rng(3)
    a = rng.integers(-4, 5, (256, 256)).astype(np.float16)
    b = rng.integers(-4, 5, (256, 256)).astype(np.float16)
    d_c = cp.empty((256, 256), cp.float32)
    matmul_kernel[(2, 2)](Pointer(cp.asarray(a)), Pointer(cp.asarray(b)), Pointer(d_c), 256, 256, 256, BM=128, BN=128,
                          BK=64, num_stages=3, num_warps=8)
    np.testing.assert_array_equal(d_c.get(), a.astype(np.float32) @ b.astype(np.float32))


def test_atomic_histogram():
    x = np.random.default_rng(2).integers(0, 16, 5000).astype(np.int32)
    bins = cp.zeros(16, cp.int32)
    histogram_kernel[(triton.cdiv(x.size, 512),)](Pointer(cp.asarray(x)), Pointer(bins), x.size, BLOCK=512)
    np.testing.assert_array_equal(bins.get(), np.bincount(x, minlength=16))


FP4 = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3, -4, -6])


def fp8_value(code, e5m2):
    mbits, bias = (2, 15) if e5m2 else (3, 7)
    sign = -1.0 if code & 0x80 else 1.0
    exp, man = (code & 0x7F) >> mbits, code & ((1 << mbits) - 1)
    return sign * (man / (1 << mbits) * 2.0 ** (1 - bias) if exp == 0 else (1 + man / (1 << mbits)) * 2.0 ** (exp - bias))


def microscaled(fmt, rows, cols, rng, packed_along_rows):
    if fmt == "e2m1":
        codes = rng.integers(0, 16, (rows, cols))
        pairs = (codes[0::2, :], codes[1::2, :]) if packed_along_rows else (codes[:, 0::2], codes[:, 1::2])
        return FP4[codes], (pairs[0] | pairs[1] << 4).astype(np.uint8)
    codes = rng.integers(0x28, 0x48, (rows, cols)) | rng.integers(0, 2, (rows, cols)) << 7
    return np.vectorize(lambda c: fp8_value(int(c), fmt == "e5m2"))(codes), codes.astype(np.uint8)


# tl.dot_scaled: on a compute-capability-12 profile (`cuemu run --device-profile gb10`, run.sh) Triton writes the
# sm_120 block-scaled mma (.kind::mxf4nvf4 for two e2m1 operands, .kind::mxf8f6f4 for e4m3); on sm_90 it scales and
# converts to bf16 mma itself. The values keep every sum exact.
@pytest.mark.parametrize("a_fmt,b_fmt", [("e2m1", "e2m1"), ("e4m3", "e4m3"), ("e5m2", "e2m1"), ("e4m3", "e2m1")])
def test_dot_scaled(a_fmt, b_fmt):
    m = n = 32
    k = 128
    rng = np.random.default_rng(2)
    a, a_bits = microscaled(a_fmt, m, k, rng, False)
    b, b_bits = microscaled(b_fmt, k, n, rng, True)
    sa = rng.integers(125, 130, (m, k // 32)).astype(np.uint8)
    sb = rng.integers(125, 130, (n, k // 32)).astype(np.uint8)
    want = (a * np.repeat(2.0 ** (sa.astype(int) - 127), 32, axis=1)) @ (
        b * np.repeat(2.0 ** (sb.astype(int) - 127), 32, axis=1).T)
    d_c = cp.zeros((m, n), cp.float32)
    scaled_matmul_kernel[(1,)](Pointer(cp.asarray(a_bits)), Pointer(cp.asarray(sa)), Pointer(cp.asarray(b_bits)),
                               Pointer(cp.asarray(sb)), Pointer(d_c), m, n, k, a_fmt, b_fmt)
    np.testing.assert_array_equal(d_c.get(), want.astype(np.float32))
