// CUDA arrays: opaque, formatted 1D/2D/3D (layered, cubemap) storage for textures and surfaces. cuemu lays an
// array out linearly (rows of Width elements, then slices) in device memory it owns; the layout is private, so
// only copies and the texture unit read it. Mipmapped arrays are a chain of such arrays.
#pragma once

#include "api/cuda_internal.h"
#include "core/address_space.h"
#include "core/handle.h"
#include "core/result.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace cuemu {

class Context;

// Bytes of one channel of `format`, or 0 for a format cuemu does not lay out (block-compressed, YUV).
unsigned formatChannelBytes(CUarray_format format);

class Array {
 public:
  static constexpr HandleKind kKind = HandleKind::Array;

  // Validates the descriptor (CUDA_ERROR_INVALID_VALUE) and allocates the storage in `context`.
  static Expected<std::shared_ptr<Array>> create(Context& context, const CUDA_ARRAY3D_DESCRIPTOR& descriptor,
                                                 bool mipLevel = false);

  const CUDA_ARRAY3D_DESCRIPTOR& descriptor() const { return descriptor_; }
  uint64_t handle() const { return handle_; }
  CUarray apiHandle() const { return toApiHandle<CUarray>(handle_); }
  unsigned elementBytes() const { return elementBytes_; }
  size_t rowBytes() const { return rowBytes_; }
  size_t rows() const { return rows_; }
  size_t slices() const { return slices_; }
  size_t sliceBytes() const { return rowBytes_ * rows_; }
  size_t totalBytes() const { return sliceBytes() * slices_; }
  uint8_t* data() const { return reinterpret_cast<uint8_t*>(storage_->start); }
  const RegionPtr& storage() const { return storage_; }
  bool isMipLevel() const { return mipLevel_; }

  // Releases the storage and the handle (cuArrayDestroy).
  void destroy();

 private:
  CUDA_ARRAY3D_DESCRIPTOR descriptor_{};
  unsigned elementBytes_ = 0;
  size_t rowBytes_ = 0, rows_ = 0, slices_ = 0;
  RegionPtr storage_;
  uint64_t handle_ = 0;
  bool mipLevel_ = false;
};

class MipmappedArray {
 public:
  static constexpr HandleKind kKind = HandleKind::MipmappedArray;

  static Expected<std::shared_ptr<MipmappedArray>> create(Context& context, const CUDA_ARRAY3D_DESCRIPTOR& descriptor,
                                                          unsigned levels);
  const CUDA_ARRAY3D_DESCRIPTOR& descriptor() const { return descriptor_; }
  unsigned levelCount() const { return static_cast<unsigned>(levels_.size()); }
  const std::shared_ptr<Array>& level(unsigned i) const { return levels_[i]; }
  uint64_t handle() const { return handle_; }
  void destroy();

 private:
  CUDA_ARRAY3D_DESCRIPTOR descriptor_{};
  std::vector<std::shared_ptr<Array>> levels_;
  uint64_t handle_ = 0;
};

// Called when the array's storage was released with its context.
void forgetArray(uint64_t handle);

}  // namespace cuemu
