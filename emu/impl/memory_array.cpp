// CUDA arrays and mipmapped arrays: create, describe, destroy, levels.
#include "api/impl.h"

#include "core/memory.h"
#include "core/memory_array.h"
#include "impl/memory_internal.h"

namespace cuemu {
namespace {

CUresult createArray(CUarray* pHandle, const CUDA_ARRAY3D_DESCRIPTOR& descriptor) {
  if (!pHandle) return CUDA_ERROR_INVALID_VALUE;
  CUEMU_REQUIRE_CONTEXT(context);
  auto array = Array::create(context, descriptor);
  if (!array) return array.error().code;
  *pHandle = (*array)->apiHandle();
  return CUDA_SUCCESS;
}

}  // namespace

namespace impl {

CUresult cuArrayCreate_v2(CUarray* pHandle, const CUDA_ARRAY_DESCRIPTOR* desc) {
  if (!desc) return CUDA_ERROR_INVALID_VALUE;
  CUDA_ARRAY3D_DESCRIPTOR d{};
  d.Width = desc->Width;
  d.Height = desc->Height;
  d.Format = desc->Format;
  d.NumChannels = desc->NumChannels;
  return createArray(pHandle, d);
}

CUresult cuArray3DCreate_v2(CUarray* pHandle, const CUDA_ARRAY3D_DESCRIPTOR* desc) {
  if (!desc) return CUDA_ERROR_INVALID_VALUE;
  return createArray(pHandle, *desc);
}

CUresult cuArrayGetDescriptor_v2(CUDA_ARRAY_DESCRIPTOR* desc, CUarray hArray) {
  if (!desc) return CUDA_ERROR_INVALID_VALUE;
  CUEMU_LOOKUP(array, Array, hArray);
  desc->Width = array->descriptor().Width;
  desc->Height = array->descriptor().Height;
  desc->Format = array->descriptor().Format;
  desc->NumChannels = array->descriptor().NumChannels;
  return CUDA_SUCCESS;
}

CUresult cuArray3DGetDescriptor_v2(CUDA_ARRAY3D_DESCRIPTOR* desc, CUarray hArray) {
  if (!desc) return CUDA_ERROR_INVALID_VALUE;
  CUEMU_LOOKUP(array, Array, hArray);
  *desc = array->descriptor();
  return CUDA_SUCCESS;
}

CUresult cuArrayDestroy(CUarray hArray) {
  CUEMU_LOOKUP(array, Array, hArray);
  if (array->isMipLevel()) return CUDA_ERROR_INVALID_VALUE;  // levels die with their mipmapped array
  if (array->storage()) memops::drainOwner(array->storage()->start);
  array->destroy();
  return CUDA_SUCCESS;
}

// Only arrays created for deferred mapping have requirements; cuemu backs them like every other array.
CUresult cuArrayGetMemoryRequirements(CUDA_ARRAY_MEMORY_REQUIREMENTS* requirements, CUarray hArray, CUdevice device) {
  if (!requirements) return CUDA_ERROR_INVALID_VALUE;
  CUEMU_LOOKUP(array, Array, hArray);
  if (!(array->descriptor().Flags & CUDA_ARRAY3D_DEFERRED_MAPPING)) return CUDA_ERROR_INVALID_VALUE;
  if (!array->storage() || array->storage()->device != device) return CUDA_ERROR_INVALID_DEVICE;
  *requirements = CUDA_ARRAY_MEMORY_REQUIREMENTS{};
  requirements->size = alignUp(array->totalBytes(), AddressSpace::kChunk);
  requirements->alignment = AddressSpace::kChunk;
  return CUDA_SUCCESS;
}

CUresult cuMipmappedArrayGetMemoryRequirements(CUDA_ARRAY_MEMORY_REQUIREMENTS* requirements, CUmipmappedArray mipmap,
                                               CUdevice device) {
  if (!requirements) return CUDA_ERROR_INVALID_VALUE;
  CUEMU_LOOKUP(mip, MipmappedArray, mipmap);
  if (!(mip->descriptor().Flags & CUDA_ARRAY3D_DEFERRED_MAPPING)) return CUDA_ERROR_INVALID_VALUE;
  uint64_t total = 0;
  for (unsigned i = 0; i < mip->levelCount(); ++i) {
    if (mip->level(i)->storage()->device != device) return CUDA_ERROR_INVALID_DEVICE;
    total += alignUp(mip->level(i)->totalBytes(), AddressSpace::kChunk);
  }
  *requirements = CUDA_ARRAY_MEMORY_REQUIREMENTS{};
  requirements->size = total;
  requirements->alignment = AddressSpace::kChunk;
  return CUDA_SUCCESS;
}

CUresult cuMipmappedArrayCreate(CUmipmappedArray* pHandle, const CUDA_ARRAY3D_DESCRIPTOR* desc,
                                unsigned int numMipmapLevels) {
  if (!pHandle || !desc) return CUDA_ERROR_INVALID_VALUE;
  CUEMU_REQUIRE_CONTEXT(context);
  auto mip = MipmappedArray::create(context, *desc, numMipmapLevels);
  if (!mip) return mip.error().code;
  *pHandle = toApiHandle<CUmipmappedArray>((*mip)->handle());
  return CUDA_SUCCESS;
}

CUresult cuMipmappedArrayGetLevel(CUarray* pLevelArray, CUmipmappedArray hMipmappedArray, unsigned int level) {
  if (!pLevelArray) return CUDA_ERROR_INVALID_VALUE;
  CUEMU_LOOKUP(mip, MipmappedArray, hMipmappedArray);
  if (level >= mip->levelCount()) return CUDA_ERROR_INVALID_VALUE;
  *pLevelArray = mip->level(level)->apiHandle();
  return CUDA_SUCCESS;
}

CUresult cuMipmappedArrayDestroy(CUmipmappedArray hMipmappedArray) {
  CUEMU_LOOKUP(mip, MipmappedArray, hMipmappedArray);
  if (mip->levelCount() && mip->level(0)->storage()) memops::drainOwner(mip->level(0)->storage()->start);
  mip->destroy();
  return CUDA_SUCCESS;
}

}  // namespace impl
}  // namespace cuemu
