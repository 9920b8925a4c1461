"""Two questions left open in session 20:
1. cuMemFreeAsync of stream-ordered memory on another stream while a stream captures (each capture mode): its result,
   the capture's status afterwards and cuStreamEndCapture's result; and whether the memory is freed (a second
   cuMemFreeAsync of it after the capture).
2. `brkpt` in a kernel run without a debugger: the launch's result, cuCtxSynchronize's, and what the kernel wrote
   before and after the instruction (in its own process: the error may be sticky).
Run: python probe.py capture; python probe.py brkpt   (on a GPU, or with cuemu's libcuda.so.1 first on the loader path)
"""
import ctypes
import sys

from cuda.bindings import driver as d

MODES = {"global": d.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_GLOBAL,
         "thread-local": d.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_THREAD_LOCAL,
         "relaxed": d.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_RELAXED}

BRKPT = b"""
.version 8.0
.target sm_90
.address_size 64
.visible .entry bk(.param .u64 out) {
  .reg .b64 %rd<2>;
  .reg .b32 %r<2>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, 1;
  st.global.u32 [%rd1], %r1;
  brkpt;
  mov.u32 %r1, 2;
  st.global.u32 [%rd1+4], %r1;
  ret;
}
"""


def setup():
    d.cuInit(0)
    _, dev = d.cuDeviceGet(0)
    _, ctx = d.cuDevicePrimaryCtxRetain(dev)
    d.cuCtxSetCurrent(ctx)
    return ctx


def capture():
    setup()
    _, s = d.cuStreamCreate(1)
    _, other = d.cuStreamCreate(1)
    for mode, value in MODES.items():
        err, p = d.cuMemAllocAsync(4096, other)
        d.cuStreamSynchronize(other)
        d.cuStreamBeginCapture(s, value)
        result = d.cuMemFreeAsync(p, other)[0]
        status = d.cuStreamIsCapturing(s)[1]
        end, g = d.cuStreamEndCapture(s)
        again = d.cuMemFreeAsync(p, other)[0]
        sync = d.cuStreamSynchronize(other)[0]
        print(f"{mode:12s} cuMemFreeAsync(other stream) -> {result.name:40s} status after: {status.name:40s} "
              f"end: {end.name:40s} free again after: {again.name} sync: {sync.name}")
        if g:
            d.cuGraphDestroy(g)
    print("context", d.cuCtxSynchronize()[0].name)


def brkpt():
    setup()
    err, mod = d.cuModuleLoadData(BRKPT)
    print("load", err.name)
    _, fn = d.cuModuleGetFunction(mod, b"bk")
    _, out = d.cuMemAllocManaged(8, 1)
    ctypes.memset(int(out), 0, 8)
    arg = ctypes.c_uint64(int(out))
    argv = (ctypes.c_void_p * 1)(ctypes.addressof(arg))
    launch = d.cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, 0, ctypes.addressof(argv), 0)[0]
    sync = d.cuCtxSynchronize()[0]
    again = d.cuCtxSynchronize()[0]
    words = (ctypes.c_uint32 * 2).from_address(int(out))
    print(f"launch {launch.name} sync {sync.name} sync again {again.name} written before/after brkpt "
          f"{words[0]} {words[1]}")


{"capture": capture, "brkpt": brkpt}[sys.argv[1]]()
