// Theme: concurrency: many host threads creating and destroying contexts, launching, recording and waiting for
// events, and destroying a context while others use it. Errors are allowed where the API makes a race an
// error; crashes, hangs and wrong results are not.
#include "cases.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

using namespace reliability;

namespace {

constexpr int kThreads = 16;

template <class F> void onThreads(int count, F body) {
  std::vector<std::thread> threads;
  for (int t = 0; t < count; ++t) threads.emplace_back(body, t);
  for (auto& t : threads) t.join();
}

CUdevice device0() {
  CUdevice device = 0;
  expectResult(cuDeviceGet(&device, 0), CUDA_SUCCESS, "cuDeviceGet");
  return device;
}

}  // namespace

RELIABILITY_CASE("concurrency", concurrency_context_lifecycles, 60, nullptr) {
  expectResult(cuInit(0), CUDA_SUCCESS, "cuInit");
  CUdevice device = device0();
  onThreads(kThreads, [&](int t) {
    for (int round = 0; round < 20; ++round) {
      CUcontext context = nullptr;
      expectResult(cuCtxCreate(&context, nullptr, 0, device), CUDA_SUCCESS, "cuCtxCreate");
      CUmodule module = loadKernels();
      CUdeviceptr p = 0;
      expectResult(cuMemAlloc(&p, 64 * 4), CUDA_SUCCESS, "cuMemAlloc");
      expectResult(cuMemsetD32(p, unsigned(t), 64), CUDA_SUCCESS, "cuMemsetD32");
      unsigned n = 64;
      void* args[] = {&p, &n};
      expectResult(launch(kernel(module, "addOne"), 2, 32, args), CUDA_SUCCESS, "addOne");
      unsigned out[64];
      expectResult(cuMemcpyDtoH(out, p, sizeof out), CUDA_SUCCESS, "cuMemcpyDtoH");
      for (unsigned v : out)
        if (v != unsigned(t) + 1) wrong("thread " + std::to_string(t) + " read " + std::to_string(v));
      expectResult(cuCtxDestroy(context), CUDA_SUCCESS, "cuCtxDestroy");
    }
  });
}

RELIABILITY_CASE("concurrency", concurrency_streams_and_events, 60, nullptr) {
  CUcontext context = setUp();
  CUmodule module = loadKernels();
  CUfunction addOne = kernel(module, "addOne");
  constexpr unsigned n = 4096;
  std::vector<CUdeviceptr> buffers(kThreads);
  std::vector<CUevent> events(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    expectResult(cuMemAlloc(&buffers[t], n * 4), CUDA_SUCCESS, "cuMemAlloc");
    expectResult(cuMemsetD32(buffers[t], 0, n), CUDA_SUCCESS, "cuMemsetD32");
    expectResult(cuEventCreate(&events[t], CU_EVENT_DISABLE_TIMING), CUDA_SUCCESS, "cuEventCreate");
  }
  constexpr int kRounds = 30;
  onThreads(kThreads, [&](int t) {
    expectResult(cuCtxSetCurrent(context), CUDA_SUCCESS, "cuCtxSetCurrent");
    CUstream stream = nullptr;
    expectResult(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS, "cuStreamCreate");
    unsigned count = n;
    void* args[] = {&buffers[t], &count};
    for (int round = 0; round < kRounds; ++round) {
      expectResult(launch(addOne, n / 128, 128, args, stream), CUDA_SUCCESS, "addOne");
      // Records race with other threads' waits on the same events: each wait sees some record, never a broken one.
      expectResult(cuEventRecord(events[t], stream), CUDA_SUCCESS, "cuEventRecord");
      expectResult(cuStreamWaitEvent(stream, events[(t + 1) % kThreads], 0), CUDA_SUCCESS, "cuStreamWaitEvent");
      CUresult q = cuEventQuery(events[(t + 3) % kThreads]);
      if (q != CUDA_SUCCESS && q != CUDA_ERROR_NOT_READY) wrong("cuEventQuery: " + resultName(q));
      if (round % 7 == 0)
        expectResult(cuEventSynchronize(events[(t + 5) % kThreads]), CUDA_SUCCESS, "cuEventSynchronize");
    }
    expectResult(cuStreamSynchronize(stream), CUDA_SUCCESS, "cuStreamSynchronize");
    expectResult(cuStreamDestroy(stream), CUDA_SUCCESS, "cuStreamDestroy");
  });
  for (int t = 0; t < kThreads; ++t) {
    std::vector<unsigned> out(n);
    expectResult(cuMemcpyDtoH(out.data(), buffers[t], n * 4), CUDA_SUCCESS, "cuMemcpyDtoH");
    for (unsigned v : out)
      if (v != unsigned(kRounds)) wrong("buffer " + std::to_string(t) + " holds " + std::to_string(v));
  }
}

RELIABILITY_CASE("concurrency", concurrency_launches_into_one_stream, 60, nullptr) {
  CUcontext context = setUp();
  CUmodule module = loadKernels();
  CUfunction addOne = kernel(module, "addOne");
  CUstream stream = nullptr;
  expectResult(cuStreamCreate(&stream, 0), CUDA_SUCCESS, "cuStreamCreate");
  constexpr unsigned n = 1024;
  CUdeviceptr p = 0;
  expectResult(cuMemAlloc(&p, n * 4), CUDA_SUCCESS, "cuMemAlloc");
  expectResult(cuMemsetD32(p, 0, n), CUDA_SUCCESS, "cuMemsetD32");
  constexpr int kRounds = 40;
  onThreads(kThreads, [&](int) {
    expectResult(cuCtxSetCurrent(context), CUDA_SUCCESS, "cuCtxSetCurrent");
    unsigned count = n;
    void* args[] = {&p, &count};
    for (int round = 0; round < kRounds; ++round) {
      expectResult(launch(addOne, n / 256, 256, args, stream), CUDA_SUCCESS, "addOne");
      if (round % 10 == 0) expectResult(cuCtxSynchronize(), CUDA_SUCCESS, "cuCtxSynchronize");
    }
  });
  expectResult(cuStreamSynchronize(stream), CUDA_SUCCESS, "cuStreamSynchronize");
  std::vector<unsigned> out(n);
  expectResult(cuMemcpyDtoH(out.data(), p, n * 4), CUDA_SUCCESS, "cuMemcpyDtoH");
  for (unsigned v : out)
    if (v != unsigned(kThreads * kRounds)) wrong("an element holds " + std::to_string(v));
}

RELIABILITY_CASE("concurrency", concurrency_copy_while_context_destroyed, 60, "") {
  expectResult(cuInit(0), CUDA_SUCCESS, "cuInit");
  CUdevice device = device0();
  for (int round = 0; round < 500; ++round) {
    CUcontext context = nullptr;
    expectResult(cuCtxCreate(&context, nullptr, 0, device), CUDA_SUCCESS, "cuCtxCreate");
    CUdeviceptr p = 0;
    constexpr size_t bytes = 1 << 20;
    expectResult(cuMemAlloc(&p, bytes), CUDA_SUCCESS, "cuMemAlloc");
    std::atomic<int> started{0};
    std::vector<std::thread> users;
    for (int u = 0; u < 3; ++u)
      users.emplace_back([&, u] {
        std::vector<uint8_t> host(bytes, uint8_t(u));
        cuCtxSetCurrent(context);
        ++started;
        // Until the context is gone: every call then fails (which is allowed); none may crash.
        for (int i = 0; i < 100000; ++i) {
          CUresult r = u == 0   ? cuMemsetD8(p, uint8_t(i), bytes)
                       : u == 1 ? cuMemcpyHtoD(p, host.data(), bytes)
                                : cuMemsetD2D8(p, 4096, uint8_t(i), 4096, bytes / 4096);
          if (r != CUDA_SUCCESS) break;
        }
      });
    while (started < 3) std::this_thread::yield();
    std::this_thread::sleep_for(std::chrono::microseconds(100 * (round % 20)));
    cuCtxDestroy(context);
    for (auto& t : users) t.join();
  }
}

// A reusable rendezvous of `count` threads (spinning: the rounds are short).
class Rendezvous {
 public:
  explicit Rendezvous(int count) : count_(count) {}
  void arrive() {
    int generation = generation_.load();
    if (arrived_.fetch_add(1) + 1 == count_) {
      arrived_ = 0;
      ++generation_;
    } else {
      while (generation_.load() == generation) std::this_thread::yield();
    }
  }

 private:
  const int count_;
  std::atomic<int> arrived_{0}, generation_{0};
};

// Deterministic mode runs work on the submitting thread, and a synchronous copy runs inline on an idle stream.
// A submitter that waits for such an inline item must be woken when it ends: here one thread copies (inline)
// while another submits a memset to the same stream, round after round; a lost wake-up leaves the submitter
// asleep and the next rendezvous never completes.
RELIABILITY_CASE("concurrency", concurrency_deterministic_inline_and_submitted_work, 60, nullptr) {
  setenv("CUEMU_DETERMINISTIC", "1", 1);
  CUcontext context = setUp();
  CUdeviceptr p = 0;
  constexpr size_t bytes = 1 << 16;
  expectResult(cuMemAlloc(&p, bytes), CUDA_SUCCESS, "cuMemAlloc");
  Rendezvous rendezvous(2);
  onThreads(2, [&](int t) {
    expectResult(cuCtxSetCurrent(context), CUDA_SUCCESS, "cuCtxSetCurrent");
    std::vector<uint8_t> host(bytes, uint8_t(t));
    for (int round = 0; round < 3000; ++round) {
      rendezvous.arrive();
      if (t == 0)
        expectResult(cuMemcpyHtoD(p, host.data(), bytes), CUDA_SUCCESS, "cuMemcpyHtoD");
      else
        expectResult(cuMemsetD8Async(p, uint8_t(round), bytes, nullptr), CUDA_SUCCESS, "cuMemsetD8Async");
    }
  });
  expectResult(cuCtxSynchronize(), CUDA_SUCCESS, "cuCtxSynchronize");
}

// One thread records an event again and again while others wait for it (cuEventSynchronize, cuStreamWaitEvent,
// cuEventQuery): every wait must see a complete record.
RELIABILITY_CASE("concurrency", concurrency_event_recorded_while_waited_for, 60, nullptr) {
  CUcontext context = setUp();
  CUevent event = nullptr;
  expectResult(cuEventCreate(&event, CU_EVENT_DISABLE_TIMING), CUDA_SUCCESS, "cuEventCreate");
  CUdeviceptr p = 0;
  expectResult(cuMemAlloc(&p, 4096), CUDA_SUCCESS, "cuMemAlloc");
  std::atomic<bool> stop{false};
  onThreads(4, [&](int t) {
    expectResult(cuCtxSetCurrent(context), CUDA_SUCCESS, "cuCtxSetCurrent");
    CUstream stream = nullptr;
    expectResult(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS, "cuStreamCreate");
    for (int i = 0; i < 20000 && !stop; ++i) {
      if (t == 0) {
        expectResult(cuMemsetD8Async(p, uint8_t(i), 4096, stream), CUDA_SUCCESS, "cuMemsetD8Async");
        expectResult(cuEventRecord(event, stream), CUDA_SUCCESS, "cuEventRecord");
      } else if (t == 1) {
        expectResult(cuEventSynchronize(event), CUDA_SUCCESS, "cuEventSynchronize");
      } else if (t == 2) {
        expectResult(cuStreamWaitEvent(stream, event, 0), CUDA_SUCCESS, "cuStreamWaitEvent");
      } else {
        CUresult q = cuEventQuery(event);
        if (q != CUDA_SUCCESS && q != CUDA_ERROR_NOT_READY) wrong("cuEventQuery: " + resultName(q));
      }
    }
    if (t == 0) stop = true;
    expectResult(cuStreamSynchronize(stream), CUDA_SUCCESS, "cuStreamSynchronize");
  });
}

RELIABILITY_CASE("concurrency", concurrency_modules_loaded_while_launching, 60, nullptr) {
  CUcontext context = setUp();
  CUmodule module = loadKernels();
  CUfunction addOne = kernel(module, "addOne");
  constexpr unsigned n = 256;
  CUdeviceptr p = 0;
  expectResult(cuMemAlloc(&p, n * 4), CUDA_SUCCESS, "cuMemAlloc");
  expectResult(cuMemsetD32(p, 0, n), CUDA_SUCCESS, "cuMemsetD32");
  std::atomic<bool> stop{false};
  std::thread loader([&] {
    cuCtxSetCurrent(context);
    while (!stop) {
      CUmodule other = nullptr;
      expectResult(cuModuleLoadData(&other, kKernels), CUDA_SUCCESS, "cuModuleLoadData");
      CUfunction f = kernel(other, "store");
      int regs = 0;
      expectResult(cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, f), CUDA_SUCCESS, "cuFuncGetAttribute");
      expectResult(cuModuleUnload(other), CUDA_SUCCESS, "cuModuleUnload");
    }
  });
  unsigned count = n;
  void* args[] = {&p, &count};
  for (int i = 0; i < 300; ++i) expectResult(launch(addOne, 1, n, args), CUDA_SUCCESS, "addOne");
  expectResult(cuCtxSynchronize(), CUDA_SUCCESS, "cuCtxSynchronize");
  stop = true;
  loader.join();
  std::vector<unsigned> out(n);
  expectResult(cuMemcpyDtoH(out.data(), p, n * 4), CUDA_SUCCESS, "cuMemcpyDtoH");
  for (unsigned v : out)
    if (v != 300) wrong("an element holds " + std::to_string(v));
}

// One thread's vector store is one transaction on a GPU, and CUB's decoupled look-back (Thrust's scans and
// reduce_by_key) relies on it: a tile's {status, value} is stored with st.v2.u64 and polled by other CTAs. Here
// CTA 0 stores {i, i} (v2.u64) and {i, i, i, i} (v4.u32) while the other CTAs, on other host threads, load them
// and count loads whose elements differ. Issue 24's intermittent Thrust failure was such a torn read.
RELIABILITY_CASE("concurrency", concurrency_vector_accesses_are_whole, 60, nullptr) {
  setenv("CUEMU_THREADS", "4", 0);
  setUp();
  CUmodule module = loadKernels();
  CUdeviceptr p = 0, bad = 0;
  expectResult(cuMemAlloc(&p, 32), CUDA_SUCCESS, "cuMemAlloc");
  expectResult(cuMemAlloc(&bad, 4), CUDA_SUCCESS, "cuMemAlloc");
  expectResult(cuMemsetD32(p, 0, 8), CUDA_SUCCESS, "cuMemsetD32");
  expectResult(cuMemsetD32(bad, 0, 1), CUDA_SUCCESS, "cuMemsetD32");
  unsigned iterations = 300000;
  void* args[] = {&p, &bad, &iterations};
  for (int round = 0; round < 3; ++round)
    expectResult(launch(kernel(module, "tornVectors"), 4, 32, args), CUDA_SUCCESS, "tornVectors");
  expectResult(cuCtxSynchronize(), CUDA_SUCCESS, "cuCtxSynchronize");
  unsigned torn = 0;
  expectResult(cuMemcpyDtoH(&torn, bad, 4), CUDA_SUCCESS, "cuMemcpyDtoH");
  if (torn) wrong(std::to_string(torn) + " vector loads saw a half-written vector store");
}

namespace {

// Work queued on a stream of context `user` that touches memory of context `owner`, held back behind a host
// function until the memory is gone: cuMemFree (or destroying `owner`) drains only the owner's streams, so the
// queued work runs after the memory was freed. It may fail or write into the freed allocation; the host must not
// die. `enqueue` queues the work on `stream` against the 1 MiB allocation `p`.
template <class Enqueue> void runAfterFree(bool destroyOwner, Enqueue enqueue) {
  expectResult(cuInit(0), CUDA_SUCCESS, "cuInit");
  CUdevice device = device0();
  CUcontext owner = nullptr, user = nullptr;
  expectResult(cuCtxCreate(&user, nullptr, 0, device), CUDA_SUCCESS, "cuCtxCreate (user)");
  expectResult(cuCtxCreate(&owner, nullptr, 0, device), CUDA_SUCCESS, "cuCtxCreate (owner)");
  constexpr size_t bytes = 1 << 20;
  CUdeviceptr p = 0;
  expectResult(cuMemAlloc(&p, bytes), CUDA_SUCCESS, "cuMemAlloc (owner)");
  expectResult(cuCtxSetCurrent(user), CUDA_SUCCESS, "cuCtxSetCurrent (user)");
  CUstream stream = nullptr;
  expectResult(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS, "cuStreamCreate");
  static std::atomic<bool> open{false};
  open = false;
  expectResult(cuLaunchHostFunc(
                   stream,
                   [](void*) {
                     while (!open) std::this_thread::sleep_for(std::chrono::milliseconds(1));
                   },
                   nullptr),
               CUDA_SUCCESS, "cuLaunchHostFunc");
  enqueue(stream, p, bytes);
  if (destroyOwner)
    expectResult(cuCtxDestroy(owner), CUDA_SUCCESS, "cuCtxDestroy (owner)");
  else
    expectResult(cuMemFree(p), CUDA_SUCCESS, "cuMemFree");
  open = true;
  cuStreamSynchronize(stream);  // the work may fail: freed memory is an application error
  expectResult(cuStreamDestroy(stream), CUDA_SUCCESS, "cuStreamDestroy");
  if (!destroyOwner) cuCtxDestroy(owner);
  cuCtxDestroy(user);
}

void enqueueGraphNodes(CUstream stream, CUdeviceptr p, size_t bytes) {
  CUdeviceptr scratch = 0;
  expectResult(cuMemAlloc(&scratch, bytes), CUDA_SUCCESS, "cuMemAlloc (user)");
  CUgraph graph = nullptr;
  expectResult(cuGraphCreate(&graph, 0), CUDA_SUCCESS, "cuGraphCreate");
  CUcontext user = nullptr;
  cuCtxGetCurrent(&user);
  CUDA_MEMSET_NODE_PARAMS set{};
  set.dst = p;
  set.value = 7;
  set.elementSize = 1;
  set.width = bytes;
  set.height = 1;
  CUgraphNode memsetNode = nullptr, copyNode = nullptr;
  expectResult(cuGraphAddMemsetNode(&memsetNode, graph, nullptr, 0, &set, user), CUDA_SUCCESS, "memset node");
  CUDA_MEMCPY3D copy{};
  copy.srcMemoryType = CU_MEMORYTYPE_DEVICE;
  copy.srcDevice = scratch;
  copy.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  copy.dstDevice = p;
  copy.WidthInBytes = bytes;
  copy.Height = 1;
  copy.Depth = 1;
  expectResult(cuGraphAddMemcpyNode(&copyNode, graph, &memsetNode, 1, &copy, user), CUDA_SUCCESS, "memcpy node");
  CUgraphExec exec = nullptr;
  expectResult(cuGraphInstantiate(&exec, graph, 0), CUDA_SUCCESS, "cuGraphInstantiate");
  expectResult(cuGraphLaunch(exec, stream), CUDA_SUCCESS, "cuGraphLaunch");
  // The same nodes through an executable graph's update.
  set.value = 9;
  expectResult(cuGraphExecMemsetNodeSetParams(exec, memsetNode, &set, user), CUDA_SUCCESS,
               "cuGraphExecMemsetNodeSetParams");
  expectResult(cuGraphLaunch(exec, stream), CUDA_SUCCESS, "cuGraphLaunch (updated)");
}

void enqueueStreamMemOps(CUstream stream, CUdeviceptr p, size_t) {
  expectResult(cuStreamWriteValue32(stream, p, 1, 0), CUDA_SUCCESS, "cuStreamWriteValue32");
  expectResult(cuStreamWriteValue64(stream, p + 8, 2, 0), CUDA_SUCCESS, "cuStreamWriteValue64");
  CUstreamBatchMemOpParams ops[2] = {};
  ops[0].writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_32;
  ops[0].writeValue.address = p + 16;
  ops[0].writeValue.value = 3;
  ops[1].waitValue.operation = CU_STREAM_MEM_OP_WAIT_VALUE_32;
  ops[1].waitValue.address = p + 16;
  ops[1].waitValue.value = 3;
  ops[1].waitValue.flags = CU_STREAM_WAIT_VALUE_EQ;
  expectResult(cuStreamBatchMemOp(stream, 2, ops, 0), CUDA_SUCCESS, "cuStreamBatchMemOp");
}

}  // namespace

// Graph memset and memcpy nodes (and a memset node updated in the executable graph) run after their memory was
// freed by cuMemFree on another context's behalf; before they held their memory, the host died in fill2D.
RELIABILITY_CASE("concurrency", concurrency_graph_nodes_after_free, 30, nullptr) {
  runAfterFree(false, enqueueGraphNodes);
}

// The same with the owning context destroyed instead.
RELIABILITY_CASE("concurrency", concurrency_graph_nodes_after_context_destroyed, 30, nullptr) {
  runAfterFree(true, enqueueGraphNodes);
}

// cuStreamWriteValue32/64 and cuStreamBatchMemOp running after their memory was freed.
RELIABILITY_CASE("concurrency", concurrency_stream_memops_after_free, 30, nullptr) {
  runAfterFree(false, enqueueStreamMemOps);
}

RELIABILITY_CASE("concurrency", concurrency_stream_memops_after_context_destroyed, 30, nullptr) {
  runAfterFree(true, enqueueStreamMemOps);
}
