// The private tables that cuGetExportTable hands to NVIDIA's CUDA runtime (libcudart 13), and the integrity
// check the runtime verifies before it runs anything. What each table and slot must do is measured and
// documented in /work/shared/reference/cudart-private-interface.md; docs/runtime.md tells the story.
#pragma once

#include "api/cuda_internal.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

namespace cuemu::exporttables {

// UUIDs (16 bytes in memory order) of the tables cuemu answers.
inline constexpr CUuuid kUnknownF8cf = {{char(0xf8), char(0xcf), char(0xf9), char(0x51), char(0x21), char(0x46),
                                         char(0x8b), char(0x4e), char(0xb9), char(0xe2), char(0xfb), char(0x46),
                                         char(0x9e), char(0x7c), char(0x0d), char(0xd9)}};
inline constexpr CUuuid kRuntimeInterface = {{char(0x6b), char(0xd5), char(0xfb), char(0x6c), char(0x5b), char(0xf4),
                                              char(0xe7), char(0x4a), char(0x89), char(0x87), char(0xd9), char(0x39),
                                              char(0x12), char(0xfd), char(0x9d), char(0xf9)}};
inline constexpr CUuuid kToolsCallbackHooks = {{char(0xa0), char(0x94), char(0x79), char(0x8c), char(0x2e), char(0x74),
                                                char(0x2e), char(0x74), char(0x93), char(0xf2), char(0x08), char(0x00),
                                                char(0x20), char(0x0c), char(0x0a), char(0x66)}};
inline constexpr CUuuid kToolsTls = {{char(0x42), char(0xd8), char(0x5a), char(0x81), char(0x23), char(0xf6),
                                      char(0xcb), char(0x47), char(0x82), char(0x98), char(0xf6), char(0xe7),
                                      char(0x8a), char(0x3a), char(0xec), char(0xdc)}};
inline constexpr CUuuid kContextLocalStorage = {{char(0xc6), char(0x93), char(0x33), char(0x6e), char(0x11), char(0x21),
                                                 char(0xdf), char(0x11), char(0xa8), char(0xc3), char(0x68), char(0xf3),
                                                 char(0x55), char(0xd8), char(0x95), char(0x93)}};
inline constexpr CUuuid kContextChecks = {{char(0x26), char(0x3e), char(0x88), char(0x60), char(0x7c), char(0xd2),
                                           char(0x61), char(0x43), char(0x92), char(0xf6), char(0xbb), char(0xd5),
                                           char(0x00), char(0x6d), char(0xfa), char(0x7e)}};
inline constexpr CUuuid kIntegrityCheck = {{char(0xd4), char(0x08), char(0x20), char(0x55), char(0xbd), char(0xe6),
                                            char(0x70), char(0x4b), char(0x8d), char(0x34), char(0xba), char(0x12),
                                            char(0x3c), char(0x66), char(0xe1), char(0xf2)}};

// Tables newer runtimes ask for (cudart 13.4+ asks for 21318c60..., NVRTC and nvJitLink for da9151d3...).
// NVIDIA's driver 580 answers both with a table (measured on an H100: tools/gpu-probe/results/clients17-*.txt);
// an unknown UUID is CUDA_ERROR_INVALID_VALUE there too.
inline constexpr CUuuid kRuntime134 = {{char(0x21), char(0x31), char(0x8c), char(0x60), char(0x97), char(0x14),
                                        char(0x32), char(0x48), char(0x8c), char(0xa6), char(0x41), char(0xff),
                                        char(0x73), char(0x24), char(0xc8), char(0xf2)}};
inline constexpr CUuuid kCompilerQuery = {{char(0xda), char(0x91), char(0x51), char(0xd3), char(0x3a), char(0xe6),
                                           char(0xcc), char(0x41), char(0xa5), char(0xc0), char(0x4f), char(0x26),
                                           char(0xd5), char(0x33), char(0xe3), char(0x28)}};

// cuFFT 12 asks for 6e163fbe... (measured with a logging driver in front of driver 580 on an H100:
// tools/gpu-probe/results/exportlog17-h100-2026-11-27.txt).
inline constexpr CUuuid kCufft = {{char(0x6e), char(0x16), char(0x3f), char(0xbe), char(0xb9), char(0x58), char(0x44),
                                   char(0x4d), char(0x83), char(0x5c), char(0xe1), char(0x82), char(0xaf), char(0xf1),
                                   char(0x99), char(0x1e)}};

// Slot signatures the runtime calls (slot numbers count pointers from the table's start).
using PrimaryContextFn = CUresult (*)(CUcontext* context, CUdevice device);  // runtime interface [2]
using ToolsBufferFn = CUresult (*)(void** buffer, size_t* size);             // tools hooks [2], [6]
using UnmodelledSlotFn = CUresult (*)();                                     // slots of unknown purpose
using ToolsHookFn = CUresult (*)(void* first, void* second);                 // tools hooks [1], [3]-[5]
using ToolsTlsFn = CUresult (*)(void* record);                               // tools thread-local [1], [2]
using StorageDestructor = void (*)(CUcontext context, void* key, void* value);
using StoragePutFn = CUresult (*)(CUcontext context, void* key, void* value, StorageDestructor destructor);  // [0]
using StorageDeleteFn = CUresult (*)(CUcontext context, void* key);                                          // [1]
using StorageGetFn = CUresult (*)(void** value, CUcontext context, void* key);                               // [2]
using ContextCheckFn = CUresult (*)(CUcontext context, uint32_t* out, void** unused);            // context checks [2]
using ContextCheck3Fn = CUresult (*)();                                                          // context checks [3]
using IntegrityCheckFn = CUresult (*)(uint32_t version, uint64_t unixSeconds, uint64_t out[2]);  // [1]
using ModuleFunctionVisitor = void (*)(void* user, CUfunction function);
// cuFFT's table [7]: answers 1 when it has shown `visit` the module's kernels, 0 otherwise.
using ModuleFunctionsFn = int (*)(CUcontext context, CUmodule module, ModuleFunctionVisitor visit, void* user);

// The table for a UUID, or null when cuemu (like NVIDIA's driver) has none.
const void* const* find(const CUuuid& id);
// The table's role ("runtime interface", ...) for traces, or null.
const char* tableName(const CUuuid& id);

// MD2 (RFC 1319).
using Md2Digest = std::array<uint8_t, 16>;
Md2Digest md2(std::span<const uint8_t> message);

// The integrity check's keyed digest: MD2((K ^ opad) || MD2((K ^ ipad) || message)).
Md2Digest integrityHmac(std::span<const uint8_t> message);

// The message the integrity check digests: struct A, then one struct B per device in ordinal order (76 bytes
// with one device, 104 with two).
struct IntegrityMessage {
  struct {
    uint32_t driverVersion;
    uint32_t version;
    uint32_t pid;
    uint32_t tid;
    const void* runtimeInterfaceTable;
    const void* integrityTable;
    const void* integrityCheckFunction;
    uint64_t unixSeconds;
  } a;
  struct {
    uint8_t deviceUuid[16];
    int32_t pciDomainId;
    int32_t pciBusId;
    int32_t pciDeviceId;
  } b;
};
static_assert(sizeof(IntegrityMessage::a) == 48 && sizeof(IntegrityMessage::b) == 28);

}  // namespace cuemu::exporttables
