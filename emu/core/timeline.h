// A timeline of the run for Chrome's trace viewer and ui.perfetto.dev (CUEMU_TIMELINE=file, `cuemu run
// --timeline file`): every driver call per host thread, every item a stream runs (kernels by name, copies, sets,
// host functions, event and memory operations) on a track of its own, and arrows from the call that submitted an
// item to its run and from each item another stream waited for (events, the legacy stream's implicit
// synchronisation) to the item that waited. The file is written when the process exits. When off, a driver call
// and a stream item pay one relaxed atomic load each.
#pragma once

#include "core/env_switch.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cuemu::timeline {

namespace detail {
bool readState();  // CUEMU_TIMELINE; starts the recording
inline constinit EnvSwitch g_switch{&readState};
}  // namespace detail

inline bool on() { return detail::g_switch.on(); }

uint64_t nowNs();

// A driver call that returned `result`, on the calling thread.
void apiCall(std::string_view name, uint64_t startNs, uint64_t endNs, int result);

// The entry point running on this thread (set by the entry layer for the length of a call): stream items
// submitted meanwhile are labelled with it unless launch code names them (a kernel's name).
// Returns the previous one (calls nest: a stream callback may make driver calls); clears a pending label.
const char* setCurrentCall(const char* name);
void labelNextItem(std::string label);

// What a stream item remembers of its submission.
struct SubmitTag {
  std::string label;
  uint64_t submitNs = 0;
  uint32_t submitThread = 0;
};
SubmitTag takeSubmitTag();

// An item stream `streamId` ran from startNs to endNs, after the items of other streams in `waitedFor`
// ({stream id, sequence}).
// `streamKind` is a static string ("stream", "legacy stream", "per-thread stream"): the track is named at the end.
void streamItem(unsigned long long streamId, const char* streamKind, uint64_t sequence, const SubmitTag& tag,
                uint64_t startNs, uint64_t endNs,
                const std::vector<std::pair<unsigned long long, uint64_t>>& waitedFor);

// Writes the file now (normally at process exit); later events are dropped.
void flush();

}  // namespace cuemu::timeline
