// Test/benchmark harness: a device-memory arena that validates accesses like the driver does (reserved range +
// table of valid bytes per page), parameter packing from the kernel's layout, and PTX file loading.
#pragma once

#include "ptx/exec.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <sys/mman.h>
#include <vector>

namespace ptxtest {

class Arena : public ptx::exec::MemoryValidator {
 public:
  explicit Arena(size_t bytes = size_t(256) << 20) : bytes_(bytes) {
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) throw std::runtime_error("mmap failed");
    base = reinterpret_cast<uint64_t>(p);
    end = base + bytes;
    pageShift = 12;
    pages_ = std::vector<std::atomic<uint32_t>>(bytes >> pageShift);
    validBytes = pages_.data();
    top_ = base + 4096;  // keep the first page unmapped (null-ish pointers fault)
  }
  ~Arena() override { munmap(reinterpret_cast<void*>(base), bytes_); }

  template <class T> T* alloc(size_t count) {
    size_t n = (count * sizeof(T) + 4095) & ~size_t(4095);
    if (n == 0) n = 4096;
    uint64_t p = top_;
    top_ += n + 4096;  // one invalid page between allocations
    if (top_ > end) throw std::runtime_error("arena full");
    for (uint64_t a = p; a < p + n; a += 4096) pages_[(a - base) >> pageShift].store(uint32_t(p + n - a));
    return reinterpret_cast<T*>(p);
  }
  // Makes only the first `bytes` bytes at p valid (p's allocation is one page or less), so the byte after them
  // faults: buffers whose end is not a page end.
  void limit(const void* p, size_t bytes) {
    uint64_t a = reinterpret_cast<uint64_t>(p);
    uint64_t page = a & ~uint64_t(4095);
    pages_[(page - base) >> pageShift].store(uint32_t(a + bytes - page));
  }
  template <class T> T* upload(const std::vector<T>& v) {
    T* p = alloc<T>(v.size());
    std::memcpy(p, v.data(), v.size() * sizeof(T));
    return p;
  }

 private:
  size_t bytes_;
  uint64_t top_;
  std::vector<std::atomic<uint32_t>> pages_;
};

inline std::string readFile(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw std::runtime_error("cannot open " + path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Packs kernel arguments according to the kernel's parameter layout.
class Params {
 public:
  explicit Params(const ptx::exec::KernelInfo& k) : info_(k), buf_(k.paramBytes ? k.paramBytes : 1) {}
  template <class T> Params& arg(const T& v) {
    if (next_ >= info_.params.size()) throw std::runtime_error("too many arguments");
    const auto& p = info_.params[next_++];
    if (p.size != sizeof(T)) throw std::runtime_error("argument size mismatch");
    std::memcpy(buf_.data() + p.offset, &v, sizeof(T));
    return *this;
  }
  const void* data() const { return buf_.data(); }
  size_t size() const { return info_.paramBytes; }

 private:
  const ptx::exec::KernelInfo& info_;
  std::vector<uint8_t> buf_;
  size_t next_ = 0;
};

// Device memory for a program's module-scope variables, initialised, in the order launches take their addresses.
inline std::vector<uint64_t> allocateGlobals(const ptx::exec::Program& program, Arena& arena) {
  std::vector<uint64_t> addresses;
  for (const ptx::exec::GlobalInfo& g : ptx::exec::globals(program)) {
    uint8_t* q = arena.alloc<uint8_t>(g.size);
    if (!g.init.empty()) std::memcpy(q, g.init.data(), g.init.size());
    addresses.push_back(reinterpret_cast<uint64_t>(q));
  }
  return addresses;
}

// What every launch of the tests sets: the grid and block, the packed kernel parameters and the arena as the
// memory; the caller adds the rest (globals, host, config, ...).
inline ptx::exec::LaunchParams launchParams(ptx::exec::Dim3 grid, ptx::exec::Dim3 block, const Params& p,
                                            Arena& arena) {
  ptx::exec::LaunchParams lp;
  lp.grid = grid;
  lp.block = block;
  lp.params = p.data();
  lp.paramBytes = p.size();
  lp.memory = &arena;
  return lp;
}

}  // namespace ptxtest
