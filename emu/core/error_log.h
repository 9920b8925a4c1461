// The driver's error log (cuLogs*): the warnings and errors cuemu reports, kept in a bounded ring that programs
// read with iterators or receive through registered callbacks.
#pragma once

#include "api/cuda_internal.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cuemu::errorlog {

// How many entries the log keeps; older ones are dropped (iterators before them start at the oldest kept).
inline constexpr size_t kCapacity = 100;

// Adds a message (called by the log sink for every warning and error) and runs the registered callbacks.
void append(CUlogLevel level, std::string_view message);

// The iterator value of the next entry to be added.
uint32_t current();

// Entries from `from` on (clamped to the oldest kept), as formatted lines; `next` gets the iterator after them.
std::vector<std::string> entriesFrom(uint32_t from, uint32_t& next);

using Callback = void (*)(void* userData, CUlogLevel level, char* message, size_t length);
uint64_t addCallback(Callback callback, void* userData);
bool removeCallback(uint64_t id);

}  // namespace cuemu::errorlog
