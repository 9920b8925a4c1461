// `cuemu inspect FILE...`: the device code a binary carries, and which of cuemu's device profiles can run it.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace cuemu::cli {

// Prints, per file, its fatbinaries' entries (PTX and SASS by architecture) and, per built-in profile, how many of
// its fatbinaries have PTX a device of that profile compiles. Returns 0, or 1 when a file cannot be read.
int inspectFiles(const std::vector<std::string>& paths, std::ostream& out);

}  // namespace cuemu::cli
