#include "core/memory_vmm.h"

#include "core/address_space.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <fcntl.h>
#include <mutex>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace cuemu {
namespace {
std::mutex g_handleMutex;  // serialises handle retain/release (re-registration after release)
// memfd names of plain and of compressible allocations; the second extends the first.
constexpr const char* kPlainName = "cuemu-vmm";
constexpr const char* kCompressedName = "cuemu-vmm-compressible";
}  // namespace

Expected<std::shared_ptr<PhysicalAllocation>> PhysicalAllocation::create(uint64_t size,
                                                                         const CUmemAllocationProp& prop) {
  AddressSpace& space = AddressSpace::instance();
  bool host = prop.location.type != CU_MEM_LOCATION_TYPE_DEVICE;
  int device = host ? 0 : prop.location.id;
  if (!host && !space.charge(device, size)) return makeError(CUDA_ERROR_OUT_OF_MEMORY, "device memory exhausted");
  // The name carries what an importing process reports (PhysicalAllocation::import).
  bool compressed = prop.allocFlags.compressionType == CU_MEM_ALLOCATION_COMP_GENERIC;
  int fd = memfd_create(compressed ? kCompressedName : kPlainName, MFD_CLOEXEC);
  if (fd < 0 || ftruncate(fd, off_t(size)) != 0) {
    if (fd >= 0) close(fd);
    if (!host) space.uncharge(device, size);
    return makeError(CUDA_ERROR_OUT_OF_MEMORY, fmt::format("memfd: {}", std::strerror(errno)));
  }
  std::shared_ptr<PhysicalAllocation> allocation(new PhysicalAllocation);
  allocation->fd_ = fd;
  allocation->size_ = size;
  allocation->prop_ = prop;
  allocation->charged_ = host ? 0 : size;
  allocation->blockId_ = space.nextBufferId();
  return allocation;
}

Expected<std::shared_ptr<PhysicalAllocation>> PhysicalAllocation::import(int fd) {
  struct stat st {};
  if (fd < 0 || fstat(fd, &st) != 0 || st.st_size <= 0)
    return makeError(CUDA_ERROR_INVALID_VALUE, "not a shareable allocation");
  int copy = fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (copy < 0) return makeError(CUDA_ERROR_OUT_OF_MEMORY, "dup failed");
  std::shared_ptr<PhysicalAllocation> allocation(new PhysicalAllocation);
  allocation->fd_ = copy;
  allocation->size_ = uint64_t(st.st_size);
  allocation->prop_.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  allocation->prop_.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  allocation->prop_.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  allocation->prop_.location.id = 0;
  // As on the H100, an imported allocation reports the compression its creator was granted.
  char link[64], target[256];
  std::snprintf(link, sizeof link, "/proc/self/fd/%d", copy);
  ssize_t n = readlink(link, target, sizeof target - 1);
  if (n > 0 && std::string_view(target, size_t(n)).starts_with(std::string("/memfd:") + kCompressedName))
    allocation->prop_.allocFlags.compressionType = CU_MEM_ALLOCATION_COMP_GENERIC;
  allocation->blockId_ = AddressSpace::instance().nextBufferId();
  return allocation;
}

PhysicalAllocation::~PhysicalAllocation() {
  if (fd_ >= 0) close(fd_);
  if (charged_) AddressSpace::instance().uncharge(prop_.location.id, charged_);
}

uint64_t PhysicalAllocation::retain(const std::shared_ptr<PhysicalAllocation>& self) {
  std::lock_guard lock(g_handleMutex);
  // New, or every handle was released while a mapping kept the memory: register under a fresh handle.
  if (self->references_++ == 0) self->handle_ = handleTable<PhysicalAllocation>().insert(self);
  return self->handle_;
}

bool PhysicalAllocation::release() {
  std::lock_guard lock(g_handleMutex);
  if (references_ <= 0) return false;
  if (--references_ == 0) {
    handleTable<PhysicalAllocation>().erase(handle_);
    handle_ = 0;
  }
  return true;
}

}  // namespace cuemu
