// Module images as programs hand them to the driver (cuModuleLoadData, cuModuleLoadFatBinary,
// cuLibraryLoadData, the runtime's registered fatbinaries): recognition, walking of fatbinary containers,
// decompression, and the choice of the PTX that cuemu compiles for a device. Independent of contexts.
//
// Images recognised (layouts: /work/shared/reference/cudart-private-interface.md):
//  - PTX text: NUL-terminated, beginning (after whitespace and comments) with a directive such as `.version`.
//  - the runtime's 24-byte wrapper record {u32 magic 0x466243b1, u32 version, u64 fatbin, u64 extra}:
//    version 1 points to one container; version 2 (-rdc) points to the device-linked cubin and to a
//    NULL-terminated array of per-translation-unit containers, which carry the PTX to be linked.
//  - a fatbinary container (magic 0xBA55ED50) holding PTX and ELF entries, optionally LZ4/ZSTD-compressed.
//  - an ELF cubin (SASS only: cuemu cannot run it, and says so).
// Everything read from an image is bounds-checked against the size when the caller knows it, and against
// the sizes the image declares otherwise; decompressed sizes are bounded. Malformed input gives
// CUDA_ERROR_INVALID_IMAGE, an image without usable PTX CUDA_ERROR_NO_BINARY_FOR_GPU, each with a one-line
// message meant for the user.
#pragma once

#include "core/result.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace cuemu {

// Size argument meaning "the caller does not know how large the image is" (the API passes bare pointers).
inline constexpr size_t kUnknownImageSize = SIZE_MAX;

enum class ImageKind { PtxText, FatbinWrapper, FatbinContainer, ElfCubin };
const char* imageKindName(ImageKind kind);

// Recognises an image from its first bytes. Garbage (or a null pointer) gives CUDA_ERROR_INVALID_IMAGE
// (CUDA_ERROR_INVALID_VALUE for null).
Expected<ImageKind> classifyImage(const void* image, size_t size = kUnknownImageSize);

namespace fatbin {

inline constexpr uint32_t kWrapperMagic = 0x466243b1;
inline constexpr uint32_t kContainerMagic = 0xBA55ED50;

enum class EntryKind : uint16_t { Ptx = 1, Elf = 2 };
enum class Compression { None, Lz4, Zstd };

// One entry of a container, as its header describes it. Offsets are relative to the container's start.
struct Entry {
  uint16_t kind = 0;            // EntryKind value, or something cuemu does not know (kept for diagnostics)
  uint32_t arch = 0;            // 75 for sm_75 / compute_75
  bool archSpecific = false;    // compute_90a: runs only on exactly that compute capability
  bool familySpecific = false;  // compute_100f: runs on the same major version, minor >= arch's
  uint16_t versionMajor = 0;    // PTX ISA version for PTX entries
  uint16_t versionMinor = 0;
  uint64_t flags = 0;
  Compression compression = Compression::None;
  uint64_t payloadOffset = 0;
  uint64_t payloadSize = 0;  // bytes stored (padded)
  uint64_t storedSize = 0;   // meaningful bytes of the payload (compressed size when compressed)
  uint64_t uncompressedSize = 0;
  std::string options;     // ptxas options recorded by nvcc ("-g --dont-merge-basicblocks ...")
  std::string sourceName;  // the .cu name, present with -G / -lineinfo
};

struct Container {
  const uint8_t* base = nullptr;
  uint64_t totalSize = 0;  // header + entries
  std::vector<Entry> entries;
};

// Walks a container. `size` bounds every read when known.
Expected<Container> parseContainer(const void* container, size_t size = kUnknownImageSize);

// The payload of an entry, decompressed. PTX text is returned without its trailing NUL padding.
Expected<std::string> entryPayload(const Container& container, const Entry& entry);

// Upper bound on one decompressed entry: far above any real PTX, low enough that garbage cannot exhaust memory.
inline constexpr uint64_t kMaxEntryBytes = 1ull << 30;

// "compute_90a", "sm_120": how messages and `cuemu inspect` name an entry.
std::string entryName(const Entry& e);
// True for a PTX entry that a device of compute capability cc (90 for 9.0) can compile.
bool ptxRunsOn(const Entry& e, uint32_t cc);
// Every container in a file's bytes (an executable, a shared library, an object, an archive, a fatbinary): the
// well-formed ones found at 8-byte alignment, as nvcc places them.
std::vector<Container> findContainers(const void* data, size_t size);

}  // namespace fatbin

// One PTX module to compile.
struct PtxText {
  std::string text;
  uint32_t arch = 0;  // 0 for bare PTX text handed in directly
  bool archSpecific = false;
  bool familySpecific = false;
  std::string options;  // ptxas options the entry carried ("" for bare PTX)
  std::string sourceName;
  // The container also holds a cubin the device could load: NVIDIA's driver would run that SASS and never compile
  // this PTX, so its JIT limits (the newest PTX ISA it knows) do not apply to it.
  bool standsInForCubin = false;
  // Found beside a SASS-only image (core/companion_ptx.h): what was found where, for the log; empty otherwise.
  std::string companion;
};

struct PtxImage {
  ImageKind kind = ImageKind::PtxText;
  // Version 2 wrappers (-rdc): the units must be linked together (each is compiled with --compile-only and
  // refers to the others' .extern symbols). Otherwise exactly one unit.
  bool needsLinking = false;
  std::vector<PtxText> units;
  // NVIDIA's device runtime (libcudadevrt, -lcudadevrt) was among the inputs and left out: the interpreter
  // provides the device runtime itself.
  bool deviceRuntimeLeftOut = false;
};

// The PTX cuemu should compile for a device of compute capability ccMajor.ccMinor:
//  - bare PTX text: the text itself;
//  - a container (directly or through a version 1 wrapper): the best PTX entry, i.e. the highest arch the
//    device can run (arch <= device; "a" entries only on exactly that device, "f" entries on the same major);
//  - a version 2 wrapper: the best entry of every per-unit container (needsLinking), except the container of
//    NVIDIA's device runtime (deviceRuntimeLeftOut), whatever PTX it has. A version 2 wrapper
//    whose unit array is empty (nvcc's device-link stub of a non-rdc program) gives zero units.
// Errors: CUDA_ERROR_NO_BINARY_FOR_GPU when the image holds only SASS (or PTX only for higher archs), with a
// message naming the binary the image lives in and the nvcc flag that would add PTX;
// CUDA_ERROR_INVALID_IMAGE for malformed input; CUDA_ERROR_INVALID_VALUE for a null image.
Expected<PtxImage> extractPtx(const void* image, int ccMajor, int ccMinor, size_t size = kUnknownImageSize);

// True for extractPtx's refusal of a cubin that a library generated at run time (cuBLASLt's nvjet kernels): unlike
// the SASS a library offers while it probes for an image, such a refusal is the one that makes its call fail.
bool refusedGeneratedSass(const Error& error);
// True for extractPtx's refusal of a cubin a library chose itself and copied out of its own storage (not one mapped
// from a binary): module loading adds what a client that compiles its kernels may need (core/module.cpp).
bool refusedChosenSass(const Error& error);

// The PTX of the device code embedded in host binaries (cuLinkAddData's CU_JIT_INPUT_OBJECT and
// CU_JIT_INPUT_LIBRARY): an x86-64 ELF object, executable or shared library whose .nv_fatbin / __nv_relfatbin
// sections hold fatbinaries (nvcc -c, nvcc -dc), or an ar archive of such objects. One unit per fatbinary that
// has PTX for the device (needsLinking is set); an input without any gives CUDA_ERROR_NO_BINARY_FOR_GPU, a
// malformed one CUDA_ERROR_INVALID_IMAGE.
Expected<PtxImage> extractPtxFromHostBinary(const void* data, size_t size, int ccMajor, int ccMinor,
                                            const std::string& name);

// The bytes of a module file (cuModuleLoad, cuLibraryLoadFromFile, cuLinkAddFile), NUL-terminated as images
// given in memory are. Answers as driver 580: an empty path is CUDA_ERROR_INVALID_VALUE, a path that cannot be
// opened CUDA_ERROR_FILE_NOT_FOUND, a directory CUDA_ERROR_OUT_OF_MEMORY; a file that is not regular (a device
// such as /dev/zero, a pipe) is read only up to a bound and is CUDA_ERROR_INVALID_IMAGE past it.
Expected<std::string> readImageFile(const char* path);

// The file (executable or shared library) whose mapped memory holds `address`, for messages; "" if none.
std::string binaryContaining(const void* address);

// The return address of the exported entry point this thread entered last (api/entries.cpp sets it): the binary
// that called the driver. An image a library copied into memory (cuBLAS decompresses its fatbinaries) is named
// by that library in messages.
inline thread_local const void* tlEntryCaller = nullptr;

}  // namespace cuemu
