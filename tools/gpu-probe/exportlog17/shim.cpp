// A logging libcuda.so.1: every driver entry point forwards to NVIDIA's real library (SHIM_REAL_LIBCUDA, opened by
// full path); cuGetExportTable hands out copies of the tables named in kWrapped whose function slots are logging
// trampolines (table, slot, register and stack arguments, the 64 bytes each argument points at before and after
// the call, the return value). With SHIM_LOG_CALLS=1 every entry point call is logged by name too.
// Purpose: find out what a library (cuFFT) does with a driver-internal export table on the real driver.
// Build: build.sh (generates the forwarders from the real library's dynamic symbols).
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <sys/uio.h>
#include <unistd.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>

extern "C" {
extern const char* const shim_names[];
extern const int shim_name_count;
void* shim_real[4096];
}

namespace {

FILE* g_log = nullptr;  // set first thing in init()
pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
void* g_real = nullptr;
bool g_logCalls = false;
uintptr_t g_execLo[8], g_execHi[8];
int g_execCount = 0;

bool readable(const void* p, void* out, size_t n) {
  iovec local{out, n}, remote{const_cast<void*>(p), n};
  return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == static_cast<ssize_t>(n);
}

void dumpPointer(const char* tag, int index, uint64_t value) {
  if (value < 0x10000 || value >= (uint64_t{1} << 48)) return;
  uint64_t words[8];
  if (!readable(reinterpret_cast<const void*>(value), words, sizeof words)) return;
  fprintf(g_log, "    %s arg%d *%#llx:", tag, index, static_cast<unsigned long long>(value));
  for (uint64_t w : words) fprintf(g_log, " %016llx", static_cast<unsigned long long>(w));
  fprintf(g_log, "\n");
}

int phdrCallback(dl_phdr_info* info, size_t, void* data) {
  const char* want = static_cast<const char*>(data);
  if (!info->dlpi_name || strcmp(info->dlpi_name, want) != 0) return 0;
  for (int i = 0; i < info->dlpi_phnum && g_execCount < 8; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X)) {
      g_execLo[g_execCount] = info->dlpi_addr + ph.p_vaddr;
      g_execHi[g_execCount++] = info->dlpi_addr + ph.p_vaddr + ph.p_memsz;
    }
  }
  return 1;
}

bool inRealText(uint64_t p) {
  for (int i = 0; i < g_execCount; ++i)
    if (p >= g_execLo[i] && p < g_execHi[i]) return true;
  return false;
}

uint64_t realBase() {
  Dl_info info{};
  void* sym = dlsym(g_real, "cuInit");
  return sym && dladdr(sym, &info) ? reinterpret_cast<uint64_t>(info.dli_fbase) : 0;
}

__attribute__((constructor)) void init() {
  g_log = stderr;
  const char* path = getenv("SHIM_REAL_LIBCUDA");
  if (const char* file = getenv("SHIM_LOG")) {
    char name[512];
    snprintf(name, sizeof name, "%s.%d", file, static_cast<int>(getpid()));
    if (FILE* f = fopen(name, "w")) g_log = f;
  }
  setvbuf(g_log, nullptr, _IOLBF, 0);
  g_logCalls = getenv("SHIM_LOG_CALLS") && *getenv("SHIM_LOG_CALLS") == '1';
  g_real = path ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : nullptr;
  if (!g_real) {
    fprintf(g_log, "shim: cannot open SHIM_REAL_LIBCUDA=%s: %s\n", path ? path : "(unset)", dlerror());
    return;
  }
  dl_iterate_phdr(phdrCallback, const_cast<char*>(path));
  for (int i = 0; i < shim_name_count; ++i) shim_real[i] = dlsym(g_real, shim_names[i]);
  fprintf(g_log, "shim: %d entry points forwarded to %s (base %#llx, %d text ranges)\n", shim_name_count, path,
          static_cast<unsigned long long>(realBase()), g_execCount);
}

// --- Export table wrapping ---
struct Wrapped {
  const char* hex;
  uint64_t copy[512];
  const void* original = nullptr;
  int count = 0;
};
Wrapped kWrapped[] = {{"6e163fbeb958444d835ce182aff1991e", {}},
                      {"21318c60971432488ca641ff7324c8f2", {}},
                      {"f8cff95121468b4eb9e2fb469e7c0dd9", {}},
                      {"da9151d33ae6cc41a5c04f26d533e328", {}}};
constexpr int kTables = sizeof kWrapped / sizeof kWrapped[0];
constexpr int kMaxSlots = 128;

using Slot = unsigned __int128 (*)(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, double, double, double,
                                   double, double, double, double, double, uint64_t, uint64_t, uint64_t, uint64_t);

template <int T, int S> unsigned __int128 trampoline(uint64_t a, uint64_t b, uint64_t c, uint64_t d, uint64_t e,
                                                     uint64_t f, double x0, double x1, double x2, double x3, double x4,
                                                     double x5, double x6, double x7, uint64_t s0, uint64_t s1,
                                                     uint64_t s2, uint64_t s3) {
  uint64_t args[6] = {a, b, c, d, e, f};
  pthread_mutex_lock(&g_lock);
  fprintf(g_log, "slot %.8s[%d] tid %ld call args %#llx %#llx %#llx %#llx %#llx %#llx stack %#llx %#llx x0 %g\n",
          kWrapped[T].hex, S, static_cast<long>(gettid()), (unsigned long long)a, (unsigned long long)b,
          (unsigned long long)c, (unsigned long long)d, (unsigned long long)e, (unsigned long long)f,
          (unsigned long long)s0, (unsigned long long)s1, x0);
  for (int i = 0; i < 6; ++i) dumpPointer("before", i, args[i]);
  pthread_mutex_unlock(&g_lock);
  Slot real = reinterpret_cast<Slot>(reinterpret_cast<const uint64_t*>(kWrapped[T].original)[S]);
  unsigned __int128 r = real(a, b, c, d, e, f, x0, x1, x2, x3, x4, x5, x6, x7, s0, s1, s2, s3);
  pthread_mutex_lock(&g_lock);
  fprintf(g_log, "slot %.8s[%d] tid %ld return rax %#llx rdx %#llx\n", kWrapped[T].hex, S, static_cast<long>(gettid()),
          static_cast<unsigned long long>(static_cast<uint64_t>(r)),
          static_cast<unsigned long long>(static_cast<uint64_t>(r >> 64)));
  for (int i = 0; i < 6; ++i) dumpPointer("after", i, args[i]);
  pthread_mutex_unlock(&g_lock);
  return r;
}

template <int T, size_t... S> constexpr auto slotsOf(std::index_sequence<S...>) {
  return std::array<void*, sizeof...(S)>{reinterpret_cast<void*>(&trampoline<T, static_cast<int>(S)>)...};
}
template <size_t... T> constexpr auto allSlots(std::index_sequence<T...>) {
  return std::array<std::array<void*, kMaxSlots>, sizeof...(T)>{slotsOf<T>(std::make_index_sequence<kMaxSlots>())...};
}
const auto g_trampolines = allSlots(std::make_index_sequence<kTables>());

void toHex(const unsigned char* bytes, char* out) {
  for (int i = 0; i < 16; ++i) snprintf(out + 2 * i, 3, "%02x", bytes[i]);
}

const void* wrap(const char* hex, const void* table) {
  for (int t = 0; t < kTables; ++t) {
    Wrapped& w = kWrapped[t];
    if (strcmp(w.hex, hex) != 0) continue;
    if (w.original == table && w.count) return w.copy;
    const uint64_t* slots = static_cast<const uint64_t*>(table);
    bool sized = slots[0] < 0x1000 && slots[0] % 8 == 0;
    int count = sized ? static_cast<int>(slots[0] / 8) : 64;
    if (count > kMaxSlots) count = kMaxSlots;
    uint64_t base = realBase();
    fprintf(g_log, "table %s at %p: first word %#llx (%s), %d entries\n", hex, table,
            static_cast<unsigned long long>(slots[0]), sized ? "a size" : "not a size", count);
    for (int s = 0; s < count; ++s) {
      uint64_t v = slots[s];
      bool code = inRealText(v);
      fprintf(g_log, "  entry %3d: %#018llx%s%llx\n", s, static_cast<unsigned long long>(v),
              code ? " code libcuda+" : " ", code ? static_cast<unsigned long long>(v - base) : 0ull);
      w.copy[s] = code ? reinterpret_cast<uint64_t>(g_trampolines[t][s]) : v;
    }
    w.original = table;
    w.count = count;
    return w.copy;
  }
  return table;
}

using GetExportTableFn = int (*)(const void**, const unsigned char*);
using GetProcAddressFn = int (*)(const char*, void**, int, uint64_t);
using GetProcAddressV2Fn = int (*)(const char*, void**, int, uint64_t, int*);

}  // namespace

extern "C" {

__attribute__((visibility("default"))) int cuGetExportTable(const void** table, const unsigned char* id) {
  auto real = reinterpret_cast<GetExportTableFn>(dlsym(g_real, "cuGetExportTable"));
  int r = real(table, id);
  char hex[33] = {};
  if (id) toHex(id, hex);
  pthread_mutex_lock(&g_lock);
  fprintf(g_log, "cuGetExportTable(%s) = %d table %p\n", hex, r, table && r == 0 ? *table : nullptr);
  if (r == 0 && table && *table) *table = wrap(hex, *table);
  pthread_mutex_unlock(&g_lock);
  return r;
}

int cuGetProcAddress_v2(const char* symbol, void** pfn, int version, uint64_t flags, int* status);
__attribute__((visibility("default"))) int cuGetProcAddress(const char* symbol, void** pfn, int version,
                                                            uint64_t flags) {
  auto real = reinterpret_cast<GetProcAddressFn>(dlsym(g_real, "cuGetProcAddress"));
  int r = real(symbol, pfn, version, flags);
  if (r == 0 && pfn && symbol && strcmp(symbol, "cuGetExportTable") == 0)
    *pfn = reinterpret_cast<void*>(&cuGetExportTable);
  if (r == 0 && pfn && symbol && strcmp(symbol, "cuGetProcAddress") == 0)
    *pfn = *pfn == dlsym(g_real, "cuGetProcAddress_v2") ? reinterpret_cast<void*>(&cuGetProcAddress_v2)
                                                        : reinterpret_cast<void*>(&cuGetProcAddress);
  return r;
}

__attribute__((visibility("default"))) int cuGetProcAddress_v2(const char* symbol, void** pfn, int version,
                                                               uint64_t flags, int* status) {
  auto real = reinterpret_cast<GetProcAddressV2Fn>(dlsym(g_real, "cuGetProcAddress_v2"));
  int r = real(symbol, pfn, version, flags, status);
  if (r == 0 && pfn && symbol && strcmp(symbol, "cuGetExportTable") == 0)
    *pfn = reinterpret_cast<void*>(&cuGetExportTable);
  if (r == 0 && pfn && symbol && strcmp(symbol, "cuGetProcAddress") == 0)
    *pfn = *pfn == dlsym(g_real, "cuGetProcAddress_v2") ? reinterpret_cast<void*>(&cuGetProcAddress_v2)
                                                        : reinterpret_cast<void*>(&cuGetProcAddress);
  return r;
}

// Called by each generated forwarder before it jumps to the real entry point (SHIM_LOG_CALLS=1 only).
void shim_log_call(int index, const uint64_t* saved) {
  if (!g_logCalls) return;
  pthread_mutex_lock(&g_lock);
  // saved holds r9, r8, rcx, rdx, rsi, rdi (pushed in that order reversed).
  fprintf(g_log, "call %s(%#llx, %#llx, %#llx, %#llx) tid %ld\n", shim_names[index], (unsigned long long)saved[5],
          (unsigned long long)saved[4], (unsigned long long)saved[3], (unsigned long long)saved[2],
          static_cast<long>(gettid()));
  pthread_mutex_unlock(&g_lock);
}
}
