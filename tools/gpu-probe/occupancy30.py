"""Cluster occupancy, second probe (issue 18): checks the GPC model fitted to occupancy29's table (clusters take
distinct SMs of one GPC; an H200's GPCs count 18, 18, 16 x 5, 8 and 2 x 4 SMs) on answers it was not fitted to:
cluster sizes 11, 13, 15, two- and three-dimensional cluster shapes, and cuOccupancyMaxPotentialClusterSize for 1 to
16 blocks per SM, portable and not. Run: python occupancy30.py (cuda-python; the machine's libcuda.so.1)."""
from cuda.bindings import driver as cu

PTX = b""".version 8.0
.target sm_90
.address_size 64
.visible .entry empty()
{
  ret;
}
"""


def check(result):
    err, *rest = result if isinstance(result, tuple) else (result,)
    if err != cu.CUresult.CUDA_SUCCESS:
        return f"error {err.name}"
    return rest[0] if len(rest) == 1 else rest


def config(shape, smem, with_attr=True):
    c = cu.CUlaunchConfig()
    c.gridDimX, c.gridDimY, c.gridDimZ = shape
    c.blockDimX, c.blockDimY, c.blockDimZ = 128, 1, 1
    c.sharedMemBytes = smem
    if with_attr:
        attr = cu.CUlaunchAttribute()
        attr.id = cu.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
        attr.value.clusterDim.x, attr.value.clusterDim.y, attr.value.clusterDim.z = shape
        c.attrs = [attr]
        c.numAttrs = 1
    return c


cu.cuInit(0)
_, dev = cu.cuDeviceGet(0)
_, ctx = cu.cuDevicePrimaryCtxRetain(dev)
cu.cuCtxSetCurrent(ctx)
_, name = cu.cuDeviceGetName(64, dev)
print("device", name.split(b"\0")[0].decode())
_, mod = cu.cuModuleLoadData(PTX)
_, fn = cu.cuModuleGetFunction(mod, b"empty")
optin = check(cu.cuDeviceGetAttribute(cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, dev))
check(cu.cuFuncSetAttribute(fn, cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, optin))
per_sm = optin + 1024
for portable in (True, False):
    check(cu.cuFuncSetAttribute(fn, cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED,
                                0 if portable else 1))
    for blocks in (1, 2, 4, 8, 16):
        smem = per_sm // blocks - 1024
        print(f"potential cluster size, {'portable' if portable else 'non-portable'}, "
              f"{check(cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(fn, 128, smem))} blocks/SM:",
              check(cu.cuOccupancyMaxPotentialClusterSize(fn, config((1, 1, 1), smem, False))))
check(cu.cuFuncSetAttribute(fn, cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1))
shapes = [(11, 1, 1), (13, 1, 1), (15, 1, 1), (2, 2, 1), (1, 4, 1), (4, 2, 1), (2, 2, 2), (4, 4, 1), (3, 3, 1),
          (1, 1, 4), (2, 3, 2), (5, 3, 1)]
for blocks in (1, 3, 5, 8):
    smem = per_sm // blocks - 1024
    row = [f"{x}x{y}x{z}:{check(cu.cuOccupancyMaxActiveClusters(fn, config((x, y, z), smem)))}" for x, y, z in shapes]
    print(f" {check(cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(fn, 128, smem))} blocks/SM ({smem} B):",
          " ".join(row))
