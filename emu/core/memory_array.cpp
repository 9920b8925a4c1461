#include "core/memory_array.h"

#include "core/context.h"
#include "core/device.h"
#include "core/memory.h"

#include <algorithm>

namespace cuemu {

unsigned formatChannelBytes(CUarray_format format) {
  switch (format) {
    case CU_AD_FORMAT_UNSIGNED_INT8:
    case CU_AD_FORMAT_SIGNED_INT8: return 1;
    case CU_AD_FORMAT_UNSIGNED_INT16:
    case CU_AD_FORMAT_SIGNED_INT16:
    case CU_AD_FORMAT_HALF: return 2;
    case CU_AD_FORMAT_UNSIGNED_INT32:
    case CU_AD_FORMAT_SIGNED_INT32:
    case CU_AD_FORMAT_FLOAT: return 4;
    default: return 0;
  }
}

namespace {

// Formats whose channel count is part of the format: {element bytes, channels}.
bool packedFormat(CUarray_format format, unsigned& elementBytes, unsigned& channels) {
  switch (format) {
    case CU_AD_FORMAT_UNORM_INT8X1:
    case CU_AD_FORMAT_SNORM_INT8X1:
      elementBytes = 1;
      channels = 1;
      return true;
    case CU_AD_FORMAT_UNORM_INT8X2:
    case CU_AD_FORMAT_SNORM_INT8X2:
      elementBytes = 2;
      channels = 2;
      return true;
    case CU_AD_FORMAT_UNORM_INT8X4:
    case CU_AD_FORMAT_SNORM_INT8X4:
      elementBytes = 4;
      channels = 4;
      return true;
    case CU_AD_FORMAT_UNORM_INT16X1:
    case CU_AD_FORMAT_SNORM_INT16X1:
      elementBytes = 2;
      channels = 1;
      return true;
    case CU_AD_FORMAT_UNORM_INT16X2:
    case CU_AD_FORMAT_SNORM_INT16X2:
      elementBytes = 4;
      channels = 2;
      return true;
    case CU_AD_FORMAT_UNORM_INT16X4:
    case CU_AD_FORMAT_SNORM_INT16X4:
      elementBytes = 8;
      channels = 4;
      return true;
    case CU_AD_FORMAT_UNORM_INT_101010_2:
      elementBytes = 4;
      channels = 4;
      return true;
    default: return false;
  }
}

// Limits of a compute capability 9.0 device (the texture limits CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE* report).
constexpr size_t kMax1D = 131072, kMax2DWidth = 131072, kMax2DHeight = 65536, kMax3D = 16384, kMaxLayers = 2048,
                 kMaxCube = 32768;

}  // namespace

Expected<std::shared_ptr<Array>> Array::create(Context& context, const CUDA_ARRAY3D_DESCRIPTOR& d, bool mipLevel) {
  auto invalid = [](const char* why) { return makeError(CUDA_ERROR_INVALID_VALUE, why); };
  unsigned elementBytes = 0, channels = 0;
  if (unsigned channelBytes = formatChannelBytes(d.Format)) {
    if (d.NumChannels != 1 && d.NumChannels != 2 && d.NumChannels != 4) return invalid("NumChannels must be 1, 2 or 4");
    elementBytes = channelBytes * d.NumChannels;
  } else if (packedFormat(d.Format, elementBytes, channels)) {
    if (d.NumChannels != channels) return invalid("NumChannels does not match the format");
  } else {
    return makeError(CUDA_ERROR_INVALID_VALUE, "array format not supported by cuemu");
  }
  constexpr unsigned kKnownFlags = CUDA_ARRAY3D_LAYERED | CUDA_ARRAY3D_SURFACE_LDST | CUDA_ARRAY3D_CUBEMAP |
                                   CUDA_ARRAY3D_TEXTURE_GATHER | CUDA_ARRAY3D_COLOR_ATTACHMENT |
                                   CUDA_ARRAY3D_DEFERRED_MAPPING;  // backed at creation all the same
  if (d.Flags & ~kKnownFlags) return invalid("unsupported array flags");
  bool layered = d.Flags & CUDA_ARRAY3D_LAYERED, cube = d.Flags & CUDA_ARRAY3D_CUBEMAP;
  if (d.Width == 0) return invalid("Width is 0");
  if (cube) {
    if (d.Width != d.Height || d.Width > kMaxCube) return invalid("cubemap faces must be square");
    if (layered ? (d.Depth == 0 || d.Depth % 6 != 0 || d.Depth / 6 > kMaxLayers) : d.Depth != 6)
      return invalid("cubemap depth must be 6 (or a multiple of 6 when layered)");
  } else if (layered) {
    if (d.Depth == 0 || d.Depth > kMaxLayers) return invalid("layer count out of range");
    if (d.Height == 0 ? d.Width > kMax1D : (d.Width > kMax2DWidth || d.Height > kMax2DHeight))
      return invalid("layered array too large");
  } else if (d.Depth) {
    if (d.Height == 0) return invalid("a 3D array needs a Height");
    if (d.Width > kMax3D || d.Height > kMax3D || d.Depth > kMax3D) return invalid("3D array too large");
  } else if (d.Height) {
    if (d.Width > kMax2DWidth || d.Height > kMax2DHeight) return invalid("2D array too large");
  } else if (d.Width > kMax1D) {
    return invalid("1D array too large");
  }
  if ((d.Flags & CUDA_ARRAY3D_TEXTURE_GATHER) && (d.Height == 0 || d.Depth != 0))
    return invalid("texture gather needs a 2D array");

  auto array = std::make_shared<Array>();
  array->descriptor_ = d;
  array->elementBytes_ = elementBytes;
  array->rowBytes_ = d.Width * elementBytes;
  array->rows_ = std::max<size_t>(d.Height, 1);
  array->slices_ = std::max<size_t>(d.Depth, 1);
  array->mipLevel_ = mipLevel;
  auto storage = context.memory().allocateDevice(array->totalBytes());
  if (!storage) return storage.takeError();
  array->storage_ = *storage;
  array->storage_->kind = MemoryKind::Array;
  array->handle_ = handleTable<Array>().insert(array);
  array->storage_->arrayHandle = array->handle_;
  return array;
}

void Array::destroy() {
  if (storage_) (void)releaseRegion(storage_->start, {MemoryKind::Array});
  handleTable<Array>().erase(handle_);
}

Expected<std::shared_ptr<MipmappedArray>> MipmappedArray::create(Context& context, const CUDA_ARRAY3D_DESCRIPTOR& d,
                                                                 unsigned levels) {
  if (levels == 0) return makeError(CUDA_ERROR_INVALID_VALUE, "no levels");
  size_t largest = std::max({d.Width, d.Height, d.Depth});
  unsigned maxLevels = 1;
  while ((largest >> maxLevels) > 0) ++maxLevels;
  if (levels > maxLevels) return makeError(CUDA_ERROR_INVALID_VALUE, "more levels than the extent allows");
  bool layered = d.Flags & (CUDA_ARRAY3D_LAYERED | CUDA_ARRAY3D_CUBEMAP);
  auto mip = std::make_shared<MipmappedArray>();
  mip->descriptor_ = d;
  for (unsigned i = 0; i < levels; ++i) {
    CUDA_ARRAY3D_DESCRIPTOR level = d;
    level.Width = std::max<size_t>(d.Width >> i, 1);
    level.Height = d.Height ? std::max<size_t>(d.Height >> i, 1) : 0;
    level.Depth = layered ? d.Depth : (d.Depth ? std::max<size_t>(d.Depth >> i, 1) : 0);
    auto array = Array::create(context, level, /*mipLevel=*/true);
    if (!array) {
      for (auto& made : mip->levels_) made->destroy();
      return array.takeError();
    }
    mip->levels_.push_back(*array);
  }
  mip->handle_ = handleTable<MipmappedArray>().insert(mip);
  return mip;
}

void MipmappedArray::destroy() {
  for (auto& level : levels_) level->destroy();
  handleTable<MipmappedArray>().erase(handle_);
}

void forgetArray(uint64_t handle) { handleTable<Array>().erase(handle); }

}  // namespace cuemu
