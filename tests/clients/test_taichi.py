"""Taichi (taichi from PyPI) on cuemu, run as a user starts it: `cuemu run -- python`.

Taichi compiles its kernels with its own LLVM to PTX and loads that through the driver API, so it runs on the default
profile. Results are compared with numpy.
"""

import numpy as np
import pytest

ti = pytest.importorskip("taichi")


@pytest.fixture(scope="module", autouse=True)
def cuda():
    ti.init(arch=ti.cuda, offline_cache=False)
    if ti.lang.impl.current_cfg().arch != ti.cuda:
        pytest.skip("Taichi fell back from CUDA (run through `cuemu run`)")
    yield
    ti.reset()


def test_parallel_fields_and_reductions():
    n = 4099
    x = ti.field(dtype=ti.i32, shape=n)
    y = ti.field(dtype=ti.f32, shape=n)

    @ti.kernel
    def fill():
        for i in x:
            x[i] = (i * 7) ^ (i >> 3)
            y[i] = ti.cast(i, ti.f32) * 0.5 + 1.0

    @ti.kernel
    def total() -> ti.i64:
        s = ti.i64(0)
        for i in x:
            s += x[i]
        return s

    fill()
    i = np.arange(n)
    np.testing.assert_array_equal(x.to_numpy(), (i * 7) ^ (i >> 3))
    np.testing.assert_array_equal(y.to_numpy(), (i.astype(np.float32) * np.float32(0.5) + np.float32(1.0)))
    assert total() == int(((i * 7) ^ (i >> 3)).sum())


def test_ndarrays_atomics_and_math():
    n = 1000
    a = ti.ndarray(dtype=ti.f32, shape=n)
    hist = ti.field(dtype=ti.i32, shape=8)
    values = np.random.default_rng(1).random(n).astype(np.float32)
    a.from_numpy(values)

    @ti.kernel
    def bins(a: ti.types.ndarray()):
        for i in a:
            ti.atomic_add(hist[ti.min(7, ti.cast(a[i] * 8, ti.i32))], 1)
            a[i] = ti.sqrt(a[i]) + ti.exp(-a[i])

    bins(a)
    np.testing.assert_array_equal(hist.to_numpy(), np.bincount(np.minimum(7, (values * 8).astype(np.int32)), minlength=8))
    np.testing.assert_allclose(a.to_numpy(), np.sqrt(values) + np.exp(-values), rtol=2e-6)


def test_block_shared_arrays():
    # Taichi declares a block-shared array as a sized `.extern .shared` array and launches with no dynamic shared
    # memory: a static allocation of its size, as driver 580 loads it (cuemu faulted at its first store)
    block = 128
    n = 4 * block
    src = ti.field(ti.i32, shape=n)
    dst = ti.field(ti.i32, shape=n)

    @ti.kernel
    def rotate_within_blocks():
        ti.loop_config(block_dim=block)
        for i in range(n):
            lane = i % block
            tile = ti.simt.block.SharedArray((block,), ti.i32)
            tile[lane] = src[i]
            ti.simt.block.sync()
            dst[i] = tile[(lane + 1) % block] * 2

    values = (np.arange(n, dtype=np.int32) * 7) % 1000
    src.from_numpy(values)
    rotate_within_blocks()
    expected = values.reshape(-1, block)[:, np.r_[1:block, 0]].ravel() * 2
    np.testing.assert_array_equal(dst.to_numpy(), expected)
