"""Fixed 2026-11-28 (test PtxExec.SizedExternSharedArrayIsStatic): a Taichi block-shared array on cuemu.

Taichi's LLVM declares a `ti.simt.block.SharedArray` as a sized `.extern .shared` array (`.extern .shared .align 8
.b8 shared_array_N[512];`) and launches with no dynamic shared memory. Driver 580 gives such an array a static
allocation of its size (an H200 with driver 580.159.04, 2026-11-28: a module declaring `arr[260]` reports
CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES 260 and its kernel runs with no dynamic bytes); cuemu took every `.extern .shared` for
the kernel's dynamic shared memory, of 0 bytes here, and the first store faulted ("out-of-range shared address
0x400", then CUDA_ERROR_ILLEGAL_ADDRESS). Taichi's parallel scan (`ti.algorithms.parallel_sort`, its prefix sums) and
mesh-for kernels use such arrays.
    build/emu/cuemu run -- python tools/repro/taichi_block_shared_array.py     # prints "ok"
"""

import numpy as np
import taichi as ti

ti.init(arch=ti.cuda, offline_cache=False)
block = 128
n = 4 * block
src = ti.field(ti.f32, shape=n)
dst = ti.field(ti.f32, shape=n)


@ti.kernel
def rotate_within_blocks():
    ti.loop_config(block_dim=block)
    for i in range(n):
        lane = i % block
        tile = ti.simt.block.SharedArray((block,), ti.f32)
        tile[lane] = src[i]
        ti.simt.block.sync()
        dst[i] = tile[(lane + 1) % block]


values = np.arange(n, dtype=np.float32) * 3
src.from_numpy(values)
rotate_within_blocks()
expected = values.reshape(-1, block)[:, np.r_[1:block, 0]].ravel()
np.testing.assert_array_equal(dst.to_numpy(), expected)
print("ok")
