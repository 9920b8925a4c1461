"""Occupancy of a one-thread kernel that asks for all the shared memory a block may have, as CUTLASS's CuTe DSL
asks it (cutlass.utils.HardwareInfo.get_max_active_clusters, whose answer sizes persistent GEMM grids): the DSL's
kernel has .reqntid 1, 1, 1 and the DSL asks with blocks of 128 threads.
Run: python occupancy29.py (cuda-python; the machine's libcuda.so.1)."""
from cuda.bindings import driver as cu

PTX = b""".version 8.0
.target sm_90
.address_size 64
.visible .entry empty()
{
  ret;
}
.visible .entry one_thread()
.reqntid 1, 1, 1
{
  ret;
}
.visible .entry at_most_64()
.maxntid 64, 1, 1
{
  ret;
}
"""


def check(result):
    err, *rest = result if isinstance(result, tuple) else (result,)
    if err != cu.CUresult.CUDA_SUCCESS:
        return f"error {err.name}"
    return rest[0] if len(rest) == 1 else rest


cu.cuInit(0)
_, dev = cu.cuDeviceGet(0)
_, ctx = cu.cuDevicePrimaryCtxRetain(dev)
cu.cuCtxSetCurrent(ctx)
_, name = cu.cuDeviceGetName(64, dev)
print("device", name.split(b"\0")[0].decode())
_, mod = cu.cuModuleLoadData(PTX)
optin = check(cu.cuDeviceGetAttribute(cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, dev))
print("optin", optin)
for kernel in (b"empty", b"one_thread", b"at_most_64"):
    _, fn = cu.cuModuleGetFunction(mod, kernel)
    print("== kernel", kernel.decode())
    for dyn_attr in (None, optin):
        if dyn_attr is not None:
            print("set MAX_DYNAMIC_SHARED_SIZE_BYTES", dyn_attr, check(cu.cuFuncSetAttribute(
                fn, cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, dyn_attr)))
        print(" available dynamic smem (1 block of 1 thread):",
              check(cu.cuOccupancyAvailableDynamicSMemPerBlock(fn, 1, 1)))
        for threads in (1, 128):
            for smem in (0, 1024, optin):
                print(f" blocks per SM, {threads} threads, {smem} dynamic bytes:",
                      check(cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(fn, threads, smem)))
        check(cu.cuFuncSetAttribute(fn, cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1))
        for cluster in (None, 1, 2, 4):
            for threads in (1, 128):
                for smem in (0, optin):
                    config = cu.CUlaunchConfig()
                    config.gridDimX, config.gridDimY, config.gridDimZ = cluster or 1, 1, 1
                    config.blockDimX, config.blockDimY, config.blockDimZ = threads, 1, 1
                    config.sharedMemBytes = smem
                    if cluster:
                        attr = cu.CUlaunchAttribute()
                        attr.id = cu.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
                        attr.value.clusterDim.x, attr.value.clusterDim.y, attr.value.clusterDim.z = cluster, 1, 1
                        config.attrs = [attr]
                        config.numAttrs = 1
                    print(f" max active clusters, cluster {cluster}, {threads} threads, {smem} dynamic bytes:",
                          check(cu.cuOccupancyMaxActiveClusters(fn, config)))

# Clusters of every size against blocks per SM (limited by shared memory: 1, 2, 4, 8 and 16 blocks of 128 threads),
# to fit how the GPU places clusters on its GPCs.
print("== clusters by size and blocks per SM (kernel empty, 128 threads)")
_, fn = cu.cuModuleGetFunction(mod, b"empty")
check(cu.cuFuncSetAttribute(fn, cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, optin))
check(cu.cuFuncSetAttribute(fn, cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1))
per_sm = optin + 1024
for blocks in (1, 2, 3, 4, 5, 6, 8, 16):
    smem = per_sm // blocks - 1024
    row = []
    for cluster in (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 14, 16):
        config = cu.CUlaunchConfig()
        config.gridDimX, config.gridDimY, config.gridDimZ = cluster, 1, 1
        config.blockDimX, config.blockDimY, config.blockDimZ = 128, 1, 1
        config.sharedMemBytes = smem
        attr = cu.CUlaunchAttribute()
        attr.id = cu.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
        attr.value.clusterDim.x, attr.value.clusterDim.y, attr.value.clusterDim.z = cluster, 1, 1
        config.attrs = [attr]
        config.numAttrs = 1
        row.append(f"{cluster}:{check(cu.cuOccupancyMaxActiveClusters(fn, config))}")
    print(f" {check(cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(fn, 128, smem))} blocks/SM ({smem} B):",
          " ".join(row))
