// Memory pools, fabric handles and conditional handles as driver 580 answers them (issue 17, measured on an H100
// with tools/gpu-probe/clients17c.cpp; results in tools/gpu-probe/results/clients17c-h100-2026-11-26.txt).
#include "harness.h"

#include <cstdint>
#include <cstring>
#include <string>

namespace {

using api_memory_ClientsHostPoolPointer = conf::ContextTest;
using api_memory_ClientsFabric = conf::ContextTest;
using api_graph_ClientsConditionalHandle = conf::ContextTest;

CUmemPoolProps Props(CUmemLocationType type, unsigned handles = CU_MEM_HANDLE_TYPE_NONE, size_t maxSize = 0) {
  CUmemPoolProps p{};
  p.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  p.handleTypes = static_cast<CUmemAllocationHandleType>(handles);
  p.location.type = type;
  p.location.id = 0;
  p.maxSize = maxSize;
  return p;
}

// A pinned host pool's memory is host memory the device has no access to until the pool grants it: memsets,
// device-side copies and address-range queries refuse it; cuMemcpy (unified addressing) and host-typed 2D copies
// take it.
void CheckHostPoolPointer(CUmemLocationType type) {
  CUmemPoolProps props = Props(type);
  CUmemoryPool pool = nullptr;
  CU_ASSERT_OK(cuMemPoolCreate(&pool, &props));
  CUdeviceptr p = 0;
  CU_ASSERT_OK(cuMemAllocFromPoolAsync(&p, 4096, pool, nullptr));
  CU_ASSERT_OK(cuStreamSynchronize(nullptr));
  conf::DeviceBuffer d(4096);
  static unsigned char host[4096];
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuMemsetD8(p, 1, 4096));
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuMemsetD32(p, 1, 1024));
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuMemsetD8Async(p, 1, 4096, nullptr));
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuMemsetD2D8(p, 64, 1, 64, 4));
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuMemcpyDtoH(host, p, 4096));
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuMemcpyHtoD(p, host, 4096));
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuMemcpyDtoHAsync(host, p, 4096, nullptr));
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuMemcpyDtoD(d.ptr(), p, 4096));
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuMemcpyDtoD(p, d.ptr(), 4096));
  std::memset(reinterpret_cast<void*>(p), 5, 4096);
  CU_EXPECT_OK(cuMemcpy(d.ptr(), p, 4096));
  CU_EXPECT_OK(cuMemcpy(p, d.ptr(), 4096));
  CUDA_MEMCPY2D c{};
  c.srcMemoryType = CU_MEMORYTYPE_DEVICE;
  c.srcDevice = p;
  c.srcPitch = 64;
  c.dstMemoryType = CU_MEMORYTYPE_HOST;
  c.dstHost = host;
  c.dstPitch = 64;
  c.WidthInBytes = 64;
  c.Height = 4;
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuMemcpy2D(&c)) << "as device memory";
  c.srcMemoryType = CU_MEMORYTYPE_UNIFIED;
  CU_EXPECT_OK(cuMemcpy2D(&c)) << "as unified memory";
  EXPECT_EQ(host[0], 5);
  CUdeviceptr base = 1;
  size_t size = 1;
  CU_EXPECT(CUDA_ERROR_NOT_FOUND, cuMemGetAddressRange(&base, &size, p + 16));
  unsigned memoryType = 0;
  CU_EXPECT_OK(cuPointerGetAttribute(&memoryType, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p + 16));
  EXPECT_EQ(memoryType, unsigned(CU_MEMORYTYPE_HOST));
  CUdeviceptr devicePointer = 0;
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE,
            cuPointerGetAttribute(&devicePointer, CU_POINTER_ATTRIBUTE_DEVICE_POINTER, p + 16));
  void* hostPointer = nullptr;
  CU_EXPECT_OK(cuPointerGetAttribute(&hostPointer, CU_POINTER_ATTRIBUTE_HOST_POINTER, p + 16));
  EXPECT_EQ(hostPointer, reinterpret_cast<void*>(p + 16));
  CUcontext owner = reinterpret_cast<CUcontext>(1);
  CU_EXPECT_OK(cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_CONTEXT, p + 16));
  EXPECT_EQ(owner, nullptr);
  CUdeviceptr start = 1;
  CU_EXPECT_OK(cuPointerGetAttribute(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, p + 16));
  EXPECT_EQ(start, CUdeviceptr{0});
  CUmemoryPool of = nullptr;
  CU_EXPECT_OK(cuPointerGetAttribute(&of, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, p + 16));
  EXPECT_EQ(of, pool);
  CU_EXPECT_OK(cuMemFreeAsync(p, nullptr));
  CU_EXPECT_OK(cuStreamSynchronize(nullptr));
  CU_EXPECT_OK(cuMemPoolDestroy(pool));
}

TEST_F(api_memory_ClientsHostPoolPointer, HostLocation) { CheckHostPoolPointer(CU_MEM_LOCATION_TYPE_HOST); }

TEST_F(api_memory_ClientsFabric, Advertised) {
  int supported = -1;
  CU_ASSERT_OK(cuDeviceGetAttribute(&supported, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED, dev));
  EXPECT_EQ(supported, 1);
}

// A device pool may be made with the fabric handle type; without an IMEX channel its export is not permitted (the
// H100 answered 800). The pool is left to the context: on the H100 the probe crashed right after this export.
TEST_F(api_memory_ClientsFabric, PoolCreatedNotExported) {
  CUmemPoolProps props = Props(CU_MEM_LOCATION_TYPE_DEVICE, CU_MEM_HANDLE_TYPE_FABRIC);
  CUmemoryPool pool = nullptr;
  CU_ASSERT_OK(cuMemPoolCreate(&pool, &props));
  CUmemFabricHandle fabric{};
  CU_EXPECT(CUDA_ERROR_NOT_PERMITTED, cuMemPoolExportToShareableHandle(&fabric, pool, CU_MEM_HANDLE_TYPE_FABRIC, 0));
}

CUresult AddIf(CUgraphNode* node, CUgraph graph, const CUgraphNode* dependency, CUgraphConditionalHandle handle,
               CUcontext ctx, CUgraph* body) {
  CUgraphNodeParams p{};
  p.type = CU_GRAPH_NODE_TYPE_CONDITIONAL;
  p.conditional.handle = handle;
  p.conditional.type = CU_GRAPH_COND_TYPE_IF;
  p.conditional.size = 1;
  p.conditional.ctx = ctx;
  CUresult r = cuGraphAddNode(node, graph, dependency, nullptr, dependency ? 1 : 0, &p);
  if (r == CUDA_SUCCESS && body) *body = p.conditional.phGraph_out[0];
  return r;
}

// A handle belongs to one conditional node: a second node with it, in the same graph or in the first node's
// body, is refused; another handle of the same graph is taken in the body.
TEST_F(api_graph_ClientsConditionalHandle, OneNodePerHandle) {
  CUgraph graph = nullptr;
  CU_ASSERT_OK(cuGraphCreate(&graph, 0));
  CUgraphConditionalHandle first = 0, second = 0;
  CU_ASSERT_OK(cuGraphConditionalHandleCreate(&first, graph, ctx, 1, CU_GRAPH_COND_ASSIGN_DEFAULT));
  CU_ASSERT_OK(cuGraphConditionalHandleCreate(&second, graph, ctx, 1, CU_GRAPH_COND_ASSIGN_DEFAULT));
  CUgraphNode node = nullptr, again = nullptr, inner = nullptr;
  CUgraph body = nullptr, innerBody = nullptr;
  CU_ASSERT_OK(AddIf(&node, graph, nullptr, first, ctx, &body));
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, AddIf(&again, graph, &node, first, ctx, nullptr)) << "same graph";
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, AddIf(&inner, body, nullptr, first, ctx, nullptr)) << "its own body";
  CU_EXPECT_OK(AddIf(&inner, body, nullptr, second, ctx, &innerBody)) << "another handle of the graph";
  CUgraphExec exec = nullptr;
  CU_EXPECT_OK(cuGraphInstantiate(&exec, graph, 0));
  if (exec) {
    CU_EXPECT_OK(cuGraphExecDestroy(exec));
  }
  CU_EXPECT_OK(cuGraphDestroy(graph));
}

// A graph embedded as a child graph has handles of its own: its nodes cannot use the parent's.
TEST_F(api_graph_ClientsConditionalHandle, ChildGraphCannotUseParentHandle) {
  CUgraph parent = nullptr, child = nullptr;
  CU_ASSERT_OK(cuGraphCreate(&parent, 0));
  CU_ASSERT_OK(cuGraphCreate(&child, 0));
  CUgraphConditionalHandle handle = 0;
  CU_ASSERT_OK(cuGraphConditionalHandleCreate(&handle, parent, ctx, 1, CU_GRAPH_COND_ASSIGN_DEFAULT));
  CUgraphNode node = nullptr;
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, AddIf(&node, child, nullptr, handle, ctx, nullptr));
  CU_EXPECT_OK(cuGraphDestroy(child));
  CU_EXPECT_OK(cuGraphDestroy(parent));
}

}  // namespace
