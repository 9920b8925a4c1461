"""CUTLASS's CuTe DSL (nvidia-cutlass-dsl) on cuemu, through `cuemu run`.

The DSL compiles its kernels to SASS inside the process (NVIDIA's PTX compiler linked into its MLIR library) and
loads SASS only; `cuemu run` has it keep each PTX where the driver finds it (emu/core/companion_ptx.h). Device
arrays are CuPy's, handed to the DSL through DLPack; every result is compared with NumPy's.
"""
import cupy as cp
import numpy as np
import pytest

import cutlass
import cutlass.cute as cute
import cutlass.utils.hopper_helpers as sm90_utils
from cutlass.cute.runtime import from_dlpack


@pytest.fixture(scope="module", autouse=True)
def context():
    cutlass.cuda.initialize_cuda_context()


@cute.kernel
def hello_kernel():
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    if tidx == 0:
        cute.printf("hello from block %d", bidx)


@cute.jit
def hello(blocks: cutlass.Constexpr):
    hello_kernel().launch(grid=(blocks, 1, 1), block=(32, 1, 1))


def test_device_printf(capfd):
    hello(3)
    cp.cuda.runtime.deviceSynchronize()
    lines = sorted(line for line in capfd.readouterr().out.splitlines() if line.startswith("hello from"))
    assert lines == ["hello from block 0", "hello from block 1", "hello from block 2"]


@cute.kernel
def add_kernel(gA: cute.Tensor, gB: cute.Tensor, gC: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    bdim, _, _ = cute.arch.block_dim()
    i = bidx * bdim + tidx
    m, n = gA.shape
    gC[i // n, i % n] = gA[i // n, i % n] + gB[i // n, i % n]


@cute.jit
def add(mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor):
    m, n = mA.shape
    add_kernel(mA, mB, mC).launch(grid=((m * n) // 128, 1, 1), block=(128, 1, 1))


def test_elementwise_add_f32():
    rng = np.random.default_rng(1)
    a = cp.asarray(rng.standard_normal((64, 96), dtype=np.float32))
    b = cp.asarray(rng.standard_normal((64, 96), dtype=np.float32))
    c = cp.zeros_like(a)
    compiled = cute.compile(add, from_dlpack(a), from_dlpack(b), from_dlpack(c))
    compiled(from_dlpack(a), from_dlpack(b), from_dlpack(c))
    cp.cuda.runtime.deviceSynchronize()
    np.testing.assert_array_equal(c.get(), a.get() + b.get())


@cute.kernel
def vector_add_kernel(gA: cute.Tensor, gB: cute.Tensor, gC: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    bdim, _, _ = cute.arch.block_dim()
    i = bidx * bdim + tidx
    m, n = gA.shape[1]
    a = gA[(None, (i // n, i % n))].load()
    b = gB[(None, (i // n, i % n))].load()
    gC[(None, (i // n, i % n))] = a + b


@cute.jit
def vector_add(mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor):
    # eight f16 values (16 bytes) per thread: vector loads and stores
    gA = cute.zipped_divide(mA, (1, 8))
    gB = cute.zipped_divide(mB, (1, 8))
    gC = cute.zipped_divide(mC, (1, 8))
    threads = cute.size(gC, mode=[1])
    vector_add_kernel(gA, gB, gC).launch(grid=(threads // 64, 1, 1), block=(64, 1, 1))


def test_vectorized_add_f16():
    rng = np.random.default_rng(2)
    a = cp.asarray(rng.standard_normal((32, 256)).astype(np.float16))
    b = cp.asarray(rng.standard_normal((32, 256)).astype(np.float16))
    c = cp.zeros_like(a)
    args = [from_dlpack(x, assumed_align=16) for x in (a, b, c)]
    cute.compile(vector_add, *args)(*args)
    cp.cuda.runtime.deviceSynchronize()
    np.testing.assert_array_equal(c.get(), a.get() + b.get())


@cute.kernel
def reverse_kernel(gIn: cute.Tensor, gOut: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    smem = cutlass.memory.SmemAllocator()
    tile = smem.allocate_tensor(cutlass.Float32, cute.make_layout(256), byte_alignment=16)
    tile[tidx] = gIn[bidx * 256 + tidx]
    cute.arch.sync_threads()
    gOut[bidx * 256 + tidx] = tile[255 - tidx] * 2.0


@cute.jit
def reverse(mIn: cute.Tensor, mOut: cute.Tensor):
    reverse_kernel(mIn, mOut).launch(grid=(cute.size(mIn) // 256, 1, 1), block=(256, 1, 1),
                                     smem=256 * 4)


def test_shared_memory_block_reverse():
    x = cp.arange(4 * 256, dtype=cp.float32)
    y = cp.zeros_like(x)
    cute.compile(reverse, from_dlpack(x), from_dlpack(y))(from_dlpack(x), from_dlpack(y))
    cp.cuda.runtime.deviceSynchronize()
    expected = (x.get().reshape(4, 256)[:, ::-1] * 2).reshape(-1)
    np.testing.assert_array_equal(y.get(), expected)


@cute.kernel
def mma_kernel(tiled_mma: cute.TiledMma, gA: cute.Tensor, gB: cute.Tensor, gC: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    thr = tiled_mma.get_slice(tidx)
    tCgA = thr.partition_A(gA)
    tCgB = thr.partition_B(gB)
    tCgC = thr.partition_C(gC)
    tCrA = tiled_mma.make_fragment_A(tCgA)
    tCrB = tiled_mma.make_fragment_B(tCgB)
    tCrC = tiled_mma.make_fragment_C(tCgC)
    cute.autovec_copy(tCgA, tCrA)
    cute.autovec_copy(tCgB, tCrB)
    tCrC.fill(0.0)
    cute.gemm(tiled_mma, tCrC, tCrA, tCrB, tCrC)
    cute.autovec_copy(tCrC, tCgC)


@cute.jit
def mma_16x8x16(mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor):
    op = cute.nvgpu.warp.MmaF16BF16Op(cutlass.Float16, cutlass.Float32, (16, 8, 16))
    mma_kernel(cute.make_tiled_mma(op), mA, mB, mC).launch(grid=(1, 1, 1), block=(32, 1, 1))


def check_product(gemm, m, n, k, seed):
    """C (m x n, f32) = A (m x k) B^T with B given as n x k (K-major), both f16 of small integers, so that the f32
    sums are exact whatever the order; compared with NumPy's."""
    rng = np.random.default_rng(seed)
    a = cp.asarray(rng.integers(-4, 5, (m, k)).astype(np.float16))
    b = cp.asarray(rng.integers(-4, 5, (n, k)).astype(np.float16))
    c = cp.zeros((m, n), dtype=cp.float32)
    args = [from_dlpack(x, assumed_align=16) for x in (a, b, c)]
    cute.compile(gemm, *args)(*args)
    cp.cuda.runtime.deviceSynchronize()
    np.testing.assert_array_equal(c.get(), a.get().astype(np.float32) @ b.get().astype(np.float32).T)


def test_warp_mma_f16_f32():
    check_product(mma_16x8x16, 16, 8, 16, seed=3)  # one mma.sync m16n8k16


@cute.kernel
def wgmma_kernel(tiled_mma: cute.TiledMma, gA: cute.Tensor, gB: cute.Tensor, gC: cute.Tensor,
                 a_smem: cute.ComposedLayout, b_smem: cute.ComposedLayout):
    tidx, _, _ = cute.arch.thread_idx()
    smem = cutlass.memory.SmemAllocator()
    sA = smem.allocate_tensor(cutlass.Float16, a_smem.outer, byte_alignment=1024, swizzle=a_smem.inner)
    sB = smem.allocate_tensor(cutlass.Float16, b_smem.outer, byte_alignment=1024, swizzle=b_smem.inner)
    # every thread copies its share of A (64 x 64) and B (64 x 64, K-major) into the swizzled tiles
    for i in cutlass.range(tidx, 64 * 64, 128):
        sA[(i // 64, i % 64, 0)] = gA[i // 64, i % 64]
        sB[(i // 64, i % 64, 0)] = gB[i // 64, i % 64]
    cute.arch.fence_proxy("async.shared", space="cta")
    cute.arch.sync_threads()
    thr = tiled_mma.get_slice(tidx)
    tCrA = tiled_mma.make_fragment_A(thr.partition_A(sA))
    tCrB = tiled_mma.make_fragment_B(thr.partition_B(sB))
    tCgC = thr.partition_C(gC)
    acc = cute.make_rmem_tensor(tCgC.shape, cutlass.Float32)
    tiled_mma.set(cute.nvgpu.warpgroup.Field.ACCUMULATE, False)
    cute.nvgpu.warpgroup.fence()
    for k in cutlass.range_constexpr(cute.size(tCrA, mode=[2])):
        cute.gemm(tiled_mma, acc, tCrA[(None, None, k, 0)], tCrB[(None, None, k, 0)], acc)
        tiled_mma.set(cute.nvgpu.warpgroup.Field.ACCUMULATE, True)
    cute.nvgpu.warpgroup.commit_group()
    cute.nvgpu.warpgroup.wait_group(0)
    cute.autovec_copy(acc, tCgC)


@cute.jit
def wgmma_64x64x64(mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor):
    k_major = cutlass.tensor_utils.LayoutEnum.ROW_MAJOR
    tiled_mma = sm90_utils.make_trivial_tiled_mma(cutlass.Float16, cutlass.Float16, k_major.sm90_mma_major_mode(),
                                                  k_major.sm90_mma_major_mode(), cutlass.Float32, (1, 1, 1),
                                                  tiler_mn=(64, 64))
    a_smem = sm90_utils.make_smem_layout_a(k_major, (64, 64, 64), cutlass.Float16, 1)
    b_smem = sm90_utils.make_smem_layout_b(k_major, (64, 64, 64), cutlass.Float16, 1)
    wgmma_kernel(tiled_mma, mA, mB, mC, a_smem, b_smem).launch(grid=(1, 1, 1), block=(128, 1, 1),
                                                                smem=2 * 64 * 64 * 2 + 2048)


def test_warpgroup_mma_swizzled_shared_tiles():
    # one warpgroup's wgmma.mma_async m64n64k16, four times along K, from 128-byte-swizzled shared tiles (Hopper)
    check_product(wgmma_64x64x64, 64, 64, 64, seed=4)
