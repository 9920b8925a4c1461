// Theme: malformed modules (cuModuleLoad*, cuLink*).
#include "cases.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

using namespace reliability;

namespace {

std::vector<uint8_t> readData(const char* name) {
  std::ifstream in(std::string(RELIABILITY_DATA_DIR) + "/" + name, std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.empty()) wrong(std::string("cannot read test image ") + name);
  return bytes;
}

// `bytes` placed so that they end exactly where an inaccessible page begins: any read past them faults.
struct Guarded {
  uint8_t* map = nullptr;
  size_t mapBytes = 0;
  uint8_t* data = nullptr;
  explicit Guarded(const void* bytes, size_t size) {
    size_t page = size_t(sysconf(_SC_PAGESIZE));
    size_t dataPages = (size + page - 1) / page;
    mapBytes = (dataPages + 1) * page;
    void* m = mmap(nullptr, mapBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) wrong("mmap failed");
    map = static_cast<uint8_t*>(m);
    mprotect(map + dataPages * page, page, PROT_NONE);
    data = map + dataPages * page - size;
    std::memcpy(data, bytes, size);
  }
  ~Guarded() { munmap(map, mapBytes); }
};

void loadMustFail(const void* image, const char* what) {
  CUmodule module = nullptr;
  CUresult r = cuModuleLoadData(&module, image);
  if (r == CUDA_SUCCESS) cuModuleUnload(module);
  expectError(r, what);
}

// A fatbinary with one uncompressed PTX entry for sm_90 holding `payload`.
std::vector<uint8_t> fatbinWithPtx(const std::vector<uint8_t>& payload) {
  std::vector<uint8_t> out(16 + 64 + payload.size(), 0);
  auto put = [&](size_t at, auto value) { std::memcpy(out.data() + at, &value, sizeof value); };
  put(0, uint32_t(0xBA55ED50));
  put(4, uint16_t(1));
  put(6, uint16_t(16));
  put(8, uint64_t(64 + payload.size()));
  put(16 + 0x00, uint16_t(1));   // PTX
  put(16 + 0x04, uint32_t(64));  // entry header size
  put(16 + 0x08, uint64_t(payload.size()));
  put(16 + 0x18, uint16_t(0));  // PTX ISA 8.0
  put(16 + 0x1A, uint16_t(8));
  put(16 + 0x1C, uint32_t(90));
  put(16 + 0x28, uint64_t(1));  // 64-bit
  std::memcpy(out.data() + 80, payload.data(), payload.size());
  return out;
}

const char* kHeader = ".version 8.0\n.target sm_90\n.address_size 64\n";

}  // namespace

RELIABILITY_CASE("modules", modules_fatbin_header_mutations, 60, nullptr) {
  // Every header and entry-header field but the container size, mutated: each load answers, none crashes.
  setUp();
  std::vector<uint8_t> original = readData("default.fatbin");
  std::mt19937 rng(24);
  for (int i = 0; i < 600; ++i) {
    // The header size field is mutated too, so the declared end may lie up to 64 KiB past the original's: the
    // buffer holds those bytes (zeros), else a load would read past it as any driver must (ASan saw that).
    std::vector<uint8_t> image = original;
    image.resize(original.size() + 0x10000);
    int flips = 1 + int(rng() % 4);
    for (int f = 0; f < flips; ++f) image[rng() % std::min<size_t>(image.size(), 160)] = uint8_t(rng());
    // The container's declared size stays: a size past the buffer is modules_fatbin_size_past_buffer's defect.
    std::memcpy(image.data() + 8, original.data() + 8, 8);
    CUmodule module = nullptr;
    if (cuModuleLoadData(&module, image.data()) == CUDA_SUCCESS) cuModuleUnload(module);
  }
  CUmodule module = nullptr;
  expectResult(cuModuleLoadData(&module, original.data()), CUDA_SUCCESS, "the unmutated fatbinary");
}

RELIABILITY_CASE("modules", modules_fatbin_size_past_buffer, 20, "") {
  setUp();
  std::vector<uint8_t> image = readData("nocompress.fatbin");
  uint64_t declared = 0;
  std::memcpy(&declared, image.data() + 8, 8);
  declared += 1 << 20;  // plausible, but a MiB past what the caller has
  std::memcpy(image.data() + 8, &declared, 8);
  Guarded guarded(image.data(), image.size());
  loadMustFail(guarded.data, "a fatbinary declaring more bytes than its buffer holds");
}

RELIABILITY_CASE("modules", modules_wrapper_to_unmapped_page, 20, "") {
  setUp();
  size_t page = size_t(sysconf(_SC_PAGESIZE));
  void* hole = mmap(nullptr, page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  struct {
    uint32_t magic, version;
    const void* fatbin;
    const void* extra;
  } wrapper{0x466243b1, 1, hole, nullptr};
  loadMustFail(&wrapper, "a runtime wrapper pointing at an inaccessible page");
}

RELIABILITY_CASE("modules", modules_ptx_without_nul, 20, "") {
  setUp();
  std::string text = std::string(kHeader) + ".visible .entry k() { ret; }\n";
  Guarded guarded(text.data(), text.size());  // no terminating NUL: an inaccessible page follows
  CUmodule module = nullptr;
  CUresult r = cuModuleLoadData(&module, guarded.data);
  if (r != CUDA_ERROR_INVALID_IMAGE && r != CUDA_ERROR_INVALID_PTX && r != CUDA_ERROR_INVALID_VALUE)
    wrong("PTX without a terminating NUL before an inaccessible page: " + resultName(r));
}

RELIABILITY_CASE("modules", modules_load_dev_zero, 4, "") {
  setUp();
  CUmodule module = nullptr;
  expectError(cuModuleLoad(&module, "/dev/zero"), "cuModuleLoad(/dev/zero)");
}

RELIABILITY_CASE("modules", modules_load_directory, 20, nullptr) {
  setUp();
  CUmodule module = nullptr;
  expectError(cuModuleLoad(&module, "/"), "cuModuleLoad(/)");
}

RELIABILITY_CASE("modules", modules_load_missing_file, 20, nullptr) {
  setUp();
  CUmodule module = nullptr;
  expectResult(cuModuleLoad(&module, "/nonexistent/reliability.ptx"), CUDA_ERROR_FILE_NOT_FOUND,
               "cuModuleLoad of a missing file");
}

RELIABILITY_CASE("modules", modules_random_bytes, 30, nullptr) {
  setUp();
  std::mt19937 rng(7);
  for (int i = 0; i < 300; ++i) {
    std::vector<uint8_t> bytes(1 + rng() % 4096);
    for (auto& b : bytes) b = uint8_t(rng() % 255 + 1);
    bytes.back() = 0;
    loadMustFail(bytes.data(), "random bytes");
  }
}

RELIABILITY_CASE("modules", modules_empty_and_null, 20, nullptr) {
  setUp();
  loadMustFail("", "an empty image");
  CUmodule module = nullptr;
  expectError(cuModuleLoadData(&module, nullptr), "a null image");
  expectError(cuModuleLoadData(nullptr, kKernels), "a null module pointer");
}

RELIABILITY_CASE("modules", modules_truncated_ptx, 30, nullptr) {
  setUp();
  std::string text = kKernels;
  for (size_t cut = text.size() / 2; cut < text.size(); cut += 97) {
    std::string part = text.substr(0, cut);
    if (part.find_last_of('}') == part.size() - 1) continue;  // a cut right after a closing brace is valid PTX
    CUmodule module = nullptr;
    if (cuModuleLoadData(&module, part.c_str()) == CUDA_SUCCESS) cuModuleUnload(module);
  }
}

RELIABILITY_CASE("modules", modules_ptx_deep_nesting, 30, nullptr) {
  setUp();
  std::string text = std::string(kHeader) + ".visible .entry k()\n";
  text += std::string(200000, '{') + std::string(200000, '}') + "\n";
  CUmodule module = nullptr;
  if (cuModuleLoadData(&module, text.c_str()) == CUDA_SUCCESS) cuModuleUnload(module);
  std::string expression = std::string(kHeader) + ".visible .entry k() { .reg .u32 %r; mov.u32 %r, " +
                           std::string(200000, '(') + "1" + std::string(200000, ')') + "; ret; }\n";
  if (cuModuleLoadData(&module, expression.c_str()) == CUDA_SUCCESS) cuModuleUnload(module);
}

RELIABILITY_CASE("modules", modules_target_newer_than_device, 20, "") {
  setUp();
  for (const char* target : {"sm_100a", "sm_100", "sm_120"}) {
    std::string text =
        std::string(".version 8.8\n.target ") + target + "\n.address_size 64\n.visible .entry k() { ret; }\n";
    loadMustFail(text.c_str(), target);
  }
}

RELIABILITY_CASE("modules", modules_params_over_limit, 20, "") {
  setUp();
  std::string text = std::string(kHeader) + ".visible .entry k(.param .align 4 .b8 p[40000]) { ret; }\n";
  loadMustFail(text.c_str(), "40,000 bytes of kernel parameters");
}

// Driver 580 loads it too (SHARED_SIZE_BYTES negative there as well: tools/gpu-probe/results/reliability24-*.txt);
// what matters is that a launch is refused cleanly and the context stays usable.
RELIABILITY_CASE("modules", modules_shared_4e9, 20, "") {
  setUp();
  std::string text =
      std::string(kHeader) + ".visible .entry k() { .shared .b8 a[4000000000]; .reg .u64 %rd; mov.u64 %rd, a; ret; }\n";
  CUmodule module = nullptr;
  CUresult r = cuModuleLoadData(&module, text.c_str());
  if (r != CUDA_SUCCESS) return;  // refusing it at load is fine too
  CUfunction f = nullptr;
  expectResult(cuModuleGetFunction(&f, module, "k"), CUDA_SUCCESS, "its kernel");
  expectError(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr),
              "a launch with 4e9 bytes of shared memory");
  expectResult(cuCtxSynchronize(), CUDA_SUCCESS, "the context after the refused launch");
  cuModuleUnload(module);
}

RELIABILITY_CASE("modules", modules_fatbin_zero_ptx_entry, 20, "") {
  setUp();
  std::vector<uint8_t> image = fatbinWithPtx(std::vector<uint8_t>(256, 0));
  CUmodule module = nullptr;
  CUresult r = cuModuleLoadData(&module, image.data());
  if (r == CUDA_SUCCESS || r == CUDA_ERROR_UNKNOWN) wrong("a zero PTX entry: " + resultName(r));
}

RELIABILITY_CASE("modules", modules_fatbin_built_here_loads, 20, nullptr) {
  // The container fatbinWithPtx builds is well formed: the zero-entry case tests the payload, not the layout.
  setUp();
  std::string text = std::string(kHeader) + ".visible .entry k() { ret; }\n";
  std::vector<uint8_t> payload(text.begin(), text.end());
  payload.resize((payload.size() + 8) & ~size_t(7), 0);
  std::vector<uint8_t> image = fatbinWithPtx(payload);
  CUmodule module = nullptr;
  expectResult(cuModuleLoadData(&module, image.data()), CUDA_SUCCESS, "a hand-built fatbinary");
  CUfunction f = nullptr;
  expectResult(cuModuleGetFunction(&f, module, "k"), CUDA_SUCCESS, "its kernel");
}

RELIABILITY_CASE("modules", modules_link_garbage, 20, nullptr) {
  setUp();
  CUlinkState link = nullptr;
  expectResult(cuLinkCreate(0, nullptr, nullptr, &link), CUDA_SUCCESS, "cuLinkCreate");
  const char garbage[] =
      "\x7f"
      "ELF garbage that is not an object";
  expectError(
      cuLinkAddData(link, CU_JIT_INPUT_CUBIN, const_cast<char*>(garbage), sizeof garbage, "g", 0, nullptr, nullptr),
      "cuLinkAddData(garbage cubin)");
  expectError(
      cuLinkAddData(link, CU_JIT_INPUT_FATBINARY, const_cast<char*>(garbage), sizeof garbage, "g", 0, nullptr, nullptr),
      "cuLinkAddData(garbage fatbinary)");
  expectError(cuLinkAddData(link, CU_JIT_INPUT_PTX, nullptr, 16, "g", 0, nullptr, nullptr), "cuLinkAddData(null PTX)");
  cuLinkDestroy(link);
}
