// Streams: in-order queues of work executed asynchronously by one worker thread per stream, with the
// real driver's ordering rules (the legacy default stream synchronises with blocking streams; non-blocking
// streams do not; events and stream waits add explicit dependencies). In deterministic mode all work runs
// on the submitting thread, in program order.
#pragma once

#include "api/cuda_internal.h"
#include "core/handle.h"
#include "core/result.h"
#include "core/timeline.h"

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace cuemu {

// Stream priorities (cuCtxGetStreamPriorityRange): 0 is the lowest, -5 the highest, as driver 580 answers on Hopper.
// Out-of-range priorities (streams, kernel node attributes) are clamped into this range.
inline constexpr int kLeastStreamPriority = 0;
inline constexpr int kGreatestStreamPriority = -5;

class Context;
class CaptureSession;  // core/graph.h
class GraphNode;

// Work submitted to a stream. Returns CUDA_SUCCESS or an error that sticks to the context (a kernel fault).
using StreamWork = std::function<CUresult()>;

enum class WorkOptions { None, RunAfterFault };

class Stream;
struct StreamPosition {
  std::shared_ptr<Stream> stream;
  uint64_t sequence = 0;  // the item's number in that stream; complete when stream->completed() >= it
};

class Stream : public std::enable_shared_from_this<Stream> {
 public:
  static constexpr HandleKind kKind = HandleKind::Stream;
  enum class Kind { Legacy, PerThread, User };

  Stream(Context& context, Kind kind, unsigned flags, int priority);
  ~Stream();

  Context& context() const { return context_; }
  Kind kind() const { return kind_; }
  unsigned flags() const { return flags_; }
  int priority() const { return priority_; }
  unsigned long long id() const { return id_; }
  uint64_t handle() const { return handle_; }
  void setHandle(uint64_t handle) { handle_ = handle; }
  CUstream apiHandle() const;
  // What the stream's track on the timeline is called, before its id (core/timeline.h).
  const char* timelineKind() const;
  // Blocking streams synchronise with the legacy default stream.
  bool isBlocking() const { return kind_ != Kind::Legacy && !(flags_ & CU_STREAM_NON_BLOCKING); }

  // Appends work that starts after everything before it in this stream and after `dependencies`.
  StreamPosition submit(StreamWork work, std::vector<StreamPosition> dependencies,
                        WorkOptions options = WorkOptions::None);
  uint64_t lastSubmitted() const;
  uint64_t completed() const { return completed_.load(std::memory_order_acquire); }
  bool isIdle() const { return completed() >= lastSubmitted(); }
  // Runs `work` on the calling thread as this stream's next item when nothing is queued or running (synchronous
  // copies: no worker round trip). Returns false, leaving `work` untouched, when the stream is busy; later
  // submissions wait for the inline item, so stream order holds.
  bool runInlineIfIdle(StreamWork& work);
  // Blocks (without spinning) until item `sequence` has completed.
  void waitFor(uint64_t sequence);
  void waitIdle() { waitFor(lastSubmitted()); }
  // Stops the worker once the queue is drained (stream destruction); returns immediately.
  void retire();

  // Stream capture (core/graph.h), guarded by captureMutex(): the capture this stream takes part in, the
  // nodes its next captured operation depends on, and those as handles for cuStreamGetCaptureInfo.
  std::shared_ptr<CaptureSession> captureSession;
  std::vector<GraphNode*> captureDependencies;
  std::vector<CUgraphNode> captureDependencyHandles;

  // Stream attributes (cuStreamSetAttribute): stored and answered back.
  std::mutex attributesMutex;
  std::map<int, CUlaunchAttributeValue> attributes;

 private:
  struct Item {
    StreamWork work;
    std::vector<StreamPosition> dependencies;
    uint64_t sequence;
    WorkOptions options;
    timeline::SubmitTag tag = {};  // only with CUEMU_TIMELINE
  };
  void workerLoop();
  void runItem(Item& item);
  // Wakes the worker when it sleeps; a spinning worker sees workSignal_ change (called with mutex_ held).
  void signalWorkLocked();
  // Waits on itemDone_ until `ready` holds, counted in doneWaiters_ so that completions notify only when someone
  // sleeps there.
  template <class Ready> void waitDone(std::unique_lock<std::mutex>& lock, Ready ready);
  void notifyDone(std::unique_lock<std::mutex>& lock);

  Context& context_;
  const Kind kind_;
  const unsigned flags_;
  const int priority_;
  const unsigned long long id_;
  uint64_t handle_ = 0;

  mutable std::mutex mutex_;
  std::condition_variable workAvailable_;
  std::condition_variable itemDone_;
  std::deque<Item> queue_;
  uint64_t submitted_ = 0;
  std::atomic<uint64_t> completed_{0};
  bool workerRunning_ = false;
  bool retired_ = false;
  bool inlineRunning_ = false;  // an item runs on a caller's thread: the worker waits
  // The spinning hand-off (streamSpinNs): an idle worker spins on workSignal_ before it sleeps on workAvailable_
  // (workerSleeping_), and waitFor spins on completed_ before it sleeps on itemDone_ (doneWaiters_), so a launch
  // and its synchronisation cost no futex call while the two threads keep up with each other.
  std::atomic<uint64_t> workSignal_{0};
  bool workerSleeping_ = false;
  unsigned doneWaiters_ = 0;
};

// How long an idle stream worker, and a thread waiting for a stream, spin before they sleep (CUEMU_STREAM_SPIN_US,
// microseconds; 0 switches the spinning hand-off off: every hand-off then goes through the condition variables).
uint64_t streamSpinNs();
void setStreamSpinNs(uint64_t ns);  // tests: the differential test runs both settings

// Whether all work runs synchronously in program order (CUEMU_DETERMINISTIC=1 or cuemuSetDeterministic).
bool deterministicMode();
void setDeterministicMode(bool on);
// cuemuSetDeterministic: waits for the work already submitted to every live context, then switches the mode.
void switchDeterministicMode(bool on);

class ContextStreams {
 public:
  explicit ContextStreams(Context& context);
  ~ContextStreams();

  // The stream a CUstream value names in this context: 0 (legacy, or per-thread inside a _ptsz/_ptds entry point),
  // CU_STREAM_LEGACY, CU_STREAM_PER_THREAD, or a stream handle of this context.
  Expected<std::shared_ptr<Stream>> resolve(CUstream stream);
  std::shared_ptr<Stream> create(unsigned flags, int priority);
  CUresult destroy(const std::shared_ptr<Stream>& stream);

  // Submits with the implicit dependencies of the legacy default stream.
  StreamPosition submit(Stream& stream, StreamWork work, std::vector<StreamPosition> dependencies = {},
                        WorkOptions options = WorkOptions::None);
  // Runs `work` at once on the calling thread if `stream` and everything it implicitly waits for are idle.
  bool runInlineIfIdle(Stream& stream, StreamWork& work);
  // Waits for all work of the context; returns the sticky error if any.
  CUresult synchronize();
  // What cuCtxSynchronize answers first: CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED while a stream of the context
  // captures (the captures are invalidated, as on the real driver).
  CUresult refuseDuringCapture();
  void teardown();
  // The context's streams: the legacy stream, then user and per-thread streams still alive.
  std::vector<std::shared_ptr<Stream>> allStreams();

 private:
  void drain();
  std::vector<std::shared_ptr<Stream>> blockingStreams();
  std::vector<std::shared_ptr<Stream>> liveStreams();  // user and per-thread streams still alive
  std::shared_ptr<Stream> perThreadStream();

  Context& context_;
  std::mutex mutex_;
  std::shared_ptr<Stream> legacy_;
  std::vector<std::weak_ptr<Stream>> streams_;  // user and per-thread streams
  std::map<std::thread::id, std::shared_ptr<Stream>> perThread_;
};

// The door for stream work from entry points. While `stream` captures, the work becomes a graph node of type
// `capturedAs`; work on the legacy stream that would implicitly wait for a capturing stream is refused
// (CUDA_ERROR_STREAM_CAPTURE_IMPLICIT). Otherwise it is submitted with the legacy stream's dependencies.
CUresult enqueueWork(Stream& stream, StreamWork work, CUgraphNodeType capturedAs = CU_GRAPH_NODE_TYPE_MEMCPY);
// enqueueWork for work that finishes on its own (a launch: core/launch.cpp): when `stream` and everything it
// implicitly waits for are idle, it runs at once on the calling thread, in stream order, without a worker round trip.
CUresult enqueueWorkRunIfIdle(Stream& stream, StreamWork work, CUgraphNodeType capturedAs);

// Enqueues `work` on `stream` of `context` (0 / CU_STREAM_LEGACY / CU_STREAM_PER_THREAD / a handle).
// Validates the stream (CUDA_ERROR_INVALID_HANDLE) and its context (CUDA_ERROR_INVALID_CONTEXT).
CUresult enqueueOnStream(Context& context, CUstream stream, StreamWork work,
                         CUgraphNodeType capturedAs = CU_GRAPH_NODE_TYPE_MEMCPY);
// The same, then waits for the work to finish (synchronous copies and sets). On a capturing stream the work
// is captured instead, like its asynchronous form.
CUresult runOnStreamAndWait(Context& context, CUstream stream, StreamWork work,
                            CUgraphNodeType capturedAs = CU_GRAPH_NODE_TYPE_MEMCPY);

}  // namespace cuemu
