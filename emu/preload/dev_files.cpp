// libcuemu-dev-files.so: makes NVIDIA's device files (/dev/nvidiactl, /dev/nvidia0 ... /dev/nvidiaN-1) appear
// to exist for programs run by `cuemu run` on a machine without NVIDIA's kernel driver.
//
// Why: some clients decide whether a GPU is present by looking for these files before they ask the CUDA driver.
// JAX is one: its backend discovery skips CUDA unless /dev/nvidia0, /dev/nvidiactl or /dev/dxg exists
// (jax._src.hardware_utils), so on a GPU-less CI machine JAX never loads cuemu's libcuda.so.1 at all. The files
// belong to NVIDIA's kernel module, which cuemu does not replace; this library answers only the questions "does it
// exist, what is it" (the stat family and access), as a character device of NVIDIA's major number 195 (minor 255
// for nvidiactl, N for nvidiaN), and only while the real path does not exist. Opening one still fails as the
// operating system decides (ENOENT): nothing here pretends to be the kernel driver, and cuemu itself never opens them.
//
// `cuemu run` preloads it (off with --dev-files off) and sets CUEMU_DEV_FILE_COUNT to the number of devices.
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace {

constexpr unsigned kNvidiaMajor = 195;
constexpr unsigned kControlMinor = 255;

// The minor number of an NVIDIA device file this library shows, or -1 for any other path.
int shownMinor(const char* path) {
  if (!path || std::strncmp(path, "/dev/nvidia", 11) != 0) return -1;
  const char* rest = path + 11;
  if (std::strcmp(rest, "ctl") == 0) return kControlMinor;
  if (*rest < '0' || *rest > '9') return -1;
  char* end = nullptr;
  long index = std::strtol(rest, &end, 10);
  if (*end != '\0' || (rest[0] == '0' && rest[1] != '\0')) return -1;
  const char* count = std::getenv("CUEMU_DEV_FILE_COUNT");
  long devices = count && *count ? std::strtol(count, nullptr, 10) : 1;
  return index < devices && index < 255 ? static_cast<int>(index) : -1;
}

template <typename Stat> void fill(Stat* st, int minor) {
  std::memset(st, 0, sizeof *st);
  st->st_mode = S_IFCHR | 0666;
  st->st_rdev = makedev(kNvidiaMajor, static_cast<unsigned>(minor));
  st->st_nlink = 1;
  st->st_blksize = 4096;
}

template <typename F> F next(const char* name) { return reinterpret_cast<F>(dlsym(RTLD_NEXT, name)); }

// Runs the real call; where it found nothing at a shown path, answers for the device file instead.
template <typename Stat, typename Real> int statOr(const char* path, Stat* st, Real real) {
  int saved = errno;
  int r = real();
  if (r == 0 || errno != ENOENT) return r;
  int minor = shownMinor(path);
  if (minor < 0 || !st) return r;
  fill(st, minor);
  errno = saved;
  return 0;
}

int accessOr(const char* path, int mode, int r) {
  if (r == 0 || errno != ENOENT || shownMinor(path) < 0) return r;
  // Read and write permission, as the real files have for everyone; not executable.
  if (mode & X_OK) {
    errno = EACCES;
    return -1;
  }
  return 0;
}

}  // namespace

#define SHIM extern "C" __attribute__((visibility("default")))

SHIM int stat(const char* path, struct stat* st) noexcept {
  static auto real = next<int (*)(const char*, struct stat*)>("stat");
  return statOr(path, st, [&] { return real(path, st); });
}
SHIM int stat64(const char* path, struct stat64* st) noexcept {
  static auto real = next<int (*)(const char*, struct stat64*)>("stat64");
  return statOr(path, st, [&] { return real(path, st); });
}
SHIM int lstat(const char* path, struct stat* st) noexcept {
  static auto real = next<int (*)(const char*, struct stat*)>("lstat");
  return statOr(path, st, [&] { return real(path, st); });
}
SHIM int lstat64(const char* path, struct stat64* st) noexcept {
  static auto real = next<int (*)(const char*, struct stat64*)>("lstat64");
  return statOr(path, st, [&] { return real(path, st); });
}
// Relative paths with a directory descriptor name other files: only absolute paths are answered.
SHIM int fstatat(int dir, const char* path, struct stat* st, int flags) noexcept {
  static auto real = next<int (*)(int, const char*, struct stat*, int)>("fstatat");
  return statOr(path, st, [&] { return real(dir, path, st, flags); });
}
SHIM int fstatat64(int dir, const char* path, struct stat64* st, int flags) noexcept {
  static auto real = next<int (*)(int, const char*, struct stat64*, int)>("fstatat64");
  return statOr(path, st, [&] { return real(dir, path, st, flags); });
}
// The versioned entry points of programs built against glibc before 2.33.
SHIM int __xstat(int ver, const char* path, struct stat* st) noexcept {
  static auto real = next<int (*)(int, const char*, struct stat*)>("__xstat");
  return statOr(path, st, [&] { return real(ver, path, st); });
}
SHIM int __xstat64(int ver, const char* path, struct stat64* st) noexcept {
  static auto real = next<int (*)(int, const char*, struct stat64*)>("__xstat64");
  return statOr(path, st, [&] { return real(ver, path, st); });
}
SHIM int __lxstat(int ver, const char* path, struct stat* st) noexcept {
  static auto real = next<int (*)(int, const char*, struct stat*)>("__lxstat");
  return statOr(path, st, [&] { return real(ver, path, st); });
}
SHIM int __lxstat64(int ver, const char* path, struct stat64* st) noexcept {
  static auto real = next<int (*)(int, const char*, struct stat64*)>("__lxstat64");
  return statOr(path, st, [&] { return real(ver, path, st); });
}
SHIM int __fxstatat(int ver, int dir, const char* path, struct stat* st, int flags) noexcept {
  static auto real = next<int (*)(int, int, const char*, struct stat*, int)>("__fxstatat");
  return statOr(path, st, [&] { return real(ver, dir, path, st, flags); });
}
SHIM int __fxstatat64(int ver, int dir, const char* path, struct stat64* st, int flags) noexcept {
  static auto real = next<int (*)(int, int, const char*, struct stat64*, int)>("__fxstatat64");
  return statOr(path, st, [&] { return real(ver, dir, path, st, flags); });
}
SHIM int statx(int dir, const char* path, int flags, unsigned mask, struct statx* st) noexcept {
  static auto real = next<int (*)(int, const char*, int, unsigned, struct statx*)>("statx");
  int saved = errno;
  int r = real(dir, path, flags, mask, st);
  if (r == 0 || errno != ENOENT) return r;
  int minor = shownMinor(path);
  if (minor < 0) return r;
  std::memset(st, 0, sizeof *st);
  st->stx_mask = STATX_TYPE | STATX_MODE | STATX_NLINK;
  st->stx_mode = S_IFCHR | 0666;
  st->stx_nlink = 1;
  st->stx_blksize = 4096;
  st->stx_rdev_major = kNvidiaMajor;
  st->stx_rdev_minor = static_cast<unsigned>(minor);
  errno = saved;
  return 0;
}
SHIM int access(const char* path, int mode) noexcept {
  static auto real = next<int (*)(const char*, int)>("access");
  return accessOr(path, mode, real(path, mode));
}
SHIM int faccessat(int dir, const char* path, int mode, int flags) noexcept {
  static auto real = next<int (*)(int, const char*, int, int)>("faccessat");
  return accessOr(path, mode, real(dir, path, mode, flags));
}
SHIM int euidaccess(const char* path, int mode) noexcept {
  static auto real = next<int (*)(const char*, int)>("euidaccess");
  return accessOr(path, mode, real(path, mode));
}
SHIM int eaccess(const char* path, int mode) noexcept {
  static auto real = next<int (*)(const char*, int)>("eaccess");
  return accessOr(path, mode, real(path, mode));
}
