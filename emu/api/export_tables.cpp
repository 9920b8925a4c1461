#include "api/export_tables.h"

#include "api/impl.h"
#include "api/trace.h"
#include "core/context.h"
#include "core/device.h"
#include "core/driver.h"
#include "core/log.h"
#include "core/module.h"
#include "core/stream.h"
#include "core/stream_lookup.h"

#include <pthread.h>
#include <unistd.h>

#include <fmt/format.h>
#include <cstring>
#include <algorithm>
#include <array>
#include <atomic>
#include <utility>
#include <string>
#include <vector>

namespace cuemu::exporttables {
namespace {

// Tables are structs of typed pointers laid out exactly like the arrays the runtime indexes, so that they are
// constant-initialised (no static constructors). A size slot holds the table's size in bytes.
template <typename Table> constexpr size_t sizeSlot() { return sizeof(Table); }

}  // namespace

// Slot calls bypass the entry-point layer; they are traced here in the same format.
template <typename... Args>
CUresult traced(const char* name, const char* argNames, CUresult result, const Args&... args) {
  if (trace::on()) [[unlikely]] {
    try {
      trace::callNamed(name, argNames, result, args...);
    } catch (...) {}
  }
  return result;
}

namespace {

// Slots whose purpose is not known. NVIDIA's driver fills them, so the runtime may call one without a NULL check
// on a path the corpus has not exercised: instead of jumping to address 0, such a call names itself (once) and
// fails cleanly. The tables and their slot numbers are listed here for the message.
enum class TableId { RuntimeInterface, ContextChecks, Integrity, Runtime134, UnknownF8cf, Cufft };

CUresult unmodelledSlotCalled(TableId table, int slot) {
  static constexpr const char* kNames[] = {
      "runtime interface (6bd5fb6c...)", "context checks (263e8860...)", "integrity check (d4082055...)",
      "cudart 13.4+ (21318c60...)",      "cudart (f8cff951...)",         "cuFFT (6e163fbe...)"};
  static std::atomic<uint64_t> reported[std::size(kNames)][2];  // one bit per slot, up to 128 slots
  uint64_t bit = uint64_t{1} << (slot % 64);
  if (!(reported[static_cast<int>(table)][slot / 64].fetch_or(bit) & bit))
    CUEMU_WARN(
        "the CUDA runtime called slot {} of the export table {}, which cuemu does not model; the call fails "
        "with CUDA_ERROR_NOT_SUPPORTED (please report the program)",
        slot, kNames[static_cast<int>(table)]);
  return traced("EXPORT_TABLE unmodelled slot", "(table, slot)", CUDA_ERROR_NOT_SUPPORTED,
                kNames[static_cast<int>(table)], slot);
}

template <TableId Table, int Slot> CUresult unmodelled() { return unmodelledSlotCalled(Table, Slot); }

template <TableId Table, int First, size_t... I>
constexpr std::array<UnmodelledSlotFn, sizeof...(I)> unmodelledSlots(std::index_sequence<I...>) {
  return {unmodelled<Table, First + static_cast<int>(I)>...};
}
template <TableId Table, int First, int Count> constexpr std::array<UnmodelledSlotFn, Count> unmodelledRange() {
  return unmodelledSlots<Table, First>(std::make_index_sequence<Count>{});
}

// --- Runtime interface (6bd5fb6c...): 13 slots; 2 and 12 are used (slot 10 is NULL on NVIDIA's driver too). ---
CUresult primaryContextImpl(CUcontext* out, CUdevice ordinal) {
  if (!driverInitialized()) return CUDA_ERROR_NOT_INITIALIZED;
  if (!out) return CUDA_ERROR_INVALID_VALUE;
  Device* device = deviceByOrdinal(ordinal);
  if (!device) return CUDA_ERROR_INVALID_DEVICE;
  // The handle exists before any retain; cuDevicePrimaryCtxRetain later returns the same one.
  *out = device->primaryContext()->apiHandle();
  return CUDA_SUCCESS;
}
CUresult primaryContext(CUcontext* out, CUdevice ordinal) {
  CUresult r = primaryContextImpl(out, ordinal);
  return traced("EXPORT_TABLE[runtime interface][2] primaryContext", "(out, dev)", r, out ? *out : nullptr, ordinal);
}

// Slot 12 takes no arguments: cudart 13.2 (PyTorch 2.15's) calls it in its first runtime call, unless the
// environment variable CUDA_8b3537d1 is "dc6ffd77", and fails that call with any result but CUDA_SUCCESS. Driver 580
// answers CUDA_ERROR_NOT_INITIALIZED before cuInit and CUDA_SUCCESS after it, with or without a current context
// (measured on an H100, driver 580.159.04, tools/gpu-probe/rtiface28.cpp); what it checks beyond that is not known.
CUresult initializedCheck() {
  return traced("EXPORT_TABLE[runtime interface][12] initializedCheck", "()",
                driverInitialized() ? CUDA_SUCCESS : CUDA_ERROR_NOT_INITIALIZED);
}
using NoArgumentFn = CUresult (*)();

struct RuntimeInterfaceTable {
  size_t size;
  UnmodelledSlotFn slot1;
  PrimaryContextFn slot2;
  std::array<UnmodelledSlotFn, 7> slots3to9;
  void* slot10;
  UnmodelledSlotFn slot11;
  NoArgumentFn slot12;
};
constinit const RuntimeInterfaceTable g_runtimeInterface = {sizeSlot<RuntimeInterfaceTable>(),
                                                            unmodelled<TableId::RuntimeInterface, 1>,
                                                            primaryContext,
                                                            unmodelledRange<TableId::RuntimeInterface, 3, 7>(),
                                                            nullptr,
                                                            unmodelled<TableId::RuntimeInterface, 11>,
                                                            initializedCheck};
static_assert(sizeof(RuntimeInterfaceTable) == 13 * sizeof(void*));

// --- Tools callback hooks (a094798c...): 7 slots; 2 and 6 hand out zeroed buffers the driver owns. ---
alignas(16) uint8_t g_toolsBuffer1[1024];
alignas(16) uint8_t g_toolsBuffer2[14];

constexpr const char* kToolsHookNames[] = {"",
                                           "EXPORT_TABLE[tools hooks][1]",
                                           "EXPORT_TABLE[tools hooks][2] buffer",
                                           "EXPORT_TABLE[tools hooks][3]",
                                           "EXPORT_TABLE[tools hooks][4]",
                                           "EXPORT_TABLE[tools hooks][5]",
                                           "EXPORT_TABLE[tools hooks][6] buffer"};

template <int Slot, auto& Buffer> CUresult toolsBuffer(void** buffer, size_t* size) {
  if (!buffer || !size) return traced(kToolsHookNames[Slot], "()", CUDA_ERROR_INVALID_VALUE);
  *buffer = Buffer;
  *size = sizeof Buffer;
  return traced(kToolsHookNames[Slot], "(buffer, size)", CUDA_SUCCESS, *buffer, *size);
}

// Slots 1, 3, 4 and 5 report API entry/exit to an attached profiler. Some runtime APIs (cudaGetDeviceProperties,
// cudaLaunchHostFunc, cudaLaunchCooperativeKernel) call slot 4 without checking it, so every slot is a function;
// with no profiler there is nothing to report.
template <int Slot> CUresult toolsHook(void* a, void* b) {
  return traced(kToolsHookNames[Slot], "(a, b)", CUDA_SUCCESS, a, b);
}

struct ToolsCallbackHooksTable {
  size_t size;
  ToolsHookFn slot1;
  ToolsBufferFn slot2;
  ToolsHookFn slot3;
  ToolsHookFn slot4;
  ToolsHookFn slot5;
  ToolsBufferFn slot6;
};
constinit const ToolsCallbackHooksTable g_toolsCallbackHooks = {sizeSlot<ToolsCallbackHooksTable>(),
                                                                toolsHook<1>,
                                                                toolsBuffer<2, g_toolsBuffer1>,
                                                                toolsHook<3>,
                                                                toolsHook<4>,
                                                                toolsHook<5>,
                                                                toolsBuffer<6, g_toolsBuffer2>};
static_assert(sizeof(ToolsCallbackHooksTable) == 7 * sizeof(void*));

// --- Tools thread-local storage (42d85a81...): 3 slots. Slot 2 writes the calling thread's current context
// (measured on an H100 with driver 580: the value equals cuCtxGetCurrent's; tools/gpu-probe/results/cc12-*.txt).
// cudaGetDeviceProperties, cudaLaunchHostFunc and cudaLaunchCooperativeKernel call it unconditionally, cuBLAS and
// cuBLASLt 13 pass the context on to export table 21318c60. Slot 1 has no known reader: it accepts and succeeds. ---
constexpr const char* kToolsTlsNames[] = {"", "EXPORT_TABLE[tools thread-local][1]",
                                          "EXPORT_TABLE[tools thread-local][2]"};

CUresult toolsTls1(void* record) { return traced(kToolsTlsNames[1], "(record)", CUDA_SUCCESS, record); }

CUresult toolsTlsCurrentContext(void* out) {
  if (out) {
    auto context = currentContext();
    CUcontext handle = context ? context->apiHandle() : nullptr;
    std::memcpy(out, &handle, sizeof handle);
  }
  return traced(kToolsTlsNames[2], "(out)", CUDA_SUCCESS, out);
}

struct ToolsTlsTable {
  size_t size;
  ToolsTlsFn slot1;
  ToolsTlsFn slot2;
};
constinit const ToolsTlsTable g_toolsTls = {sizeSlot<ToolsTlsTable>(), toolsTls1, toolsTlsCurrentContext};

// --- f8cff951: a table whose slots are all of unknown purpose, with the sizes driver 580 gives them (measured on an
// H100: tools/gpu-probe/results/tables17-h100-2026-11-26.txt; their functions are libcuda's and export no names).
// Callers do not check the size before calling a slot, so every slot is a function that names itself and fails cleanly:
//   f8cff951 (older cudart, CuPy's): 2 slots; slot 1 is called on the same error path as 21318c60's.
// (da9151d3 of NVRTC and nvJitLink has 6 slots on driver 580, but NVRTC reads its size and calls slot 1 when it
// is there: it stays a size-only table below, with which NVRTC works.) ---
template <TableId Table, int Slots> struct UnmodelledTable {
  size_t size;
  std::array<UnmodelledSlotFn, Slots> slots;
};
template <TableId Table, int Slots> constexpr UnmodelledTable<Table, Slots> unmodelledTable() {
  return {sizeof(UnmodelledTable<Table, Slots>), unmodelledRange<Table, 1, Slots>()};
}
// Slot 2 takes one integer and returns nothing: the static runtime of CUDA 13.5 (libcudf's) calls it with 0 and 1
// around a CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT query and never reads its result, and on driver 580 (H100) it
// leaves no trace that probes see: its "result" is whatever the register held, and attribute queries after it answer
// as before (tools/gpu-probe/f8cf28, results/f8cf28-h100-2026-11-28.txt). Here it does nothing.
void f8cfSlot2(unsigned long long) {}
struct UnknownF8cfTable {
  size_t size;
  UnmodelledSlotFn slot1;
  void (*slot2)(unsigned long long);
};
constinit const UnknownF8cfTable g_unknownF8cf = {sizeof(UnknownF8cfTable), unmodelled<TableId::UnknownF8cf, 1>,
                                                  f8cfSlot2};
static_assert(sizeof(g_unknownF8cf) == 0x18);

// --- da9151d3 (NVRTC, nvJitLink): only a size slot, so a reader finds no functions in it. ---
struct SizeOnlyTable {
  size_t size;
};
constinit const SizeOnlyTable g_sizeOnlyTable = {sizeSlot<SizeOnlyTable>()};

// --- 21318c60...: a table of 92 driver-internal functions (its size slot reads 0x2e8 on driver 580). Every slot has
// the type Runtime134Fn, the first four argument registers, of which a slot reads those it uses (a caller that
// passes fewer leaves the others unread). The known slots, from their callers in cuBLAS 13 and their answers on an
// H100 with driver 580 (tools/gpu-probe/stream51.cpp; results/stream51-h100-2026-11-27.txt):
//   4  (ctx, uint64_t* out): the context's id (cuCtxGetId). cuBLASLt 13 keys a cache on it during algorithm
//      selection, with the context from tools-TLS slot 2.
//   51 (ctx, CUstream, void** out, int nullIsPerThread): the stream a CUstream value names: NULL, CU_STREAM_LEGACY
//      and CU_STREAM_PER_THREAD in `ctx` (NULL is the calling thread's per-thread stream when the flag is set;
//      with a NULL ctx they are CUDA_ERROR_INVALID_HANDLE), a stream handle as itself whatever `ctx` is. The driver
//      writes its internal stream object, which only slot 39 reads; cuemu writes the stream's CUstream value.
//   39 (ctx, that stream, uint64_t* out): the stream's id (cuStreamGetId's); a NULL stream or out is
//      CUDA_ERROR_INVALID_VALUE.
// cuBLAS 13 calls 51 and then 39 (with its stream and the flag set for CU_STREAM_PER_THREAD) before it launches a
// kernel that uses its per-stream workspace, cublasSgemm's split-K kernels for one, and keys the workspace on the
// id; cuSOLVER and CuPy go through the same code, and cudart 13.4+ calls both in cudaStreamGetCaptureInfo. Every
// other slot answers CUDA_ERROR_NOT_SUPPORTED and warns once naming the slot (a call through a missing slot would
// crash the host); cudart 13.4+ calls slot 1 when it reports an error (cudaSetDevice of a device that does not
// exist; tools/gpu-probe/results/tables17-h100-2026-11-26.txt). ---
constexpr int kRuntime134Slots = 92;
using Runtime134Fn = CUresult (*)(void*, void*, void*, int);

// The answer of a slot that resolves an object and writes one of its values to `out`: what `value` gives for it,
// or the resolution's error.
template <class T, class F> CUresult writeResolved(Expected<T> resolved, void* out, F value) {
  if (!resolved) return resolved.error().code;
  const auto v = value(*resolved);
  std::memcpy(out, &v, sizeof v);
  return CUDA_SUCCESS;
}

CUresult runtime134ContextId(void* context, void* out, void*, int) {
  const CUresult result =
      out ? writeResolved(resolveContext(static_cast<CUcontext>(context)), out,
                          [](const auto& ctx) { return static_cast<unsigned long long>(ctx->id()); })
          : CUDA_ERROR_INVALID_VALUE;
  return traced("EXPORT_TABLE[21318c60][4] context id", "(ctx, out)", result, static_cast<CUcontext>(context), out);
}

// The stream `handle` names for slots 51 and 39 (above).
Expected<std::shared_ptr<Stream>> streamOfContext(void* context, CUstream handle, bool nullIsPerThread) {
  if (handle != nullptr && handle != CU_STREAM_LEGACY && handle != CU_STREAM_PER_THREAD) return lookup<Stream>(handle);
  if (!context) return makeError(CUDA_ERROR_INVALID_HANDLE);
  auto resolved = resolveContext(static_cast<CUcontext>(context));
  if (!resolved) return resolved.takeError();
  DefaultStreamScope scope(nullIsPerThread);
  return (*resolved)->streams().resolve(handle);
}

CUresult runtime134ResolveStream(void* context, void* stream, void* out, int nullIsPerThread) {
  const CUresult result =
      out ? writeResolved(streamOfContext(context, static_cast<CUstream>(stream), nullIsPerThread != 0), out,
                          [](const auto& s) { return s->apiHandle(); })
          : CUDA_ERROR_INVALID_VALUE;
  return traced("EXPORT_TABLE[21318c60][51] stream of context", "(ctx, stream, out, nullIsPerThread)", result,
                static_cast<CUcontext>(context), static_cast<CUstream>(stream), out, nullIsPerThread);
}

CUresult runtime134StreamId(void* context, void* stream, void* out, int) {
  const CUresult result = out && stream
                              ? writeResolved(streamOfContext(context, static_cast<CUstream>(stream), false), out,
                                              [](const auto& s) { return static_cast<unsigned long long>(s->id()); })
                              : CUDA_ERROR_INVALID_VALUE;
  return traced("EXPORT_TABLE[21318c60][39] stream id", "(ctx, stream, out)", result, static_cast<CUcontext>(context),
                static_cast<CUstream>(stream), out);
}

template <int Slot> CUresult runtime134Unsupported(void* first, void* second, void*, int) {
  static std::atomic<bool> warned{false};
  if (!warned.exchange(true))
    CUEMU_WARN(
        "a library called slot {} of the driver-internal export table 21318c60, whose meaning cuemu does not "
        "know; the call answers CUDA_ERROR_NOT_SUPPORTED",
        Slot);
  if (trace::on()) [[unlikely]] {
    std::string name = fmt::format("EXPORT_TABLE[21318c60][{}]", Slot);
    return traced(name.c_str(), "(first, second)", CUDA_ERROR_NOT_SUPPORTED, first, second);
  }
  return CUDA_ERROR_NOT_SUPPORTED;
}
struct Runtime134Table {
  size_t size;
  std::array<Runtime134Fn, kRuntime134Slots> slots;
};
template <int Slot> constexpr Runtime134Fn runtime134Slot() {
  if constexpr (Slot == 4) return runtime134ContextId;
  if constexpr (Slot == 39) return runtime134StreamId;
  if constexpr (Slot == 51) return runtime134ResolveStream;
  return runtime134Unsupported<Slot>;
}
template <std::size_t... Slot> constexpr Runtime134Table runtime134Table(std::index_sequence<Slot...>) {
  return {sizeof(Runtime134Table), {runtime134Slot<int(Slot) + 1>()...}};
}
constinit const Runtime134Table g_runtime134 = runtime134Table(std::make_index_sequence<kRuntime134Slots>());

// --- Context-local storage (c693336e...): no size slot; put, delete, get, then nulls. ---
// A null context means the calling thread's current one.
Expected<std::shared_ptr<Context>> storageContext(CUcontext handle) {
  if (!driverInitialized()) return makeError(CUDA_ERROR_NOT_INITIALIZED);
  if (!handle) return requireCurrentContext();
  return lookup<Context>(handle, CUDA_ERROR_INVALID_CONTEXT);
}

CUresult storagePutImpl(CUcontext handle, void* key, void* value, StorageDestructor destructor) {
  auto context = storageContext(handle);
  if (!context) return context.error().code;
  (*context)->storagePut(key, value, destructor);
  return CUDA_SUCCESS;
}
CUresult storagePut(CUcontext handle, void* key, void* value, StorageDestructor destructor) {
  CUresult r = storagePutImpl(handle, key, value, destructor);
  return traced("EXPORT_TABLE[context-local storage][0] put", "(ctx, key, value, destructor)", r, handle, key, value,
                reinterpret_cast<void*>(destructor));
}

CUresult storageDeleteImpl(CUcontext handle, void* key) {
  auto context = storageContext(handle);
  if (!context) return context.error().code;
  return (*context)->storageErase(key) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}
CUresult storageDelete(CUcontext handle, void* key) {
  CUresult r = storageDeleteImpl(handle, key);
  return traced("EXPORT_TABLE[context-local storage][1] delete", "(ctx, key)", r, handle, key);
}

CUresult storageGetImpl(void** value, CUcontext handle, void* key) {
  if (!value) return CUDA_ERROR_INVALID_VALUE;
  auto context = storageContext(handle);
  if (!context) return context.error().code;
  return (*context)->storageGet(key, *value) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}
CUresult storageGet(void** value, CUcontext handle, void* key) {
  CUresult r = storageGetImpl(value, handle, key);
  return traced("EXPORT_TABLE[context-local storage][2] get", "(value, ctx, key)", r,
                value && r == CUDA_SUCCESS ? *value : nullptr, handle, key);
}

struct ContextLocalStorageTable {
  StoragePutFn put;
  StorageDeleteFn erase;
  StorageGetFn get;
  void* trailing[3];
};
constinit const ContextLocalStorageTable g_contextLocalStorage = {storagePut, storageDelete, storageGet, {}};

// --- 6e163fbe (cuFFT 12): 98 slots (its size slot reads 0x318 on driver 580). cuFFT calls only slot 7, after
// each cuModuleLoadData of one of its kernels' images: slot7(context, module, visit, user) calls visit(user, f)
// with the module's kernel (cuFFT's visitor stores f through user; it then queries and launches f), and cuFFT
// requires the answer 1, else CUFFT_INTERNAL_ERROR (measured through a logging driver in front of driver 580 on
// an H100: tools/gpu-probe/results/exportlog17-h100-2026-11-27.txt; every module cuFFT loaded held one kernel).
// cuemu visits every kernel of the module in declaration order and answers 1; an unknown context or module is 0.
// The other slots were not called; they fail cleanly, naming themselves. ---
int moduleFunctionsImpl(CUcontext contextHandle, CUmodule moduleHandle, ModuleFunctionVisitor visit, void* user) {
  if (!driverInitialized() || !visit) return 0;
  auto context = storageContext(contextHandle);
  if (!context) return 0;
  auto module = lookup<Module>(moduleHandle, CUDA_ERROR_INVALID_HANDLE);
  if (!module) return 0;
  for (const auto& function : (*module)->allFunctions()) visit(user, toApiHandle<CUfunction>(function->handle()));
  return 1;
}
int moduleFunctions(CUcontext context, CUmodule module, ModuleFunctionVisitor visit, void* user) {
  int answer = moduleFunctionsImpl(context, module, visit, user);
  traced("EXPORT_TABLE[cuFFT 6e163fbe][7] module functions", "(ctx, module, visit, user)",
         answer == 1 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE, context, module, reinterpret_cast<void*>(visit), user);
  return answer;
}

struct CufftTable {
  size_t size;
  std::array<UnmodelledSlotFn, 6> slots1to6;
  ModuleFunctionsFn slot7;
  std::array<UnmodelledSlotFn, 91> slots8to98;
};
constinit const CufftTable g_cufft = {sizeSlot<CufftTable>(), unmodelledRange<TableId::Cufft, 1, 6>(), moduleFunctions,
                                      unmodelledRange<TableId::Cufft, 8, 91>()};
static_assert(sizeof(CufftTable) == 0x318);

// --- Context checks (263e8860...): 15 slots; 2 and 3 are called and must succeed. ---
CUresult contextCheck(CUcontext context, uint32_t* out, void** unused) {
  (void)unused;
  if (out) *out = 0;
  return traced("EXPORT_TABLE[context checks][2] check", "(ctx, out)", CUDA_SUCCESS, context, out);
}
CUresult contextCheck3() { return traced("EXPORT_TABLE[context checks][3] check", "()", CUDA_SUCCESS); }

struct ContextChecksTable {
  size_t size;
  UnmodelledSlotFn slot1;
  ContextCheckFn slot2;
  ContextCheck3Fn slot3;
  std::array<UnmodelledSlotFn, 11> slots4to14;
};
constinit const ContextChecksTable g_contextChecks = {sizeSlot<ContextChecksTable>(),
                                                      unmodelled<TableId::ContextChecks, 1>, contextCheck,
                                                      contextCheck3, unmodelledRange<TableId::ContextChecks, 4, 11>()};
static_assert(sizeof(ContextChecksTable) == 15 * sizeof(void*));

// --- Integrity check (d4082055...): slot 1. ---
CUresult integrityCheck(uint32_t version, uint64_t unixSeconds, uint64_t out[2]);

struct IntegrityTable {
  size_t size;
  IntegrityCheckFn check;
  UnmodelledSlotFn slot2;
};
constinit const IntegrityTable g_integrity = {sizeSlot<IntegrityTable>(), integrityCheck,
                                              unmodelled<TableId::Integrity, 2>};

void fillDeviceFacts(IntegrityMessage& m, int ordinal) {
  std::memset(&m.b, 0, sizeof m.b);
  Device* device = driverInitialized() ? deviceByOrdinal(ordinal) : nullptr;
  if (!device) return;
  std::memcpy(m.b.deviceUuid, device->uuid().bytes, sizeof m.b.deviceUuid);
  // The runtime digests what cuDeviceGetAttribute told it; ask the same source.
  auto attribute = [&](CUdevice_attribute which, int fallback) {
    int value = 0;
    return device->attribute(which, value) == CUDA_SUCCESS ? value : fallback;
  };
  m.b.pciDomainId = attribute(CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, device->pciDomainId());
  m.b.pciBusId = attribute(CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, device->pciBusId());
  m.b.pciDeviceId = attribute(CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, device->pciDeviceId());
}

CUresult integrityCheckImpl(uint32_t version, uint64_t unixSeconds, uint64_t out[2]) {
  if (!out) return CUDA_ERROR_INVALID_VALUE;
  if (version % 10 < 2) {
    // Versions x0 and x1 expect fixed answers that the runtime does not verify.
    out[0] = 0;
    out[1] = 0;
    return CUDA_SUCCESS;
  }
  IntegrityMessage m{};
  m.a.driverVersion = static_cast<uint32_t>(reportedDriverVersion());
  m.a.version = version;
  m.a.pid = static_cast<uint32_t>(getpid());
  m.a.tid = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(reinterpret_cast<void*>(pthread_self())));
  m.a.runtimeInterfaceTable = &g_runtimeInterface;
  m.a.integrityTable = &g_integrity;
  m.a.integrityCheckFunction = reinterpret_cast<const void*>(&integrityCheck);
  m.a.unixSeconds = unixSeconds;
  // Struct A, then struct B for every device in ordinal order (measured: with two devices the runtime
  // verifies A || B(0) || B(1); the reference document's single B is the one-device case).
  std::vector<uint8_t> bytes(sizeof m.a);
  std::memcpy(bytes.data(), &m.a, sizeof m.a);
  int count = driverInitialized() ? static_cast<int>(devices().size()) : 0;
  for (int ordinal = 0; ordinal < std::max(count, 1); ++ordinal) {
    fillDeviceFacts(m, ordinal);
    size_t at = bytes.size();
    bytes.resize(at + sizeof m.b);
    std::memcpy(bytes.data() + at, &m.b, sizeof m.b);
  }
  Md2Digest digest = integrityHmac(bytes);
  std::memcpy(&out[0], digest.data(), 8);
  std::memcpy(&out[1], digest.data() + 8, 8);
  return CUDA_SUCCESS;
}

CUresult integrityCheck(uint32_t version, uint64_t unixSeconds, uint64_t out[2]) {
  CUresult r = integrityCheckImpl(version, unixSeconds, out);
  return traced("EXPORT_TABLE[integrity check][1] check", "(version, seconds, out)", r, version, unixSeconds,
                static_cast<void*>(out));
}

// The RFC 1319 substitution table: a permutation of 0..255 derived from the digits of pi.
constexpr uint8_t kMd2Substitution[256] = {
    41,  46,  67,  201, 162, 216, 124, 1,   61,  54,  84,  161, 236, 240, 6,   19,  98,  167, 5,   243, 192, 199,
    115, 140, 152, 147, 43,  217, 188, 76,  130, 202, 30,  155, 87,  60,  253, 212, 224, 22,  103, 66,  111, 24,
    138, 23,  229, 18,  190, 78,  196, 214, 218, 158, 222, 73,  160, 251, 245, 142, 187, 47,  238, 122, 169, 104,
    121, 145, 21,  178, 7,   63,  148, 194, 16,  137, 11,  34,  95,  33,  128, 127, 93,  154, 90,  144, 50,  39,
    53,  62,  204, 231, 191, 247, 151, 3,   255, 25,  48,  179, 72,  165, 181, 209, 215, 94,  146, 42,  172, 86,
    170, 198, 79,  184, 56,  210, 150, 164, 125, 182, 118, 252, 107, 226, 156, 116, 4,   241, 69,  157, 112, 89,
    100, 113, 135, 32,  134, 91,  207, 101, 230, 45,  168, 2,   27,  96,  37,  173, 174, 176, 185, 246, 28,  70,
    97,  105, 52,  64,  126, 15,  85,  71,  163, 35,  221, 81,  175, 58,  195, 92,  249, 206, 186, 197, 234, 38,
    44,  83,  13,  110, 133, 40,  132, 9,   211, 223, 205, 244, 65,  129, 77,  82,  106, 220, 55,  200, 108, 193,
    171, 250, 36,  225, 123, 8,   12,  189, 177, 74,  120, 136, 149, 139, 227, 99,  232, 109, 233, 203, 213, 254,
    59,  0,   29,  57,  242, 239, 183, 14,  102, 88,  208, 228, 166, 119, 114, 248, 235, 117, 75,  10,  49,  68,
    80,  180, 143, 237, 31,  26,  219, 153, 141, 51,  159, 17,  131, 20};

class Md2 {
 public:
  void update(std::span<const uint8_t> data) {
    for (uint8_t byte : data) {
      block_[filled_++] = byte;
      if (filled_ == 16) {
        absorb(block_, /*updateChecksum=*/true);
        filled_ = 0;
      }
    }
  }
  Md2Digest finish() {
    // Padding by value: n bytes of value n (a whole block when the message is block-aligned).
    uint8_t pad = static_cast<uint8_t>(16 - filled_);
    while (filled_ < 16) block_[filled_++] = pad;
    absorb(block_, true);
    uint8_t checksum[16];
    std::memcpy(checksum, checksum_, 16);
    absorb(checksum, false);
    Md2Digest digest;
    std::memcpy(digest.data(), state_, 16);
    return digest;
  }

 private:
  void absorb(const uint8_t* block, bool updateChecksum) {
    if (updateChecksum) {
      uint8_t last = checksum_[15];
      for (int j = 0; j < 16; ++j) last = checksum_[j] ^= kMd2Substitution[block[j] ^ last];
    }
    uint8_t x[48];
    std::memcpy(x, state_, 16);
    for (int j = 0; j < 16; ++j) {
      x[16 + j] = block[j];
      x[32 + j] = block[j] ^ state_[j];
    }
    uint8_t t = 0;
    for (int round = 0; round < 18; ++round) {
      for (uint8_t& v : x) t = v ^= kMd2Substitution[t];
      t = static_cast<uint8_t>(t + round);
    }
    std::memcpy(state_, x, 16);
  }

  uint8_t state_[16] = {};
  uint8_t checksum_[16] = {};
  uint8_t block_[16] = {};
  size_t filled_ = 0;
};

constexpr uint8_t kIntegrityKey[16] = {0x14, 0x6A, 0xDD, 0xAE, 0x53, 0xA9, 0xA7, 0x52,
                                       0xAA, 0x08, 0x41, 0x36, 0x0B, 0xF5, 0x5A, 0x9F};

}  // namespace

Md2Digest md2(std::span<const uint8_t> message) {
  Md2 h;
  h.update(message);
  return h.finish();
}

Md2Digest integrityHmac(std::span<const uint8_t> message) {
  uint8_t inner[16], outer[16];
  for (int i = 0; i < 16; ++i) {
    inner[i] = kIntegrityKey[i] ^ 0x36;
    outer[i] = kIntegrityKey[i] ^ 0x5C;
  }
  Md2 innerHash;
  innerHash.update(inner);
  innerHash.update(message);
  Md2Digest innerDigest = innerHash.finish();
  Md2 outerHash;
  outerHash.update(outer);
  outerHash.update(innerDigest);
  return outerHash.finish();
}

namespace {

struct KnownTable {
  const CUuuid* id;
  const char* name;
  const void* table;
};

const KnownTable* lookup(const CUuuid& id) {
  static constexpr KnownTable kTables[] = {
      {&kRuntimeInterface, "runtime interface", &g_runtimeInterface},
      {&kToolsCallbackHooks, "tools callback hooks", &g_toolsCallbackHooks},
      {&kToolsTls, "tools thread-local storage", &g_toolsTls},
      {&kContextLocalStorage, "context-local storage", &g_contextLocalStorage},
      {&kContextChecks, "context checks", &g_contextChecks},
      {&kIntegrityCheck, "integrity check", &g_integrity},
      {&kUnknownF8cf, "cudart (f8cff951)", &g_unknownF8cf},
      {&kRuntime134, "cudart 13.4+, cuBLAS/cuBLASLt 13 (21318c60)", &g_runtime134},
      {&kCompilerQuery, "NVRTC, nvJitLink (da9151d3)", &g_sizeOnlyTable},
      {&kCufft, "cuFFT (6e163fbe)", &g_cufft},
  };
  for (const KnownTable& t : kTables)
    if (std::memcmp(id.bytes, t.id->bytes, sizeof id.bytes) == 0) return &t;
  return nullptr;
}

}  // namespace

const void* const* find(const CUuuid& id) {
  const KnownTable* known = lookup(id);
  return known ? static_cast<const void* const*>(known->table) : nullptr;
}

const char* tableName(const CUuuid& id) {
  const KnownTable* known = lookup(id);
  return known ? known->name : nullptr;
}

}  // namespace cuemu::exporttables

namespace cuemu::impl {

CUresult cuGetExportTable(const void** ppExportTable, const CUuuid* pExportTableId) {
  if (!ppExportTable || !pExportTableId) return CUDA_ERROR_INVALID_VALUE;
  std::string hex;
  for (char b : pExportTableId->bytes) hex += fmt::format("{:02x}", static_cast<uint8_t>(b));
  const void* const* table = exporttables::find(*pExportTableId);
  const char* name = exporttables::tableName(*pExportTableId);
  CUresult result = table ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
  // The entry-point trace shows only the UUID's address; name the table.
  exporttables::traced("EXPORT_TABLE lookup", "(uuid, table)", result, hex.c_str(), name ? name : "none");
  if (!table) {
    CUEMU_INFO("cuGetExportTable: no table {} (NVIDIA's driver refuses unknown tables too)", hex);
    return result;
  }
  *ppExportTable = table;
  return CUDA_SUCCESS;
}

}  // namespace cuemu::impl
