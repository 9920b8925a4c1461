// Tables of values measured on a GPU, embedded in the library as base64 text of one zstd frame.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ptx::exec::num {

// The decoded bytes (bytesIfUnrecorded: the size, for a frame that does not record it); empty when the text does
// not decode (a broken build).
std::vector<uint8_t> decodeEmbeddedTable(const char* base64, size_t bytesIfUnrecorded = 0);

}  // namespace ptx::exec::num
