#include "core/stream.h"

#include "core/context.h"
#include "core/event.h"
#include "core/graph.h"
#include "core/log.h"
#include "core/module.h"
#include "core/stream_lookup.h"

#include <sched.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <system_error>
#include <thread>
#include <xmmintrin.h>

namespace cuemu {
namespace {

std::atomic<unsigned long long> g_nextStreamId{1};
// 0: read CUEMU_DETERMINISTIC on first use, 1: off, 2: on.
std::atomic<int> g_deterministic{0};

// Nanoseconds; kSpinUnread until CUEMU_STREAM_SPIN_US is read.
constexpr uint64_t kSpinUnread = ~uint64_t(0);
constexpr uint64_t kDefaultSpinNs = 0;
std::atomic<uint64_t> g_spinNs{kSpinUnread};

// Spins until `done` holds or streamSpinNs() passed; returns whether it holds. The first microseconds poll with
// pause; after that the spinner yields its core between polls, so on a machine with more runnable threads than
// cores it does not take the core from the thread it waits for.
template <class Done> bool spinUntil(Done done) {
  const uint64_t limit = streamSpinNs();
  if (!limit) return false;
  const auto start = std::chrono::steady_clock::now();
  for (unsigned i = 1;; ++i) {
    if (done()) return true;
    _mm_pause();
    if ((i & 63) == 0) {
      const auto spent = std::chrono::steady_clock::now() - start;
      if (uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(spent).count()) >= limit) return done();
      if (spent > std::chrono::microseconds(4)) sched_yield();
    }
  }
}

}  // namespace

uint64_t streamSpinNs() {
  uint64_t ns = g_spinNs.load(std::memory_order_relaxed);
  if (ns == kSpinUnread) [[unlikely]] {
    ns = kDefaultSpinNs;
    if (const char* value = std::getenv("CUEMU_STREAM_SPIN_US"); value && *value)
      ns = std::strtoull(value, nullptr, 10) * 1000;
    g_spinNs.store(ns, std::memory_order_relaxed);
  }
  return ns;
}

void setStreamSpinNs(uint64_t ns) { g_spinNs.store(ns, std::memory_order_relaxed); }

bool deterministicMode() {
  int state = g_deterministic.load(std::memory_order_relaxed);
  if (state == 0) [[unlikely]] {
    const char* value = std::getenv("CUEMU_DETERMINISTIC");
    state = value && *value && std::strcmp(value, "0") != 0 ? 2 : 1;
    g_deterministic.store(state, std::memory_order_relaxed);
  }
  return state == 2;
}

void setDeterministicMode(bool on) { g_deterministic.store(on ? 2 : 1, std::memory_order_relaxed); }

void switchDeterministicMode(bool on) {
  std::vector<std::shared_ptr<Context>> contexts;
  handleTable<Context>().forEach([&](const std::shared_ptr<Context>& context) {
    if (context->isAlive() && !context->tornDown()) contexts.push_back(context);
  });
  // Work submitted before the switch finishes in the mode it was submitted in. A fault stays with the context.
  for (auto& context : contexts) static_cast<void>(context->streams().synchronize());
  setDeterministicMode(on);
}

Stream::Stream(Context& context, Kind kind, unsigned flags, int priority)
    : context_(context), kind_(kind), flags_(flags), priority_(priority), id_(g_nextStreamId.fetch_add(1)) {}

Stream::~Stream() = default;

CUstream Stream::apiHandle() const {
  switch (kind_) {
    case Kind::Legacy: return CU_STREAM_LEGACY;
    case Kind::PerThread: return CU_STREAM_PER_THREAD;
    case Kind::User: break;
  }
  return toApiHandle<CUstream>(handle_);
}

const char* Stream::timelineKind() const {
  switch (kind_) {
    case Kind::Legacy: return "legacy stream";
    case Kind::PerThread: return "per-thread stream";
    case Kind::User: break;
  }
  return "stream";
}

uint64_t Stream::lastSubmitted() const {
  std::lock_guard lock(mutex_);
  return submitted_;
}

StreamPosition Stream::submit(StreamWork work, std::vector<StreamPosition> dependencies, WorkOptions options) {
  if (deterministicMode()) {
    // Program order on the calling thread. Items queued before the mode was switched on (by another thread
    // meanwhile) run first, so the stream's order holds across the switch.
    Item item{std::move(work), std::move(dependencies), 0, options};
    if (timeline::on()) [[unlikely]]
      item.tag = timeline::takeSubmitTag();
    {
      std::unique_lock lock(mutex_);
      waitDone(lock, [&] {
        return queue_.empty() && !inlineRunning_ && completed_.load(std::memory_order_relaxed) == submitted_;
      });
      item.sequence = ++submitted_;
      inlineRunning_ = true;
    }
    runItem(item);
    {
      std::unique_lock lock(mutex_);
      inlineRunning_ = false;
      notifyDone(lock);
      signalWorkLocked();
    }
    return {shared_from_this(), item.sequence};
  }
  timeline::SubmitTag tag;
  if (timeline::on()) [[unlikely]]
    tag = timeline::takeSubmitTag();
  std::unique_lock lock(mutex_);
  uint64_t sequence = ++submitted_;
  queue_.push_back(Item{std::move(work), std::move(dependencies), sequence, options, std::move(tag)});
  if (!workerRunning_) {
    workerRunning_ = true;
    try {
      // The worker owns a reference, so a destroyed stream finishes its queue before it dies.
      std::thread([self = shared_from_this()] { self->workerLoop(); }).detach();
    } catch (const std::system_error&) {
      // No thread to be had (the process ran out of threads or memory mappings): nothing would ever run the
      // queue, so it runs here, in order, and no submission is left waiting forever.
      workerRunning_ = false;
      while (!queue_.empty()) {
        Item item = std::move(queue_.front());
        queue_.pop_front();
        inlineRunning_ = true;
        lock.unlock();
        runItem(item);
        lock.lock();
        inlineRunning_ = false;
      }
      signalWorkLocked();
      return {shared_from_this(), sequence};
    }
  } else {
    signalWorkLocked();
  }
  return {shared_from_this(), sequence};
}

void Stream::runItem(Item& item) {
  for (auto& dependency : item.dependencies)
    if (dependency.stream.get() != this) dependency.stream->waitFor(dependency.sequence);
  // After a fault the context is unusable, as on a GPU: later work is skipped but still completes.
  bool run = context_.stickyError() == CUDA_SUCCESS || item.options == WorkOptions::RunAfterFault;
  // An item without work that waits for another stream (an event wait) is recorded too: it carries the arrow.
  const bool timed = run && (item.work || !item.dependencies.empty()) && timeline::on();
  const uint64_t startNs = timed ? timeline::nowNs() : 0;
  if (run && item.work) {
    CUresult result;
    try {
      result = item.work();
    } catch (const std::exception& e) {
      // Work that cannot get its resources (threads, memory) fails as a launch out of resources; the item
      // still completes below, so whoever waits for it is released.
      CUEMU_ERROR("stream work failed: {}", e.what());
      result = CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
    }
    if (result != CUDA_SUCCESS) {
      context_.setStickyError(result);
      // What the grid printed before it faulted still reaches stdout, as an H100's printf buffer does when the host
      // learns of the fault (tools/gpu-probe/printftrap28): the host's later calls fail without synchronising.
      context_.modules().flushPrintf();
    }
  }
  if (timed) [[unlikely]] {
    std::vector<std::pair<unsigned long long, uint64_t>> waitedFor;
    for (const auto& dependency : item.dependencies)
      if (dependency.stream.get() != this) waitedFor.emplace_back(dependency.stream->id(), dependency.sequence);
    timeline::streamItem(id_, timelineKind(), item.sequence, item.tag, startNs, timeline::nowNs(), waitedFor);
  }
  item.work = nullptr;
  item.dependencies.clear();
  std::unique_lock lock(mutex_);
  completed_.store(item.sequence, std::memory_order_release);
  notifyDone(lock);
}

void Stream::signalWorkLocked() {
  workSignal_.fetch_add(1, std::memory_order_release);
  if (workerSleeping_) workAvailable_.notify_one();
}

template <class Ready> void Stream::waitDone(std::unique_lock<std::mutex>& lock, Ready ready) {
  ++doneWaiters_;
  itemDone_.wait(lock, ready);
  --doneWaiters_;
}

void Stream::notifyDone(std::unique_lock<std::mutex>&) {
  if (doneWaiters_) itemDone_.notify_all();
}

bool Stream::runInlineIfIdle(StreamWork& work) {
  Item item{nullptr, {}, 0, WorkOptions::None};
  {
    std::lock_guard lock(mutex_);
    if (!queue_.empty() || inlineRunning_ || completed_.load(std::memory_order_relaxed) != submitted_) return false;
    item.sequence = ++submitted_;
    inlineRunning_ = true;
  }
  // Only once the item runs here: a busy stream leaves the label (timeline::labelNextItem) to its submission.
  if (timeline::on()) [[unlikely]]
    item.tag = timeline::takeSubmitTag();
  item.work = std::move(work);
  runItem(item);
  std::unique_lock lock(mutex_);
  inlineRunning_ = false;
  signalWorkLocked();
  // A deterministic-mode submitter waits on itemDone_ until no inline item runs; runItem's notification came
  // before inlineRunning_ was cleared, so without this one it would sleep forever (issue 24).
  notifyDone(lock);
  return true;
}

void Stream::workerLoop() {
  std::unique_lock lock(mutex_);
  const auto ready = [&] { return (!queue_.empty() || retired_) && !inlineRunning_; };
  for (;;) {
    if (!ready()) {
      const uint64_t seen = workSignal_.load(std::memory_order_acquire);
      lock.unlock();
      spinUntil([&] { return workSignal_.load(std::memory_order_acquire) != seen; });
      lock.lock();
      workerSleeping_ = true;
      workAvailable_.wait(lock, ready);
      workerSleeping_ = false;
    }
    if (queue_.empty()) break;  // retired and drained
    Item item = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    runItem(item);
    lock.lock();
  }
  workerRunning_ = false;
}

void Stream::waitFor(uint64_t sequence) {
  if (spinUntil([&] { return completed() >= sequence; })) return;
  std::unique_lock lock(mutex_);
  waitDone(lock, [&] { return completed_.load(std::memory_order_acquire) >= sequence; });
}

void Stream::retire() {
  std::lock_guard lock(mutex_);
  retired_ = true;
  signalWorkLocked();
}

ContextStreams::ContextStreams(Context& context)
    : context_(context), legacy_(std::make_shared<Stream>(context, Stream::Kind::Legacy, 0, 0)) {}

ContextStreams::~ContextStreams() { teardown(); }

std::shared_ptr<Stream> ContextStreams::perThreadStream() {
  std::lock_guard lock(mutex_);
  auto& stream = perThread_[std::this_thread::get_id()];
  if (!stream) {
    stream = std::make_shared<Stream>(context_, Stream::Kind::PerThread, 0, 0);
    streams_.push_back(stream);
  }
  return stream;
}

Expected<std::shared_ptr<Stream>> ContextStreams::resolve(CUstream stream) {
  if (stream == nullptr) return defaultStreamIsPerThread() ? perThreadStream() : legacy_;
  if (stream == CU_STREAM_LEGACY) return legacy_;
  if (stream == CU_STREAM_PER_THREAD) return perThreadStream();
  auto lookedUp = lookup<Stream>(stream);
  if (!lookedUp) return lookedUp.takeError();
  const std::shared_ptr<Stream>& found = *lookedUp;
  // A green context shares its device's memory with the device's other contexts: their streams are usable from one
  // another (cuda.core's green-context tests allocate on a green stream from the primary context).
  Context& owner = found->context();
  bool green = owner.greenHandle() || context_.greenHandle();
  if (&owner != &context_ && !(green && &owner.device() == &context_.device()))
    return makeError(CUDA_ERROR_INVALID_HANDLE, "stream belongs to another context");
  return found;
}

std::shared_ptr<Stream> ContextStreams::create(unsigned flags, int priority) {
  auto stream = std::make_shared<Stream>(context_, Stream::Kind::User, flags, priority);
  stream->setHandle(handleTable<Stream>().insert(stream));
  std::lock_guard lock(mutex_);
  streams_.push_back(stream);
  return stream;
}

CUresult ContextStreams::destroy(const std::shared_ptr<Stream>& stream) {
  if (!handleTable<Stream>().erase(stream->handle())) return CUDA_ERROR_INVALID_HANDLE;
  stream->retire();  // pending work still runs, as on the real driver
  return CUDA_SUCCESS;
}

std::vector<std::shared_ptr<Stream>> ContextStreams::liveStreams() {
  std::vector<std::shared_ptr<Stream>> out;
  std::lock_guard lock(mutex_);
  for (auto& weak : streams_)
    if (auto s = weak.lock()) out.push_back(std::move(s));
  return out;
}

std::vector<std::shared_ptr<Stream>> ContextStreams::blockingStreams() {
  std::vector<std::shared_ptr<Stream>> out;
  std::lock_guard lock(mutex_);
  std::erase_if(streams_, [&](const std::weak_ptr<Stream>& weak) {
    auto stream = weak.lock();
    if (!stream) return true;
    if (stream->isBlocking()) out.push_back(std::move(stream));
    return false;
  });
  return out;
}

StreamPosition ContextStreams::submit(Stream& stream, StreamWork work, std::vector<StreamPosition> dependencies,
                                      WorkOptions options) {
  if (stream.kind() == Stream::Kind::Legacy) {
    for (auto& other : blockingStreams())
      if (!other->isIdle()) dependencies.push_back({other, other->lastSubmitted()});
  } else if (stream.isBlocking() && !legacy_->isIdle()) {
    dependencies.push_back({legacy_, legacy_->lastSubmitted()});
  }
  return stream.submit(std::move(work), std::move(dependencies), options);
}

bool ContextStreams::runInlineIfIdle(Stream& stream, StreamWork& work) {
  if (stream.kind() == Stream::Kind::Legacy) {
    for (auto& other : blockingStreams())
      if (!other->isIdle()) return false;
  } else if (stream.isBlocking() && !legacy_->isIdle()) {
    return false;
  }
  return stream.runInlineIfIdle(work);
}

std::vector<std::shared_ptr<Stream>> ContextStreams::allStreams() {
  std::vector<std::shared_ptr<Stream>> out{legacy_};
  for (auto& s : liveStreams()) out.push_back(std::move(s));
  return out;
}

void ContextStreams::drain() {
  legacy_->waitIdle();
  for (auto& s : liveStreams()) s->waitIdle();
  context_.modules().flushPrintf();
}

CUresult ContextStreams::refuseDuringCapture() {
  bool capturing = false;
  for (auto& s : liveStreams())
    if (isCapturing(*s)) {
      invalidateCapture(*s);
      capturing = true;
    }
  return capturing ? CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED : CUDA_SUCCESS;
}

CUresult ContextStreams::synchronize() {
  drain();
  return context_.stickyError();
}

void ContextStreams::teardown() {
  drain();
  std::vector<std::shared_ptr<Stream>> all = liveStreams();
  {
    std::lock_guard lock(mutex_);
    streams_.clear();
    perThread_.clear();
  }
  for (auto& s : all) {
    if (s->kind() == Stream::Kind::User) handleTable<Stream>().erase(s->handle());
    s->retire();
    s->waitIdle();
  }
  legacy_->retire();
  // Events refer to their context: their handles die with it (a later use is CUDA_ERROR_INVALID_HANDLE).
  std::vector<uint64_t> events;
  handleTable<Event>().forEach([&](const std::shared_ptr<Event>& e) {
    if (&e->context() == &context_) events.push_back(e->handle());
  });
  for (uint64_t handle : events) handleTable<Event>().erase(handle);
}

CUresult enqueueWork(Stream& stream, StreamWork work, CUgraphNodeType capturedAs) {
  if (stream.kind() == Stream::Kind::Legacy)
    if (CUresult implicit = checkLegacyImplicitCapture(stream)) return implicit;
  if (isCapturing(stream)) {
    CUresult captured = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;  // the capture ended meanwhile
    captureIfCapturing(stream, capturedAs, CapturedWorkData{std::move(work)}, captured);
    return captured;
  }
  stream.context().streams().submit(stream, std::move(work));
  return CUDA_SUCCESS;
}

CUresult enqueueWorkRunIfIdle(Stream& stream, StreamWork work, CUgraphNodeType capturedAs) {
  if (!isCapturing(stream) && !deterministicMode()) {
    if (stream.kind() == Stream::Kind::Legacy)
      if (CUresult implicit = checkLegacyImplicitCapture(stream)) return implicit;
    if (stream.context().streams().runInlineIfIdle(stream, work)) return CUDA_SUCCESS;
  }
  return enqueueWork(stream, std::move(work), capturedAs);
}

CUresult enqueueOnStream(Context& context, CUstream stream, StreamWork work, CUgraphNodeType capturedAs) {
  auto resolved = context.streams().resolve(stream);
  if (!resolved) return resolved.error().code;
  return enqueueWork(**resolved, std::move(work), capturedAs);
}

CUresult runOnStreamAndWait(Context& context, CUstream stream, StreamWork work, CUgraphNodeType capturedAs) {
  auto resolved = context.streams().resolve(stream);
  if (!resolved) return resolved.error().code;
  if (isCapturing(**resolved)) return enqueueWork(**resolved, std::move(work), capturedAs);
  if ((*resolved)->kind() == Stream::Kind::Legacy)
    if (CUresult implicit = checkLegacyImplicitCapture(**resolved)) return implicit;
  // An idle stream runs the work here: a worker round trip would cost more than a small copy itself.
  if (!context.streams().runInlineIfIdle(**resolved, work)) {
    auto position = context.streams().submit(**resolved, std::move(work));
    position.stream->waitFor(position.sequence);
  }
  context.modules().flushPrintf();
  return context.stickyError();
}

namespace {
thread_local bool tPerThreadDefaultStream = false;
}  // namespace

DefaultStreamScope::DefaultStreamScope(bool perThread) noexcept : previous_(tPerThreadDefaultStream) {
  tPerThreadDefaultStream = perThread;
}
DefaultStreamScope::~DefaultStreamScope() { tPerThreadDefaultStream = previous_; }

bool defaultStreamIsPerThread() noexcept { return tPerThreadDefaultStream; }

bool namesLegacyStream(CUstream stream) noexcept {
  return stream == CU_STREAM_LEGACY || (stream == nullptr && !tPerThreadDefaultStream);
}

Expected<std::shared_ptr<Stream>> lookupStream(CUstream stream) {
  if (stream != nullptr && stream != CU_STREAM_LEGACY && stream != CU_STREAM_PER_THREAD) {
    return lookup<Stream>(stream);
  }
  auto context = requireCurrentContext();
  if (!context) return context.takeError();
  return (*context)->streams().resolve(stream);
}

}  // namespace cuemu
