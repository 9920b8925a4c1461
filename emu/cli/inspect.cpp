// `cuemu inspect`: which device code a binary carries and which profiles run it. cuemu runs PTX only, and a device
// compiles PTX for its own architecture or an older one: NVIDIA's math libraries, cuDNN, and the kernels built into
// XLA carry PTX for compute capability 12 only, so whether a library works on a profile is a question of its
// fatbinaries, answered here from the same parsing and the same rules the driver uses (core/fatbin).
#include "cli/inspect.h"

#include "core/device.h"
#include "core/fatbin.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ostream.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <map>
#include <tuple>

namespace cuemu::cli {
namespace {

// A read-only mapping of a whole file.
class MappedFile {
 public:
  explicit MappedFile(const std::string& path) {
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      error_ = std::strerror(errno);
      return;
    }
    struct stat st {};
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      error_ = "not a regular file";
    } else if (st.st_size > 0) {
      void* p = mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
      if (p == MAP_FAILED)
        error_ = std::strerror(errno);
      else
        data_ = p, size_ = static_cast<size_t>(st.st_size);
    }
    close(fd);
  }
  ~MappedFile() {
    if (data_) munmap(data_, size_);
  }
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  const void* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& error() const { return error_; }

 private:
  void* data_ = nullptr;
  size_t size_ = 0;
  std::string error_;
};

void inspectOne(const std::string& path, const MappedFile& file, std::ostream& out) {
  auto containers = fatbin::findContainers(file.data(), file.size());
  fmt::print(out, "{}: {} fatbinar{}\n", path, containers.size(), containers.size() == 1 ? "y" : "ies");
  if (containers.empty()) return;
  // (PTX first, then by architecture, then the name with its a/f suffix) -> fatbinaries holding such an entry
  using Key = std::tuple<bool, uint32_t, std::string>;
  std::map<Key, size_t> entries;
  for (const auto& c : containers) {
    std::map<Key, bool> seen;
    for (const auto& e : c.entries)
      seen[{e.kind != uint16_t(fatbin::EntryKind::Ptx), e.arch, fatbin::entryName(e)}] = true;
    for (const auto& [key, _] : seen) ++entries[key];
  }
  for (const auto& [key, count] : entries)
    fmt::print(out, "  {:<5} {:<14} in {} of {}\n", std::get<0>(key) ? "SASS" : "PTX", std::get<2>(key), count,
               containers.size());
  for (const std::string& name : builtinProfileNames()) {
    auto profile = builtinProfile(name);
    if (!profile) continue;
    uint32_t cc = uint32_t(profile->ccMajor * 10 + profile->ccMinor);
    size_t runnable = 0;
    for (const auto& c : containers)
      for (const auto& e : c.entries)
        if (fatbin::ptxRunsOn(e, cc)) {
          ++runnable;
          break;
        }
    fmt::print(out, "  profile {:<13} (compute capability {}.{}): {} of {} fatbinaries have PTX it runs{}\n", name,
               profile->ccMajor, profile->ccMinor, runnable, containers.size(),
               runnable == containers.size() ? ""
               : runnable == 0               ? " (none: this code cannot run there)"
                                             : "");
  }
}

}  // namespace

int inspectFiles(const std::vector<std::string>& paths, std::ostream& out) {
  int status = 0;
  for (const std::string& path : paths) {
    MappedFile file(path);
    if (!file.error().empty()) {
      fmt::print(out, "{}: cannot read: {}\n", path, file.error());
      status = 1;
      continue;
    }
    inspectOne(path, file, out);
  }
  return status;
}

}  // namespace cuemu::cli
