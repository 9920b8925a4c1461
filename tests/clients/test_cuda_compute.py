"""cuda.compute (NVIDIA's cuda-cccl: CUB's algorithms from Python) and CuPy with a toolkit from PyPI newer than the
driver, run through `cuemu run` as a user starts them (tests/clients/run.sh).

`pip install cuda-cccl[cu13]` brings NVRTC and nvJitLink 13.5 wheels. cuda.compute compiles CUB's kernels with that
NVRTC to LTO-IR and links them with nvJitLink; on a GPU the result is a cubin. Under `cuemu run` cuemu's nvJitLink
is loaded first (LD_PRELOAD), hands the LTO-IR to the NVIDIA nvJitLink beside the client's NVRTC and returns PTX of
ISA 9.5, which cuemu compiles with CUEMU_PTX_ISA=newest (driver 580 stops at 9.0). CuPy's NVRTC 13.5 writes the same
ISA. Operators written as Python functions are compiled to LTO-IR by numba, which cuda.core links only through an
nvJitLink that reports its version: cuemu's does (13.0) since its LTO step keeps what other inputs call; before,
these failed with ValueError `Unknown code_type ... ltoir`.
"""
import numpy as np
import pytest

import cupy as cp
import cuda.compute as cc


def nvrtc_version():
    return cp.cuda.nvrtc.getVersion()


def test_the_toolkit_is_newer_than_the_driver():
    # the point of this file: PTX newer than driver 580's (ISA 9.0) is what these clients hand over
    assert nvrtc_version() >= (13, 1), nvrtc_version()
    assert cp.cuda.runtime.driverGetVersion() == 13000


def test_cupy_kernels_from_a_newer_nvrtc():
    a = cp.arange(1000, dtype=cp.float32)
    np.testing.assert_array_equal((a * 2 + 1).get(), np.arange(1000, dtype=np.float32) * 2 + 1)


def test_reduce_into():
    d_in = cp.arange(1, 100001, dtype=np.int64)
    d_out = cp.empty(1, dtype=np.int64)
    cc.reduce_into(d_in=d_in, d_out=d_out, num_items=d_in.size, op=cc.OpKind.PLUS, h_init=np.array([5], np.int64))
    assert int(d_out.get()[0]) == 100000 * 100001 // 2 + 5


def test_radix_sort():
    keys = np.random.default_rng(1).integers(-(1 << 30), 1 << 30, 50000).astype(np.int32)
    d_keys, d_out = cp.asarray(keys), cp.empty(keys.size, np.int32)
    cc.radix_sort(d_in_keys=d_keys, d_out_keys=d_out, d_in_values=None, d_out_values=None,
                  order=cc.SortOrder.DESCENDING, num_items=keys.size)
    np.testing.assert_array_equal(d_out.get(), np.sort(keys)[::-1])


def test_inclusive_scan():
    x = np.random.default_rng(2).integers(0, 1000, 20000).astype(np.int32)
    d_x, d_y = cp.asarray(x), cp.empty(x.size, np.int32)
    cc.inclusive_scan(d_in=d_x, d_out=d_y, op=cc.OpKind.PLUS, init_value=np.array([0], np.int32), num_items=x.size)
    np.testing.assert_array_equal(d_y.get(), np.cumsum(x).astype(np.int32))


def test_histogram_even():
    s = np.random.default_rng(3).integers(0, 100, 5000).astype(np.int32)
    d_s, d_h = cp.asarray(s), cp.empty(10, np.int32)
    cc.histogram_even(d_samples=d_s, d_histogram=d_h, num_output_levels=11, lower_level=np.int32(0),
                      upper_level=np.int32(100), num_samples=s.size)
    np.testing.assert_array_equal(d_h.get(), np.histogram(s, bins=10, range=(0, 100))[0])


# Operators written in Python: numba compiles them to LTO-IR, linked with CUB's through nvJitLink.
def test_reduce_into_with_a_python_operator():
    def add(a, b):
        return a + b

    d_in = cp.arange(1, 10001, dtype=np.int32)
    d_out = cp.empty(1, dtype=np.int32)
    cc.reduce_into(d_in=d_in, d_out=d_out, num_items=d_in.size, op=add, h_init=np.array([7], np.int32))
    assert int(d_out.get()[0]) == 10000 * 10001 // 2 + 7


def test_unary_transform_with_a_python_operator():
    def affine(x):
        return 3 * x - 1

    x = np.random.default_rng(4).integers(-1000, 1000, 4096).astype(np.int32)
    d_x, d_y = cp.asarray(x), cp.empty(x.size, np.int32)
    cc.unary_transform(d_in=d_x, d_out=d_y, op=affine, num_items=x.size)
    np.testing.assert_array_equal(d_y.get(), 3 * x - 1)


def test_binary_transform_with_a_python_operator():
    def larger(a, b):
        return a if a > b else b

    rng = np.random.default_rng(5)
    a, b = (rng.standard_normal(3000).astype(np.float32) for _ in range(2))
    d_a, d_b, d_c = cp.asarray(a), cp.asarray(b), cp.empty(a.size, np.float32)
    cc.binary_transform(d_in1=d_a, d_in2=d_b, d_out=d_c, op=larger, num_items=a.size)
    np.testing.assert_array_equal(d_c.get(), np.maximum(a, b))
