// Texture and surface objects: cuTexObject*, cuSurfObject*. The objects are process-wide (like NVIDIA's, they
// are plain 64-bit values a kernel receives as a parameter); kernels reach them through the launch's host
// services (emu/core/launch.cpp -> emu/core/texture.cpp).
#include "api/impl.h"

#include "core/context.h"
#include "core/texture.h"

namespace cuemu::impl {
namespace {

bool validAddressMode(CUaddress_mode mode) {
  return mode >= CU_TR_ADDRESS_MODE_WRAP && mode <= CU_TR_ADDRESS_MODE_BORDER;
}

CUresult validateTextureDesc(const CUDA_TEXTURE_DESC& t) {
  for (CUaddress_mode mode : t.addressMode)
    if (!validAddressMode(mode)) return CUDA_ERROR_INVALID_VALUE;
  if (t.filterMode != CU_TR_FILTER_MODE_POINT && t.filterMode != CU_TR_FILTER_MODE_LINEAR)
    return CUDA_ERROR_INVALID_VALUE;
  constexpr unsigned kKnownFlags = CU_TRSF_READ_AS_INTEGER | CU_TRSF_NORMALIZED_COORDINATES | CU_TRSF_SRGB |
                                   CU_TRSF_DISABLE_TRILINEAR_OPTIMIZATION | CU_TRSF_SEAMLESS_CUBEMAP;
  if (t.flags & ~kKnownFlags) return CUDA_ERROR_INVALID_VALUE;
  // Linear memory is fetched by index only, so a linear filter there changes nothing; an H100 accepts it with any
  // format, read as integers or not (conformance api.texture.LinearResourceFilterModes).
  return CUDA_SUCCESS;
}

}  // namespace

CUresult cuTexObjectCreate(CUtexObject* pTexObject, const CUDA_RESOURCE_DESC* pResDesc,
                           const CUDA_TEXTURE_DESC* pTexDesc, const CUDA_RESOURCE_VIEW_DESC* pResViewDesc) {
  if (!pTexObject || !pResDesc || !pTexDesc) return CUDA_ERROR_INVALID_VALUE;
  if (auto current = requireCurrentContext(); !current) return current.error().code;
  auto store = resolveResource(*pResDesc);
  if (!store) return store.error().code;
  if (CUresult r = validateTextureDesc(*pTexDesc)) return r;
  auto object = std::make_shared<TexObject>();
  object->resource = *pResDesc;
  object->texture = *pTexDesc;
  if (pResViewDesc) {
    object->view = *pResViewDesc;
    object->hasView = true;
  }
  object->store = std::move(*store);
  TexObject* raw = object.get();
  raw->handle = handleTable<TexObject>().insert(std::move(object));
  *pTexObject = raw->handle;
  return CUDA_SUCCESS;
}

CUresult cuTexObjectDestroy(CUtexObject texObject) {
  auto object = handleTable<TexObject>().erase(texObject);
  if (!object) return CUDA_ERROR_INVALID_VALUE;
  retireTexObject(std::move(object));  // launches queued before now may still use it
  return CUDA_SUCCESS;
}

CUresult cuTexObjectGetResourceDesc(CUDA_RESOURCE_DESC* pResDesc, CUtexObject texObject) {
  if (!pResDesc) return CUDA_ERROR_INVALID_VALUE;
  CUEMU_LOOKUP(object, TexObject, texObject, CUDA_ERROR_INVALID_VALUE);
  *pResDesc = object->resource;
  return CUDA_SUCCESS;
}

CUresult cuTexObjectGetTextureDesc(CUDA_TEXTURE_DESC* pTexDesc, CUtexObject texObject) {
  if (!pTexDesc) return CUDA_ERROR_INVALID_VALUE;
  CUEMU_LOOKUP(object, TexObject, texObject, CUDA_ERROR_INVALID_VALUE);
  *pTexDesc = object->texture;
  return CUDA_SUCCESS;
}

// Without a view given at creation driver 580 succeeds and leaves the output untouched (measured on an H200).
CUresult cuTexObjectGetResourceViewDesc(CUDA_RESOURCE_VIEW_DESC* pResViewDesc, CUtexObject texObject) {
  if (!pResViewDesc) return CUDA_ERROR_INVALID_VALUE;
  CUEMU_LOOKUP(object, TexObject, texObject, CUDA_ERROR_INVALID_VALUE);
  if (object->hasView) *pResViewDesc = object->view;
  return CUDA_SUCCESS;
}

// Surfaces need an array; driver 580 does not insist on CUDA_ARRAY3D_SURFACE_LDST (measured on an H200).
CUresult cuSurfObjectCreate(CUsurfObject* pSurfObject, const CUDA_RESOURCE_DESC* pResDesc) {
  if (!pSurfObject || !pResDesc) return CUDA_ERROR_INVALID_VALUE;
  if (auto current = requireCurrentContext(); !current) return current.error().code;
  if (pResDesc->resType != CU_RESOURCE_TYPE_ARRAY) return CUDA_ERROR_INVALID_VALUE;
  auto store = resolveResource(*pResDesc);
  if (!store) return store.error().code;
  auto object = std::make_shared<SurfObject>();
  object->resource = *pResDesc;
  object->store = std::move(*store);
  SurfObject* raw = object.get();
  raw->handle = handleTable<SurfObject>().insert(std::move(object));
  *pSurfObject = raw->handle;
  return CUDA_SUCCESS;
}

CUresult cuSurfObjectDestroy(CUsurfObject surfObject) {
  auto object = handleTable<SurfObject>().erase(surfObject);
  if (!object) return CUDA_ERROR_INVALID_VALUE;
  retireSurfObject(std::move(object));  // launches queued before now may still use it
  return CUDA_SUCCESS;
}

CUresult cuSurfObjectGetResourceDesc(CUDA_RESOURCE_DESC* pResDesc, CUsurfObject surfObject) {
  if (!pResDesc) return CUDA_ERROR_INVALID_VALUE;
  CUEMU_LOOKUP(object, SurfObject, surfObject, CUDA_ERROR_INVALID_VALUE);
  *pResDesc = object->resource;
  return CUDA_SUCCESS;
}

}  // namespace cuemu::impl
