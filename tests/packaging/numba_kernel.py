"""A numba-cuda kernel run through an installed cuemu (the wheel's or the Debian package's), from outside the build
tree: a shared-memory tree reduction per block with syncthreads, combined with a global atomic. Prints one line the
packaging checks look for, and fails unless the driver in this process is cuemu's."""
import ctypes

import numpy as np
from numba import cuda

THREADS = 128


@cuda.jit
def block_sums(values, total):
    partial = cuda.shared.array(THREADS, dtype=np.float32)
    i = cuda.grid(1)
    t = cuda.threadIdx.x
    partial[t] = values[i] if i < values.size else np.float32(0)
    cuda.syncthreads()
    stride = THREADS // 2
    while stride > 0:
        if t < stride:
            partial[t] += partial[t + stride]
        cuda.syncthreads()
        stride //= 2
    if t == 0:
        cuda.atomic.add(total, 0, partial[0])


values = np.arange(1000, dtype=np.float32)
total = cuda.to_device(np.zeros(1, dtype=np.float32))
block_sums[(values.size + THREADS - 1) // THREADS, THREADS](cuda.to_device(values), total)
result = total.copy_to_host()[0]
# Every partial sum is an integer below 2**24, so the order of the atomic additions cannot change the result.
assert result == values.sum(), result
assert hasattr(ctypes.CDLL("libcuda.so.1"), "cuemuGetVersion"), "the driver in this process is not cuemu's"
print(f"numba block sums {result:.0f} on cuemu")
