"""A graph instantiated in one context and launched into a stream of another context of the same device (tinygrad's
CUDA graphs for several devices: its graph is built and instantiated with the first device's context current and
later launched on the NULL stream with another device's context current). Which launches does the driver accept,
and does the graph's kernel run? Also a graph with a memcpy node whose context is the other one.
Run: python graphctx30.py (cuda-python; the machine's libcuda.so.1)."""
import ctypes

from cuda.bindings import driver as cu

PTX = b""".version 8.0
.target sm_90
.address_size 64
.visible .entry put(.param .u64 p, .param .u32 v)
{
  .reg .u64 %rd<2>;
  .reg .u32 %r<2>;
  ld.param.u64 %rd1, [p];
  ld.param.u32 %r1, [v];
  st.global.u32 [%rd1], %r1;
  ret;
}
"""


def ok(result):
    err = result[0] if isinstance(result, tuple) else result
    return err.name.replace("CUDA_ERROR_", "").replace("CUDA_", "")


def val(result):
    err, *rest = result
    assert err == cu.CUresult.CUDA_SUCCESS, err
    return rest[0] if len(rest) == 1 else rest


cu.cuInit(0)
dev = val(cu.cuDeviceGet(0))
print("device", val(cu.cuDeviceGetName(64, dev)).split(b"\0")[0].decode())
A = val(cu.cuDevicePrimaryCtxRetain(dev))
try:
    B = val(cu.cuCtxCreate(None, 0, dev))
except TypeError:
    B = val(cu.cuCtxCreate(0, dev))
cu.cuCtxSetCurrent(B)
streamB = val(cu.cuStreamCreate(0))
cu.cuCtxSetCurrent(A)
streamA = val(cu.cuStreamCreate(0))
mod = val(cu.cuModuleLoadData(PTX))
fn = val(cu.cuModuleGetFunction(mod, b"put"))
buf = val(cu.cuMemAlloc(64))
src = val(cu.cuMemAlloc(64))


def kernel_graph(value, with_copy=False, copy_ctx=None):
    g = val(cu.cuGraphCreate(0))
    deps = []
    if with_copy:
        p = cu.CUDA_MEMCPY3D()
        p.srcMemoryType = cu.CUmemorytype.CU_MEMORYTYPE_DEVICE
        p.srcDevice = src
        p.dstMemoryType = cu.CUmemorytype.CU_MEMORYTYPE_DEVICE
        p.dstDevice = int(buf) + 32
        p.WidthInBytes, p.Height, p.Depth = 4, 1, 1
        deps = [val(cu.cuGraphAddMemcpyNode(g, None, 0, p, copy_ctx))]
    params = cu.CUDA_KERNEL_NODE_PARAMS()
    params.func = fn
    params.gridDimX = params.gridDimY = params.gridDimZ = 1
    params.blockDimX = params.blockDimY = params.blockDimZ = 1
    args = (ctypes.c_uint64 * 1)(int(buf)), (ctypes.c_uint32 * 1)(value)
    ptrs = (ctypes.c_void_p * 2)(ctypes.addressof(args[0]), ctypes.addressof(args[1]))
    params.kernelParams = ctypes.addressof(ptrs)
    val(cu.cuGraphAddKernelNode(g, deps, len(deps), params))
    return g, val(cu.cuGraphInstantiate(g, 0)), (args, ptrs)


def read():
    cu.cuCtxSetCurrent(A)
    cu.cuCtxSynchronize()
    out = (ctypes.c_uint32 * 1)()
    cu.cuMemcpyDtoH(ctypes.addressof(out), buf, 4)
    return out[0]


cu.cuCtxSetCurrent(A)
cu.cuMemsetD32(src, 0x5A5A, 16)
g, ex, keep = kernel_graph(11)
for name, current, stream in (("A current, NULL stream", A, None), ("B current, NULL stream", B, None),
                              ("B current, B's stream", B, streamB), ("A current, B's stream", A, streamB),
                              ("B current, A's stream", B, streamA)):
    cu.cuMemsetD32(buf, 0, 16)
    cu.cuCtxSynchronize()
    cu.cuCtxSetCurrent(current)
    r = ok(cu.cuGraphLaunch(ex, stream))
    cu.cuCtxSetCurrent(current)
    s = ok(cu.cuStreamSynchronize(stream))
    print(f"kernel graph instantiated in A, launch {name}: {r}, sync {s}, kernel wrote {read()}")

cu.cuCtxSetCurrent(A)
g2, ex2, keep2 = kernel_graph(22, with_copy=True, copy_ctx=B)
for name, current in (("A current, NULL stream", A), ("B current, NULL stream", B)):
    cu.cuMemsetD32(buf, 0, 16)
    cu.cuCtxSynchronize()
    cu.cuCtxSetCurrent(current)
    r = ok(cu.cuGraphLaunch(ex2, None))
    s = ok(cu.cuCtxSynchronize())
    w = read()
    cu.cuCtxSetCurrent(A)
    out = (ctypes.c_uint32 * 1)()
    cu.cuMemcpyDtoH(ctypes.addressof(out), int(buf) + 32, 4)
    print(f"memcpy node (ctx B) + kernel graph instantiated in A, launch {name}: {r}, sync {s}, kernel wrote {w},"
          f" copy wrote {out[0]:#x}")

cu.cuCtxSetCurrent(B)
g3, ex3, keep3 = kernel_graph(33)
for name, current in (("B current, NULL stream", B), ("A current, NULL stream", A)):
    cu.cuCtxSetCurrent(A)
    cu.cuMemsetD32(buf, 0, 16)
    cu.cuCtxSynchronize()
    cu.cuCtxSetCurrent(current)
    r = ok(cu.cuGraphLaunch(ex3, None))
    s = ok(cu.cuCtxSynchronize())
    print(f"kernel graph of A's function instantiated with B current, launch {name}: {r}, sync {s}, kernel wrote {read()}")
