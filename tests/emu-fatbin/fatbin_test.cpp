// Module image recognition and PTX extraction (emu/core/fatbin.h) on fatbinaries built by nvcc from
// kernel.cu: the checked-in copies in data/, and, where nvcc exists, fresh ones built with the test.
#include "core/companion_ptx.h"
#include "core/fatbin.h"
#include "core/module.h"

#include <gtest/gtest.h>

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

namespace cuemu {
namespace {

using Bytes = std::vector<uint8_t>;

std::vector<std::string> dataDirs() {
  std::vector<std::string> dirs{CUEMU_FATBIN_CHECKED_IN_DIR};
  if (std::string(CUEMU_FATBIN_NVCC_DIR) != "") dirs.push_back(CUEMU_FATBIN_NVCC_DIR);
  return dirs;
}

Bytes readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in) << "missing " << path;
  return Bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

template <typename T> void put(Bytes& b, size_t offset, T value) {
  ASSERT_LE(offset + sizeof(T), b.size());
  std::memcpy(b.data() + offset, &value, sizeof(T));
}

struct Wrapper {
  uint32_t magic = fatbin::kWrapperMagic;
  uint32_t version = 1;
  const void* fatbin = nullptr;
  const void* extra = nullptr;
};
static_assert(sizeof(Wrapper) == 24);

class Fatbin : public ::testing::TestWithParam<std::string> {
 protected:
  Bytes load(const char* name) { return readFile(GetParam() + "/" + name); }

  fatbin::Container parse(const Bytes& b) {
    auto c = fatbin::parseContainer(b.data(), b.size());
    EXPECT_TRUE(c) << c.error().message;
    return c ? *c : fatbin::Container{};
  }

  std::string ptxOf(const Bytes& b, int major = 9, int minor = 0) {
    auto image = extractPtx(b.data(), major, minor, b.size());
    EXPECT_TRUE(image) << image.error().message;
    if (!image || image->units.size() != 1) return {};
    return image->units[0].text;
  }
};

TEST_P(Fatbin, ClassifiesEveryKind) {
  Bytes container = load("default.fatbin");
  EXPECT_EQ(*classifyImage(container.data(), container.size()), ImageKind::FatbinContainer);
  EXPECT_EQ(*classifyImage(container.data()), ImageKind::FatbinContainer);
  Bytes cubin = load("sm90.cubin");
  EXPECT_EQ(*classifyImage(cubin.data(), cubin.size()), ImageKind::ElfCubin);
  Wrapper w{fatbin::kWrapperMagic, 1, container.data(), nullptr};
  EXPECT_EQ(*classifyImage(&w), ImageKind::FatbinWrapper);
  EXPECT_EQ(*classifyImage("\n  // generated\n/* block */ .version 9.0\n.target sm_90\n"), ImageKind::PtxText);
  EXPECT_EQ(*classifyImage(".version 8.0"), ImageKind::PtxText);

  EXPECT_EQ(classifyImage(nullptr).error().code, CUDA_ERROR_INVALID_VALUE);
  for (const char* garbage : {"", "hello", "   ", "// only a comment", "/* unterminated .version",
                              "\x7f"
                              "ELF"})
    EXPECT_EQ(classifyImage(garbage).error().code, CUDA_ERROR_INVALID_IMAGE) << garbage;
  EXPECT_EQ(classifyImage(container.data(), 0).error().code, CUDA_ERROR_INVALID_IMAGE);
  EXPECT_EQ(classifyImage(container.data(), 8).error().code, CUDA_ERROR_INVALID_IMAGE);
  EXPECT_EQ(classifyImage(&w, 20).error().code, CUDA_ERROR_INVALID_IMAGE);
  EXPECT_EQ(classifyImage(cubin.data(), 40).error().code, CUDA_ERROR_INVALID_IMAGE);
  Bytes hostElf = cubin;
  put<uint16_t>(hostElf, 0x12, 62);  // x86-64
  EXPECT_EQ(classifyImage(hostElf.data(), hostElf.size()).error().code, CUDA_ERROR_INVALID_IMAGE);
}

TEST_P(Fatbin, DescribesEntriesAsNvccWroteThem) {
  auto c = parse(load("default.fatbin"));
  ASSERT_EQ(c.entries.size(), 2u);
  EXPECT_EQ(c.entries[0].kind, uint16_t(fatbin::EntryKind::Elf));
  EXPECT_EQ(c.entries[0].arch, 75u);
  EXPECT_EQ(c.entries[0].compression, fatbin::Compression::None);
  EXPECT_EQ(c.entries[1].kind, uint16_t(fatbin::EntryKind::Ptx));
  EXPECT_EQ(c.entries[1].arch, 75u);
  EXPECT_EQ(c.entries[1].compression, fatbin::Compression::Zstd);
  EXPECT_EQ(c.entries[1].versionMajor, 9);
  EXPECT_EQ(c.entries[1].versionMinor, 0);
  EXPECT_EQ(c.entries[1].options, "");

  EXPECT_EQ(parse(load("speed.fatbin")).entries[1].compression, fatbin::Compression::Lz4);
  EXPECT_EQ(parse(load("nocompress.fatbin")).entries[1].compression, fatbin::Compression::None);

  auto rdc = parse(load("rdc.fatbin"));
  ASSERT_EQ(rdc.entries.size(), 2u);
  EXPECT_EQ(rdc.entries[0].compression, fatbin::Compression::Zstd);  // -rdc compresses the cubin too
  EXPECT_EQ(rdc.entries[1].options, "--compile-only");

  auto debug = parse(load("debug.fatbin"));
  ASSERT_EQ(debug.entries.size(), 2u);
  EXPECT_NE(debug.entries[1].options.find("-g"), std::string::npos);
  const std::string& source = debug.entries[1].sourceName;  // as given to nvcc
  EXPECT_EQ(source.substr(source.size() - std::min<size_t>(source.size(), 9)), "kernel.cu") << source;
  auto lineinfo = parse(load("lineinfo.fatbin"));
  EXPECT_EQ(lineinfo.entries[1].options, "--generate-line-info");

  auto multi = parse(load("multi.fatbin"));
  ASSERT_EQ(multi.entries.size(), 5u);
  int archSpecific = 0;
  for (const auto& e : multi.entries) archSpecific += e.archSpecific;
  EXPECT_EQ(archSpecific, 1);
}

TEST_P(Fatbin, EveryCompressionGivesTheSamePtx) {
  std::string zstd = ptxOf(load("default.fatbin"));
  std::string lz4 = ptxOf(load("speed.fatbin"));
  std::string plain = ptxOf(load("nocompress.fatbin"));
  EXPECT_EQ(zstd, plain);
  EXPECT_EQ(lz4, plain);
  EXPECT_NE(plain.find(".version 9.0"), std::string::npos);
  EXPECT_NE(plain.find(".target sm_75"), std::string::npos);
  EXPECT_NE(plain.find(".visible .entry add("), std::string::npos);
  EXPECT_NE(plain.find(".global .align 4 .u32 offset"), std::string::npos);
  EXPECT_EQ(plain.find('\0'), std::string::npos);
  EXPECT_EQ(plain.back(), '\n');

  std::string sm90 = ptxOf(load("sm90.fatbin"));
  EXPECT_NE(sm90.find(".target sm_90"), std::string::npos);
  EXPECT_NE(ptxOf(load("debug.fatbin")).find(".loc"), std::string::npos);
  EXPECT_NE(ptxOf(load("lineinfo.fatbin")).find(".loc"), std::string::npos);
}

// CUEMU_DUMP_PTX=DIR: each compiled module's PTX, as the interpreter gets it, lands in DIR named by the image; a
// folder that cannot be written costs the load nothing.
TEST_P(Fatbin, DumpPtxWritesWhatIsCompiled) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("cuemu-dump-ptx-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  Bytes image = load("default.fatbin");
  ::setenv("CUEMU_DUMP_PTX", dir.c_str(), 1);
  auto compiled = compileImage(image.data(), 9, 0, "/some/where/kernel.fatbin", image.size(), 0);
  ::setenv("CUEMU_DUMP_PTX", (dir / "missing" / "folder").c_str(), 1);
  auto unwritten = compileImage(image.data(), 9, 0, "kernel.fatbin", image.size(), 0);
  ::unsetenv("CUEMU_DUMP_PTX");
  ASSERT_TRUE(compiled) << compiled.error().message;
  EXPECT_TRUE(unwritten) << unwritten.error().message;
  std::vector<fs::path> files(fs::directory_iterator(dir), fs::directory_iterator{});
  ASSERT_EQ(files.size(), 1u);
  std::string name = files[0].filename().string();
  EXPECT_EQ(name.rfind(std::to_string(getpid()) + "-", 0), 0u) << name;
  EXPECT_NE(name.find("-kernel.fatbin.ptx"), std::string::npos) << name;
  Bytes written = readFile(files[0].string());
  EXPECT_EQ(std::string(written.begin(), written.end()), ptxOf(load("nocompress.fatbin")));
  fs::remove_all(dir);
}

TEST_P(Fatbin, ChoosesTheHighestPtxTheDeviceRuns) {
  Bytes multi = load("multi.fatbin");
  auto pick = [&](int major, int minor) { return *extractPtx(multi.data(), major, minor, multi.size()); };
  PtxImage on90 = pick(9, 0);
  ASSERT_EQ(on90.units.size(), 1u);
  EXPECT_EQ(on90.units[0].arch, 90u);
  EXPECT_TRUE(on90.units[0].archSpecific);  // compute_90a is the most specific for exactly 9.0
  EXPECT_NE(on90.units[0].text.find(".target sm_90a"), std::string::npos);
  EXPECT_EQ(pick(8, 6).units[0].arch, 80u);
  EXPECT_EQ(pick(8, 9).units[0].arch, 80u);
  PtxImage on100 = pick(10, 0);
  EXPECT_EQ(on100.units[0].arch, 100u);
  EXPECT_FALSE(on100.units[0].archSpecific);
  PtxImage on120 = pick(12, 0);
  EXPECT_EQ(on120.units[0].arch, 100u);
  EXPECT_NE(on120.units[0].text.find(".target sm_100"), std::string::npos);

  auto tooOld = extractPtx(multi.data(), 7, 5, multi.size());
  ASSERT_FALSE(tooOld);
  EXPECT_EQ(tooOld.error().code, CUDA_ERROR_NO_BINARY_FOR_GPU);
  EXPECT_NE(tooOld.error().message.find("compute_80"), std::string::npos) << tooOld.error().message;
  EXPECT_NE(tooOld.error().message.find("-gencode arch=compute_75,code=compute_75"), std::string::npos);

  Bytes defaults = load("default.fatbin");
  EXPECT_EQ(extractPtx(defaults.data(), 9, 0, defaults.size())->units[0].arch, 75u);
  EXPECT_EQ(extractPtx(defaults.data(), 7, 5, defaults.size())->units[0].arch, 75u);
  EXPECT_EQ(extractPtx(defaults.data(), 7, 0, defaults.size()).error().code, CUDA_ERROR_NO_BINARY_FOR_GPU);
}

// PTX whose container also holds SASS the device could load stands in for that cubin (NVIDIA's driver would run
// the SASS and never JIT the PTX): SASS runs on its own major architecture at the same or a higher minor.
TEST_P(Fatbin, PtxStandsInForALoadableCubin) {
  Bytes sm90 = load("sm90.fatbin");  // sm_90 SASS + compute_90 PTX
  EXPECT_TRUE(extractPtx(sm90.data(), 9, 0, sm90.size())->units[0].standsInForCubin);
  EXPECT_FALSE(extractPtx(sm90.data(), 10, 0, sm90.size())->units[0].standsInForCubin);
  EXPECT_FALSE(extractPtx(sm90.data(), 12, 1, sm90.size())->units[0].standsInForCubin);
  Bytes defaults = load("default.fatbin");  // sm_75 SASS + compute_75 PTX
  EXPECT_TRUE(extractPtx(defaults.data(), 7, 5, defaults.size())->units[0].standsInForCubin);
  EXPECT_FALSE(extractPtx(defaults.data(), 8, 0, defaults.size())->units[0].standsInForCubin);
  Bytes multi = load("multi.fatbin");  // sm_75 SASS, PTX for 80, 90, 90a, 100
  EXPECT_FALSE(extractPtx(multi.data(), 9, 0, multi.size())->units[0].standsInForCubin);
}

TEST_P(Fatbin, SassOnlyIsRefusedWithAdvice) {
  Bytes sass = load("sassonly.fatbin");
  auto result = extractPtx(sass.data(), 9, 0, sass.size());
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code, CUDA_ERROR_NO_BINARY_FOR_GPU);
  const std::string& m = result.error().message;
  EXPECT_NE(m.find("sm_90"), std::string::npos) << m;
  EXPECT_NE(m.find("-gencode arch=compute_90,code=compute_90"), std::string::npos) << m;
  EXPECT_NE(m.find("-arch=sm_90"), std::string::npos) << m;
  EXPECT_NE(m.find("only SASS for sm_90 of kernel add (cuemu runs PTX"), std::string::npos) << m;  // what it holds
  EXPECT_EQ(m.find("ships this code as SASS only"), std::string::npos) << m;  // not a library's image
  EXPECT_EQ(m.find('\n'), std::string::npos) << "one line";

  Bytes cubin = load("sm90.cubin");
  auto fromCubin = extractPtx(cubin.data(), 9, 0, cubin.size());
  ASSERT_FALSE(fromCubin);
  EXPECT_EQ(fromCubin.error().code, CUDA_ERROR_NO_BINARY_FOR_GPU);
  EXPECT_NE(fromCubin.error().message.find("sm_90"), std::string::npos) << fromCubin.error().message;
}

// An image in memory that no binary maps (a library copied it out of its own storage, as cuBLAS does) is named by
// the binary that called the driver's entry point (tlEntryCaller, the entry's return address).
TEST_P(Fatbin, ImageInMemoryIsNamedByItsCaller) {
  Bytes cubin = load("sm90.cubin");  // on the heap
  const std::string self = binaryContaining(reinterpret_cast<const void*>(&binaryContaining));
  ASSERT_FALSE(self.empty());
  tlEntryCaller = reinterpret_cast<const void*>(&binaryContaining);
  auto named = extractPtx(cubin.data(), 9, 0, cubin.size());
  tlEntryCaller = nullptr;
  auto anonymous = extractPtx(cubin.data(), 9, 0, cubin.size());
  ASSERT_FALSE(named);
  ASSERT_FALSE(anonymous);
  EXPECT_NE(named.error().message.find("(loaded by " + self + ")"), std::string::npos) << named.error().message;
  EXPECT_EQ(anonymous.error().message.find("loaded by"), std::string::npos) << anonymous.error().message;
}

// Companion PTX (core/companion_ptx.h): for a SASS-only image, the PTX defining its kernels that a client left in
// CUEMU_COMPANION_PTX_DIR since this process started (CUTLASS's CuTe DSL under `cuemu run`) runs instead; what was
// found is kept under the SASS's hash in the cache folder and serves later loads of the same SASS. Files from before
// the process started, and files that do not define the kernel, are not taken.
TEST_P(Fatbin, CompanionPtxStandsInForSass) {
  namespace fs = std::filesystem;
  const fs::path root = fs::temp_directory_path() / ("cuemu-companion-" + std::to_string(getpid()));
  const fs::path folder = root / "dsl", cache = root / "cache";
  fs::remove_all(root);
  fs::create_directories(folder);
  auto write = [&](const char* name, const std::string& text) { std::ofstream(folder / name) << text; };
  const std::string header = ".version 8.0\n.target sm_90\n.address_size 64\n";
  write("stale.ptx", header + "// stale\n.visible .entry add(.param .u64 a)\n{\n\tret;\n}\n");
  fs::last_write_time(folder / "stale.ptx", fs::file_time_type::clock::now() - std::chrono::hours(48));
  write("other.ptx", header + "// other\n.visible .entry adder(.param .u64 a)\n{\n\tret;\n}\n");
  write("fresh.ptx", header +
                         "// fresh\n.extern .func (.param .b32 r) vprintf(.param .b64 f, .param .b64 v);\n"
                         ".visible .entry add(.param .u64 a)\n{\n\tret;\n}\n");
  const char* oldCache = std::getenv("XDG_CACHE_HOME");
  const std::string savedCache = oldCache ? oldCache : "";
  setenv("XDG_CACHE_HOME", cache.c_str(), 1);
  setenv("CUEMU_COMPANION_PTX_DIR", ("/nonexistent:" + folder.string()).c_str(), 1);
  for (const char* name : {"sassonly.fatbin", "sm90.cubin"}) {
    SCOPED_TRACE(name);
    Bytes sass = load(name);
    auto found = extractPtx(sass.data(), 9, 0, sass.size());
    ASSERT_TRUE(found) << found.error().message;
    if (name == std::string("sassonly.fatbin")) {
      EXPECT_NE(found->units[0].companion.find("fresh.ptx"), std::string::npos) << found->units[0].companion;
    }
    ASSERT_EQ(found->units.size(), 1u);
    EXPECT_NE(found->units[0].text.find("// fresh"), std::string::npos) << found->units[0].text;
    EXPECT_TRUE(found->units[0].standsInForCubin);
    // (the second image's SASS is the first's: found the second time where it was kept)
    EXPECT_FALSE(found->units[0].companion.empty());
  }
  // FOLDER/*: a folder made since the process started (the DSL's own temporary folders); a cubin handed over without
  // its size (its extent read from its headers)
  fs::remove_all(cache);
  fs::remove_all(folder);
  fs::create_directories(root / "temporary" / "tmpabc");
  std::ofstream(root / "temporary" / "tmpabc" / "k.ptx") << header +
                                                                "// in a temporary folder\n"
                                                                ".visible .entry add()\n{\n\tret;\n}\n";
  setenv("CUEMU_COMPANION_PTX_DIR", (root / "temporary" / "*").c_str(), 1);
  {
    Bytes cubin = load("sm90.cubin");
    auto found = extractPtx(cubin.data(), 9, 0, kUnknownImageSize);
    ASSERT_TRUE(found) << found.error().message;
    EXPECT_NE(found->units[0].text.find("// in a temporary folder"), std::string::npos);
  }
  fs::remove_all(cache);
  fs::create_directories(folder);
  write("fresh.ptx", header + "// fresh\n.visible .entry add(.param .u64 a)\n{\n\tret;\n}\n");
  setenv("CUEMU_COMPANION_PTX_DIR", folder.c_str(), 1);
  ASSERT_TRUE(extractPtx(load("sassonly.fatbin").data(), 9, 0, load("sassonly.fatbin").size()));
  fs::remove_all(folder);  // the client's files are gone: the kept copy serves the same SASS
  Bytes sass = load("sassonly.fatbin");
  auto kept = extractPtx(sass.data(), 9, 0, sass.size());
  ASSERT_TRUE(kept) << kept.error().message;
  EXPECT_NE(kept->units[0].text.find("// fresh"), std::string::npos);
  EXPECT_NE(kept->units[0].companion.find((cache / "cuemu" / "companion-ptx").string()), std::string::npos);
  fs::remove_all(cache);  // nothing kept, nothing beside: refused as before
  auto refused = extractPtx(sass.data(), 9, 0, sass.size());
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, CUDA_ERROR_NO_BINARY_FOR_GPU);
  unsetenv("CUEMU_COMPANION_PTX_DIR");
  if (oldCache)
    setenv("XDG_CACHE_HOME", savedCache.c_str(), 1);
  else
    unsetenv("XDG_CACHE_HOME");
  fs::remove_all(root);
}

TEST(CompanionPtx, DeclaredFunctionNames) {
  const std::string ptx =
      ".version 8.0\n.target sm_90\n.address_size 64\n// .entry commented\n"
      ".extern .func (.param .b32 func_retval0) vprintf\n(\n.param .b64 a\n);\n"
      ".func (.param .b32 r) helper(.param .b32 x)\n{\n\tret;\n}\n.func plain()\n{\n\tret;\n}\n"
      ".visible .entry kernel_cutlass_kernel_0()\n.reqntid 32, 1, 1\n{\n\tret;\n}\n"
      ".weak .entry $weak$k(.param .u64 p)\n{\n\tret;\n}\n.entryish x;\n";
  std::vector<std::string> names = declaredFunctionNames(ptx);
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"$weak$k", "commented", "helper", "kernel_cutlass_kernel_0", "plain",
                                             "vprintf"}));
}

TEST_P(Fatbin, WrapperRecords) {
  Bytes container = load("default.fatbin");
  std::string expected = ptxOf(container);
  Wrapper v1{fatbin::kWrapperMagic, 1, container.data(), nullptr};
  auto one = extractPtx(&v1, 9, 0);
  ASSERT_TRUE(one) << one.error().message;
  EXPECT_EQ(one->kind, ImageKind::FatbinWrapper);
  EXPECT_FALSE(one->needsLinking);
  ASSERT_EQ(one->units.size(), 1u);
  EXPECT_EQ(one->units[0].text, expected);

  Bytes rdc = load("rdc.fatbin");
  const void* units[] = {rdc.data(), container.data(), nullptr};
  Bytes linkedCubin = load("sm90.fatbin");
  Wrapper v2{fatbin::kWrapperMagic, 2, linkedCubin.data(), units};
  auto linked = extractPtx(&v2, 9, 0);
  ASSERT_TRUE(linked) << linked.error().message;
  EXPECT_TRUE(linked->needsLinking);
  ASSERT_EQ(linked->units.size(), 2u);
  EXPECT_EQ(linked->units[0].options, "--compile-only");
  EXPECT_EQ(linked->units[1].text, expected);

  const void* none[] = {nullptr};
  Wrapper stub{fatbin::kWrapperMagic, 2, linkedCubin.data(), none};
  auto empty = extractPtx(&stub, 9, 0);
  ASSERT_TRUE(empty);
  EXPECT_TRUE(empty->units.empty());
  Wrapper noList{fatbin::kWrapperMagic, 2, linkedCubin.data(), nullptr};
  EXPECT_TRUE(extractPtx(&noList, 9, 0)->units.empty());

  Bytes sass = load("sassonly.fatbin");
  const void* withSassOnly[] = {rdc.data(), sass.data(), nullptr};
  Wrapper v2sass{fatbin::kWrapperMagic, 2, linkedCubin.data(), withSassOnly};
  EXPECT_EQ(extractPtx(&v2sass, 9, 0).error().code, CUDA_ERROR_NO_BINARY_FOR_GPU);

  const char* garbage = "not a fatbinary at all";
  const void* withGarbage[] = {garbage, nullptr};
  for (Wrapper bad :
       {Wrapper{fatbin::kWrapperMagic, 3, container.data(), nullptr},
        Wrapper{fatbin::kWrapperMagic, 1, nullptr, nullptr}, Wrapper{fatbin::kWrapperMagic, 1, garbage, nullptr},
        Wrapper{fatbin::kWrapperMagic, 2, nullptr, withGarbage}})
    EXPECT_EQ(extractPtx(&bad, 9, 0).error().code, CUDA_ERROR_INVALID_IMAGE);
}

// A container with one uncompressed PTX entry for compute_`arch`, as nvcc lays it out.
Bytes ptxContainer(const std::string& ptx, uint32_t arch) {
  Bytes payload(ptx.begin(), ptx.end());
  payload.resize((payload.size() + 1 + 7) / 8 * 8, 0);
  Bytes b(16 + 64 + payload.size(), 0);
  put<uint32_t>(b, 0, fatbin::kContainerMagic);
  put<uint16_t>(b, 4, 1);
  put<uint16_t>(b, 6, 16);
  put<uint64_t>(b, 8, 64 + payload.size());
  put<uint16_t>(b, 16, uint16_t(fatbin::EntryKind::Ptx));
  put<uint32_t>(b, 16 + 0x04, 64);
  put<uint64_t>(b, 16 + 0x08, payload.size());
  put<uint16_t>(b, 16 + 0x18, 0);
  put<uint16_t>(b, 16 + 0x1A, 9);
  put<uint32_t>(b, 16 + 0x1C, arch);
  std::memcpy(b.data() + 80, payload.data(), payload.size());
  return b;
}

// NVIDIA's device runtime (-lcudadevrt) carries PTX only for the newest architecture; the interpreter provides the
// device runtime itself, so its unit is left out of an -rdc program whatever PTX it has.
TEST_P(Fatbin, WrapperLeavesOutTheDeviceRuntime) {
  Bytes rdc = load("rdc.fatbin");
  Bytes linkedCubin = load("sm90.fatbin");
  const std::string definition =
      ".version 9.0\n.target sm_121\n.address_size 64\n.visible .func (.param .b64 func_retval0) "
      "__cudaCDP2GetParameterBufferV2(\n.param .b64 p0\n)\n{\nret;\n}\n";
  for (uint32_t arch : {121u, 90u}) {
    Bytes devrt = ptxContainer(definition, arch);
    const void* units[] = {rdc.data(), devrt.data(), nullptr};
    Wrapper v2{fatbin::kWrapperMagic, 2, linkedCubin.data(), units};
    auto linked = extractPtx(&v2, 9, 0);
    ASSERT_TRUE(linked) << linked.error().message;
    EXPECT_TRUE(linked->deviceRuntimeLeftOut);
    ASSERT_EQ(linked->units.size(), 1u) << arch;
    EXPECT_EQ(linked->units[0].options, "--compile-only");
  }
  // A unit that only declares the device runtime (every program that launches from a kernel) is kept.
  const std::string declaration =
      ".version 9.0\n.target sm_90\n.address_size 64\n.extern .func (.param .b64 func_retval0) "
      "__cudaCDP2GetParameterBufferV2\n(\n.param .b64 p0\n)\n;\n";
  Bytes user = ptxContainer(declaration, 90);
  const void* withUser[] = {rdc.data(), user.data(), nullptr};
  Wrapper v2user{fatbin::kWrapperMagic, 2, linkedCubin.data(), withUser};
  auto kept = extractPtx(&v2user, 9, 0);
  ASSERT_TRUE(kept) << kept.error().message;
  EXPECT_FALSE(kept->deviceRuntimeLeftOut);
  EXPECT_EQ(kept->units.size(), 2u);
  // Other units with PTX only for a newer architecture still fail.
  Bytes tooNew = ptxContainer(declaration, 121);
  const void* withTooNew[] = {rdc.data(), tooNew.data(), nullptr};
  Wrapper v2tooNew{fatbin::kWrapperMagic, 2, linkedCubin.data(), withTooNew};
  auto refused = extractPtx(&v2tooNew, 9, 0);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, CUDA_ERROR_NO_BINARY_FOR_GPU);
  // The refusal names the built-in profile that runs it (compute_121: only gb10).
  EXPECT_NE(refused.error().message.find("cuemu's gb10 profile runs it: `cuemu run --device-profile gb10`"),
            std::string::npos)
      << refused.error().message;
}

// PTX for compute_120 runs on both compute-capability-12 profiles; the refusal on an H100 names them.
TEST(FatbinAdvice, PtxForANewerArchitectureNamesTheProfilesThatRunIt) {
  const std::string kernel = ".version 8.8\n.target sm_120\n.address_size 64\n.visible .entry k()\n{\nret;\n}\n";
  Bytes container = ptxContainer(kernel, 120);
  auto refused = extractPtx(container.data(), 9, 0, container.size());
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, CUDA_ERROR_NO_BINARY_FOR_GPU);
  EXPECT_NE(refused.error().message.find("cuemu's rtx-pro-6000 and gb10 profiles run it"), std::string::npos)
      << refused.error().message;
  EXPECT_TRUE(extractPtx(container.data(), 12, 0, container.size()));
}

// cuLinkAddFile(CU_JIT_INPUT_LIBRARY, libcudadevrt.a): nothing to link, and no error.
TEST(DeviceRuntimeLibrary, IsLeftOutOfLinks) {
  if (std::string(CUEMU_FATBIN_CUDADEVRT).empty()) GTEST_SKIP() << "no CUDA toolkit";
  Bytes library = readFile(CUEMU_FATBIN_CUDADEVRT);
  auto image = extractPtxFromHostBinary(library.data(), library.size(), 9, 0, "libcudadevrt.a");
  ASSERT_TRUE(image) << image.error().message;
  EXPECT_TRUE(image->deviceRuntimeLeftOut);
  EXPECT_TRUE(image->units.empty());
}

TEST_P(Fatbin, TruncationAnywhereIsAnInvalidImage) {
  for (const char* name : {"default.fatbin", "speed.fatbin", "nocompress.fatbin", "debug.fatbin"}) {
    Bytes full = load(name);
    for (size_t size = 1; size < full.size(); ++size) {
      Bytes prefix(full.begin(), full.begin() + static_cast<long>(size));  // exact allocation: ASan sees overreads
      auto result = extractPtx(prefix.data(), 9, 0, prefix.size());
      ASSERT_FALSE(result) << name << " cut at " << size;
      ASSERT_EQ(result.error().code, CUDA_ERROR_INVALID_IMAGE) << name << " cut at " << size;
    }
  }
}

TEST_P(Fatbin, LyingHeadersAreInvalidImages) {
  Bytes good = load("default.fatbin");
  auto c = parse(good);
  ASSERT_EQ(c.entries.size(), 2u);
  const size_t ptxEntry = c.entries[1].payloadOffset - 80;  // PTX entry headers are 80 bytes here
  const size_t elfEntry = 16;
  auto expectInvalid = [&](const char* what, auto&& mutate) {
    Bytes b = good;
    mutate(b);
    auto result = extractPtx(b.data(), 9, 0, b.size());
    ASSERT_FALSE(result) << what;
    EXPECT_EQ(result.error().code, CUDA_ERROR_INVALID_IMAGE) << what << ": " << result.error().message;
    EXPECT_FALSE(result.error().message.empty());
  };
  expectInvalid("container version", [](Bytes& b) { put<uint16_t>(b, 4, 2); });
  expectInvalid("container header size", [](Bytes& b) { put<uint16_t>(b, 6, 8); });
  expectInvalid("container size huge", [](Bytes& b) { put<uint64_t>(b, 8, ~0ull - 8); });
  expectInvalid("container size past image", [&](Bytes& b) { put<uint64_t>(b, 8, good.size()); });
  expectInvalid("container size mid-entry", [](Bytes& b) { put<uint64_t>(b, 8, 100); });
  expectInvalid("entry header size 0", [&](Bytes& b) { put<uint32_t>(b, elfEntry + 4, 0); });
  expectInvalid("entry header size huge", [&](Bytes& b) { put<uint32_t>(b, elfEntry + 4, 0xFFFFFFF0u); });
  expectInvalid("payload size huge", [&](Bytes& b) { put<uint64_t>(b, elfEntry + 8, ~0ull - 100); });
  expectInvalid("payload size past end", [&](Bytes& b) { put<uint64_t>(b, ptxEntry + 8, 1u << 20); });
  expectInvalid("compressed size > payload", [&](Bytes& b) { put<uint32_t>(b, ptxEntry + 0x10, 1u << 20); });
  expectInvalid("compressed size 0", [&](Bytes& b) { put<uint32_t>(b, ptxEntry + 0x10, 0); });
  expectInvalid("two compressions", [&](Bytes& b) { put<uint64_t>(b, ptxEntry + 0x28, 0xA011); });
  expectInvalid("options outside", [&](Bytes& b) { put<uint32_t>(b, ptxEntry + 0x14, 0x7FFFFFFF); });
  expectInvalid("options string outside", [&](Bytes& b) { put<uint32_t>(b, ptxEntry + 0x40 + 4, 4096); });
  expectInvalid("source name outside", [&](Bytes& b) { put<uint32_t>(b, ptxEntry + 0x24, 4096); });
  expectInvalid("uncompressed size larger",
                [&](Bytes& b) { put<uint64_t>(b, ptxEntry + 0x38, c.entries[1].uncompressedSize + 1); });
  expectInvalid("uncompressed size smaller",
                [&](Bytes& b) { put<uint64_t>(b, ptxEntry + 0x38, c.entries[1].uncompressedSize - 1); });
  expectInvalid("uncompressed size enormous", [&](Bytes& b) { put<uint64_t>(b, ptxEntry + 0x38, 1ull << 40); });
  expectInvalid("uncompressed size 0", [&](Bytes& b) { put<uint64_t>(b, ptxEntry + 0x38, 0); });
  expectInvalid("zstd data zeroed",
                [&](Bytes& b) { std::memset(b.data() + c.entries[1].payloadOffset, 0, c.entries[1].storedSize); });
  expectInvalid("zstd data cut", [&](Bytes& b) { put<uint32_t>(b, ptxEntry + 0x10, 40); });
  expectInvalid("zstd declared as lz4", [&](Bytes& b) { put<uint64_t>(b, ptxEntry + 0x28, 0x2011); });

  Bytes lz4 = load("speed.fatbin");
  auto lc = parse(lz4);
  const size_t lz4Entry = lc.entries[1].payloadOffset - 80;
  for (uint8_t fill : {uint8_t(0x00), uint8_t(0xFF)}) {
    Bytes b = lz4;
    std::memset(b.data() + lc.entries[1].payloadOffset, fill, lc.entries[1].storedSize);
    EXPECT_EQ(extractPtx(b.data(), 9, 0, b.size()).error().code, CUDA_ERROR_INVALID_IMAGE);
  }
  Bytes lz4Big = lz4;
  put<uint64_t>(lz4Big, lz4Entry + 0x38, lc.entries[1].storedSize * 300);  // beyond LZ4's maximum ratio
  EXPECT_EQ(extractPtx(lz4Big.data(), 9, 0, lz4Big.size()).error().code, CUDA_ERROR_INVALID_IMAGE);
}

// Random byte changes: the answer may be anything but a crash, an overread (under ASan) or an unexpected code.
TEST_P(Fatbin, MutatedImagesNeverCrash) {
  std::mt19937 rng(1234);
  for (const char* name : {"default.fatbin", "speed.fatbin", "rdc.fatbin", "multi.fatbin", "debug.fatbin"}) {
    Bytes good = load(name);
    for (int iteration = 0; iteration < 1500; ++iteration) {
      Bytes b = good;
      int changes = 1 + static_cast<int>(rng() % 4);
      for (int k = 0; k < changes; ++k) {
        // Headers are where lies hurt: mutate the first bytes of each entry more often than payloads.
        size_t at = rng() % 2 ? rng() % std::min<size_t>(b.size(), 160) : rng() % b.size();
        b[at] = static_cast<uint8_t>(rng());
      }
      auto result = extractPtx(b.data(), 9, 0, b.size());
      if (!result) {
        CUresult code = result.error().code;
        ASSERT_TRUE(code == CUDA_ERROR_INVALID_IMAGE || code == CUDA_ERROR_NO_BINARY_FOR_GPU)
            << name << " iteration " << iteration << " code " << code;
        ASSERT_FALSE(result.error().message.empty());
      }
    }
  }
}

// Host objects and archives (cuLinkAddData's OBJECT and LIBRARY inputs): the PTX of their fatbinary sections.
TEST_P(Fatbin, HostObjectsAndArchives) {
  for (const char* name : {"dc.o", "dc.a"}) {
    Bytes b = load(name);
    auto image = extractPtxFromHostBinary(b.data(), b.size(), 9, 0, name);
    ASSERT_TRUE(image) << name << ": " << image.error().message;
    ASSERT_EQ(image->units.size(), 1u) << name;
    EXPECT_TRUE(image->needsLinking);
    EXPECT_NE(image->units[0].text.find(".entry add("), std::string::npos) << name;
  }
  Bytes fatbin = load("default.fatbin");
  EXPECT_EQ(extractPtxFromHostBinary(fatbin.data(), fatbin.size(), 9, 0, "x").error().code, CUDA_ERROR_INVALID_IMAGE);
  Bytes cubin = load("sm90.cubin");
  EXPECT_EQ(extractPtxFromHostBinary(cubin.data(), cubin.size(), 9, 0, "x").error().code, CUDA_ERROR_INVALID_IMAGE)
      << "a device ELF is not a host object";
  std::mt19937 rng(99);
  for (const char* name : {"dc.o", "dc.a"}) {
    const Bytes good = load(name);
    for (int iteration = 0; iteration < 1500; ++iteration) {
      Bytes b = good;
      for (int k = 0, n = 1 + int(rng() % 4); k < n; ++k) b[rng() % b.size()] = static_cast<uint8_t>(rng());
      auto result = extractPtxFromHostBinary(b.data(), b.size(), 9, 0, name);
      if (!result) {
        ASSERT_TRUE(result.error().code == CUDA_ERROR_INVALID_IMAGE ||
                    result.error().code == CUDA_ERROR_NO_BINARY_FOR_GPU)
            << name << " iteration " << iteration << " code " << result.error().code;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Images, Fatbin, ::testing::ValuesIn(dataDirs()), [](const auto& info) {
  return info.index == 0 ? std::string("checked_in") : std::string("built_by_nvcc");
});

TEST(PtxText, SizedTextNeedsNoNul) {
  const char text[] = ".version 9.0\n.target sm_90\nGARBAGE";
  auto image = extractPtx(text, 9, 0, 27);
  ASSERT_TRUE(image);
  EXPECT_EQ(image->kind, ImageKind::PtxText);
  EXPECT_EQ(image->units[0].text, ".version 9.0\n.target sm_90\n");
  EXPECT_EQ(extractPtx(text, 9, 0)->units[0].text, text);
}

// A fatbinary in the program's own read-only data: the message names the executable.
TEST(Messages, NameTheBinaryHoldingTheImage) {
  alignas(8) static const uint8_t kSassOnly[16 + 64 + 8] = {
      0x50, 0xED, 0x55, 0xBA, 1,  0, 16, 0, 72,   0, 0, 0, 0,    0,   0,   0,  // container: 72 bytes follow
      2,    0,    1,    1,    64, 0, 0,  0, 8,    0, 0, 0, 0,    0,   0,   0,  // ELF entry, 8 payload bytes
      0,    0,    0,    0,    0,  0, 0,  0, 8,    0, 1, 0, 86,   0,   0,   0,  // sm_86
      0,    0,    0,    0,    0,  0, 0,  0, 0x11, 0, 0, 0, 0,    0,   0,   0,   0, 0, 0, 0,
      0,    0,    0,    0,    0,  0, 0,  0, 0,    0, 0, 0, 0x7f, 'E', 'L', 'F', 2, 1, 1, 0x41};
  auto result = extractPtx(kSassOnly, 8, 6);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code, CUDA_ERROR_NO_BINARY_FOR_GPU);
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  ASSERT_GT(n, 0);
  std::string exe(self, static_cast<size_t>(n));
  EXPECT_EQ(binaryContaining(kSassOnly), exe);
  EXPECT_EQ(result.error().message.rfind(exe + ": ", 0), 0u) << result.error().message;
  EXPECT_NE(result.error().message.find("sm_86"), std::string::npos);
  EXPECT_NE(result.error().message.find("-gencode arch=compute_86,code=compute_86"), std::string::npos);
  EXPECT_EQ(binaryContaining(&n), "");  // the stack belongs to no file
}

// A cubin in heap memory whose kernel is an nvjet kernel, SASS cuBLASLt generated at run time: the refusal says
// so and that the 12.0 profile avoids it, and refusedGeneratedSass() picks it out (the log then reports it as the
// error it is, not as a library's probe). Any other heap cubin is not such a refusal.
TEST(Messages, NameSassALibraryGeneratedAtRunTime) {
  Bytes cubin = readFile(std::string(CUEMU_FATBIN_CHECKED_IN_DIR) + "/sm90.cubin");
  auto probed = extractPtx(cubin.data(), 12, 1, cubin.size());
  ASSERT_FALSE(probed);
  EXPECT_EQ(probed.error().code, CUDA_ERROR_NO_BINARY_FOR_GPU);
  EXPECT_FALSE(refusedGeneratedSass(probed.error())) << probed.error().message;
  const std::string text = ".text.";
  auto at = std::search(cubin.begin(), cubin.end(), text.begin(), text.end());
  ASSERT_NE(at, cubin.end());
  const std::string nvjet = "nvjet_";
  std::copy(nvjet.begin(), nvjet.end(), at + static_cast<std::ptrdiff_t>(text.size()));
  auto generated = extractPtx(cubin.data(), 12, 1, cubin.size());
  ASSERT_FALSE(generated);
  EXPECT_EQ(generated.error().code, CUDA_ERROR_NO_BINARY_FOR_GPU);
  EXPECT_TRUE(refusedGeneratedSass(generated.error())) << generated.error().message;
  EXPECT_NE(generated.error().message.find("of kernel nvjet_"), std::string::npos) << generated.error().message;
  EXPECT_NE(generated.error().message.find("rtx-pro-6000"), std::string::npos) << generated.error().message;
}

}  // namespace
}  // namespace cuemu

// ---- module files (issue 24) --------------------------------------------------------------------------------------

namespace cuemu {
namespace {

TEST(ImageFile, EmptyPathIsInvalidValue) {
  auto bytes = readImageFile("");
  ASSERT_FALSE(bytes);
  EXPECT_EQ(bytes.error().code, CUDA_ERROR_INVALID_VALUE);
}

TEST(ImageFile, DirectoryIsOutOfMemoryAsOnDriver580) {
  auto bytes = readImageFile("/tmp");
  ASSERT_FALSE(bytes);
  EXPECT_EQ(bytes.error().code, CUDA_ERROR_OUT_OF_MEMORY);
}

// /dev/zero and /dev/urandom never end: the read is bounded (it used to grow memory without end).
TEST(ImageFile, EndlessDeviceIsInvalidImage) {
  for (const char* path : {"/dev/zero", "/dev/urandom"}) {
    auto bytes = readImageFile(path);
    ASSERT_FALSE(bytes) << path;
    EXPECT_EQ(bytes.error().code, CUDA_ERROR_INVALID_IMAGE) << path;
  }
}

TEST(ImageFile, RegularFileIsReadWholeAndTerminated) {
  char path[] = "/tmp/cuemu-image-file-XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  std::string text(100000, 'x');
  ASSERT_EQ(write(fd, text.data(), text.size()), ssize_t(text.size()));
  close(fd);
  auto bytes = readImageFile(path);
  unlink(path);
  ASSERT_TRUE(bytes);
  EXPECT_EQ(bytes->size(), text.size() + 1);
  EXPECT_EQ(bytes->back(), '\0');
}

}  // namespace
}  // namespace cuemu

// ---- images that declare more than the caller's memory holds (issue 24) -------------------------------------------

namespace cuemu {
namespace {

// A page of memory followed by an unmapped page: images placed at its end run into unmapped memory.
class PageBeforeHole {
 public:
  PageBeforeHole() : page_(size_t(sysconf(_SC_PAGESIZE))) {
    void* p = mmap(nullptr, 2 * page_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    base_ = static_cast<uint8_t*>(p);
    munmap(base_ + page_, page_);
  }
  ~PageBeforeHole() { munmap(base_, page_); }
  // `n` bytes that end where the unmapped page begins.
  uint8_t* tail(size_t n) { return base_ + page_ - n; }
  uint8_t* hole() { return base_ + page_; }

 private:
  size_t page_;
  uint8_t* base_;
};

TEST(ImageBounds, PtxWithoutNulBeforeUnmappedMemory) {
  PageBeforeHole mem;
  const char text[] = ".version 7.0\n.target sm_50\n.address_size 64\n.visible .entry k()\n{\n  ret;\n}\n";
  size_t n = sizeof text - 1;  // without its NUL
  std::memcpy(mem.tail(n), text, n);
  auto ptx = extractPtx(mem.tail(n), 9, 0);
  ASSERT_FALSE(ptx);
  EXPECT_EQ(ptx.error().code, CUDA_ERROR_INVALID_IMAGE);
  // With its NUL it loads.
  std::memcpy(mem.tail(n + 1), text, n + 1);
  EXPECT_TRUE(extractPtx(mem.tail(n + 1), 9, 0));
}

TEST(ImageBounds, ContainerDeclaringMoreThanItsMemory) {
  PageBeforeHole mem;
  uint8_t* h = mem.tail(64);
  std::memset(h, 0, 64);
  uint32_t magic = fatbin::kContainerMagic;
  uint16_t version = 1, headerSize = 16;
  uint64_t size = 1 << 20;
  std::memcpy(h, &magic, 4);
  std::memcpy(h + 4, &version, 2);
  std::memcpy(h + 6, &headerSize, 2);
  std::memcpy(h + 8, &size, 8);
  auto ptx = extractPtx(h, 9, 0);
  ASSERT_FALSE(ptx);
  EXPECT_EQ(ptx.error().code, CUDA_ERROR_INVALID_IMAGE);
}

TEST(ImageBounds, WrapperPointingAtUnmappedMemory) {
  PageBeforeHole mem;
  struct {
    uint32_t magic, version;
    uint64_t data, extra;
  } wrapper = {fatbin::kWrapperMagic, 1, reinterpret_cast<uint64_t>(mem.hole()), 0};
  auto ptx = extractPtx(&wrapper, 9, 0);
  ASSERT_FALSE(ptx);
  EXPECT_EQ(ptx.error().code, CUDA_ERROR_INVALID_IMAGE);  // as driver 580 answers
  wrapper.version = 2;
  wrapper.extra = reinterpret_cast<uint64_t>(mem.hole());
  ptx = extractPtx(&wrapper, 9, 0);
  ASSERT_FALSE(ptx);
  EXPECT_EQ(ptx.error().code, CUDA_ERROR_INVALID_IMAGE);
}

TEST(ImageBounds, ImageAtUnmappedMemory) {
  PageBeforeHole mem;
  auto ptx = extractPtx(mem.hole(), 9, 0);
  ASSERT_FALSE(ptx);
  EXPECT_EQ(ptx.error().code, CUDA_ERROR_INVALID_IMAGE);
}

}  // namespace
}  // namespace cuemu
