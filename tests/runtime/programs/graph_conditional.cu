// Conditional graph nodes through the runtime API: an IF node whose condition a kernel sets with
// cudaGraphSetConditional, an IF/ELSE pair, a WHILE loop whose body counts down, a SWITCH with three bodies, the
// value between launches with and without CU_GRAPH_COND_ASSIGN_DEFAULT, and a conditional node
// made inside a stream capture (cudaStreamGetCaptureInfo + cudaGraphAddNode + cudaStreamUpdateCaptureDependencies,
// the body captured with cudaStreamBeginCaptureToGraph), all replayed several times.
#include "check.h"

__global__ void setCondition(cudaGraphConditionalHandle handle, const int* value) {
  if (threadIdx.x == 0) cudaGraphSetConditional(handle, static_cast<unsigned>(*value));
}

__global__ void add(int* slot, int amount) {
  if (threadIdx.x == 0) *slot += amount;
}

// One WHILE iteration: counts `remaining` down and records the iteration; the loop goes on while it is non-zero.
__global__ void countDown(cudaGraphConditionalHandle handle, int* remaining, int* iterations) {
  if (threadIdx.x == 0) {
    *iterations += 1;
    *remaining -= 1;
    cudaGraphSetConditional(handle, *remaining > 0 ? 1u : 0u);
  }
}

static cudaGraphNode_t addKernel(cudaGraph_t graph, const cudaGraphNode_t* deps, size_t count, void* func,
                                 void** args) {
  cudaGraphNodeParams p{};
  p.type = cudaGraphNodeTypeKernel;
  p.kernel.func = func;
  p.kernel.gridDim = dim3(1);
  p.kernel.blockDim = dim3(32);
  p.kernel.kernelParams = args;
  cudaGraphNode_t node;
  CHECK_CUDA(cudaGraphAddNode(&node, graph, deps, nullptr, count, &p));
  return node;
}

// A conditional node of `type` with `size` bodies; the bodies come back in `bodies`.
static cudaGraphNode_t addConditional(cudaGraph_t graph, const cudaGraphNode_t* deps, size_t count,
                                      cudaGraphConditionalHandle handle, cudaGraphConditionalNodeType type,
                                      unsigned size, cudaGraph_t* bodies) {
  cudaGraphNodeParams p{};
  p.type = cudaGraphNodeTypeConditional;
  p.conditional.handle = handle;
  p.conditional.type = type;
  p.conditional.size = size;
  cudaGraphNode_t node;
  CHECK_CUDA(cudaGraphAddNode(&node, graph, deps, nullptr, count, &p));
  for (unsigned i = 0; i < size; ++i) {
    EXPECT_TRUE(p.conditional.phGraph_out[i] != nullptr);
    bodies[i] = p.conditional.phGraph_out[i];
  }
  return node;
}

struct Slots {
  int condition;  // read by setCondition
  int hits[4];    // what the bodies add to
  int remaining, iterations;
};

static Slots run(cudaGraphExec_t exec, cudaStream_t stream, Slots* device, const Slots& start) {
  CHECK_CUDA(cudaMemcpyAsync(device, &start, sizeof start, cudaMemcpyHostToDevice, stream));
  CHECK_CUDA(cudaGraphLaunch(exec, stream));
  Slots out{};
  CHECK_CUDA(cudaMemcpyAsync(&out, device, sizeof out, cudaMemcpyDeviceToHost, stream));
  CHECK_CUDA(cudaStreamSynchronize(stream));
  return out;
}

int main() {
  CORPUS_PROGRAM("graph_conditional");
  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  Slots* d;
  CHECK_CUDA(cudaMalloc(&d, sizeof(Slots)));
  int* condition = &d->condition;
  int* hits = d->hits;

  // IF, and IF/ELSE: a kernel sets the condition from memory; body 0 adds 1, the else body adds 10.
  {
    cudaGraph_t graph;
    CHECK_CUDA(cudaGraphCreate(&graph, 0));
    cudaGraphConditionalHandle ifHandle, elseHandle;
    CHECK_CUDA(cudaGraphConditionalHandleCreate(&ifHandle, graph, 0, 0));
    CHECK_CUDA(cudaGraphConditionalHandleCreate(&elseHandle, graph, 0, 0));
    void* setIfArgs[] = {&ifHandle, &condition};
    cudaGraphNode_t setIf = addKernel(graph, nullptr, 0, (void*)setCondition, setIfArgs);
    cudaGraph_t ifBody[1];
    cudaGraphNode_t ifNode = addConditional(graph, &setIf, 1, ifHandle, cudaGraphCondTypeIf, 1, ifBody);
    int* slot0 = hits;
    int one = 1, ten = 10;
    void* addOne[] = {&slot0, &one};
    addKernel(ifBody[0], nullptr, 0, (void*)add, addOne);
    void* setElseArgs[] = {&elseHandle, &condition};
    cudaGraphNode_t setElse = addKernel(graph, &ifNode, 1, (void*)setCondition, setElseArgs);
    cudaGraph_t ifElse[2];
    addConditional(graph, &setElse, 1, elseHandle, cudaGraphCondTypeIf, 2, ifElse);
    int* slot1 = hits + 1;
    void* addOneTo1[] = {&slot1, &one};
    void* addTenTo1[] = {&slot1, &ten};
    addKernel(ifElse[0], nullptr, 0, (void*)add, addOneTo1);
    addKernel(ifElse[1], nullptr, 0, (void*)add, addTenTo1);
    cudaGraphExec_t exec;
    CHECK_CUDA(cudaGraphInstantiate(&exec, graph, 0));
    Slots start{};
    start.condition = 1;
    Slots got = run(exec, stream, d, start);
    EXPECT_EQ_INT(got.hits[0], 1);
    EXPECT_EQ_INT(got.hits[1], 1);
    start.condition = 0;
    got = run(exec, stream, d, start);
    EXPECT_EQ_INT(got.hits[0], 0);
    EXPECT_EQ_INT(got.hits[1], 10);
    start.condition = 7;  // any non-zero value is true
    got = run(exec, stream, d, start);
    EXPECT_EQ_INT(got.hits[0], 1);
    EXPECT_EQ_INT(got.hits[1], 1);
    CHECK_CUDA(cudaGraphExecDestroy(exec));
    CHECK_CUDA(cudaGraphDestroy(graph));
  }

  // WHILE: the body runs while the kernel in it leaves `remaining` above zero; default value 1 starts the loop.
  {
    cudaGraph_t graph;
    CHECK_CUDA(cudaGraphCreate(&graph, 0));
    cudaGraphConditionalHandle handle;
    CHECK_CUDA(cudaGraphConditionalHandleCreate(&handle, graph, 1, cudaGraphCondAssignDefault));
    cudaGraph_t body[1];
    addConditional(graph, nullptr, 0, handle, cudaGraphCondTypeWhile, 1, body);
    int* remaining = &d->remaining;
    int* iterations = &d->iterations;
    void* args[] = {&handle, &remaining, &iterations};
    addKernel(body[0], nullptr, 0, (void*)countDown, args);
    cudaGraphExec_t exec;
    CHECK_CUDA(cudaGraphInstantiate(&exec, graph, 0));
    for (int n : {5, 1, 3}) {
      Slots start{};
      start.remaining = n;
      Slots got = run(exec, stream, d, start);
      EXPECT_EQ_INT(got.iterations, n);
      EXPECT_EQ_INT(got.remaining, 0);
    }
    CHECK_CUDA(cudaGraphExecDestroy(exec));
    CHECK_CUDA(cudaGraphDestroy(graph));
  }

  // SWITCH with three bodies: body n adds n+1 to hits[n]; values past the last body run none.
  {
    cudaGraph_t graph;
    CHECK_CUDA(cudaGraphCreate(&graph, 0));
    cudaGraphConditionalHandle handle;
    CHECK_CUDA(cudaGraphConditionalHandleCreate(&handle, graph, 0, 0));
    void* setArgs[] = {&handle, &condition};
    cudaGraphNode_t set = addKernel(graph, nullptr, 0, (void*)setCondition, setArgs);
    cudaGraph_t bodies[3];
    addConditional(graph, &set, 1, handle, cudaGraphCondTypeSwitch, 3, bodies);
    int* slots[3] = {hits, hits + 1, hits + 2};
    int amounts[3] = {1, 2, 3};
    void* args[3][2];
    for (int i = 0; i < 3; ++i) {
      args[i][0] = &slots[i];
      args[i][1] = &amounts[i];
      addKernel(bodies[i], nullptr, 0, (void*)add, args[i]);
    }
    cudaGraphExec_t exec;
    CHECK_CUDA(cudaGraphInstantiate(&exec, graph, 0));
    for (int value : {0, 1, 2, 3, 100}) {
      Slots start{};
      start.condition = value;
      Slots got = run(exec, stream, d, start);
      for (int i = 0; i < 3; ++i) EXPECT_EQ_INT(got.hits[i], i == value ? i + 1 : 0);
    }
    CHECK_CUDA(cudaGraphExecDestroy(exec));
    CHECK_CUDA(cudaGraphDestroy(graph));
  }

  // Default values: without CU_GRAPH_COND_ASSIGN_DEFAULT what a kernel sets is what the next launch starts with
  // (the first launch's value is not defined: an H100 showed 0 and 1 in different builds of this program); with
  // it, every launch starts from the default. A kernel after the IF node sets the value for the next launch.
  for (unsigned flags : {0u, static_cast<unsigned>(cudaGraphCondAssignDefault)}) {
    cudaGraph_t graph;
    CHECK_CUDA(cudaGraphCreate(&graph, 0));
    cudaGraphConditionalHandle handle;
    CHECK_CUDA(cudaGraphConditionalHandleCreate(&handle, graph, 1, flags));
    cudaGraph_t body[1];
    cudaGraphNode_t ifNode = addConditional(graph, nullptr, 0, handle, cudaGraphCondTypeIf, 1, body);
    int* slot = hits;
    int one = 1;
    void* addArgs[] = {&slot, &one};
    addKernel(body[0], nullptr, 0, (void*)add, addArgs);
    void* setArgs[] = {&handle, &condition};
    addKernel(graph, &ifNode, 1, (void*)setCondition, setArgs);
    cudaGraphExec_t exec;
    CHECK_CUDA(cudaGraphInstantiate(&exec, graph, 0));
    const int next[4] = {1, 0, 1, 1};
    const int kept[4] = {0, 1, 0, 1};
    for (int i = 0; i < 4; ++i) {
      Slots start{};
      start.condition = next[i];
      Slots got = run(exec, stream, d, start);
      if (flags || i > 0) EXPECT_EQ_INT(got.hits[0], flags ? 1 : kept[i]);
    }
    CHECK_CUDA(cudaGraphExecDestroy(exec));
    CHECK_CUDA(cudaGraphDestroy(graph));
  }

  // Stream capture: the conditional node joins the capture through its dependencies, and its body is captured
  // from a second stream.
  {
    cudaStream_t bodyStream;
    CHECK_CUDA(cudaStreamCreateWithFlags(&bodyStream, cudaStreamNonBlocking));
    CHECK_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
    cudaStreamCaptureStatus status;
    cudaGraph_t graph;
    const cudaGraphNode_t* deps = nullptr;
    size_t count = 0;
    CHECK_CUDA(cudaStreamGetCaptureInfo(stream, &status, nullptr, &graph, &deps, nullptr, &count));
    EXPECT_EQ_INT(status, cudaStreamCaptureStatusActive);
    cudaGraphConditionalHandle handle;
    CHECK_CUDA(cudaGraphConditionalHandleCreate(&handle, graph, 0, cudaGraphCondAssignDefault));
    setCondition<<<1, 32, 0, stream>>>(handle, condition);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaStreamGetCaptureInfo(stream, &status, nullptr, &graph, &deps, nullptr, &count));
    EXPECT_EQ_INT(count, 1);
    cudaGraph_t body[1];
    cudaGraphNode_t node = addConditional(graph, deps, count, handle, cudaGraphCondTypeIf, 1, body);
    CHECK_CUDA(cudaStreamUpdateCaptureDependencies(stream, &node, nullptr, 1, cudaStreamSetCaptureDependencies));
    CHECK_CUDA(cudaStreamBeginCaptureToGraph(bodyStream, body[0], nullptr, nullptr, 0, cudaStreamCaptureModeGlobal));
    add<<<1, 32, 0, bodyStream>>>(hits, 5);
    CHECK_CUDA(cudaGetLastError());
    cudaGraph_t captured;
    CHECK_CUDA(cudaStreamEndCapture(bodyStream, &captured));
    EXPECT_TRUE(captured == body[0]);
    add<<<1, 32, 0, stream>>>(hits + 3, 1);  // after the conditional node
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaStreamEndCapture(stream, &graph));
    cudaGraphExec_t exec;
    CHECK_CUDA(cudaGraphInstantiate(&exec, graph, 0));
    for (int value : {1, 0, 1}) {
      Slots start{};
      start.condition = value;
      Slots got = run(exec, stream, d, start);
      EXPECT_EQ_INT(got.hits[0], value ? 5 : 0);
      EXPECT_EQ_INT(got.hits[3], 1);
    }
    CHECK_CUDA(cudaGraphExecDestroy(exec));
    CHECK_CUDA(cudaGraphDestroy(graph));
    CHECK_CUDA(cudaStreamDestroy(bodyStream));
  }

  CHECK_CUDA(cudaFree(d));
  CHECK_CUDA(cudaStreamDestroy(stream));
  return corpus::pass();
}
