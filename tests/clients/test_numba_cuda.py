"""numba-cuda (newest release, default configuration) on cuemu: kernels with the features real programs use.

Each test computes a result on the device and compares it with NumPy on the host.
"""
import math

import numpy as np
import pytest

from numba import cuda, float32, int32


def _on_cuemu():
    name = cuda.get_current_device().name
    return b"cuemu" in name if isinstance(name, bytes) else "cuemu" in name


ON_CUEMU = _on_cuemu()


def test_device_is_visible():
    dev = cuda.get_current_device()
    assert dev.compute_capability >= (7, 5)
    assert cuda.is_available()


def test_vector_add_default_linking():
    @cuda.jit
    def add(a, b, out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = a[i] + b[i]

    a = np.arange(1000, dtype=np.float32)
    b = np.linspace(0, 1, 1000, dtype=np.float32)
    out = cuda.device_array_like(a)
    add[8, 128](cuda.to_device(a), cuda.to_device(b), out)
    np.testing.assert_array_equal(out.copy_to_host(), a + b)


def test_shared_memory_and_syncthreads_block_reduction():
    threads = 128

    @cuda.jit
    def block_sum(x, partial):
        tile = cuda.shared.array(128, dtype=float32)
        tid = cuda.threadIdx.x
        i = cuda.grid(1)
        tile[tid] = x[i] if i < x.size else 0.0
        cuda.syncthreads()
        step = threads // 2
        while step > 0:
            if tid < step:
                tile[tid] += tile[tid + step]
            cuda.syncthreads()
            step //= 2
        if tid == 0:
            partial[cuda.blockIdx.x] = tile[0]

    x = np.random.default_rng(1).random(10_000).astype(np.float32)
    blocks = (x.size + threads - 1) // threads
    partial = cuda.device_array(blocks, dtype=np.float32)
    block_sum[blocks, threads](cuda.to_device(x), partial)
    np.testing.assert_allclose(partial.copy_to_host().sum(), x.sum(), rtol=1e-4)


def test_atomics_histogram():
    @cuda.jit
    def histogram(values, bins):
        i = cuda.grid(1)
        if i < values.size:
            cuda.atomic.add(bins, values[i] % bins.size, 1)

    values = np.random.default_rng(2).integers(0, 1000, 20_000).astype(np.int32)
    bins = cuda.to_device(np.zeros(16, dtype=np.int32))
    histogram[(values.size + 255) // 256, 256](cuda.to_device(values), bins)
    np.testing.assert_array_equal(bins.copy_to_host(), np.bincount(values % 16, minlength=16))


def test_atomic_max_and_cas():
    @cuda.jit
    def reduce_max(values, out, counter):
        i = cuda.grid(1)
        if i < values.size:
            cuda.atomic.max(out, 0, values[i])
            cuda.atomic.cas(counter, 0, 0, 1)

    values = np.random.default_rng(3).integers(-10**6, 10**6, 5000).astype(np.int32)
    out = cuda.to_device(np.array([np.iinfo(np.int32).min], dtype=np.int32))
    counter = cuda.to_device(np.zeros(1, dtype=np.int32))
    reduce_max[20, 256](cuda.to_device(values), out, counter)
    assert out.copy_to_host()[0] == values.max()
    assert counter.copy_to_host()[0] == 1


def test_local_arrays():
    @cuda.jit
    def reverse_rows(matrix, out):
        row = cuda.grid(1)
        if row < matrix.shape[0]:
            scratch = cuda.local.array(16, dtype=int32)
            for j in range(16):
                scratch[j] = matrix[row, j]
            for j in range(16):
                out[row, j] = scratch[15 - j]

    m = np.arange(64 * 16, dtype=np.int32).reshape(64, 16)
    out = cuda.device_array_like(m)
    reverse_rows[2, 32](cuda.to_device(m), out)
    np.testing.assert_array_equal(out.copy_to_host(), m[:, ::-1])


def test_cooperative_groups_grid_sync():
    @cuda.jit
    def two_phases(data, out):
        g = cuda.cg.this_grid()
        i = cuda.grid(1)
        data[i] = i
        g.sync()
        out[i] = data[(i + 1) % data.size]

    # More blocks than cuemu has host threads: waiting blocks must make room for the others.
    n = 16 * 64
    data = cuda.device_array(n, dtype=np.int32)
    out = cuda.device_array(n, dtype=np.int32)
    two_phases[16, 64](data, out)
    np.testing.assert_array_equal(out.copy_to_host(), (np.arange(n) + 1) % n)


def test_streams_and_events():
    @cuda.jit
    def scale(x, factor):
        i = cuda.grid(1)
        if i < x.size:
            x[i] *= factor

    s1, s2 = cuda.stream(), cuda.stream()
    host = np.arange(4096, dtype=np.float64)
    d1 = cuda.to_device(host, stream=s1)
    d2 = cuda.to_device(host, stream=s2)
    start, end = cuda.event(), cuda.event()
    start.record(s1)
    scale[16, 256, s1](d1, 2.0)
    end.record(s1)
    end.wait(s2)
    scale[16, 256, s2](d2, 3.0)
    end.synchronize()
    assert cuda.event_elapsed_time(start, end) >= 0.0
    r1 = d1.copy_to_host(stream=s1)
    r2 = d2.copy_to_host(stream=s2)
    s1.synchronize()
    s2.synchronize()
    np.testing.assert_array_equal(r1, host * 2.0)
    np.testing.assert_array_equal(r2, host * 3.0)


def test_math_functions_and_device_functions():
    @cuda.jit(device=True)
    def poly(x):
        return math.sin(x) * math.exp(-x) + math.sqrt(x)

    @cuda.jit
    def apply(x, out):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = poly(x[i])

    x = np.linspace(0.1, 4.0, 257)
    out = cuda.device_array_like(x)
    apply[3, 96](cuda.to_device(x), out)
    np.testing.assert_allclose(out.copy_to_host(), np.sin(x) * np.exp(-x) + np.sqrt(x), rtol=1e-12)


def test_reads_past_a_small_allocation_do_not_fault():
    # numba's own tests read a little past small buffers; a GPU maps memory in granules and does not fault.
    @cuda.jit
    def read_past(x, out):
        out[0] = x[12]  # x holds 10 int32: 8 bytes past its end

    x = cuda.to_device(np.arange(10, dtype=np.int32))
    out = cuda.device_array(1, dtype=np.int32)
    read_past[1, 1](x, out)
    out.copy_to_host()  # no fault: the value itself is unspecified


def test_close_frees_without_a_current_context():
    # cuda.close() pops its context and then frees what is still allocated (cuMemFree with no current context,
    # which the driver accepts), then releases and resets the primary context.
    a = cuda.to_device(np.ones(100))
    b = cuda.pinned_array(16)
    del a, b
    cuda.close()
