#include "core/fatbin.h"

#include "core/companion_ptx.h"
#include "core/device.h"
#include "core/driver.h"

#include <fmt/format.h>
#include <lz4.h>
#include <zstd.h>

#include <fcntl.h>
#include <link.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>

namespace cuemu {
namespace {

// Fixed layout facts (see the reference document).
constexpr size_t kWrapperSize = 24;
constexpr size_t kContainerHeaderSize = 16;
constexpr size_t kEntryHeaderMinSize = 0x40;
constexpr uint64_t kFlagLz4 = 0x2000;
constexpr uint64_t kFlagZstd = 0x8000;
constexpr uint64_t kFlagArchSpecific = 0x100000;
constexpr uint64_t kFlagFamilySpecific = 0x200000;
constexpr uint16_t kElfMachineCuda = 190;
// A container of unknown size is trusted only this far; real ones are megabytes at most.
constexpr uint64_t kMaxContainerBytes = 4ull << 30;
// -rdc programs with more translation units than this are not real.
constexpr size_t kMaxLinkedUnits = 1 << 16;

Error invalidImage(std::string message) { return makeError(CUDA_ERROR_INVALID_IMAGE, std::move(message)); }

// Bounds-checked little-endian reads from [base, base + size).
class Bytes {
 public:
  Bytes(const uint8_t* base, uint64_t size) : base_(base), size_(size) {}
  uint64_t size() const { return size_; }
  const uint8_t* at(uint64_t offset) const { return base_ + offset; }
  bool contains(uint64_t offset, uint64_t length) const { return offset <= size_ && length <= size_ - offset; }
  template <typename T> std::optional<T> read(uint64_t offset) const {
    if (!contains(offset, sizeof(T))) return std::nullopt;
    T value;
    std::memcpy(&value, base_ + offset, sizeof(T));
    return value;
  }

 private:
  const uint8_t* base_;
  uint64_t size_;
};

// Whether every byte of [p, p + n) can be read. The sizes an image declares may point past the caller's buffer
// (a corrupt fatbinary, a wrapper pointing at unmapped memory): one byte of every page is read through
// process_vm_readv, which fails with EFAULT instead of faulting. Where the system refuses the call (seccomp), the
// bytes are assumed readable, as before.
bool readable(const void* p, size_t n) {
  static const size_t kPage = size_t(sysconf(_SC_PAGESIZE));
  if (n == 0) return true;
  uintptr_t first = reinterpret_cast<uintptr_t>(p);
  if (first + n < first) return false;
  uintptr_t page = first & ~(kPage - 1);
  uintptr_t last = first + n - 1;
  constexpr size_t kBatch = 256;
  char sink[kBatch];
  iovec local{sink, kBatch};
  iovec remote[kBatch];
  while (page <= last) {
    size_t count = 0;
    for (; count < kBatch && page <= last; ++count, page += kPage)
      remote[count] = {reinterpret_cast<void*>(std::max(page, first)), 1};
    local.iov_len = count;
    ssize_t got = process_vm_readv(getpid(), &local, 1, remote, count, 0);
    if (got == ssize_t(count)) continue;
    if (got < 0 && errno != EFAULT) return true;  // the call itself is unavailable
    return false;
  }
  return true;
}

// The length of NUL-terminated text of unknown size, checked page by page; nullopt if unreadable memory comes
// before the NUL.
std::optional<size_t> readableTextLength(const char* text) {
  static const size_t kPage = size_t(sysconf(_SC_PAGESIZE));
  size_t length = 0;
  while (true) {
    const char* at = text + length;
    size_t inPage = kPage - (reinterpret_cast<uintptr_t>(at) & (kPage - 1));
    if (!readable(at, inPage)) return std::nullopt;
    if (const void* nul = std::memchr(at, 0, inPage)) return length + size_t(static_cast<const char*>(nul) - at);
    length += inPage;
  }
}

// Compares a prefix byte by byte, stopping at the first difference: safe on a short NUL-terminated string of
// unknown size, because none of the magic numbers contains a zero byte.
bool startsWith(const void* image, size_t size, const uint8_t* magic, size_t length) {
  auto* p = static_cast<const uint8_t*>(image);
  for (size_t i = 0; i < length; ++i) {
    if (i >= size || p[i] != magic[i]) return false;
  }
  return true;
}

bool startsWithU32(const void* image, size_t size, uint32_t magic) {
  uint8_t bytes[4];
  std::memcpy(bytes, &magic, 4);
  return startsWith(image, size, bytes, 4);
}

// Skips whitespace and comments at the start of a text; returns the offset of the first other character,
// or nullopt when the text ends (NUL or size) first.
std::optional<size_t> skipBlankAndComments(const char* text, size_t size) {
  size_t i = 0;
  auto more = [&](size_t k) { return k < size && text[k] != '\0'; };
  while (more(i)) {
    char c = text[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
      ++i;
    } else if (c == '/' && more(i + 1) && text[i + 1] == '/') {
      while (more(i) && text[i] != '\n') ++i;
    } else if (c == '/' && more(i + 1) && text[i + 1] == '*') {
      i += 2;
      while (more(i) && !(text[i] == '*' && more(i + 1) && text[i + 1] == '/')) ++i;
      if (!more(i)) return std::nullopt;
      i += 2;
    } else {
      return i;
    }
  }
  return std::nullopt;
}

bool looksLikePtx(const void* image, size_t size) {
  auto start = skipBlankAndComments(static_cast<const char*>(image), size);
  return start && static_cast<const char*>(image)[*start] == '.';
}

size_t textLength(const char* text, size_t size) {
  if (size == kUnknownImageSize) return std::strlen(text);
  const void* nul = std::memchr(text, 0, size);
  return nul ? static_cast<size_t>(static_cast<const char*>(nul) - text) : size;
}

std::string trimmedString(const uint8_t* p, size_t length) {
  std::string s(reinterpret_cast<const char*>(p), length);
  s.erase(std::find(s.begin(), s.end(), '\0'), s.end());
  while (!s.empty() && s.back() == ' ') s.pop_back();
  while (!s.empty() && s.front() == ' ') s.erase(s.begin());
  return s;
}

std::string archName(const char* prefix, uint32_t arch, bool archSpecific, bool familySpecific) {
  return fmt::format("{}_{}{}", prefix, arch, archSpecific ? "a" : familySpecific ? "f" : "");
}

std::string entryArchName(const fatbin::Entry& e) {
  return archName(e.kind == uint16_t(fatbin::EntryKind::Ptx) ? "compute" : "sm", e.arch, e.archSpecific,
                  e.familySpecific);
}

bool deviceCanRun(const PtxText& ptx, uint32_t cc) {
  if (ptx.archSpecific) return ptx.arch == cc;
  if (ptx.familySpecific) return ptx.arch / 10 == cc / 10 && ptx.arch <= cc;
  return ptx.arch <= cc;
}

// SASS runs on devices of its major architecture and the same or a higher minor one; "a" cubins on their own SM only.
bool deviceCanLoadCubin(const fatbin::Entry& e, uint32_t cc) {
  if (e.archSpecific) return e.arch == cc;
  return e.arch / 10 == cc / 10 && e.arch <= cc;
}

// Preference among runnable PTX: the highest arch; on a tie the most specific, then the newest ISA.
int specificity(const fatbin::Entry& e) { return e.archSpecific ? 2 : e.familySpecific ? 1 : 0; }

std::string describeImageLocation(const void* image) {
  std::string binary = binaryContaining(image);
  if (!binary.empty()) return binary;
  const std::string caller = tlEntryCaller ? binaryContaining(tlEntryCaller) : std::string();
  if (!caller.empty()) return fmt::format("the module image at {} (loaded by {})", image, caller);
  return fmt::format("the module image at {}", image);
}

// Copies [address, address + length) if every byte is readable (the image of an unknown size may be shorter than
// its header claims); false otherwise, without faulting.
bool copyIfReadable(const uint8_t* address, uint64_t length, std::string& out) {
  if (length > (64u << 20)) return false;
  out.resize(length);
  iovec local{out.data(), length}, remote{const_cast<uint8_t*>(address), length};
  return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == ssize_t(length);
}

// The kernels of a cubin: its ".text.<name>" sections (empty when the headers are malformed or unreadable).
std::vector<std::string> cubinKernelNames(const uint8_t* elf, size_t size) {
  std::vector<std::string> names;
  uint64_t sectionTable;
  uint16_t entrySize, count, namesIndex;
  std::memcpy(&sectionTable, elf + 0x28, 8);
  std::memcpy(&entrySize, elf + 0x3A, 2);
  std::memcpy(&count, elf + 0x3C, 2);
  std::memcpy(&namesIndex, elf + 0x3E, 2);
  if (entrySize < 64 || namesIndex >= count || sectionTable > (64u << 20)) return names;
  uint64_t tableEnd = sectionTable + uint64_t(entrySize) * count;
  if (size != kUnknownImageSize && tableEnd > size) return names;
  std::string table;
  if (!copyIfReadable(elf + sectionTable, tableEnd - sectionTable, table)) return names;
  auto field64 = [&](uint16_t section, unsigned offset) {
    uint64_t v;
    std::memcpy(&v, table.data() + uint64_t(section) * entrySize + offset, 8);
    return v;
  };
  uint64_t namesOffset = field64(namesIndex, 0x18), namesSize = field64(namesIndex, 0x20);
  if (namesOffset > (64u << 20) || namesSize > (64u << 20)) return names;
  if (size != kUnknownImageSize && namesOffset + namesSize > size) return names;
  std::string strings;
  if (!copyIfReadable(elf + namesOffset, namesSize, strings)) return names;
  for (uint16_t i = 0; i < count; ++i) {
    uint32_t nameOffset;
    std::memcpy(&nameOffset, table.data() + uint64_t(i) * entrySize, 4);
    if (nameOffset >= namesSize) continue;
    std::string_view name(strings.data() + nameOffset, strnlen(strings.data() + nameOffset, namesSize - nameOffset));
    if (name.starts_with(".text.")) names.emplace_back(name.substr(6));
  }
  return names;
}

// The SASS a container offers the device (the entry it could load, else the newest); empty when there is none or it
// cannot be read.
std::string offeredSass(const fatbin::Container& container, uint32_t cc) {
  const fatbin::Entry* chosen = nullptr;
  for (const fatbin::Entry& e : container.entries) {
    if (e.kind != uint16_t(fatbin::EntryKind::Elf)) continue;
    bool loadable = deviceCanLoadCubin(e, cc);
    if (!chosen || (loadable && !deviceCanLoadCubin(*chosen, cc)) ||
        (loadable == deviceCanLoadCubin(*chosen, cc) && e.arch > chosen->arch))
      chosen = &e;
  }
  if (!chosen) return {};
  auto elf = fatbin::entryPayload(container, *chosen);
  if (!elf || elf->size() < 64) return {};
  return std::move(*elf);
}

// The bytes a cubin spans (its section and program headers, and what they describe), for a cubin handed over
// without its size; 0 when the headers are unreadable or implausible.
uint64_t cubinExtent(const uint8_t* elf) {
  std::string header;
  if (!copyIfReadable(elf, 64, header)) return 0;
  auto field = [&](const std::string& bytes, uint64_t offset, unsigned width) {
    uint64_t v = 0;
    std::memcpy(&v, bytes.data() + offset, width);
    return v;
  };
  const uint64_t sections = field(header, 0x28, 8), programs = field(header, 0x20, 8);
  const uint64_t sectionSize = field(header, 0x3A, 2), sectionCount = field(header, 0x3C, 2);
  const uint64_t programSize = field(header, 0x36, 2), programCount = field(header, 0x38, 2);
  if (sectionSize < 64 || sections > (64u << 20) || programs > (64u << 20)) return 0;
  uint64_t end = std::max<uint64_t>(64, sections + sectionSize * sectionCount);
  std::string table;
  if (!copyIfReadable(elf + sections, sectionSize * sectionCount, table)) return 0;
  for (uint64_t i = 0; i < sectionCount; ++i)
    if (field(table, i * sectionSize + 4, 4) != 8)  // SHT_NOBITS occupies no bytes of the image
      end = std::max(end, field(table, i * sectionSize + 0x18, 8) + field(table, i * sectionSize + 0x20, 8));
  if (programCount && programSize >= 56) {
    if (!copyIfReadable(elf + programs, programSize * programCount, table)) return 0;
    for (uint64_t i = 0; i < programCount; ++i)
      end = std::max(end, field(table, i * programSize + 8, 8) + field(table, i * programSize + 0x20, 8));
  }
  return end <= (uint64_t(256) << 20) ? end : 0;
}

// " of kernel K and N more": the kernels of the SASS a container offers the device, so that a refused library image
// names what the library asked for; empty when unreadable.
std::string sassKernelsPhrase(const fatbin::Container& container, uint32_t cc) {
  const std::string elf = offeredSass(container, cc);
  if (elf.empty()) return {};
  auto kernels = cubinKernelNames(reinterpret_cast<const uint8_t*>(elf.data()), elf.size());
  if (kernels.empty()) return {};
  return fmt::format(" of kernel {}{}", kernels.front(),
                     kernels.size() > 1 ? fmt::format(" and {} more", kernels.size() - 1) : "");
}

// The PTX a client compiled this SASS from, where it left it beside (core/companion_ptx.h): run in its place.
std::optional<PtxText> companionOf(std::string_view elf, std::string_view where) {
  if (elf.size() < 64) return std::nullopt;
  auto kernels = cubinKernelNames(reinterpret_cast<const uint8_t*>(elf.data()), elf.size());
  auto found = findCompanionPtx(elf, kernels);
  if (!found) return std::nullopt;
  PtxText ptx;
  ptx.companion = fmt::format("{}: SASS only (kernel {}); running the PTX it was compiled from, {}", where,
                              kernels.front(), found->path);
  ptx.text = std::move(found->text);
  ptx.sourceName = found->path;
  ptx.standsInForCubin = true;  // a GPU runs the SASS: the PTX's ISA need not be one its driver compiles
  return ptx;
}

// The path of the running program, as binaryContaining() names it.
const std::string& mainProgram() {
  static const std::string path = [] {
    char buffer[4096];
    ssize_t n = readlink("/proc/self/exe", buffer, sizeof buffer - 1);
    return n > 0 ? std::string(buffer, static_cast<size_t>(n)) : std::string();
  }();
  return path;
}

std::string ptxAdvice(uint32_t cc) {
  return fmt::format("rebuild with -gencode arch=compute_{0},code=compute_{0} (or -arch=sm_{0}, which also embeds PTX)",
                     cc);
}

// The built-in profiles whose devices could run one of `ptx` (PTX too new for the device asked): the advice for a
// library that ships PTX only for newer architectures (NVIDIA's math libraries, XLA's and cuDNN's kernels).
std::string profileAdvice(const std::vector<PtxText>& ptx) {
  std::vector<std::string> names;
  for (const std::string& name : builtinProfileNames()) {
    auto profile = builtinProfile(name);
    if (!profile) continue;
    uint32_t cc = uint32_t(profile->ccMajor * 10 + profile->ccMinor);
    if (std::any_of(ptx.begin(), ptx.end(), [&](const PtxText& p) { return deviceCanRun(p, cc); }))
      names.push_back(name);
  }
  if (names.empty()) return {};
  return fmt::format("; cuemu's {} profile{} run{} it: `cuemu run --device-profile {}` (CUEMU_DEVICE_PROFILE)",
                     fmt::join(names, " and "), names.size() > 1 ? "s" : "", names.size() > 1 ? "" : "s", names.back());
}

// The best PTX of one container for a device, or the error explaining why there is none.
Expected<PtxText> bestPtx(const fatbin::Container& container, uint32_t cc, const void* image) {
  const fatbin::Entry* best = nullptr;
  std::vector<std::string> sass, ptxTooNew;
  std::vector<PtxText> tooNew;
  bool loadableCubin = false;
  for (const fatbin::Entry& e : container.entries) {
    if (e.kind == uint16_t(fatbin::EntryKind::Elf)) {
      sass.push_back(entryArchName(e));
      loadableCubin = loadableCubin || deviceCanLoadCubin(e, cc);
    }
    if (e.kind != uint16_t(fatbin::EntryKind::Ptx)) continue;
    PtxText probe;
    probe.arch = e.arch;
    probe.archSpecific = e.archSpecific;
    probe.familySpecific = e.familySpecific;
    if (!deviceCanRun(probe, cc)) {
      ptxTooNew.push_back(entryArchName(e));
      tooNew.push_back(probe);
      continue;
    }
    if (!best || e.arch > best->arch || (e.arch == best->arch && specificity(e) > specificity(*best)) ||
        (e.arch == best->arch && specificity(e) == specificity(*best) &&
         std::pair(e.versionMajor, e.versionMinor) > std::pair(best->versionMajor, best->versionMinor)))
      best = &e;
  }
  if (!best) {
    std::string where = describeImageLocation(image);
    if (!sass.empty() && ptxTooNew.empty())
      if (auto companion = companionOf(offeredSass(container, cc), where)) return std::move(*companion);
    std::string has;
    if (!ptxTooNew.empty())
      has = fmt::format("PTX only for {}, which a compute capability {}.{} device cannot run",
                        fmt::join(ptxTooNew, ", "), cc / 10, cc % 10);
    else if (!sass.empty())
      has = fmt::format("no PTX, only SASS for {}{} (cuemu runs PTX, not SASS)", fmt::join(sass, ", "),
                        sassKernelsPhrase(container, cc));
    else
      has = "no PTX";
    // A library's image (NVIDIA's cuBLASLt ships some kernels as SASS only) cannot be rebuilt by its user, and a
    // library that chose it under CUDA_FORCE_PTX_JIT=1 has no PTX of that kernel at all.
    std::string binary = binaryContaining(image);
    if (!ptxTooNew.empty()) {
      std::string profiles = profileAdvice(tooNew);
      std::string rebuild =
          !binary.empty() && binary != mainProgram() ? "where you build the library yourself, " : "or ";
      return makeError(CUDA_ERROR_NO_BINARY_FOR_GPU,
                       fmt::format("{}: the fatbinary has {}{}; {}{}", where, has, profiles, rebuild, ptxAdvice(cc)));
    }
    if (!binary.empty() && binary != mainProgram()) {
      const char* forced = std::getenv("CUDA_FORCE_PTX_JIT");
      return makeError(
          CUDA_ERROR_NO_BINARY_FOR_GPU,
          fmt::format("{}: the fatbinary has {}: the library ships this code as SASS only{}; where you "
                      "build the library yourself, {}",
                      where, has, forced && forced[0] == '1' ? " and chose it although CUDA_FORCE_PTX_JIT=1" : "",
                      ptxAdvice(cc)));
    }
    return makeError(CUDA_ERROR_NO_BINARY_FOR_GPU,
                     fmt::format("{}: the fatbinary has {}; {}", where, has, ptxAdvice(cc)));
  }
  auto text = fatbin::entryPayload(container, *best);
  if (!text) return text.takeError();
  // A PTX entry without text: driver 580 answers CUDA_ERROR_INVALID_PTX when the entry's header is intact (its
  // payload all zero bytes, measured on an H100) and CUDA_ERROR_UNKNOWN when the header names no PTX version either
  // (a fatbinary cut inside its first entry header, measured on an H200).
  if (text->empty() || text->front() == '\0')
    return makeError(best->versionMajor ? CUDA_ERROR_INVALID_PTX : CUDA_ERROR_UNKNOWN,
                     fmt::format("{}: the fatbinary's PTX entry for {} is empty", describeImageLocation(image),
                                 entryArchName(*best)));
  PtxText ptx;
  ptx.text = std::move(*text);
  ptx.arch = best->arch;
  ptx.archSpecific = best->archSpecific;
  ptx.familySpecific = best->familySpecific;
  ptx.options = best->options;
  ptx.sourceName = best->sourceName;
  ptx.standsInForCubin = loadableCubin;
  return ptx;
}

Expected<PtxText> bestPtxOfContainer(const void* containerImage, size_t size, uint32_t cc, const void* image) {
  auto container = fatbin::parseContainer(containerImage, size);
  if (!container) return container.takeError();
  return bestPtx(*container, cc, image);
}

// Whether PTX text defines (not just declares) the device runtime's launch entry point: the container is then
// NVIDIA's device runtime library (libcudadevrt, linked by -lcudadevrt), whose PTX exists only for the newest
// architecture and whose code talks to the GPU's scheduler. The interpreter implements the device runtime itself
// (ptx-interp: exec/device_runtime.cpp), so such a unit is left out of the link.
bool definesDeviceRuntime(std::string_view ptx) {
  static constexpr std::string_view kName = "__cudaCDP2GetParameterBufferV2";
  for (size_t at = ptx.find(kName); at != std::string_view::npos; at = ptx.find(kName, at + 1)) {
    size_t start = ptx.find_last_of(";}", at);
    std::string_view head = ptx.substr(start == std::string_view::npos ? 0 : start + 1, at - (start + 1));
    if (head.find(".func") != std::string_view::npos && head.find(".extern") == std::string_view::npos) return true;
  }
  return false;
}

// Every PTX entry of a container comes from the same source: the first one tells.
bool isDeviceRuntime(const fatbin::Container& container) {
  for (const fatbin::Entry& e : container.entries) {
    if (e.kind != uint16_t(fatbin::EntryKind::Ptx)) continue;
    auto text = fatbin::entryPayload(container, e);
    return text && definesDeviceRuntime(*text);
  }
  return false;
}

std::string decompressError(const char* format, const fatbin::Entry& e, const std::string& detail) {
  return fmt::format("fatbinary entry {} at offset {}: {} data is corrupt ({})", entryArchName(e), e.payloadOffset,
                     format, detail);
}

Expected<std::string> decompressLz4(const uint8_t* src, const fatbin::Entry& e) {
  // LZ4 cannot expand a byte more than 255-fold: a larger declared size is a lie.
  if (e.uncompressedSize == 0 || e.uncompressedSize > fatbin::kMaxEntryBytes ||
      e.uncompressedSize > e.storedSize * 255 + 64 || e.storedSize > INT_MAX)
    return invalidImage(
        decompressError("LZ4", e, fmt::format("implausible sizes {} -> {}", e.storedSize, e.uncompressedSize)));
  std::string out(e.uncompressedSize, '\0');
  int n = LZ4_decompress_safe(reinterpret_cast<const char*>(src), out.data(), static_cast<int>(e.storedSize),
                              static_cast<int>(out.size()));
  if (n < 0 || static_cast<uint64_t>(n) != e.uncompressedSize)
    return invalidImage(decompressError("LZ4", e, n < 0 ? "decoder error" : "wrong decompressed size"));
  return out;
}

Expected<std::string> decompressZstd(const uint8_t* src, const fatbin::Entry& e) {
  if (e.uncompressedSize == 0 || e.uncompressedSize > fatbin::kMaxEntryBytes)
    return invalidImage(decompressError("ZSTD", e, fmt::format("implausible size {}", e.uncompressedSize)));
  unsigned long long frameSize = ZSTD_getFrameContentSize(src, e.storedSize);
  if (frameSize == ZSTD_CONTENTSIZE_ERROR) return invalidImage(decompressError("ZSTD", e, "not a ZSTD frame"));
  if (frameSize != ZSTD_CONTENTSIZE_UNKNOWN && frameSize != e.uncompressedSize)
    return invalidImage(decompressError("ZSTD", e, "frame size disagrees with the entry header"));
  // Streaming into a buffer that grows with the output actually produced: a lying header cannot make us
  // allocate more than a small multiple of what the data really decodes to.
  std::unique_ptr<ZSTD_DCtx, size_t (*)(ZSTD_DCtx*)> ctx(ZSTD_createDCtx(), ZSTD_freeDCtx);
  if (!ctx) throw std::bad_alloc();
  std::string out;
  size_t produced = 0;
  // One byte more than declared, so that a frame producing too much is caught rather than cut.
  const uint64_t capacity = e.uncompressedSize + 1;
  ZSTD_inBuffer in{src, static_cast<size_t>(e.storedSize), 0};
  size_t status = 1;
  while (status != 0) {
    if (produced == out.size()) {
      if (out.size() >= capacity) break;
      size_t grow = std::max<size_t>(out.size(), 64 * 1024);
      out.resize(std::min<uint64_t>(out.size() + grow, capacity));
    }
    ZSTD_outBuffer outBuf{out.data(), out.size(), produced};
    size_t consumedBefore = in.pos;
    status = ZSTD_decompressStream(ctx.get(), &outBuf, &in);
    if (ZSTD_isError(status)) return invalidImage(decompressError("ZSTD", e, ZSTD_getErrorName(status)));
    bool progressed = outBuf.pos != produced || in.pos != consumedBefore;
    produced = outBuf.pos;
    if (status != 0 && !progressed && produced < out.size())
      return invalidImage(decompressError("ZSTD", e, "truncated frame"));
  }
  if (status != 0 || produced > e.uncompressedSize)
    return invalidImage(decompressError("ZSTD", e, "more data than the entry header declares"));
  if (produced != e.uncompressedSize) return invalidImage(decompressError("ZSTD", e, "wrong decompressed size"));
  out.resize(produced);
  return out;
}

}  // namespace

const char* imageKindName(ImageKind kind) {
  switch (kind) {
    case ImageKind::PtxText: return "PTX text";
    case ImageKind::FatbinWrapper: return "fatbinary wrapper";
    case ImageKind::FatbinContainer: return "fatbinary";
    case ImageKind::ElfCubin: return "ELF cubin";
  }
  return "?";
}

Expected<ImageKind> classifyImage(const void* image, size_t size) {
  if (!image) return makeError(CUDA_ERROR_INVALID_VALUE, "the module image is a null pointer");
  if (size == 0) return invalidImage("the module image is empty");
  if (size == kUnknownImageSize && !readable(image, 1)) return invalidImage("the module image is not readable memory");
  if (startsWithU32(image, size, fatbin::kWrapperMagic)) {
    if (size < kWrapperSize || (size == kUnknownImageSize && !readable(image, kWrapperSize)))
      return invalidImage("truncated fatbinary wrapper");
    return ImageKind::FatbinWrapper;
  }
  if (startsWithU32(image, size, fatbin::kContainerMagic)) {
    if (size < kContainerHeaderSize) return invalidImage("truncated fatbinary header");
    return ImageKind::FatbinContainer;
  }
  static constexpr uint8_t kElfMagic[] = {0x7f, 'E', 'L', 'F'};
  if (startsWith(image, size, kElfMagic, 4)) {
    auto* p = static_cast<const uint8_t*>(image);
    // The ELF header is 64 bytes; a short NUL-terminated string cannot get here (checked byte by byte).
    if (size < 64 || (size == kUnknownImageSize && !readable(image, 64))) return invalidImage("truncated ELF image");
    if (p[4] != 2) return invalidImage("ELF image is not 64-bit");
    uint16_t machine;
    std::memcpy(&machine, p + 0x12, 2);
    if (machine != kElfMachineCuda) return invalidImage(fmt::format("ELF image is not a cubin (machine {})", machine));
    return ImageKind::ElfCubin;
  }
  if (size == kUnknownImageSize && !readableTextLength(static_cast<const char*>(image)))
    return invalidImage("the module image is text without a terminating NUL before unreadable memory");
  if (looksLikePtx(image, size)) return ImageKind::PtxText;
  return invalidImage("the module image is neither PTX, a fatbinary nor a cubin");
}

namespace fatbin {

Expected<Container> parseContainer(const void* image, size_t size) {
  if (!image) return invalidImage("null fatbinary");
  if (size != kUnknownImageSize && size < kContainerHeaderSize) return invalidImage("truncated fatbinary header");
  if (size == kUnknownImageSize && !readable(image, kContainerHeaderSize))
    return invalidImage("the fatbinary header is not readable memory");
  Bytes header(static_cast<const uint8_t*>(image), kContainerHeaderSize);
  if (*header.read<uint32_t>(0) != kContainerMagic) return invalidImage("not a fatbinary (bad magic)");
  uint16_t version = *header.read<uint16_t>(4);
  uint16_t headerSize = *header.read<uint16_t>(6);
  uint64_t dataSize = *header.read<uint64_t>(8);
  if (version != 1) return invalidImage(fmt::format("unsupported fatbinary version {}", version));
  if (headerSize < kContainerHeaderSize) return invalidImage(fmt::format("bad fatbinary header size {}", headerSize));
  uint64_t limit = size == kUnknownImageSize ? kMaxContainerBytes : size;
  if (dataSize > limit || headerSize + dataSize > limit)
    return invalidImage(fmt::format("fatbinary declares {} bytes, more than the {} available", headerSize + dataSize,
                                    size == kUnknownImageSize ? "plausible" : std::to_string(size)));
  if (size == kUnknownImageSize && !readable(image, headerSize + dataSize))
    return invalidImage(
        fmt::format("fatbinary declares {} bytes, more than its readable memory holds", headerSize + dataSize));

  Container container;
  container.base = static_cast<const uint8_t*>(image);
  container.totalSize = headerSize + dataSize;
  Bytes bytes(container.base, container.totalSize);
  uint64_t offset = headerSize;
  while (offset < container.totalSize) {
    if (!bytes.contains(offset, kEntryHeaderMinSize))
      return invalidImage(fmt::format("truncated fatbinary entry header at offset {}", offset));
    Entry e;
    e.kind = *bytes.read<uint16_t>(offset);
    uint32_t entryHeaderSize = *bytes.read<uint32_t>(offset + 0x04);
    e.payloadSize = *bytes.read<uint64_t>(offset + 0x08);
    uint32_t compressedSize = *bytes.read<uint32_t>(offset + 0x10);
    uint32_t optionsOffset = *bytes.read<uint32_t>(offset + 0x14);
    e.versionMinor = *bytes.read<uint16_t>(offset + 0x18);
    e.versionMajor = *bytes.read<uint16_t>(offset + 0x1A);
    e.arch = *bytes.read<uint32_t>(offset + 0x1C);
    uint32_t sourceOffset = *bytes.read<uint32_t>(offset + 0x20);
    uint32_t sourceLength = *bytes.read<uint32_t>(offset + 0x24);
    e.flags = *bytes.read<uint64_t>(offset + 0x28);
    e.uncompressedSize = *bytes.read<uint64_t>(offset + 0x38);
    e.archSpecific = e.flags & kFlagArchSpecific;
    e.familySpecific = e.flags & kFlagFamilySpecific;

    if (entryHeaderSize < kEntryHeaderMinSize || !bytes.contains(offset, entryHeaderSize))
      return invalidImage(fmt::format("bad fatbinary entry header size {} at offset {}", entryHeaderSize, offset));
    Bytes entry(container.base + offset, container.totalSize - offset);
    if (!entry.contains(entryHeaderSize, e.payloadSize))
      return invalidImage(
          fmt::format("fatbinary entry at offset {} declares {} payload bytes, past the end", offset, e.payloadSize));
    e.payloadOffset = offset + entryHeaderSize;
    uint64_t entryEnd = entryHeaderSize + e.payloadSize;

    bool lz4 = e.flags & kFlagLz4, zstd = e.flags & kFlagZstd;
    if (lz4 && zstd) return invalidImage(fmt::format("fatbinary entry at offset {} claims two compressions", offset));
    e.compression = lz4 ? Compression::Lz4 : zstd ? Compression::Zstd : Compression::None;
    if (e.compression != Compression::None) {
      if (compressedSize == 0 || compressedSize > e.payloadSize)
        return invalidImage(fmt::format("fatbinary entry at offset {}: compressed size {} does not fit its payload {}",
                                        offset, compressedSize, e.payloadSize));
      e.storedSize = compressedSize;
    } else {
      e.storedSize = e.payloadSize;
      e.uncompressedSize = e.payloadSize;
    }

    if (optionsOffset != 0) {
      auto stringOffset = entry.read<uint32_t>(optionsOffset);
      auto stringLength = entry.read<uint32_t>(uint64_t(optionsOffset) + 4);
      if (!stringOffset || !stringLength || uint64_t(optionsOffset) + 8 > entryEnd ||
          !Bytes(entry.at(0), entryEnd).contains(*stringOffset, *stringLength))
        return invalidImage(fmt::format("fatbinary entry at offset {}: options out of bounds", offset));
      // SASS entries of sm_100+ keep binary data in this block; only PTX options are text.
      if (e.kind == uint16_t(EntryKind::Ptx)) e.options = trimmedString(entry.at(*stringOffset), *stringLength);
    }
    if (sourceLength != 0) {
      if (!Bytes(entry.at(0), entryEnd).contains(sourceOffset, sourceLength))
        return invalidImage(fmt::format("fatbinary entry at offset {}: source name out of bounds", offset));
      e.sourceName = trimmedString(entry.at(sourceOffset), sourceLength);
    }
    container.entries.push_back(std::move(e));
    offset += entryEnd;
  }
  return container;
}

Expected<std::string> entryPayload(const Container& container, const Entry& e) {
  if (e.payloadOffset > container.totalSize || e.storedSize > container.totalSize - e.payloadOffset)
    return invalidImage("fatbinary entry out of bounds");
  const uint8_t* src = container.base + e.payloadOffset;
  Expected<std::string> data = std::string();
  switch (e.compression) {
    case Compression::None: data = std::string(reinterpret_cast<const char*>(src), e.storedSize); break;
    case Compression::Lz4: data = decompressLz4(src, e); break;
    case Compression::Zstd: data = decompressZstd(src, e); break;
  }
  if (data && e.kind == uint16_t(EntryKind::Ptx)) data->erase(std::find(data->begin(), data->end(), '\0'), data->end());
  return data;
}

std::string entryName(const Entry& e) { return entryArchName(e); }

bool ptxRunsOn(const Entry& e, uint32_t cc) {
  if (e.kind != uint16_t(EntryKind::Ptx)) return false;
  PtxText probe;
  probe.arch = e.arch;
  probe.archSpecific = e.archSpecific;
  probe.familySpecific = e.familySpecific;
  return deviceCanRun(probe, cc);
}

std::vector<Container> findContainers(const void* data, size_t size) {
  std::vector<Container> found;
  const auto* bytes = static_cast<const uint8_t*>(data);
  uint64_t at = 0;
  // nvcc aligns containers to 8 bytes in every section that holds them.
  while (at + 16 <= size) {
    uint32_t magic = 0;
    std::memcpy(&magic, bytes + at, 4);
    if (magic != kContainerMagic) {
      at += 8;
      continue;
    }
    auto container = parseContainer(bytes + at, size - at);
    if (!container || container->totalSize == 0) {
      at += 8;
      continue;
    }
    at += (container->totalSize + 7) & ~uint64_t(7);
    found.push_back(std::move(*container));
  }
  return found;
}

}  // namespace fatbin

namespace {
constexpr std::string_view kNvjetPrefix = "nvjet_";
constexpr std::string_view kGeneratedSass = "SASS that cuBLASLt generates at run time (an nvjet kernel: no PTX exists)";
constexpr std::string_view kChosenSass = "the library loading it chose this SASS itself";
}  // namespace

bool refusedGeneratedSass(const Error& error) {
  return error.code == CUDA_ERROR_NO_BINARY_FOR_GPU && error.message.find(kGeneratedSass) != std::string::npos;
}

bool refusedChosenSass(const Error& error) {
  return error.code == CUDA_ERROR_NO_BINARY_FOR_GPU && error.message.find(kChosenSass) != std::string::npos;
}

Expected<PtxImage> extractPtx(const void* image, int ccMajor, int ccMinor, size_t size) {
  auto kind = classifyImage(image, size);
  if (!kind) return kind.takeError();
  if (ccMajor < 0 || ccMinor < 0 || ccMinor > 9) return makeError(CUDA_ERROR_INVALID_VALUE, "bad compute capability");
  uint32_t cc = static_cast<uint32_t>(ccMajor * 10 + ccMinor);
  PtxImage result;
  result.kind = *kind;
  switch (*kind) {
    case ImageKind::PtxText: {
      auto* text = static_cast<const char*>(image);
      PtxText ptx;
      ptx.text.assign(text, textLength(text, size));
      result.units.push_back(std::move(ptx));
      return result;
    }
    case ImageKind::FatbinContainer: {
      auto ptx = bestPtxOfContainer(image, size, cc, image);
      if (!ptx) return ptx.takeError();
      result.units.push_back(std::move(*ptx));
      return result;
    }
    case ImageKind::ElfCubin: {
      auto* p = static_cast<const uint8_t*>(image);
      uint32_t elfFlags;
      std::memcpy(&elfFlags, p + 0x30, 4);
      // ABI version 8 and later keep the SM number in bits 8-15 of e_flags, older ones in bits 0-7.
      uint32_t sm = p[8] >= 8 ? (elfFlags >> 8) & 0xFF : elfFlags & 0xFF;
      std::string where = describeImageLocation(image);
      auto kernels = cubinKernelNames(p, size);
      std::string cubin;  // (a copy: the extent comes from headers the image declares)
      if (copyIfReadable(p, size != kUnknownImageSize ? size : cubinExtent(p), cubin))
        if (auto companion = companionOf(cubin, where)) {
          result.units.push_back(std::move(*companion));
          return result;
        }
      if (binaryContaining(image).empty() && !kernels.empty() && kernels.front().starts_with(kNvjetPrefix)) {
        // cuBLASLt 13 writes the SASS of its nvjet kernels itself, right before it launches one; there is no PTX
        // of them. Its heuristics choose them on a 12.1 device for f16/bf16 GEMMs, not on 12.0 (measured with
        // tests/libraries: README, "NVIDIA's math libraries").
        return makeError(CUDA_ERROR_NO_BINARY_FOR_GPU,
                         fmt::format("{}: the image is a cubin (SASS for sm_{}) of kernel {}, {}, which cuemu cannot "
                                     "run (it runs PTX); on the rtx-pro-6000 profile (compute capability 12.0) "
                                     "cuBLASLt chooses cutlass kernels that have PTX for the same GEMMs",
                                     where, sm, kernels.front(), kGeneratedSass));
      }
      if (binaryContaining(image).empty() && !kernels.empty()) {
        // Not a cubin mapped from a binary: a library chose this SASS itself (cuBLASLt 13 does for its cutlass
        // kernels) and copied it out of its own storage; naming the kernels lets the user find the library.
        // cuBLAS/cuBLASLt read NVIDIA's CUDA_FORCE_PTX_JIT themselves and then prefer kernels that have PTX.
        const char* forced = std::getenv("CUDA_FORCE_PTX_JIT");
        const bool forcedOn = forced && forced[0] == '1';
        return makeError(
            CUDA_ERROR_NO_BINARY_FOR_GPU,
            fmt::format("{}: the image is a cubin (SASS for sm_{}) of kernel {}{}, which cuemu cannot run "
                        "(it runs PTX): {}{}",
                        where, sm, kernels.front(),
                        kernels.size() > 1 ? fmt::format(" and {} more", kernels.size() - 1) : "", kChosenSass,
                        forcedOn ? " (although CUDA_FORCE_PTX_JIT=1: it has no PTX of this kernel)"
                                 : "; with CUDA_FORCE_PTX_JIT=1 NVIDIA's libraries choose kernels "
                                   "that have PTX"));
      }
      return makeError(CUDA_ERROR_NO_BINARY_FOR_GPU,
                       fmt::format("{}: the image is a cubin (SASS for sm_{}), which cuemu cannot run; {}", where, sm,
                                   ptxAdvice(cc)));
    }
    case ImageKind::FatbinWrapper: break;
  }

  Bytes wrapper(static_cast<const uint8_t*>(image), kWrapperSize);
  uint32_t version = *wrapper.read<uint32_t>(4);
  auto fatbinAddress = *wrapper.read<uint64_t>(8);
  auto extraAddress = *wrapper.read<uint64_t>(16);
  if (version == 1) {
    if (!fatbinAddress) return invalidImage("fatbinary wrapper with a null fatbinary");
    auto* containerImage = reinterpret_cast<const void*>(fatbinAddress);
    if (!readable(containerImage, kContainerHeaderSize) ||
        !startsWithU32(containerImage, kContainerHeaderSize, fatbin::kContainerMagic))
      return invalidImage("fatbinary wrapper does not point to a fatbinary");
    auto ptx = bestPtxOfContainer(containerImage, kUnknownImageSize, cc, containerImage);
    if (!ptx) return ptx.takeError();
    result.units.push_back(std::move(*ptx));
    return result;
  }
  if (version == 2) {
    result.needsLinking = true;
    auto* units = reinterpret_cast<const uint64_t*>(extraAddress);
    for (size_t i = 0; units; ++i) {
      if (!readable(units + i, sizeof *units)) return invalidImage("fatbinary wrapper: unreadable unit list");
      if (units[i] == 0) break;
      if (i == kMaxLinkedUnits) return invalidImage("fatbinary wrapper: unit list is not terminated");
      auto* containerImage = reinterpret_cast<const void*>(units[i]);
      if (!readable(containerImage, kContainerHeaderSize) ||
          !startsWithU32(containerImage, kContainerHeaderSize, fatbin::kContainerMagic))
        return invalidImage(fmt::format("fatbinary wrapper: unit {} is not a fatbinary", i));
      auto container = fatbin::parseContainer(containerImage, kUnknownImageSize);
      if (!container) return container.takeError();
      if (isDeviceRuntime(*container)) {
        result.deviceRuntimeLeftOut = true;
        continue;
      }
      auto ptx = bestPtx(*container, cc, containerImage);
      if (!ptx) return ptx.takeError();
      result.units.push_back(std::move(*ptx));
    }
    return result;
  }
  return invalidImage(fmt::format("unsupported fatbinary wrapper version {}", version));
}

namespace {

constexpr uint16_t kElfMachineX86_64 = 62;

// The fatbinary sections of one host ELF file: every container in them, with PTX for the device, becomes a unit.
Expected<bool> collectHostElf(const Bytes& elf, uint32_t cc, const std::string& name, PtxImage& out,
                              std::vector<std::string>& problems) {
  if (elf.size() < 64 || elf.at(0)[4] != 2 || elf.at(0)[5] != 1)
    return invalidImage(name + ": not a 64-bit little-endian ELF file");
  if (*elf.read<uint16_t>(0x12) != kElfMachineX86_64)
    return invalidImage(
        fmt::format("{}: ELF file for machine {}, not a host (x86-64) object", name, *elf.read<uint16_t>(0x12)));
  uint64_t sectionTable = *elf.read<uint64_t>(0x28);
  uint16_t entrySize = *elf.read<uint16_t>(0x3A);
  uint16_t count = *elf.read<uint16_t>(0x3C);
  uint16_t namesIndex = *elf.read<uint16_t>(0x3E);
  if (entrySize < 64 || namesIndex >= count || !elf.contains(sectionTable, uint64_t(entrySize) * count))
    return invalidImage(name + ": bad ELF section table");
  auto section = [&](uint16_t i) { return sectionTable + uint64_t(i) * entrySize; };
  uint64_t namesOffset = *elf.read<uint64_t>(section(namesIndex) + 0x18);
  uint64_t namesSize = *elf.read<uint64_t>(section(namesIndex) + 0x20);
  if (!elf.contains(namesOffset, namesSize)) return invalidImage(name + ": bad ELF section names");
  for (uint16_t i = 0; i < count; ++i) {
    uint32_t nameOffset = *elf.read<uint32_t>(section(i));
    uint32_t type = *elf.read<uint32_t>(section(i) + 4);
    if (nameOffset >= namesSize || type == 8 /* SHT_NOBITS */) continue;
    const char* sectionName = reinterpret_cast<const char*>(elf.at(namesOffset + nameOffset));
    std::string_view sn(sectionName, strnlen(sectionName, namesSize - nameOffset));
    if (sn != ".nv_fatbin" && sn != "__nv_relfatbin") continue;
    uint64_t offset = *elf.read<uint64_t>(section(i) + 0x18);
    uint64_t size = *elf.read<uint64_t>(section(i) + 0x20);
    if (!elf.contains(offset, size)) return invalidImage(fmt::format("{}: section {} out of bounds", name, sn));
    // Containers follow each other, 8-byte aligned.
    uint64_t at = 0;
    while (at + kContainerHeaderSize <= size) {
      const uint8_t* p = elf.at(offset + at);
      if (!startsWithU32(p, size - at, fatbin::kContainerMagic)) {
        at += 8;
        continue;
      }
      auto container = fatbin::parseContainer(p, size - at);
      if (!container) return container.takeError();
      if (isDeviceRuntime(*container)) {
        out.deviceRuntimeLeftOut = true;
      } else if (auto ptx = bestPtx(*container, cc, p)) {
        out.units.push_back(std::move(*ptx));
      } else if (ptx.error().code == CUDA_ERROR_NO_BINARY_FOR_GPU) {
        problems.push_back(ptx.error().message);
      } else {
        return ptx.takeError();
      }
      at += (container->totalSize + 7) / 8 * 8;
    }
  }
  return true;
}

}  // namespace

Expected<PtxImage> extractPtxFromHostBinary(const void* data, size_t size, int ccMajor, int ccMinor,
                                            const std::string& name) {
  if (!data) return makeError(CUDA_ERROR_INVALID_VALUE, "null input");
  if (size == kUnknownImageSize || size == 0) return invalidImage(name + ": empty input");
  uint32_t cc = static_cast<uint32_t>(ccMajor * 10 + ccMinor);
  Bytes bytes(static_cast<const uint8_t*>(data), size);
  PtxImage image;
  image.needsLinking = true;
  std::vector<std::string> problems;
  static constexpr uint8_t kArMagic[] = {'!', '<', 'a', 'r', 'c', 'h', '>', '\n'};
  static constexpr uint8_t kElfMagic[] = {0x7f, 'E', 'L', 'F'};
  if (startsWith(data, size, kArMagic, sizeof kArMagic)) {
    // ar archive: 60-byte member headers (name, dates, ids, mode, decimal size, "`\n"), members 2-aligned.
    uint64_t at = sizeof kArMagic;
    while (at + 60 <= size) {
      std::string header(reinterpret_cast<const char*>(bytes.at(at)), 60);
      if (header.compare(58, 2, "`\n") != 0) return invalidImage(name + ": bad archive member header");
      uint64_t memberSize = std::strtoull(header.substr(48, 10).c_str(), nullptr, 10);
      uint64_t start = at + 60;
      if (!bytes.contains(start, memberSize)) return invalidImage(name + ": archive member past the end");
      if (startsWith(bytes.at(start), memberSize, kElfMagic, 4)) {
        std::string member = name + "(" + trimmedString(bytes.at(at), 16) + ")";
        auto collected = collectHostElf(Bytes(bytes.at(start), memberSize), cc, member, image, problems);
        if (!collected) return collected.takeError();
      }
      at = start + memberSize + (memberSize & 1);
    }
  } else if (startsWith(data, size, kElfMagic, 4)) {
    auto collected = collectHostElf(bytes, cc, name, image, problems);
    if (!collected) return collected.takeError();
  } else {
    return invalidImage(name + ": neither an ELF object nor an archive");
  }
  if (image.units.empty() && !image.deviceRuntimeLeftOut)
    return makeError(CUDA_ERROR_NO_BINARY_FOR_GPU,
                     problems.empty() ? name + ": no device code (compile with nvcc -dc or -c)" : problems.front());
  return image;
}

Expected<std::string> readImageFile(const char* path) {
  // Far beyond any module a device or pipe could sensibly deliver; /dev/zero must not be read forever.
  constexpr size_t kMaxUnsizedFileBytes = size_t(64) << 20;
  if (!path || !*path) return makeError(CUDA_ERROR_INVALID_VALUE, "empty module file name");
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);  // O_NONBLOCK: a FIFO without a writer must not block
  if (fd < 0)
    return makeError(CUDA_ERROR_FILE_NOT_FOUND, fmt::format("cannot open {}: {}", path, std::strerror(errno)));
  std::unique_ptr<int, void (*)(int*)> closer(&fd, [](int* f) { close(*f); });
  struct stat st {};
  if (fstat(fd, &st) != 0) return makeError(CUDA_ERROR_FILE_NOT_FOUND, fmt::format("cannot stat {}", path));
  if (S_ISDIR(st.st_mode)) return makeError(CUDA_ERROR_OUT_OF_MEMORY, fmt::format("{} is a directory", path));
  bool regular = S_ISREG(st.st_mode);
  size_t limit = regular ? size_t(st.st_size) : kMaxUnsizedFileBytes;
  std::string bytes;
  bytes.resize(regular ? limit : std::min<size_t>(limit, 1 << 20));
  size_t done = 0;
  while (true) {
    if (done == bytes.size()) {
      if (bytes.size() >= limit) {
        if (regular) break;  // a regular file is read to its size
        char probe;
        if (read(fd, &probe, 1) <= 0) break;
        return invalidImage(fmt::format("{} is not a regular file and delivers more than {} bytes", path, limit));
      }
      bytes.resize(std::min(limit, bytes.size() * 2));
    }
    ssize_t n = read(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // end of file, or a pipe with nothing to deliver
    done += size_t(n);
  }
  bytes.resize(done);
  bytes.push_back('\0');  // PTX files need not end with a NUL; images given in memory do
  return bytes;
}

std::string binaryContaining(const void* address) {
  struct Search {
    uintptr_t address;
    bool found = false;
    std::string name;
  } search{reinterpret_cast<uintptr_t>(address), false, {}};
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        auto* s = static_cast<Search*>(data);
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const auto& ph = info->dlpi_phdr[i];
          uintptr_t start = info->dlpi_addr + ph.p_vaddr;
          if (ph.p_type == PT_LOAD && s->address >= start && s->address - start < ph.p_memsz) {
            s->found = true;
            s->name = info->dlpi_name ? info->dlpi_name : "";
            return 1;
          }
        }
        return 0;
      },
      &search);
  if (!search.found) return {};
  if (search.name.empty()) {  // the main program
    char path[4096];
    ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
    if (n > 0) return std::string(path, static_cast<size_t>(n));
  }
  return search.name;
}

}  // namespace cuemu
