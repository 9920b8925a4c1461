// Validation of strided copies (cuMemcpy2D/3D/3DPeer, array copies, batch copies, graph memcpy nodes).
#include "core/memory.h"

#include "core/memory_array.h"

#include <fmt/format.h>

namespace cuemu {
namespace {

// The largest pitch a copy accepts (CU_DEVICE_ATTRIBUTE_MAX_PITCH).
constexpr size_t kMaxPitch = 2147483647;

struct SideSpec {
  CUmemorytype type;
  const void* host;
  CUdeviceptr device;
  CUarray array;
  size_t x, y, z, pitch, height;
};

Expected<CopySide> resolveSide(const SideSpec& s, size_t width, size_t height, size_t depth, bool& pageable,
                               const char* which, bool write) {
  auto invalid = [which](std::string why) {
    return makeError(CUDA_ERROR_INVALID_VALUE, fmt::format("{}: {}", which, why));
  };
  if (s.type == CU_MEMORYTYPE_ARRAY) {
    auto found = lookup<Array>(s.array, CUDA_ERROR_INVALID_VALUE);
    if (!found) return found.takeError();
    const std::shared_ptr<Array>& array = *found;
    if (s.x % array->elementBytes() || width % array->elementBytes())
      return invalid("x offset and width must be whole elements");
    if (s.x > array->rowBytes() || width > array->rowBytes() - s.x || s.y > array->rows() ||
        height > array->rows() - s.y || s.z > array->slices() || depth > array->slices() - s.z)
      return invalid("the copy leaves the array");
    CopySide side;
    side.region = array->storage();
    side.pitch = array->rowBytes();
    side.slicePitch = array->sliceBytes();
    side.origin = array->data() + s.z * side.slicePitch + s.y * side.pitch + s.x;
    return side;
  }
  if (s.type != CU_MEMORYTYPE_HOST && s.type != CU_MEMORYTYPE_DEVICE && s.type != CU_MEMORYTYPE_UNIFIED)
    return invalid("unknown memory type");
  bool multiRow = height > 1 || depth > 1;
  if (s.pitch > kMaxPitch) return invalid("pitch exceeds the maximum");
  if (multiRow && s.pitch < s.x + width) return invalid("pitch is smaller than x + width");
  if (depth > 1 && s.height < s.y + height) return invalid("height is smaller than y + Height");
  size_t pitch = multiRow ? s.pitch : s.pitch ? s.pitch : width;
  size_t slicePitch = pitch * s.height;
  uint64_t base = s.type == CU_MEMORYTYPE_HOST ? reinterpret_cast<uint64_t>(s.host) : s.device;
  if (!base) return invalid("null pointer");
  uint64_t first = base + s.z * slicePitch + s.y * pitch + s.x;
  uint64_t extent = (depth - 1) * slicePitch + (height - 1) * pitch + width;
  CopySide side;
  if (s.type == CU_MEMORYTYPE_DEVICE) {
    auto region = deviceRange(first, extent, write, &side.continuation);
    if (!region) return region.takeError();
    side.region = *region;
  } else if (s.type == CU_MEMORYTYPE_UNIFIED) {
    auto region = anyRange(first, extent, write, &side.continuation);
    if (!region) return region.takeError();
    if (!*region) pageable = true;
    side.region = *region;
  } else {
    side.region = AddressSpace::instance().find(first);
    if (!side.region) pageable = true;
  }
  side.origin = reinterpret_cast<uint8_t*>(first);
  side.pitch = pitch;
  side.slicePitch = slicePitch;
  return side;
}

}  // namespace

Expected<PreparedCopy> prepareCopy(const CUDA_MEMCPY3D_PEER& c) {
  PreparedCopy prepared;
  prepared.widthBytes = c.WidthInBytes;
  prepared.height = c.Height;
  prepared.depth = c.Depth;
  if (!c.WidthInBytes || !c.Height || !c.Depth) {
    // Nothing to copy; the driver accepts empty copies.
    prepared.widthBytes = 0;
    return prepared;
  }
  if (c.srcLOD || c.dstLOD) return makeError(CUDA_ERROR_INVALID_VALUE, "LOD must be 0");
  SideSpec src{c.srcMemoryType, c.srcHost, c.srcDevice, c.srcArray, c.srcXInBytes,
               c.srcY,          c.srcZ,    c.srcPitch,  c.srcHeight};
  SideSpec dst{c.dstMemoryType, c.dstHost, c.dstDevice, c.dstArray, c.dstXInBytes,
               c.dstY,          c.dstZ,    c.dstPitch,  c.dstHeight};
  auto s = resolveSide(src, c.WidthInBytes, c.Height, c.Depth, prepared.touchesPageableHost, "source", false);
  if (!s) return s.takeError();
  auto d = resolveSide(dst, c.WidthInBytes, c.Height, c.Depth, prepared.touchesPageableHost, "destination", true);
  if (!d) return d.takeError();
  prepared.src = *s;
  prepared.dst = *d;
  return prepared;
}

CUDA_MEMCPY3D_PEER toPeerCopy(const CUDA_MEMCPY2D& c) {
  CUDA_MEMCPY3D_PEER p{};
  p.srcXInBytes = c.srcXInBytes;
  p.srcY = c.srcY;
  p.srcMemoryType = c.srcMemoryType;
  p.srcHost = c.srcHost;
  p.srcDevice = c.srcDevice;
  p.srcArray = c.srcArray;
  p.srcPitch = c.srcPitch;
  p.srcHeight = c.srcY + c.Height;
  p.dstXInBytes = c.dstXInBytes;
  p.dstY = c.dstY;
  p.dstMemoryType = c.dstMemoryType;
  p.dstHost = c.dstHost;
  p.dstDevice = c.dstDevice;
  p.dstArray = c.dstArray;
  p.dstPitch = c.dstPitch;
  p.dstHeight = c.dstY + c.Height;
  p.WidthInBytes = c.WidthInBytes;
  p.Height = c.Height;
  p.Depth = 1;
  return p;
}

CUDA_MEMCPY3D_PEER toPeerCopy(const CUDA_MEMCPY3D& c) {
  CUDA_MEMCPY3D_PEER p{};
  p.srcXInBytes = c.srcXInBytes;
  p.srcY = c.srcY;
  p.srcZ = c.srcZ;
  p.srcLOD = c.srcLOD;
  p.srcMemoryType = c.srcMemoryType;
  p.srcHost = c.srcHost;
  p.srcDevice = c.srcDevice;
  p.srcArray = c.srcArray;
  p.srcPitch = c.srcPitch;
  p.srcHeight = c.srcHeight;
  p.dstXInBytes = c.dstXInBytes;
  p.dstY = c.dstY;
  p.dstZ = c.dstZ;
  p.dstLOD = c.dstLOD;
  p.dstMemoryType = c.dstMemoryType;
  p.dstHost = c.dstHost;
  p.dstDevice = c.dstDevice;
  p.dstArray = c.dstArray;
  p.dstPitch = c.dstPitch;
  p.dstHeight = c.dstHeight;
  p.WidthInBytes = c.WidthInBytes;
  p.Height = c.Height;
  p.Depth = c.Depth;
  return p;
}

}  // namespace cuemu
