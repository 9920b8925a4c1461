// Export tables, MD2 and the integrity check. In-process tests use the driver's internals (linked statically);
// one test goes through the exported cuGetExportTable of the built libcuda.so, as the runtime does.
#include "api/export_tables.h"

#include "api/impl.h"
#include "core/context.h"
#include "core/device.h"
#include "core/driver.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace cuemu::exporttables {
namespace {

std::string hex(const Md2Digest& d) {
  std::string s;
  for (uint8_t b : d) s += fmt::format("{:02x}", b);
  return s;
}

Md2Digest md2Of(const std::string& s) {
  return md2(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(s.data()), s.size()));
}

TEST(Md2, Rfc1319TestSuite) {
  EXPECT_EQ(hex(md2Of("")), "8350e5a3e24c153df2275c9f80692773");
  EXPECT_EQ(hex(md2Of("a")), "32ec01ec4a6dac72c0ab96fb34c0b5d1");
  EXPECT_EQ(hex(md2Of("abc")), "da853b0d3f88d99b30283a69e6ded6bb");
  EXPECT_EQ(hex(md2Of("message digest")), "ab4f496bfb2a530b219ff33031fe06b0");
  EXPECT_EQ(hex(md2Of("abcdefghijklmnopqrstuvwxyz")), "4e8ddff3650292ab5a4108c3aa47940b");
  EXPECT_EQ(hex(md2Of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")),
            "da33def2a42df13975352846c30338cd");
  EXPECT_EQ(hex(md2Of("12345678901234567890123456789012345678901234567890123456789012345678901234567890")),
            "d5976f79d83d3a0dc9806c3c66f3efd8");
}

// Expected values computed by a separate implementation (Python, written from RFC 1319 and the reference).
TEST(IntegrityHmac, MatchesAnIndependentImplementation) {
  std::vector<uint8_t> message(76);
  for (size_t i = 0; i < message.size(); ++i) message[i] = static_cast<uint8_t>(i);
  EXPECT_EQ(hex(integrityHmac(message)), "70179cf997c1374ec2d4e2c0c4fd2e23");
  EXPECT_EQ(hex(integrityHmac({})), "f66b07aba4a875ea140c2cc013a41c6a");
}

// The HMAC composed here from md2() alone, over a message assembled field by field.
Md2Digest hmacByHand(const std::vector<uint8_t>& message) {
  const uint8_t key[16] = {0x14, 0x6A, 0xDD, 0xAE, 0x53, 0xA9, 0xA7, 0x52,
                           0xAA, 0x08, 0x41, 0x36, 0x0B, 0xF5, 0x5A, 0x9F};
  std::vector<uint8_t> inner, outer;
  for (uint8_t k : key) inner.push_back(k ^ 0x36);
  inner.insert(inner.end(), message.begin(), message.end());
  Md2Digest innerDigest = md2(inner);
  for (uint8_t k : key) outer.push_back(k ^ 0x5C);
  outer.insert(outer.end(), innerDigest.begin(), innerDigest.end());
  return md2(outer);
}

template <typename T> void append(std::vector<uint8_t>& out, T value) {
  uint8_t bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));
  out.insert(out.end(), bytes, bytes + sizeof(T));
}

template <typename T> T slot(const void* const* table, int index) {
  return reinterpret_cast<T>(const_cast<void*>(table[index]));
}

class Tables : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(initializeDriver(0), CUDA_SUCCESS); }
};

TEST_F(Tables, IntegrityCheckDigestsTheDocumentedMessage) {
  const void* const* integrity = find(kIntegrityCheck);
  const void* const* runtime = find(kRuntimeInterface);
  ASSERT_TRUE(integrity && runtime);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(integrity[0]), 3 * sizeof(void*));
  auto check = slot<IntegrityCheckFn>(integrity, 1);
  ASSERT_NE(check, nullptr);

  const uint64_t seconds = 1763776800;
  uint64_t out[2] = {1, 1};
  ASSERT_EQ(check(13002, seconds, out), CUDA_SUCCESS);

  std::vector<uint8_t> m;
  append<uint32_t>(m, 13000);
  append<uint32_t>(m, 13002);
  append<uint32_t>(m, static_cast<uint32_t>(getpid()));
  append<uint32_t>(m, static_cast<uint32_t>(reinterpret_cast<uintptr_t>(reinterpret_cast<void*>(pthread_self()))));
  append<const void*>(m, runtime);
  append<const void*>(m, integrity);
  append<const void*>(m, integrity[1]);
  append<uint64_t>(m, seconds);
  // One struct B per device (CTest runs this binary with CUEMU_DEVICE_COUNT=2).
  for (Device* device : devices()) {
    m.insert(m.end(), device->uuid().bytes, device->uuid().bytes + 16);
    auto attribute = [&](CUdevice_attribute a, int fallback) {
      int v = 0;
      return device->attribute(a, v) == CUDA_SUCCESS ? v : fallback;
    };
    append<int32_t>(m, attribute(CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, device->pciDomainId()));
    append<int32_t>(m, attribute(CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, device->pciBusId()));
    append<int32_t>(m, attribute(CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, device->pciDeviceId()));
  }
  ASSERT_EQ(m.size(), 48u + 28u * devices().size());
  Md2Digest expected = hmacByHand(m);
  uint64_t words[2];
  std::memcpy(words, expected.data(), 16);
  EXPECT_EQ(out[0], words[0]);
  EXPECT_EQ(out[1], words[1]);

  // A different second or thread gives a different answer: the inputs are really digested.
  uint64_t later[2];
  ASSERT_EQ(check(13002, seconds + 1, later), CUDA_SUCCESS);
  EXPECT_NE(later[0], out[0]);
  uint64_t other[2] = {};
  std::thread([&] { check(13002, seconds, other); }).join();
  EXPECT_NE(other[0], out[0]);

  // The unverified versions answer fixed values.
  uint64_t fixed1[2], fixed2[2];
  ASSERT_EQ(check(13000, seconds, fixed1), CUDA_SUCCESS);
  ASSERT_EQ(check(13001, seconds + 5, fixed2), CUDA_SUCCESS);
  EXPECT_EQ(fixed1[0], fixed2[0]);
  EXPECT_EQ(check(13002, seconds, nullptr), CUDA_ERROR_INVALID_VALUE);
}

TEST_F(Tables, LayoutsAndSlots) {
  const void* const* runtime = find(kRuntimeInterface);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(runtime[0]), 13 * sizeof(void*));
  EXPECT_NE(runtime[2], nullptr);
  EXPECT_EQ(runtime[10], nullptr);  // NULL on NVIDIA's driver too
  // cudart 13.2's check at its first call (tools/gpu-probe/rtiface28.cpp): CUDA_SUCCESS once the driver is initialised
  ASSERT_NE(runtime[12], nullptr);
  EXPECT_EQ(slot<CUresult (*)()>(runtime, 12)(), CUDA_SUCCESS);
  // Slots of unknown purpose are functions that fail cleanly instead of NULL pointers.
  ASSERT_NE(runtime[1], nullptr);
  EXPECT_EQ(slot<UnmodelledSlotFn>(runtime, 1)(), CUDA_ERROR_NOT_SUPPORTED);

  const void* const* hooks = find(kToolsCallbackHooks);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(hooks[0]), 7 * sizeof(void*));
  // Some runtime APIs (cudaGetDeviceProperties, cudaLaunchHostFunc) call hooks 1 and 4 without checking them.
  ASSERT_NE(hooks[1], nullptr);
  ASSERT_NE(hooks[4], nullptr);
  EXPECT_EQ(slot<ToolsHookFn>(hooks, 4)(nullptr, nullptr), CUDA_SUCCESS);
  void* buffer = nullptr;
  size_t size = 0;
  ASSERT_EQ(slot<ToolsBufferFn>(hooks, 2)(&buffer, &size), CUDA_SUCCESS);
  EXPECT_EQ(size, 1024u);
  ASSERT_NE(buffer, nullptr);
  EXPECT_EQ(std::memcmp(buffer, std::vector<uint8_t>(1024).data(), 1024), 0);
  void* buffer2 = nullptr;
  ASSERT_EQ(slot<ToolsBufferFn>(hooks, 6)(&buffer2, &size), CUDA_SUCCESS);
  EXPECT_EQ(size, 14u);
  EXPECT_NE(buffer2, buffer);

  const void* const* tls = find(kToolsTls);
  ASSERT_NE(tls, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(tls[0]), 3 * sizeof(void*));
  ASSERT_NE(tls[2], nullptr);  // called unconditionally by cudaGetDeviceProperties
  EXPECT_EQ(slot<ToolsTlsFn>(tls, 2)(nullptr), CUDA_SUCCESS);

  const void* const* checks = find(kContextChecks);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(checks[0]), 15 * sizeof(void*));
  uint32_t flag = 7;
  EXPECT_EQ(slot<ContextCheckFn>(checks, 2)(nullptr, &flag, nullptr), CUDA_SUCCESS);
  EXPECT_EQ(flag, 0u);
  EXPECT_EQ(slot<ContextCheck3Fn>(checks, 3)(), CUDA_SUCCESS);

  EXPECT_NE(find(kUnknownF8cf), nullptr);
  // cudart calls slots of 21318c60 (13.4+; 1 in cudaSetDevice's error path, 51 and 39 in cudaStreamGetCaptureInfo)
  // and f8cff951 (older) without checking their sizes: the tables have driver 580's sizes and every slot of unknown
  // purpose fails cleanly. NVRTC reads da9151d3's size and calls its slots only when there are some: it has none.
  for (auto [id, size] : {std::pair{&kRuntime134, 0x2e8}, std::pair{&kUnknownF8cf, 0x18}}) {
    const void* const* table = find(*id);
    ASSERT_NE(table, nullptr);
    ASSERT_EQ(reinterpret_cast<uintptr_t>(table[0]), static_cast<uintptr_t>(size));
    for (int i = 1; i < size / static_cast<int>(sizeof(void*)); ++i) {
      ASSERT_NE(table[i], nullptr) << i;
      // 21318c60's slots 4 (context id), 39 (stream id) and 51 (stream of a context) are modelled (their own tests),
      // and f8cff951's slot 2 (below).
      if (id == &kRuntime134 && (i == 4 || i == 39 || i == 51)) continue;
      if (id == &kUnknownF8cf && i == 2) continue;
      EXPECT_EQ(slot<UnmodelledSlotFn>(table, i)(), CUDA_ERROR_NOT_SUPPORTED) << i;
    }
  }
  // f8cff951's slot 2 takes an integer and returns nothing (cudart 13.5 calls it with 0 and 1 around an attribute
  // query and ignores what comes back; driver 580 changes nothing a probe sees): calling it changes no answer.
  {
    using F8cfSlot2 = void (*)(unsigned long long);
    const void* const* f8cf = find(kUnknownF8cf);
    int before = 0, after = 0;
    CUdevice dev = 0;
    ASSERT_EQ(cuDeviceGet(&dev, 0), CUDA_SUCCESS);
    ASSERT_EQ(cuDeviceGetAttribute(&before, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev), CUDA_SUCCESS);
    slot<F8cfSlot2>(f8cf, 2)(0);
    ASSERT_EQ(cuDeviceGetAttribute(&after, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev), CUDA_SUCCESS);
    slot<F8cfSlot2>(f8cf, 2)(1);
    EXPECT_EQ(before, after);
  }
  ASSERT_NE(find(kCompilerQuery), nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(find(kCompilerQuery)[0]), sizeof(void*));
  // Tables NVIDIA's driver refuses (195bcbf4...) and made-up ones.
  CUuuid refused = {{char(0x19), char(0x5b), char(0xcb), char(0xf4)}};
  EXPECT_EQ(find(refused), nullptr);
  const void* table = nullptr;
  EXPECT_EQ(impl::cuGetExportTable(&table, &refused), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(impl::cuGetExportTable(nullptr, &kRuntimeInterface), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(impl::cuGetExportTable(&table, nullptr), CUDA_ERROR_INVALID_VALUE);
  ASSERT_EQ(impl::cuGetExportTable(&table, &kContextChecks), CUDA_SUCCESS);
  EXPECT_EQ(table, static_cast<const void*>(checks));
}

TEST_F(Tables, PrimaryContextHandleBeforeAnyRetain) {
  auto primary = slot<PrimaryContextFn>(find(kRuntimeInterface), 2);
  CUcontext ctx = nullptr;
  ASSERT_EQ(primary(&ctx, 0), CUDA_SUCCESS);
  EXPECT_EQ(ctx, deviceByOrdinal(0)->primaryContext()->apiHandle());
  CUcontext again = nullptr;
  ASSERT_EQ(primary(&again, 0), CUDA_SUCCESS);
  EXPECT_EQ(again, ctx);
  EXPECT_EQ(primary(&ctx, 99), CUDA_ERROR_INVALID_DEVICE);
  EXPECT_EQ(primary(&ctx, -1), CUDA_ERROR_INVALID_DEVICE);
  EXPECT_EQ(primary(nullptr, 0), CUDA_ERROR_INVALID_VALUE);
}

struct DestructorLog {
  static inline std::vector<std::pair<void*, void*>> calls;
  static void record(CUcontext, void* key, void* value) { calls.emplace_back(key, value); }
};

TEST_F(Tables, ContextLocalStorage) {
  const void* const* cls = find(kContextLocalStorage);
  auto put = slot<StoragePutFn>(cls, 0);
  auto erase = slot<StorageDeleteFn>(cls, 1);
  auto get = slot<StorageGetFn>(cls, 2);
  EXPECT_EQ(cls[3], nullptr);

  auto context = std::make_shared<Context>(*deviceByOrdinal(0), 0, false);
  context->registerHandle();
  CUcontext handle = context->apiHandle();
  int keyA = 0, keyB = 0, valueA = 0, valueB = 0;
  void* value = nullptr;
  EXPECT_EQ(get(&value, handle, &keyA), CUDA_ERROR_INVALID_HANDLE);
  ASSERT_EQ(put(handle, &keyA, &valueA, DestructorLog::record), CUDA_SUCCESS);
  ASSERT_EQ(get(&value, handle, &keyA), CUDA_SUCCESS);
  EXPECT_EQ(value, &valueA);
  EXPECT_EQ(get(nullptr, handle, &keyA), CUDA_ERROR_INVALID_VALUE);

  // A null context is the current one; none current is an error, not a crash.
  EXPECT_NE(get(&value, nullptr, &keyA), CUDA_SUCCESS);
  pushCurrentContext(context);
  ASSERT_EQ(get(&value, nullptr, &keyA), CUDA_SUCCESS);
  EXPECT_EQ(value, &valueA);
  ASSERT_EQ(put(nullptr, &keyB, &valueB, DestructorLog::record), CUDA_SUCCESS);
  ASSERT_EQ(get(&value, handle, &keyB), CUDA_SUCCESS);
  EXPECT_EQ(value, &valueB);
  popCurrentContext();

  // Delete removes without running the destructor; the destructors of what remains run at teardown.
  EXPECT_EQ(erase(handle, &keyB), CUDA_SUCCESS);
  EXPECT_EQ(get(&value, handle, &keyB), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(erase(handle, &keyB), CUDA_ERROR_INVALID_HANDLE);
  DestructorLog::calls.clear();
  handleTable<Context>().erase(context->handle());
  context->teardown();
  ASSERT_EQ(DestructorLog::calls.size(), 1u);
  EXPECT_EQ(DestructorLog::calls[0], std::make_pair(static_cast<void*>(&keyA), static_cast<void*>(&valueA)));
  // The handle is stale now.
  EXPECT_EQ(get(&value, handle, &keyA), CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_EQ(put(handle, &keyA, &valueA, nullptr), CUDA_ERROR_INVALID_CONTEXT);
}

// The runtime calls context-local storage (and the rest of the driver) from its exit handler, after the main
// thread's thread_local objects are destroyed. In a child process: such a call must answer, not crash.
void* g_exitKey = nullptr;
void callStorageAtExit() {
  void* value = nullptr;
  CUresult r = slot<StorageGetFn>(find(kContextLocalStorage), 2)(&value, nullptr, &g_exitKey);
  std::_Exit(r == CUDA_ERROR_INVALID_CONTEXT ? 42 : 43);
}

TEST_F(Tables, StorageWorksInExitHandlers) {
  auto context = deviceByOrdinal(0)->primaryContext();
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // A child forked after cuInit cannot use the driver (as on a GPU); this test forks only to get a process to
    // exit, so it takes the parent's initialised state back.
    cuemu::detail::g_initialized.store(true);
    pushCurrentContext(context);  // still current when the thread's stack is destroyed, as in the runtime
    std::atexit(callStorageAtExit);
    std::exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "child died with signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  EXPECT_EQ(WEXITSTATUS(status), 42);
}

// Through the built libcuda.so, as the runtime reaches it: cuGetProcAddress_v2 -> cuGetExportTable.
TEST(ExportedLibrary, AnswersTheRuntimesRequests) {
  void* lib = dlopen(CUEMU_LIBRARY, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << dlerror();
  using GetProc = CUresult (*)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);
  auto getProc = reinterpret_cast<GetProc>(dlsym(lib, "cuGetProcAddress_v2"));
  ASSERT_NE(getProc, nullptr);
  void* init = nullptr;
  void* getTable = nullptr;
  CUdriverProcAddressQueryResult status;
  ASSERT_EQ(getProc("cuInit", &init, 2000, 0, &status), CUDA_SUCCESS);
  ASSERT_EQ(getProc("cuGetExportTable", &getTable, 3000, 0, &status), CUDA_SUCCESS);
  auto cuGetExportTable = reinterpret_cast<CUresult (*)(const void**, const CUuuid*)>(getTable);
  // The runtime interface's slot 12 answers as driver 580's (an H100, tools/gpu-probe/results/rtiface28-*): not
  // initialised before cuInit (the first test here to load the library), then CUDA_SUCCESS.
  const void* runtime = nullptr;
  ASSERT_EQ(cuGetExportTable(&runtime, &kRuntimeInterface), CUDA_SUCCESS);
  auto check12 = slot<CUresult (*)()>(static_cast<const void* const*>(runtime), 12);
  EXPECT_EQ(check12(), CUDA_ERROR_NOT_INITIALIZED);
  ASSERT_EQ(reinterpret_cast<CUresult (*)(unsigned)>(init)(0), CUDA_SUCCESS);
  EXPECT_EQ(check12(), CUDA_SUCCESS);
  for (const CUuuid* id : {&kUnknownF8cf, &kRuntimeInterface, &kToolsCallbackHooks, &kToolsTls, &kContextLocalStorage,
                           &kContextChecks, &kIntegrityCheck}) {
    const void* table = nullptr;
    EXPECT_EQ(cuGetExportTable(&table, id), CUDA_SUCCESS);
    EXPECT_NE(table, nullptr);
  }
  const void* table = nullptr;
  CUuuid zero{};
  EXPECT_EQ(cuGetExportTable(&table, &zero), CUDA_ERROR_INVALID_VALUE);
  ASSERT_EQ(cuGetExportTable(&table, &kIntegrityCheck), CUDA_SUCCESS);
  uint64_t out[2] = {};
  auto check = reinterpret_cast<IntegrityCheckFn>(const_cast<void*>(static_cast<const void* const*>(table)[1]));
  EXPECT_EQ(check(13002, 1, out), CUDA_SUCCESS);
  EXPECT_NE(out[0] | out[1], 0u);
}

// What cuBLAS and cuBLASLt 13 read (values measured on an H100 with driver 580, tools/gpu-probe/results/cc12-*.txt):
// tools-TLS slot 2 gives the current context, 21318c60 is 0x2e8 bytes and its slot 4 gives the context's id.
TEST(ExportedLibrary, AnswersTheMathLibrariesRequests) {
  void* lib = dlopen(CUEMU_LIBRARY, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << dlerror();
  using GetProc = CUresult (*)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);
  auto getProc = reinterpret_cast<GetProc>(dlsym(lib, "cuGetProcAddress_v2"));
  ASSERT_NE(getProc, nullptr);
  auto proc = [&](const char* name) {
    void* fn = nullptr;
    CUdriverProcAddressQueryResult status;
    EXPECT_EQ(getProc(name, &fn, 13000, 0, &status), CUDA_SUCCESS) << name;
    return fn;
  };
  ASSERT_EQ(reinterpret_cast<CUresult (*)(unsigned)>(proc("cuInit"))(0), CUDA_SUCCESS);
  CUcontext context = nullptr;
  ASSERT_EQ(reinterpret_cast<CUresult (*)(CUcontext*, CUdevice)>(proc("cuDevicePrimaryCtxRetain"))(&context, 0),
            CUDA_SUCCESS);
  ASSERT_EQ(reinterpret_cast<CUresult (*)(CUcontext)>(proc("cuCtxSetCurrent"))(context), CUDA_SUCCESS);
  unsigned long long id = 0;
  ASSERT_EQ(reinterpret_cast<CUresult (*)(CUcontext, unsigned long long*)>(proc("cuCtxGetId"))(context, &id),
            CUDA_SUCCESS);
  auto cuGetExportTable = reinterpret_cast<CUresult (*)(const void**, const CUuuid*)>(proc("cuGetExportTable"));

  const void* tls = nullptr;
  ASSERT_EQ(cuGetExportTable(&tls, &kToolsTls), CUDA_SUCCESS);
  void* current = nullptr;
  auto slot2 = reinterpret_cast<CUresult (*)(void**)>(const_cast<void*>(static_cast<const void* const*>(tls)[2]));
  EXPECT_EQ(slot2(&current), CUDA_SUCCESS);
  EXPECT_EQ(current, static_cast<void*>(context));

  const void* table = nullptr;
  ASSERT_EQ(cuGetExportTable(&table, &kRuntime134), CUDA_SUCCESS);
  auto slots = static_cast<const void* const*>(table);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(slots[0]), 0x2e8u);
  for (int i = 1; i < 0x2e8 / 8; ++i) EXPECT_NE(slots[i], nullptr) << "slot " << i;
  using Slot = CUresult (*)(void*, void*);
  uint64_t out = 0;
  EXPECT_EQ(reinterpret_cast<Slot>(const_cast<void*>(slots[4]))(current, &out), CUDA_SUCCESS);
  EXPECT_EQ(out, id);
  // Slots 51 and 39, as cuBLAS 13 calls them before it launches a kernel that uses its per-stream workspace: the
  // stream a CUstream value names (NULL as the per-thread stream when the flag is set), then that stream's id,
  // which is cuStreamGetId's. Error answers as driver 580's (tools/gpu-probe/results/stream51-h100-2026-11-27.txt).
  using StreamOfContext = CUresult (*)(void*, CUstream, CUstream*, int);
  using StreamId = CUresult (*)(void*, CUstream, unsigned long long*);
  auto streamOf = reinterpret_cast<StreamOfContext>(const_cast<void*>(slots[51]));
  auto streamIdOf = reinterpret_cast<StreamId>(const_cast<void*>(slots[39]));
  auto cuStreamGetId = reinterpret_cast<CUresult (*)(CUstream, unsigned long long*)>(proc("cuStreamGetId"));
  auto cuStreamCreate = reinterpret_cast<CUresult (*)(CUstream*, unsigned)>(proc("cuStreamCreate"));
  auto cuStreamDestroy = reinterpret_cast<CUresult (*)(CUstream)>(proc("cuStreamDestroy"));
  CUstream user = nullptr;
  ASSERT_EQ(cuStreamCreate(&user, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  auto idVia51And39 = [&](void* ctx, CUstream stream, int nullIsPerThread) {
    CUstream resolved = nullptr;
    EXPECT_EQ(streamOf(ctx, stream, &resolved, nullIsPerThread), CUDA_SUCCESS) << stream;
    EXPECT_NE(resolved, nullptr) << stream;
    unsigned long long id = 0;
    EXPECT_EQ(streamIdOf(ctx, resolved, &id), CUDA_SUCCESS) << stream;
    return id;
  };
  auto apiId = [&](CUstream stream) {
    unsigned long long id = 0;
    EXPECT_EQ(cuStreamGetId(stream, &id), CUDA_SUCCESS) << stream;
    return id;
  };
  for (CUstream stream : {CUstream(nullptr), CU_STREAM_LEGACY, CU_STREAM_PER_THREAD, user})
    EXPECT_EQ(idVia51And39(current, stream, stream == CU_STREAM_PER_THREAD), apiId(stream)) << stream;
  EXPECT_EQ(idVia51And39(current, nullptr, 1), apiId(CU_STREAM_PER_THREAD));
  EXPECT_EQ(idVia51And39(current, CU_STREAM_PER_THREAD, 0), apiId(CU_STREAM_PER_THREAD));
  EXPECT_EQ(idVia51And39(current, user, 1), apiId(user));
  EXPECT_EQ(idVia51And39(nullptr, user, 0), apiId(user));  // a handle needs no context
  CUstream resolved = nullptr;
  unsigned long long streamId = 0;
  EXPECT_EQ(streamOf(nullptr, nullptr, &resolved, 0), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(streamOf(current, user, nullptr, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(streamIdOf(current, nullptr, &streamId), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(streamIdOf(current, user, nullptr), CUDA_ERROR_INVALID_VALUE);
  // A destroyed stream crashes driver 580 (a use after free); cuemu answers as for any stale handle.
  CUstream gone = nullptr;
  ASSERT_EQ(cuStreamCreate(&gone, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuStreamDestroy(gone), CUDA_SUCCESS);
  EXPECT_EQ(streamOf(current, gone, &resolved, 0), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(cuStreamDestroy(user), CUDA_SUCCESS);
  reinterpret_cast<CUresult (*)(CUdevice)>(proc("cuDevicePrimaryCtxRelease"))(0);
}

// cuFFT 12 asks for 6e163fbe and, after each cuModuleLoadData of one of its kernels, calls slot 7 with the context,
// the module, a visitor and the visitor's argument, and requires the answer 1 (measured through a logging driver
// in front of driver 580 on an H100: tools/gpu-probe/results/exportlog17-h100-2026-11-27.txt).
TEST(ExportedLibrary, AnswersCufftsModuleQuery) {
  void* lib = dlopen(CUEMU_LIBRARY, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << dlerror();
  auto sym = [&](const char* name) {
    void* fn = dlsym(lib, name);
    EXPECT_NE(fn, nullptr) << name;
    return fn;
  };
  ASSERT_EQ(reinterpret_cast<CUresult (*)(unsigned)>(sym("cuInit"))(0), CUDA_SUCCESS);
  CUcontext context = nullptr;
  ASSERT_EQ(reinterpret_cast<CUresult (*)(CUcontext*, CUdevice)>(sym("cuDevicePrimaryCtxRetain"))(&context, 0),
            CUDA_SUCCESS);
  ASSERT_EQ(reinterpret_cast<CUresult (*)(CUcontext)>(sym("cuCtxSetCurrent"))(context), CUDA_SUCCESS);
  const char* ptx = R"(.version 7.0
.target sm_52
.address_size 64
.visible .entry only_kernel(.param .u64 p) { ret; }
)";
  CUmodule module = nullptr;
  ASSERT_EQ(reinterpret_cast<CUresult (*)(CUmodule*, const void*)>(sym("cuModuleLoadData"))(&module, ptx),
            CUDA_SUCCESS);
  CUfunction byName = nullptr;
  ASSERT_EQ(reinterpret_cast<CUresult (*)(CUfunction*, CUmodule, const char*)>(sym("cuModuleGetFunction"))(
                &byName, module, "only_kernel"),
            CUDA_SUCCESS);

  auto cuGetExportTable = reinterpret_cast<CUresult (*)(const void**, const CUuuid*)>(sym("cuGetExportTable"));
  const void* table = nullptr;
  ASSERT_EQ(cuGetExportTable(&table, &kCufft), CUDA_SUCCESS);
  auto slots = static_cast<const void* const*>(table);
  ASSERT_EQ(reinterpret_cast<uintptr_t>(slots[0]), 0x318u);  // cuFFT checks the size before it calls slot 7
  for (int i = 1; i < 0x318 / 8; ++i) ASSERT_NE(slots[i], nullptr) << "slot " << i;
  EXPECT_EQ(reinterpret_cast<UnmodelledSlotFn>(const_cast<void*>(slots[6]))(), CUDA_ERROR_NOT_SUPPORTED);
  auto moduleFunctions = reinterpret_cast<ModuleFunctionsFn>(const_cast<void*>(slots[7]));
  // cuFFT's visitor stores the function it is shown through its argument.
  ModuleFunctionVisitor store = [](void* user, CUfunction f) { *static_cast<CUfunction*>(user) = f; };
  CUfunction shown = nullptr;
  EXPECT_EQ(moduleFunctions(context, module, store, &shown), 1);
  EXPECT_EQ(shown, byName);
  shown = nullptr;
  EXPECT_EQ(moduleFunctions(nullptr, module, store, &shown), 1) << "NULL: the current context";
  EXPECT_EQ(shown, byName);
  // Bad handles: 0 (cuFFT then reports CUFFT_INTERNAL_ERROR), and nothing is shown.
  shown = nullptr;
  EXPECT_EQ(moduleFunctions(context, reinterpret_cast<CUmodule>(context), store, &shown), 0);
  EXPECT_EQ(moduleFunctions(context, module, nullptr, &shown), 0);
  EXPECT_EQ(shown, nullptr);
  reinterpret_cast<CUresult (*)(CUmodule)>(sym("cuModuleUnload"))(module);
  EXPECT_EQ(moduleFunctions(context, module, store, &shown), 0) << "unloaded";
  EXPECT_EQ(shown, nullptr);
  reinterpret_cast<CUresult (*)(CUdevice)>(sym("cuDevicePrimaryCtxRelease"))(0);
}

}  // namespace
}  // namespace cuemu::exporttables
