// cuGraphDebugDotPrint as driver 580 writes it (tools/gpu-probe/results/asyncpool17-h100-2026-11-27.txt): a kernel
// node is labelled with its function's name (CuPy's test_graph looks for it), with its launch shape when asked,
// and the verbose form differs from the plain one.
#include "fixture.h"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

namespace {

const char* kPtx = R"(
.version 8.0
.target sm_90
.address_size 64
.visible .entry cupy_sin_probe(.param .u64 p)
{
  ret;
}
)";

std::string dotOf(CUgraph graph, unsigned flags) {
  const char* path = "/tmp/cuemu-graph-dot-test.dot";
  EXPECT_EQ(cuGraphDebugDotPrint(graph, path, flags), CUDA_SUCCESS);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::remove(path);
  return text.str();
}

TEST_F(MemoryTest, GraphDotNamesKernelsAsTheDriverDoes) {
  CUmodule module = nullptr;
  ASSERT_EQ(cuModuleLoadData(&module, kPtx), CUDA_SUCCESS);
  CUfunction function = nullptr;
  ASSERT_EQ(cuModuleGetFunction(&function, module, "cupy_sin_probe"), CUDA_SUCCESS);
  CUdeviceptr out = 0;
  ASSERT_EQ(cuMemAlloc_v2(&out, 64), CUDA_SUCCESS);
  CUgraph graph = nullptr;
  ASSERT_EQ(cuGraphCreate(&graph, 0), CUDA_SUCCESS);
  void* args[] = {&out};
  CUDA_KERNEL_NODE_PARAMS kernel{};
  kernel.func = function;
  kernel.gridDimX = 2;
  kernel.gridDimY = kernel.gridDimZ = 1;
  kernel.blockDimX = 32;
  kernel.blockDimY = kernel.blockDimZ = 1;
  kernel.kernelParams = args;
  CUgraphNode kernelNode = nullptr, memsetNode = nullptr;
  ASSERT_EQ(cuGraphAddKernelNode_v2(&kernelNode, graph, nullptr, 0, &kernel), CUDA_SUCCESS);
  CUDA_MEMSET_NODE_PARAMS memset{};
  memset.dst = out;
  memset.elementSize = 4;
  memset.width = 16;
  memset.height = 1;
  memset.value = 3;
  ASSERT_EQ(cuGraphAddMemsetNode(&memsetNode, graph, &kernelNode, 1, &memset, context_->apiHandle()), CUDA_SUCCESS);

  std::string plain = dotOf(graph, 0);
  EXPECT_EQ(plain.rfind("digraph dot {\nsubgraph cluster_", 0), 0u) << plain;
  EXPECT_NE(plain.find("_node_0\"[style=\"bold\" shape=\"octagon\" label=\"0\ncupy_sin_probe\n\"];"), std::string::npos)
      << plain;
  EXPECT_NE(plain.find("shape=\"invtrapezium\" label=\"1\nMEMSET\n(3,64)\n\"];"), std::string::npos) << plain;
  EXPECT_NE(plain.find("_node_0\" -> \"graph_"), std::string::npos) << plain;
  EXPECT_EQ(plain.find("<<<"), std::string::npos) << "no launch shape unless asked";

  std::string shaped = dotOf(graph, CU_GRAPH_DEBUG_DOT_FLAGS_KERNEL_NODE_PARAMS);
  EXPECT_NE(shaped.find("cupy_sin_probe\n\\<\\<\\<2,32,0\\>\\>\\>\""), std::string::npos) << shaped;

  std::string verbose = dotOf(graph, CU_GRAPH_DEBUG_DOT_FLAGS_VERBOSE);
  EXPECT_NE(verbose.find("cupy_sin_probe\\<\\<\\<2,32,0\\>\\>\\>"), std::string::npos) << verbose;
  EXPECT_NE(verbose, plain);
  EXPECT_EQ(cuGraphDebugDotPrint(graph, nullptr, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuGraphDebugDotPrint(graph, "/nonexistent-dir/x.dot", 0), CUDA_ERROR_OPERATING_SYSTEM);

  EXPECT_EQ(cuGraphDestroy(graph), CUDA_SUCCESS);
  EXPECT_EQ(cuMemFree_v2(out), CUDA_SUCCESS);
  EXPECT_EQ(cuModuleUnload(module), CUDA_SUCCESS);
}

}  // namespace
