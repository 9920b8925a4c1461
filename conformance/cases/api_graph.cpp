// api.graph: building graphs by hand (kernel, memset, memcpy, host and empty nodes), instantiating, launching,
// updating, cloning.
#include <atomic>
#include <vector>

#include "harness.h"

namespace {

class api_graph : public conf::ContextTest {
 protected:
  void SetUp() override {
    ContextTest::SetUp();
    if (HasFatalFailure()) return;
    CU_ASSERT_OK(conf::LoadModule(&mod, "vector.ptx"));
    CU_ASSERT_OK(cuModuleGetFunction(&fill, mod, "fill_u32"));
    CU_ASSERT_OK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
    CU_ASSERT_OK(cuGraphCreate(&graph, 0));
  }
  void TearDown() override {
    if (graph) cuGraphDestroy(graph);
    if (stream) cuStreamDestroy(stream);
    ContextTest::TearDown();
  }
  CUDA_KERNEL_NODE_PARAMS FillParams(void** params, unsigned blocks) {
    CUDA_KERNEL_NODE_PARAMS p{};
    p.func = fill;
    p.gridDimX = blocks;
    p.gridDimY = p.gridDimZ = 1;
    p.blockDimX = 128;
    p.blockDimY = p.blockDimZ = 1;
    p.kernelParams = params;
    return p;
  }
  CUmodule mod = nullptr;
  CUfunction fill = nullptr;
  CUstream stream = nullptr;
  CUgraph graph = nullptr;
};

TEST_F(api_graph, KernelNodeLaunch) {
  conf::DeviceBuffer d(1024 * 4);
  CUdeviceptr p = d.ptr();
  unsigned value = 77;
  int n = 1024;
  void* params[] = {&p, &value, &n};
  CUDA_KERNEL_NODE_PARAMS kp = FillParams(params, 8);
  CUgraphNode node;
  CU_ASSERT_OK(cuGraphAddKernelNode(&node, graph, nullptr, 0, &kp));
  CUgraphNodeType type;
  CU_EXPECT_OK(cuGraphNodeGetType(node, &type));
  EXPECT_EQ(type, CU_GRAPH_NODE_TYPE_KERNEL);
  CUgraphExec exec;
  CU_ASSERT_OK(cuGraphInstantiate(&exec, graph, 0));
  CU_ASSERT_OK(cuGraphLaunch(exec, stream));
  CU_ASSERT_OK(cuStreamSynchronize(stream));
  unsigned v = 0;
  CU_EXPECT_OK(cuMemcpyDtoH(&v, p + 1023 * 4, 4));
  EXPECT_EQ(v, 77u);
  CU_EXPECT_OK(cuGraphExecDestroy(exec));
}

TEST_F(api_graph, MemsetThenKernelThenCopyChain) {
  conf::DeviceBuffer d(256 * 4);
  std::vector<unsigned> host(256, 0);
  CUDA_MEMSET_NODE_PARAMS ms{};
  ms.dst = d.ptr();
  ms.value = 5;
  ms.elementSize = 4;
  ms.width = 256;
  ms.height = 1;
  CUgraphNode memset, kernel, copy;
  CU_ASSERT_OK(cuGraphAddMemsetNode(&memset, graph, nullptr, 0, &ms, ctx));
  CUdeviceptr p = d.ptr();
  unsigned value = 9;
  int n = 128;  // the kernel overwrites the first half
  void* params[] = {&p, &value, &n};
  CUDA_KERNEL_NODE_PARAMS kp = FillParams(params, 1);
  CU_ASSERT_OK(cuGraphAddKernelNode(&kernel, graph, &memset, 1, &kp));
  CUDA_MEMCPY3D cp{};
  cp.srcMemoryType = CU_MEMORYTYPE_DEVICE;
  cp.srcDevice = d.ptr();
  cp.dstMemoryType = CU_MEMORYTYPE_HOST;
  cp.dstHost = host.data();
  cp.WidthInBytes = 256 * 4;
  cp.Height = 1;
  cp.Depth = 1;
  CU_ASSERT_OK(cuGraphAddMemcpyNode(&copy, graph, &kernel, 1, &cp, ctx));
  size_t count = 0;
  CU_EXPECT_OK(cuGraphGetNodes(graph, nullptr, &count));
  EXPECT_EQ(count, 3u);
  CUgraphExec exec;
  CU_ASSERT_OK(cuGraphInstantiate(&exec, graph, 0));
  CU_ASSERT_OK(cuGraphLaunch(exec, stream));
  CU_ASSERT_OK(cuStreamSynchronize(stream));
  EXPECT_EQ(host[0], 9u);
  EXPECT_EQ(host[127], 9u);
  EXPECT_EQ(host[128], 5u);
  EXPECT_EQ(host[255], 5u);
  CU_EXPECT_OK(cuGraphExecDestroy(exec));
}

TEST_F(api_graph, HostNodeRunsOncePerLaunch) {
  std::atomic<int> calls{0};
  CUDA_HOST_NODE_PARAMS hp{};
  hp.fn = [](void* u) { ++*static_cast<std::atomic<int>*>(u); };
  hp.userData = &calls;
  CUgraphNode node, empty;
  CU_ASSERT_OK(cuGraphAddEmptyNode(&empty, graph, nullptr, 0));
  CU_ASSERT_OK(cuGraphAddHostNode(&node, graph, &empty, 1, &hp));
  CUgraphExec exec;
  CU_ASSERT_OK(cuGraphInstantiate(&exec, graph, 0));
  for (int i = 0; i < 5; ++i) CU_ASSERT_OK(cuGraphLaunch(exec, stream));
  CU_ASSERT_OK(cuStreamSynchronize(stream));
  EXPECT_EQ(calls.load(), 5);
  CU_EXPECT_OK(cuGraphExecDestroy(exec));
}

TEST_F(api_graph, ExecKernelNodeSetParams) {
  conf::DeviceBuffer d(128 * 4);
  CUdeviceptr p = d.ptr();
  unsigned value = 1;
  int n = 128;
  void* params[] = {&p, &value, &n};
  CUDA_KERNEL_NODE_PARAMS kp = FillParams(params, 1);
  CUgraphNode node;
  CU_ASSERT_OK(cuGraphAddKernelNode(&node, graph, nullptr, 0, &kp));
  CUgraphExec exec;
  CU_ASSERT_OK(cuGraphInstantiate(&exec, graph, 0));
  unsigned value2 = 2;
  void* params2[] = {&p, &value2, &n};
  CUDA_KERNEL_NODE_PARAMS kp2 = FillParams(params2, 1);
  CU_ASSERT_OK(cuGraphExecKernelNodeSetParams(exec, node, &kp2));
  CU_ASSERT_OK(cuGraphLaunch(exec, stream));
  CU_ASSERT_OK(cuStreamSynchronize(stream));
  unsigned v = 0;
  CU_EXPECT_OK(cuMemcpyDtoH(&v, p, 4));
  EXPECT_EQ(v, 2u) << "the instantiated graph uses the updated parameters";
  CU_EXPECT_OK(cuGraphExecDestroy(exec));
}

TEST_F(api_graph, KernelNodeGetParams) {
  CUdeviceptr p = 0;
  unsigned value = 1;
  int n = 0;
  void* params[] = {&p, &value, &n};
  CUDA_KERNEL_NODE_PARAMS kp = FillParams(params, 3);
  CUgraphNode node;
  CU_ASSERT_OK(cuGraphAddKernelNode(&node, graph, nullptr, 0, &kp));
  CUDA_KERNEL_NODE_PARAMS got{};
  CU_EXPECT_OK(cuGraphKernelNodeGetParams(node, &got));
  EXPECT_EQ(got.gridDimX, 3u);
  EXPECT_EQ(got.blockDimX, 128u);
}

TEST_F(api_graph, CloneIsIndependent) {
  CUgraphNode a, b;
  CU_ASSERT_OK(cuGraphAddEmptyNode(&a, graph, nullptr, 0));
  CUgraph clone;
  CU_ASSERT_OK(cuGraphClone(&clone, graph));
  CU_ASSERT_OK(cuGraphAddEmptyNode(&b, graph, &a, 1));
  size_t original = 0, cloned = 0;
  CU_EXPECT_OK(cuGraphGetNodes(graph, nullptr, &original));
  CU_EXPECT_OK(cuGraphGetNodes(clone, nullptr, &cloned));
  EXPECT_EQ(original, 2u);
  EXPECT_EQ(cloned, 1u);
  CU_EXPECT_OK(cuGraphDestroy(clone));
}

TEST_F(api_graph, ExecUpdateSameTopology) {
  conf::DeviceBuffer d(128 * 4);
  CUdeviceptr p = d.ptr();
  unsigned value = 3;
  int n = 128;
  void* params[] = {&p, &value, &n};
  CUDA_KERNEL_NODE_PARAMS kp = FillParams(params, 1);
  CUgraphNode node;
  CU_ASSERT_OK(cuGraphAddKernelNode(&node, graph, nullptr, 0, &kp));
  CUgraphExec exec;
  CU_ASSERT_OK(cuGraphInstantiate(&exec, graph, 0));
  CUgraph second;
  CU_ASSERT_OK(cuGraphCreate(&second, 0));
  unsigned value2 = 4;
  void* params2[] = {&p, &value2, &n};
  CUDA_KERNEL_NODE_PARAMS kp2 = FillParams(params2, 1);
  CUgraphNode node2;
  CU_ASSERT_OK(cuGraphAddKernelNode(&node2, second, nullptr, 0, &kp2));
  CUgraphExecUpdateResultInfo info{};
  CU_EXPECT_OK(cuGraphExecUpdate(exec, second, &info));
  EXPECT_EQ(info.result, CU_GRAPH_EXEC_UPDATE_SUCCESS);
  CU_ASSERT_OK(cuGraphLaunch(exec, stream));
  CU_ASSERT_OK(cuStreamSynchronize(stream));
  unsigned v = 0;
  CU_EXPECT_OK(cuMemcpyDtoH(&v, p, 4));
  EXPECT_EQ(v, 4u);
  CU_EXPECT_OK(cuGraphDestroy(second));
  CU_EXPECT_OK(cuGraphExecDestroy(exec));
}

TEST_F(api_graph, AddDependencyCycleRejectedAtInstantiate) {
  CUgraphNode a, b;
  CU_ASSERT_OK(cuGraphAddEmptyNode(&a, graph, nullptr, 0));
  CU_ASSERT_OK(cuGraphAddEmptyNode(&b, graph, &a, 1));
  CU_ASSERT_OK(cuGraphAddDependencies(graph, &b, &a, nullptr, 1));
  CUgraphExec exec = nullptr;
  CUresult r = cuGraphInstantiate(&exec, graph, 0);
  EXPECT_NE(r, CUDA_SUCCESS) << "a cycle cannot be instantiated";
  if (r == CUDA_SUCCESS) cuGraphExecDestroy(exec);
}

TEST_F(api_graph, UploadThenLaunch) {
  CUgraphNode a;
  CU_ASSERT_OK(cuGraphAddEmptyNode(&a, graph, nullptr, 0));
  CUgraphExec exec;
  CU_ASSERT_OK(cuGraphInstantiate(&exec, graph, 0));
  CU_EXPECT_OK(cuGraphUpload(exec, stream));
  CU_EXPECT_OK(cuGraphLaunch(exec, stream));
  CU_EXPECT_OK(cuStreamSynchronize(stream));
  CU_EXPECT_OK(cuGraphExecDestroy(exec));
}

TEST_F(api_graph, DestroyNull) { CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuGraphDestroy(nullptr)); }

}  // namespace
