// What driver 580 answers in slots 51 and 39 of export table 21318c60, which cuBLAS 13 calls before it launches a
// kernel that needs its per-stream workspace (cublasSgemm's split-K kernels): from cuBLAS's call sites,
// slot51(ctx, stream, void** out, int streamIsPerThread) and slot39(ctx, that out, uint64_t* out). Each call runs
// in a forked child (a wrong guess of a signature must not end the probe); outputs are pre-filled with 0xaa bytes
// so that the bytes written show. Compared with the stream's handle value and cuStreamGetId.
#include <cuda.h>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <thread>

namespace {

using Slot51 = CUresult (*)(CUcontext, CUstream, void**, int);
using Slot39 = CUresult (*)(CUcontext, void*, unsigned long long*);
Slot51 g_slot51;
Slot39 g_slot39;

const char* g_variant = "basic";

// Runs `body` when the probe was asked for this variant (each unusual call runs in a process of its own: a wrong
// guess of a signature must not end the others, and CUDA does not work in a forked child).
void variant(const char* name, const std::function<void()>& body) {
  if (std::strcmp(g_variant, name) != 0) return;
  std::printf("-- %s\n", name);
  body();
  std::fflush(stdout);
}

unsigned long long streamId(CUstream s) {
  unsigned long long id = 0;
  CUresult r = cuStreamGetId(s, &id);
  return r == CUDA_SUCCESS ? id : 0xdead0000ull + r;
}

// slot 51, then slot 39 on its answer; prints both with the 16 bytes after each output's start.
void resolveAndId(const char* label, CUcontext ctx, CUstream stream, int perThread) {
  alignas(16) unsigned char out51[16], out39[16];
  std::memset(out51, 0xaa, sizeof out51);
  std::memset(out39, 0xaa, sizeof out39);
  CUresult r51 = g_slot51(ctx, stream, reinterpret_cast<void**>(out51), perThread);
  void* resolved;
  std::memcpy(&resolved, out51, 8);
  std::printf("%s: slot51(ctx=%p, stream=%p, perThread=%d) = %d out=%p [bytes 8..15 %s]", label, (void*)ctx,
              (void*)stream, perThread, int(r51), resolved,
              std::memcmp(out51 + 8, "\xaa\xaa\xaa\xaa\xaa\xaa\xaa\xaa", 8) == 0 ? "untouched" : "written");
  if (r51 == CUDA_SUCCESS) {
    CUresult r39 = g_slot39(ctx, resolved, reinterpret_cast<unsigned long long*>(out39));
    unsigned long long id;
    std::memcpy(&id, out39, 8);
    std::printf("; slot39 = %d id=%#llx [bytes 8..15 %s]", int(r39), id,
                std::memcmp(out39 + 8, "\xaa\xaa\xaa\xaa\xaa\xaa\xaa\xaa", 8) == 0 ? "untouched" : "written");
  }
  std::printf("; cuStreamGetId(stream)=%#llx\n", streamId(stream));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1) g_variant = argv[1];
  if (cuInit(0) != CUDA_SUCCESS) return 1;
  CUdevice dev;
  cuDeviceGet(&dev, 0);
  CUcontext primary;
  cuDevicePrimaryCtxRetain(&primary, dev);
  cuCtxSetCurrent(primary);
  CUuuid uuid;
  const char* hex = "21318c60971432488ca641ff7324c8f2";
  for (int i = 0; i < 16; ++i) uuid.bytes[i] = static_cast<char>(std::stoi(std::string(hex + 2 * i, 2), nullptr, 16));
  const void* table = nullptr;
  if (cuGetExportTable(&table, &uuid) != CUDA_SUCCESS || !table) return 2;
  auto slots = static_cast<void* const*>(table);
  g_slot51 = reinterpret_cast<Slot51>(slots[51]);
  g_slot39 = reinterpret_cast<Slot39>(slots[39]);
  unsigned long long primaryId = 0;
  cuCtxGetId(primary, &primaryId);
  std::printf("primary context %p id %llu\n", (void*)primary, primaryId);

  CUstream blocking, nonBlocking;
  cuStreamCreate(&blocking, CU_STREAM_DEFAULT);
  cuStreamCreate(&nonBlocking, CU_STREAM_NON_BLOCKING);
  std::printf(
      "handles: blocking %p id %#llx, non-blocking %p id %#llx; ids of NULL %#llx, legacy %#llx, per-thread "
      "%#llx\n",
      (void*)blocking, streamId(blocking), (void*)nonBlocking, streamId(nonBlocking), streamId(nullptr),
      streamId(CU_STREAM_LEGACY), streamId(CU_STREAM_PER_THREAD));

  // As cuBLAS calls them (perThread = stream is CU_STREAM_PER_THREAD), twice each: are the answers stable?
  variant("basic", [&] {
    for (int round = 0; round < 2; ++round) {
      resolveAndId("NULL", primary, nullptr, 0);
      resolveAndId("legacy", primary, CU_STREAM_LEGACY, 0);
      resolveAndId("per-thread", primary, CU_STREAM_PER_THREAD, 1);
      resolveAndId("blocking", primary, blocking, 0);
      resolveAndId("non-blocking", primary, nonBlocking, 0);
    }
    std::thread([&] {
      cuCtxSetCurrent(primary);
      resolveAndId("other thread NULL", primary, nullptr, 0);
      resolveAndId("other thread per-thread", primary, CU_STREAM_PER_THREAD, 1);
    }).join();
  });
  variant("per-thread-flag-0", [&] { resolveAndId("per-thread handle, flag 0", primary, CU_STREAM_PER_THREAD, 0); });
  variant("NULL-flag-1", [&] { resolveAndId("NULL handle, flag 1", primary, nullptr, 1); });
  variant("blocking-flag-1", [&] { resolveAndId("blocking handle, flag 1", primary, blocking, 1); });
  variant("ctx-NULL", [&] { resolveAndId("ctx NULL, NULL stream", nullptr, nullptr, 0); });
  variant("ctx-NULL-blocking", [&] { resolveAndId("ctx NULL, blocking", nullptr, blocking, 0); });
  variant("slot39-on-the-raw-handle", [&] {
    unsigned long long id = 0xaaaaaaaaaaaaaaaaull;
    CUresult r = g_slot39(primary, blocking, &id);
    std::printf("slot39(ctx, blocking handle) = %d id=%#llx\n", int(r), id);
  });
  variant("slot39-null-stream", [&] {
    unsigned long long id = 0xaaaaaaaaaaaaaaaaull;
    CUresult r = g_slot39(primary, nullptr, &id);
    std::printf("slot39(ctx, NULL) = %d id=%#llx\n", int(r), id);
  });
  variant("slot51-null-out", [&] {
    CUresult r = g_slot51(primary, blocking, nullptr, 0);
    std::printf("slot51(ctx, blocking, NULL out) = %d\n", int(r));
  });
  variant("slot39-null-out", [&] {
    void* resolved = nullptr;
    g_slot51(primary, blocking, &resolved, 0);
    CUresult r = g_slot39(primary, resolved, nullptr);
    std::printf("slot39(ctx, resolved, NULL out) = %d\n", int(r));
  });
  variant("destroyed-stream", [&] {
    CUstream gone;
    cuStreamCreate(&gone, 0);
    cuStreamDestroy(gone);
    resolveAndId("destroyed stream", primary, gone, 0);
  });
  variant("capturing", [&] {
    CUstream s;
    cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
    resolveAndId("before capture", primary, s, 0);
    std::printf("begin capture %d\n", int(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_RELAXED)));
    resolveAndId("capturing", primary, s, 0);
    CUgraph g;
    std::printf("end capture %d\n", int(cuStreamEndCapture(s, &g)));
  });
  variant("second-context", [&] {
    CUcontext other;
    CUctxCreateParams params{};
    if (cuCtxCreate(&other, &params, 0, dev) != CUDA_SUCCESS) return;
    unsigned long long otherId = 0;
    cuCtxGetId(other, &otherId);
    std::printf("second context %p id %llu\n", (void*)other, otherId);
    resolveAndId("second ctx NULL", other, nullptr, 0);
    resolveAndId("second ctx, primary's blocking stream", other, blocking, 0);
    resolveAndId("primary ctx NULL while second is current", primary, nullptr, 0);
  });
  return 0;
}
