"""cuda-python on cuemu: cuda.bindings (driver, runtime, NVRTC) and cuda.core, with numeric checks.

Runs with whichever cuda-bindings the environment has: tests/clients/run.sh runs it against the newest 13.x and
against 13.0 (whose runtime is cudart 13.0; 13.4+ asks the driver for newer export tables).
"""
import ctypes

import numpy as np
import pytest

from cuda.bindings import driver, nvrtc, runtime

SAXPY = r"""
extern "C" __global__ void saxpy(float a, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
"""


def check(result):
    """cuda.bindings returns (error, values...): assert success and return the values."""
    err, *values = result if isinstance(result, tuple) else (result,)
    name = getattr(err, "name", str(err))
    assert int(err) == 0, name
    return values[0] if len(values) == 1 else values


def compile_ptx(source, name, arch="compute_90"):
    prog = check(nvrtc.nvrtcCreateProgram(source.encode(), name.encode(), 0, [], []))
    opts = [f"--gpu-architecture={arch}".encode()]
    err, = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
    if int(err) != 0:
        size = check(nvrtc.nvrtcGetProgramLogSize(prog))
        log = b" " * size
        nvrtc.nvrtcGetProgramLog(prog, log)
        pytest.fail(log.decode())
    size = check(nvrtc.nvrtcGetPTXSize(prog))
    ptx = b" " * size
    check(nvrtc.nvrtcGetPTX(prog, ptx))
    return ptx


def test_runtime_starts():
    count = check(runtime.cudaGetDeviceCount())
    assert count >= 1
    props = check(runtime.cudaGetDeviceProperties(0))
    assert props.major >= 7 and props.totalGlobalMem > 0


def test_runtime_memory_round_trip():
    host = np.arange(256, dtype=np.float32)
    dev = check(runtime.cudaMalloc(host.nbytes))
    check(runtime.cudaMemcpy(dev, host.ctypes.data, host.nbytes, runtime.cudaMemcpyKind.cudaMemcpyHostToDevice))
    check(runtime.cudaMemset(dev, 0, 16))
    back = np.empty_like(host)
    check(runtime.cudaMemcpy(back.ctypes.data, dev, host.nbytes, runtime.cudaMemcpyKind.cudaMemcpyDeviceToHost))
    expected = host.copy()
    expected[:4] = 0
    np.testing.assert_array_equal(back, expected)
    check(runtime.cudaFree(dev))


def test_driver_api_nvrtc_saxpy():
    check(driver.cuInit(0))
    dev = check(driver.cuDeviceGet(0))
    ctx = check(driver.cuDevicePrimaryCtxRetain(dev))
    check(driver.cuCtxPushCurrent(ctx))
    try:
        ptx = compile_ptx(SAXPY, "saxpy.cu")
        module = check(driver.cuModuleLoadData(ptx))
        kernel = check(driver.cuModuleGetFunction(module, b"saxpy"))
        n = 1000
        x = np.random.default_rng(0).random(n).astype(np.float32)
        y = np.random.default_rng(1).random(n).astype(np.float32)
        dx, dy = check(driver.cuMemAlloc(x.nbytes)), check(driver.cuMemAlloc(y.nbytes))
        check(driver.cuMemcpyHtoD(dx, x.ctypes.data, x.nbytes))
        check(driver.cuMemcpyHtoD(dy, y.ctypes.data, y.nbytes))
        stream = check(driver.cuStreamCreate(0))
        args = [np.array([2.5], dtype=np.float32), np.array([int(dx)], dtype=np.uint64),
                np.array([int(dy)], dtype=np.uint64), np.array([n], dtype=np.int32)]
        params = np.array([a.ctypes.data for a in args], dtype=np.uint64)
        check(driver.cuLaunchKernel(kernel, (n + 127) // 128, 1, 1, 128, 1, 1, 0, stream, params.ctypes.data, 0))
        check(driver.cuStreamSynchronize(stream))
        out = np.empty_like(y)
        check(driver.cuMemcpyDtoH(out.ctypes.data, dy, out.nbytes))
        np.testing.assert_allclose(out, 2.5 * x + y, rtol=1e-6)
        for p in (dx, dy):
            check(driver.cuMemFree(p))
        check(driver.cuStreamDestroy(stream))
        check(driver.cuModuleUnload(module))
    finally:
        check(driver.cuCtxPopCurrent())
        check(driver.cuDevicePrimaryCtxRelease(dev))


def test_handles_are_pointer_sized_non_negative():
    check(driver.cuInit(0))
    dev = check(driver.cuDeviceGet(0))
    ctx = check(driver.cuDevicePrimaryCtxRetain(dev))
    check(driver.cuCtxPushCurrent(ctx))
    try:
        stream = check(driver.cuStreamCreate(0))
        event = check(driver.cuEventCreate(0))
        for handle in (ctx, stream, event):
            value = int(handle)
            assert 0 < value < 2**47 and value % 16 == 0
            ctypes.c_int64(value)  # what cuda.core does with a handle
        check(driver.cuEventDestroy(event))
        check(driver.cuStreamDestroy(stream))
    finally:
        check(driver.cuCtxPopCurrent())
        check(driver.cuDevicePrimaryCtxRelease(dev))


def test_cuda_core_program_launch_and_stream():
    core = pytest.importorskip("cuda.core")
    dev = core.Device(0)
    dev.set_current()
    stream = dev.create_stream()
    program = core.Program(SAXPY, code_type="c++", options=core.ProgramOptions(arch=f"sm_{dev.arch}"))
    module = program.compile("ptx")
    kernel = module.get_kernel("saxpy")
    n = 512
    x = np.linspace(0, 1, n, dtype=np.float32)
    y = np.full(n, 3.0, dtype=np.float32)
    buf_x = dev.memory_resource.allocate(x.nbytes, stream=stream)
    buf_y = dev.memory_resource.allocate(y.nbytes, stream=stream)
    check(driver.cuMemcpyHtoDAsync(int(buf_x.handle), x.ctypes.data, x.nbytes, int(stream.handle)))
    check(driver.cuMemcpyHtoDAsync(int(buf_y.handle), y.ctypes.data, y.nbytes, int(stream.handle)))
    config = core.LaunchConfig(grid=(n + 127) // 128, block=128)
    core.launch(stream, config, kernel, np.float32(-1.0), buf_x, buf_y, np.int32(n))
    out = np.empty_like(y)
    check(driver.cuMemcpyDtoHAsync(out.ctypes.data, int(buf_y.handle), out.nbytes, int(stream.handle)))
    stream.sync()
    np.testing.assert_allclose(out, 3.0 - x, rtol=1e-6)
    buf_x.close(stream=stream)
    buf_y.close(stream=stream)
    stream.close()


LATCH = r"""
extern "C" __global__ void latch(volatile int* flag, unsigned long long limit) {
  unsigned long long start = clock64();
  while (!*flag && clock64() - start < limit) __nanosleep(100000);
  flag[1] = *flag ? 1 : 2;
}
"""


def test_cuda_core_event_not_done_while_kernel_waits_for_host():
    """cuda.core's test_event_is_done_false: a kernel waits for a flag the host sets after querying an event
    recorded behind it; the launch and the query must not wait for the kernel (the clock limit ends it either way)."""
    core = pytest.importorskip("cuda.core")
    dev = core.Device(0)
    dev.set_current()
    stream = dev.create_stream()
    program = core.Program(LATCH, code_type="c++", options=core.ProgramOptions(arch=f"sm_{dev.arch}"))
    kernel = program.compile("ptx").get_kernel("latch")
    flag_buffer = core.LegacyPinnedMemoryResource().allocate(8)
    flag = (ctypes.c_int32 * 2).from_address(int(flag_buffer.handle))
    flag[0] = flag[1] = 0
    limit = 30 * dev.properties.clock_rate * 1000  # 30 s of clock64
    core.launch(stream, core.LaunchConfig(grid=1, block=1), kernel, flag_buffer, np.uint64(limit))
    event = stream.record()
    assert event.is_done is False
    flag[0] = 1
    event.sync()
    assert flag[1] == 1, "the kernel saw the host's write"
    flag_buffer.close()
    stream.close()


@pytest.mark.parametrize("kind", ["pinned", "managed"])
def test_cuda_core_pinned_and_managed_pools(kind):
    """PinnedMemoryResource and ManagedMemoryResource take the driver's host and managed pools (cuMemGetMemPool
    with a host or managed location); the host reads what a device-side fill wrote."""
    core = pytest.importorskip("cuda.core")
    dev = core.Device(0)
    dev.set_current()
    stream = dev.create_stream()
    mr = core.PinnedMemoryResource() if kind == "pinned" else core.ManagedMemoryResource()
    buf = mr.allocate(256, stream=stream)
    if kind == "pinned":
        # A host pool starts without device access; until it is granted, an H100 refuses memsets of its memory
        # with CUDA_ERROR_INVALID_VALUE (tools/gpu-probe/results/clients17c-round2-h100-2026-11-26.txt).
        assert int(driver.cuMemsetD32Async(int(buf.handle), 0x01020304, 64, int(stream.handle))[0]) == 1
        desc = driver.CUmemAccessDesc()
        desc.location.type = driver.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE
        desc.location.id = 0
        desc.flags = driver.CUmemAccess_flags.CU_MEM_ACCESS_FLAGS_PROT_READWRITE
        check(driver.cuMemPoolSetAccess(int(mr.handle), [desc], 1))
    check(driver.cuMemsetD32Async(int(buf.handle), 0x01020304, 64, int(stream.handle)))
    stream.sync()
    words = (ctypes.c_uint32 * 64).from_address(int(buf.handle))
    assert all(w == 0x01020304 for w in words)
    buf.close(stream=stream)
    stream.sync()
    stream.close()


FILL = r"""
extern "C" __global__ void fill(int* out, int value, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = value;
}
"""


def test_cuda_core_green_context_stream_used_from_primary_context():
    """cuda.core's green-context tests: with the primary context current, memory is allocated, a library kernel
    launched and an event recorded on a green context's stream (a green context shares its device's resources)."""
    core = pytest.importorskip("cuda.core")
    dev = core.Device(0)
    dev.set_current()
    try:
        groups, _ = dev.resources.sm.split(core.SMResourceOptions(count=None))
        ctx = dev.create_context(core.ContextOptions(resources=[groups[0]]))
    except (AttributeError, core._utils.cuda_utils.CUDAError) as exc:
        pytest.skip(f"no green contexts here: {exc}")
    stream = ctx.create_stream()
    kernel = core.Program(FILL, code_type="c++", options=core.ProgramOptions(arch=f"sm_{dev.arch}")).compile(
        "ptx").get_kernel("fill")
    n = 64
    buf = dev.allocate(n * 4, stream=stream)
    core.launch(stream, core.LaunchConfig(grid=2, block=32), kernel, buf, np.int32(42), np.int32(n))
    event = stream.record()
    out = np.zeros(n, dtype=np.int32)
    check(driver.cuMemcpyDtoHAsync(out.ctypes.data, int(buf.handle), out.nbytes, int(stream.handle)))
    event.sync()
    stream.sync()
    assert (out == 42).all()
    buf.close(stream=stream)
    stream.close()
    ctx.close()
