#include "core/timeline.h"

#include "core/log.h"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

namespace cuemu::timeline {
namespace {

// Beyond this many events the recording stops (a note in the file says so): a long run must not exhaust memory.
constexpr size_t kMaxEvents = 4'000'000;

struct ApiEvent {
  std::string_view name;  // entry point names are static strings (the API table)
  uint64_t start, end;
  uint32_t thread;
  int result;
};
struct ItemEvent {
  unsigned long long stream;
  uint64_t sequence;
  SubmitTag tag;
  uint64_t start, end;
  std::vector<std::pair<unsigned long long, uint64_t>> waitedFor;
};

struct Recorder {
  std::mutex mutex;
  std::string path;
  bool written = false;
  bool truncated = false;
  uint64_t origin = 0;
  std::vector<ApiEvent> calls;
  std::vector<ItemEvent> items;
  std::map<unsigned long long, const char*> streamKinds;  // "stream", "legacy stream", ... (static strings)
  // Whether one more event is recorded; once the cap is reached, the file says the timeline was cut short.
  bool accepting() {
    if (written) return false;
    if (calls.size() + items.size() < kMaxEvents) return true;
    truncated = true;
    return false;
  }
};

// Created on first use and never destroyed: events arrive from worker threads until the process ends.
Recorder& recorder() {
  static Recorder* instance = new Recorder;
  return *instance;
}

thread_local const char* tCurrentCall = nullptr;
thread_local std::string tNextLabel;

uint32_t threadId() { return static_cast<uint32_t>(gettid()); }

std::string jsonString(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += fmt::format("\\u{:04x}", static_cast<unsigned char>(c));
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// Microseconds (the trace format's unit) with nanosecond decimals.
std::string duration(uint64_t ns) { return fmt::format("{}.{:03}", ns / 1000, ns % 1000); }
// A time as microseconds since the recording started.
std::string micros(uint64_t ns, uint64_t origin) { return duration(ns >= origin ? ns - origin : 0); }

void writeAtExit() { flush(); }

}  // namespace

bool detail::readState() {
  const char* path = std::getenv("CUEMU_TIMELINE");
  bool enabled = path && *path;
  if (enabled) {
    Recorder& r = recorder();
    std::lock_guard lock(r.mutex);
    if (r.path.empty()) {
      r.path = path;
      r.origin = nowNs();
      std::atexit(writeAtExit);
    }
  }
  return enabled;
}

uint64_t nowNs() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

void apiCall(std::string_view name, uint64_t startNs, uint64_t endNs, int result) {
  Recorder& r = recorder();
  std::lock_guard lock(r.mutex);
  if (!r.accepting()) return;
  r.calls.push_back({name, startNs, endNs, threadId(), result});
}

const char* setCurrentCall(const char* name) {
  const char* previous = tCurrentCall;
  tCurrentCall = name;
  tNextLabel.clear();
  return previous;
}
void labelNextItem(std::string label) { tNextLabel = std::move(label); }

SubmitTag takeSubmitTag() {
  SubmitTag tag;
  tag.label = !tNextLabel.empty() ? std::move(tNextLabel) : std::string(tCurrentCall ? tCurrentCall : "work");
  tNextLabel.clear();
  tag.submitNs = nowNs();
  tag.submitThread = threadId();
  return tag;
}

void streamItem(unsigned long long streamId, const char* streamKind, uint64_t sequence, const SubmitTag& tag,
                uint64_t startNs, uint64_t endNs,
                const std::vector<std::pair<unsigned long long, uint64_t>>& waitedFor) {
  Recorder& r = recorder();
  std::lock_guard lock(r.mutex);
  if (!r.accepting()) return;
  r.streamKinds.try_emplace(streamId, streamKind);
  r.items.push_back({streamId, sequence, tag, startNs, endNs, waitedFor});
}

void flush() {
  Recorder& r = recorder();
  std::lock_guard lock(r.mutex);
  if (r.written || r.path.empty()) return;
  r.written = true;
  std::FILE* file = std::fopen(r.path.c_str(), "w");
  if (!file) {
    CUEMU_ERROR("CUEMU_TIMELINE: cannot write '{}': {}", r.path, std::strerror(errno));
    return;
  }
  const int pid = getpid();
  // Stream tracks get thread ids of their own, above any host thread id.
  constexpr uint64_t kStreamTrackBase = 1ull << 32;
  std::string out = "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
  bool first = true;
  auto add = [&](const std::string& event) {
    if (!first) out += ",\n";
    first = false;
    out += event;
  };
  add(fmt::format("{{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":{},\"tid\":0,\"args\":{{\"name\":\"cuemu\"}}}}",
                  pid));
  std::map<uint32_t, bool> hostThreads;
  for (const auto& c : r.calls) hostThreads[c.thread] = true;
  for (const auto& [tid, unused] : hostThreads)
    add(
        fmt::format("{{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":{},\"tid\":{},\"args\":{{\"name\":\"host thread "
                    "{}\"}}}}",
                    pid, tid, tid));
  for (const auto& [id, kind] : r.streamKinds) {
    std::string name =
        std::string_view(kind) == "stream" ? fmt::format("stream {}", id) : fmt::format("{} (stream {})", kind, id);
    add(fmt::format("{{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":{},\"tid\":{},\"args\":{{\"name\":{}}}}}", pid,
                    kStreamTrackBase + id, jsonString(name)));
    add(
        fmt::format("{{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":{},\"tid\":{},\"args\":{{\"sort_index\":"
                    "{}}}}}",
                    pid, kStreamTrackBase + id, 1000000 + id));
  }
  for (const auto& c : r.calls)
    add(
        fmt::format("{{\"ph\":\"X\",\"cat\":\"api\",\"name\":{},\"pid\":{},\"tid\":{},\"ts\":{},\"dur\":{},\"args\":{{"
                    "\"result\":{}}}}}",
                    jsonString(c.name), pid, c.thread, micros(c.start, r.origin), duration(c.end - c.start), c.result));
  std::map<std::pair<unsigned long long, uint64_t>, const ItemEvent*> byPosition;
  for (const auto& i : r.items) byPosition[{i.stream, i.sequence}] = &i;
  uint64_t flow = 0;
  for (const auto& i : r.items) {
    uint64_t track = kStreamTrackBase + i.stream;
    add(
        fmt::format("{{\"ph\":\"X\",\"cat\":\"stream\",\"name\":{},\"pid\":{},\"tid\":{},\"ts\":{},\"dur\":{},"
                    "\"args\":{{\"stream\":{},\"item\":{},\"submitted by\":{}}}}}",
                    jsonString(i.tag.label), pid, track, micros(i.start, r.origin), duration(i.end - i.start), i.stream,
                    i.sequence, i.tag.submitThread));
    // The submission: from the submitting call (its host thread, at the time of submission) to the item.
    ++flow;
    add(fmt::format("{{\"ph\":\"s\",\"cat\":\"submit\",\"name\":\"submit\",\"id\":{},\"pid\":{},\"tid\":{},\"ts\":{}}}",
                    flow, pid, i.tag.submitThread, micros(i.tag.submitNs, r.origin)));
    add(fmt::format(
        "{{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"submit\",\"name\":\"submit\",\"id\":{},\"pid\":{},\"tid\":{},"
        "\"ts\":{}}}",
        flow, pid, track, micros(i.start, r.origin)));
    // Cross-stream dependencies: from the end of the item waited for to the start of this one.
    for (const auto& position : i.waitedFor) {
      auto source = byPosition.find(position);
      if (source == byPosition.end()) continue;  // the item waited for was not recorded (empty or before the start)
      ++flow;
      add(fmt::format(
          "{{\"ph\":\"s\",\"cat\":\"dependency\",\"name\":\"waits for\",\"id\":{},\"pid\":{},\"tid\":{},"
          "\"ts\":{}}}",
          flow, pid, kStreamTrackBase + source->second->stream,
          micros(source->second->end > source->second->start ? source->second->end - 1 : source->second->end,
                 r.origin)));
      add(
          fmt::format("{{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"dependency\",\"name\":\"waits for\",\"id\":{},\"pid\":{},"
                      "\"tid\":{},\"ts\":{}}}",
                      flow, pid, track, micros(i.start, r.origin)));
    }
  }
  if (r.truncated)
    add(
        fmt::format("{{\"ph\":\"i\",\"s\":\"g\",\"name\":\"timeline truncated after {} events\",\"pid\":{},\"tid\":0,"
                    "\"ts\":0}}",
                    kMaxEvents, pid));
  out += "\n]}\n";
  std::fwrite(out.data(), 1, out.size(), file);
  std::fclose(file);
}

}  // namespace cuemu::timeline
