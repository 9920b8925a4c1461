// Texture and surface objects: what cuTexObjectCreate/cuSurfObjectCreate describe, and the texture unit that the
// interpreter's tex/tld4/suld/sust instructions reach through the launch's host services (addressing modes,
// point and linear filtering with the hardware's 8-bit weights, normalised coordinates, format conversion).
#pragma once

#include "api/cuda_internal.h"
#include "core/handle.h"
#include "core/result.h"

#include "ptx/exec.h"

#include <cstdint>
#include <memory>
#include <string>

namespace cuemu {

class Array;

// Where texels live: device memory (linear, pitch 2D) or an array; sizes in texels.
struct TexelStore {
  uint8_t* base = nullptr;
  size_t rowBytes = 0;  // pitch
  size_t sliceBytes = 0;
  size_t width = 0, height = 1, depth = 1;
  CUarray_format format = CU_AD_FORMAT_FLOAT;
  unsigned channels = 1;
  unsigned texelBytes = 4;
  std::shared_ptr<Array> array;  // keeps an array alive while the object uses it
};

class TexObject {
 public:
  static constexpr HandleKind kKind = HandleKind::TexObject;
  CUDA_RESOURCE_DESC resource{};
  CUDA_TEXTURE_DESC texture{};
  CUDA_RESOURCE_VIEW_DESC view{};
  bool hasView = false;
  TexelStore store;
  uint64_t handle = 0;

  // One tex/tld4 request: four 32-bit results, or false with a message.
  bool fetch(const ptx::exec::TextureRequest& request, uint32_t out[4], std::string& error) const;
  // The lanes `lanes` of a warp's tex/tld4 (all through this object): each lane's results into its registers, or
  // false with the lane that failed and a message.
  bool fetchLanes(const ptx::exec::TextureWarpRequest& request, uint32_t lanes, int& faultLane,
                  std::string& error) const;
};

class SurfObject {
 public:
  static constexpr HandleKind kKind = HandleKind::SurfObject;
  CUDA_RESOURCE_DESC resource{};
  TexelStore store;
  uint64_t handle = 0;

  bool access(const ptx::exec::SurfaceRequest& request, void* data, std::string& error) const;
};

// Texture and surface objects as a launch sees them. On NVIDIA's driver a kernel launched before the host destroys
// an object it uses still reads and writes through that object when it runs later (the NV12toBGRandResize sample
// destroys its objects right after an asynchronous launch), while host calls on the handle fail at once. A launch
// made from the host holds a view from when it is queued until it has run: objects destroyed meanwhile
// (retireTexObject / retireSurfObject) stay reachable through it, and only through it.
class TextureObjectsView {
 public:
  TextureObjectsView();
  ~TextureObjectsView();
  TextureObjectsView(const TextureObjectsView&) = delete;
  TextureObjectsView& operator=(const TextureObjectsView&) = delete;

  // The live object, else one destroyed after this view was made; null for any other handle.
  std::shared_ptr<const TexObject> texture(uint64_t handle) const;
  std::shared_ptr<const SurfObject> surface(uint64_t handle) const;

 private:
  uint64_t madeAt_;  // destroys counted so far
};

// cuTexObjectDestroy / cuSurfObjectDestroy: the object, already erased from its table, is kept while a view made
// before now is held.
void retireTexObject(std::shared_ptr<const TexObject> object);
void retireSurfObject(std::shared_ptr<const SurfObject> object);

// The texture fast path (TexObject's float 2D sampling; CUEMU_TEXTURE_FAST_PATH=0 turns it off): results are the
// same either way. setTextureFastPath overrides the environment (tests).
bool textureFastPathOn();
void setTextureFastPath(bool on);

// Validates a resource description and resolves where its texels are (CUDA_ERROR_INVALID_VALUE,
// CUDA_ERROR_INVALID_HANDLE for an unknown array).
Expected<TexelStore> resolveResource(const CUDA_RESOURCE_DESC& resource);

}  // namespace cuemu
