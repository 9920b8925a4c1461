#include "core/texture.h"

#include "core/memory_array.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <mutex>
#include <set>
#include <vector>

namespace cuemu {

namespace {

// Objects destroyed while views made before their destroy are held, and the views held (by when they were made).
struct Retired {
  std::mutex mutex;
  uint64_t destroys = 0;
  std::multiset<uint64_t> views;
  struct Entry {
    uint64_t destroyedAt;  // `destroys` after this one
    uint64_t handle;
    std::shared_ptr<const TexObject> texture;
    std::shared_ptr<const SurfObject> surface;
  };
  std::vector<Entry> entries;

  static Retired& instance() {
    static auto* retired = new Retired;
    return *retired;
  }
  void add(Entry entry) {
    Entry unneeded;  // dies after the lock is released
    std::lock_guard lock(mutex);
    entry.destroyedAt = ++destroys;
    if (!views.empty() && *views.begin() < entry.destroyedAt)
      entries.push_back(std::move(entry));
    else
      unneeded = std::move(entry);
  }
  const Entry* find(uint64_t handle, uint64_t madeAt) const {
    for (const Entry& e : entries)
      if (e.handle == handle && e.destroyedAt > madeAt) return &e;
    return nullptr;
  }
};

}  // namespace

TextureObjectsView::TextureObjectsView() {
  Retired& r = Retired::instance();
  std::lock_guard lock(r.mutex);
  madeAt_ = r.destroys;
  r.views.insert(madeAt_);
}

TextureObjectsView::~TextureObjectsView() {
  Retired& r = Retired::instance();
  std::vector<Retired::Entry> dropped;  // objects die outside the lock (an array's release may take others)
  std::lock_guard lock(r.mutex);
  r.views.erase(r.views.find(madeAt_));
  uint64_t oldest = r.views.empty() ? r.destroys : *r.views.begin();
  auto unneeded = [oldest](const Retired::Entry& e) { return e.destroyedAt <= oldest; };
  for (Retired::Entry& e : r.entries)
    if (unneeded(e)) dropped.push_back(std::move(e));
  std::erase_if(r.entries, [&](const Retired::Entry& e) { return !e.texture && !e.surface; });
}

std::shared_ptr<const TexObject> TextureObjectsView::texture(uint64_t handle) const {
  if (auto live = handleTable<TexObject>().find(handle)) return live;
  Retired& r = Retired::instance();
  std::lock_guard lock(r.mutex);
  const Retired::Entry* e = r.find(handle, madeAt_);
  return e ? e->texture : nullptr;
}

std::shared_ptr<const SurfObject> TextureObjectsView::surface(uint64_t handle) const {
  if (auto live = handleTable<SurfObject>().find(handle)) return live;
  Retired& r = Retired::instance();
  std::lock_guard lock(r.mutex);
  const Retired::Entry* e = r.find(handle, madeAt_);
  return e ? e->surface : nullptr;
}

void retireTexObject(std::shared_ptr<const TexObject> object) {
  uint64_t handle = object->handle;
  Retired::instance().add({0, handle, std::move(object), nullptr});
}

void retireSurfObject(std::shared_ptr<const SurfObject> object) {
  uint64_t handle = object->handle;
  Retired::instance().add({0, handle, nullptr, std::move(object)});
}

namespace {

bool validChannels(unsigned channels) { return channels == 1 || channels == 2 || channels == 4; }

float halfToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16, exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  uint32_t bits;
  if (exponent == 0) {
    if (mantissa == 0) {
      bits = sign;
    } else {  // subnormal: normalise
      int e = -1;
      do {
        ++e;
        mantissa <<= 1;
      } while (!(mantissa & 0x400));
      bits = sign | uint32_t(127 - 15 - e) << 23 | (mantissa & 0x3ff) << 13;
    }
  } else if (exponent == 31) {
    bits = sign | 0x7f800000u | mantissa << 13;
  } else {
    bits = sign | (exponent + 127 - 15) << 23 | mantissa << 13;
  }
  return std::bit_cast<float>(bits);
}

// One channel of a texel as the texture unit returns it: as float (normalised for 8/16-bit integers unless read
// as integers) or as the raw integer bits.
struct Channel {
  float f;
  uint32_t bits;
};

Channel readChannel(const uint8_t* p, CUarray_format format, bool normalizedFloat) {
  switch (format) {
    case CU_AD_FORMAT_UNSIGNED_INT8: {
      uint8_t v = *p;
      return {normalizedFloat ? v / 255.0f : float(v), v};
    }
    case CU_AD_FORMAT_SIGNED_INT8: {
      int8_t v = static_cast<int8_t>(*p);
      return {normalizedFloat ? std::max(v / 127.0f, -1.0f) : float(v), uint32_t(int32_t(v))};
    }
    case CU_AD_FORMAT_UNSIGNED_INT16: {
      uint16_t v;
      std::memcpy(&v, p, 2);
      return {normalizedFloat ? v / 65535.0f : float(v), v};
    }
    case CU_AD_FORMAT_SIGNED_INT16: {
      int16_t v;
      std::memcpy(&v, p, 2);
      return {normalizedFloat ? std::max(v / 32767.0f, -1.0f) : float(v), uint32_t(int32_t(v))};
    }
    case CU_AD_FORMAT_UNSIGNED_INT32: {
      uint32_t v;
      std::memcpy(&v, p, 4);
      return {float(v), v};
    }
    case CU_AD_FORMAT_SIGNED_INT32: {
      int32_t v;
      std::memcpy(&v, p, 4);
      return {float(v), uint32_t(v)};
    }
    case CU_AD_FORMAT_HALF: {
      uint16_t v;
      std::memcpy(&v, p, 2);
      float f = halfToFloat(v);
      return {f, std::bit_cast<uint32_t>(f)};
    }
    default: {  // CU_AD_FORMAT_FLOAT
      float f;
      std::memcpy(&f, p, 4);
      return {f, std::bit_cast<uint32_t>(f)};
    }
  }
}

bool isNormalizable(CUarray_format format) {
  return format == CU_AD_FORMAT_UNSIGNED_INT8 || format == CU_AD_FORMAT_SIGNED_INT8 ||
         format == CU_AD_FORMAT_UNSIGNED_INT16 || format == CU_AD_FORMAT_SIGNED_INT16;
}

// The border colour as the texture unit returns it for normalised integer formats: rounded to the format's
// precision (0.25 reads back as 64/255 from an 8-bit texture, measured on an H200).
float quantizedBorder(float value, CUarray_format format, bool normalizedFloat) {
  if (!normalizedFloat) return value;
  float scale = format == CU_AD_FORMAT_UNSIGNED_INT8    ? 255.0f
                : format == CU_AD_FORMAT_SIGNED_INT8    ? 127.0f
                : format == CU_AD_FORMAT_UNSIGNED_INT16 ? 65535.0f
                                                        : 32767.0f;
  bool isSigned = format == CU_AD_FORMAT_SIGNED_INT8 || format == CU_AD_FORMAT_SIGNED_INT16;
  float clamped = std::clamp(value, isSigned ? -1.0f : 0.0f, 1.0f);
  return std::nearbyint(clamped * scale) / scale;
}

// Applies an address mode to an integer texel coordinate; -1 means "outside" (border colour).
long addressTexel(long i, long size, CUaddress_mode mode, bool normalized) {
  if (i >= 0 && i < size) return i;
  // Wrap and mirror need normalised coordinates; otherwise the hardware clamps.
  if (!normalized && (mode == CU_TR_ADDRESS_MODE_WRAP || mode == CU_TR_ADDRESS_MODE_MIRROR))
    mode = CU_TR_ADDRESS_MODE_CLAMP;
  switch (mode) {
    case CU_TR_ADDRESS_MODE_WRAP: return ((i % size) + size) % size;
    case CU_TR_ADDRESS_MODE_MIRROR: {
      long period = 2 * size;
      long m = ((i % period) + period) % period;
      return m < size ? m : period - 1 - m;
    }
    case CU_TR_ADDRESS_MODE_BORDER: return -1;
    default: return std::clamp(i, 0L, size - 1);
  }
}

}  // namespace

Expected<TexelStore> resolveResource(const CUDA_RESOURCE_DESC& resource) {
  TexelStore store;
  switch (resource.resType) {
    case CU_RESOURCE_TYPE_ARRAY: {
      auto found = lookup<Array>(resource.res.array.hArray);
      if (!found) return found.takeError();
      const std::shared_ptr<Array>& array = *found;
      const CUDA_ARRAY3D_DESCRIPTOR& d = array->descriptor();
      store.base = array->data();
      store.rowBytes = array->rowBytes();
      store.sliceBytes = array->sliceBytes();
      store.width = d.Width;
      store.height = std::max<size_t>(d.Height, 1);
      store.depth = std::max<size_t>(d.Depth, 1);
      store.format = d.Format;
      store.channels = d.NumChannels;
      store.texelBytes = array->elementBytes();
      store.array = array;
      return store;
    }
    case CU_RESOURCE_TYPE_MIPMAPPED_ARRAY: {
      auto found = lookup<MipmappedArray>(resource.res.mipmap.hMipmappedArray);
      if (!found) return found.takeError();
      const std::shared_ptr<MipmappedArray>& mipmapped = *found;
      CUDA_RESOURCE_DESC level0{};
      level0.resType = CU_RESOURCE_TYPE_ARRAY;
      level0.res.array.hArray = mipmapped->level(0)->apiHandle();
      return resolveResource(level0);  // cuemu samples the base level
    }
    case CU_RESOURCE_TYPE_LINEAR: {
      const auto& l = resource.res.linear;
      unsigned channelBytes = formatChannelBytes(l.format);
      if (!l.devPtr || !channelBytes || !validChannels(l.numChannels) || l.sizeInBytes == 0)
        return makeError(CUDA_ERROR_INVALID_VALUE, "bad linear resource");
      if (l.devPtr % 512) return makeError(CUDA_ERROR_INVALID_VALUE, "linear texture memory must be 512-byte aligned");
      store.base = reinterpret_cast<uint8_t*>(l.devPtr);
      store.format = l.format;
      store.channels = l.numChannels;
      store.texelBytes = channelBytes * l.numChannels;
      store.width = l.sizeInBytes / store.texelBytes;
      store.rowBytes = store.sliceBytes = l.sizeInBytes;
      return store;
    }
    case CU_RESOURCE_TYPE_PITCH2D: {
      const auto& p = resource.res.pitch2D;
      unsigned channelBytes = formatChannelBytes(p.format);
      if (!p.devPtr || !channelBytes || !validChannels(p.numChannels) || p.width == 0 || p.height == 0)
        return makeError(CUDA_ERROR_INVALID_VALUE, "bad pitch-2D resource");
      store.texelBytes = channelBytes * p.numChannels;
      if (p.devPtr % 512 || p.pitchInBytes % 32 || p.pitchInBytes < p.width * store.texelBytes)
        return makeError(CUDA_ERROR_INVALID_VALUE, "pitch-2D memory must be 512-byte aligned with a 32-byte pitch");
      store.base = reinterpret_cast<uint8_t*>(p.devPtr);
      store.format = p.format;
      store.channels = p.numChannels;
      store.width = p.width;
      store.height = p.height;
      store.rowBytes = p.pitchInBytes;
      store.sliceBytes = p.pitchInBytes * p.height;
      return store;
    }
    default: return makeError(CUDA_ERROR_INVALID_VALUE, "unknown resource type");
  }
}

namespace {

// A cubemap direction as a face and face coordinates in [0, 1] (the programming guide's cubemap table). Where
// components tie, z wins over y and y over x (measured on an H100: directions on the edges and corners).
struct CubeFace {
  int face;
  float s, t;
};

CubeFace cubeFace(float x, float y, float z) {
  float ax = std::fabs(x), ay = std::fabs(y), az = std::fabs(z);
  float major, sc, tc;
  int face;
  if (az >= ax && az >= ay) {
    face = z >= 0 ? 4 : 5;
    major = az;
    sc = z >= 0 ? x : -x;
    tc = -y;
  } else if (ay >= ax) {
    face = y >= 0 ? 2 : 3;
    major = ay;
    sc = x;
    tc = y >= 0 ? z : -z;
  } else {
    face = x >= 0 ? 0 : 1;
    major = ax;
    sc = x >= 0 ? -z : z;
    tc = -y;
  }
  return {face, (sc / major + 1) / 2, (tc / major + 1) / 2};
}

}  // namespace

bool TexObject::fetch(const ptx::exec::TextureRequest& request, uint32_t out[4], std::string& error) const {
  using ptx::exec::TexGeometry;
  if (request.geometry == TexGeometry::Cube || request.geometry == TexGeometry::ACube) {
    if (!request.floatCoords || request.gather >= 0) {
      error = "cubemap textures take float coordinates and no gather";
      return false;
    }
    // The face becomes a layer of a 2D layered fetch at normalised face coordinates (faces are slices
    // 6 * layer + face of the array); addressing clamps to the face.
    CubeFace f = cubeFace(request.coords[0], request.coords[1], request.coords[2]);
    long layers = std::max<long>(long(store.depth) / 6, 1);
    long layer = request.geometry == TexGeometry::ACube ? std::clamp<long>(request.layer, 0, layers - 1) : 0;
    ptx::exec::TextureRequest face = request;
    face.geometry = TexGeometry::A2D;
    face.layer = int32_t(layer * 6 + f.face);
    face.coords[0] = f.s;
    face.coords[1] = f.t;
    TexObject onFace = *this;
    onFace.texture.flags |= CU_TRSF_NORMALIZED_COORDINATES;
    onFace.texture.addressMode[0] = onFace.texture.addressMode[1] = CU_TR_ADDRESS_MODE_CLAMP;
    return onFace.fetch(face, out, error);
  }
  bool readAsInteger = (texture.flags & CU_TRSF_READ_AS_INTEGER) || request.result != ptx::exec::TexResult::F32;
  bool normalizedFloat = !readAsInteger && isNormalizable(store.format);
  bool normalizedCoords = (texture.flags & CU_TRSF_NORMALIZED_COORDINATES) != 0;
  unsigned dims = request.geometry == TexGeometry::D1 || request.geometry == TexGeometry::A1D ? 1
                  : request.geometry == TexGeometry::D3                                       ? 3
                                                                                              : 2;
  bool layered = request.geometry == TexGeometry::A1D || request.geometry == TexGeometry::A2D;
  long sizes[3] = {long(store.width), long(store.height), long(store.depth)};
  long layer = 0;
  if (layered) layer = std::clamp<long>(request.layer, 0, long(store.depth) - 1);  // layers are the array's depth
  const bool isLinearMemory = resource.resType == CU_RESOURCE_TYPE_LINEAR;

  // Texel (i, j, k) as four channels; outside the texture: the border colour (or zero for linear memory).
  auto texel = [&](const long at[3], Channel c[4]) {
    long idx[3] = {0, 0, 0};
    bool border = false;
    for (unsigned d = 0; d < 3; ++d) {
      if (d >= dims) continue;
      long size = sizes[d];
      idx[d] = isLinearMemory ? (at[d] >= 0 && at[d] < size ? at[d] : -1)
                              : addressTexel(at[d], size, texture.addressMode[d], normalizedCoords);
      if (idx[d] < 0) border = true;
    }
    if (border) {
      for (unsigned ch = 0; ch < 4; ++ch) {
        float b = isLinearMemory ? 0.0f : quantizedBorder(texture.borderColor[ch], store.format, normalizedFloat);
        c[ch] = {b, readAsInteger ? uint32_t(b) : std::bit_cast<uint32_t>(b)};
      }
      return;
    }
    long row = dims >= 2 ? idx[1] : 0;
    long slice = dims == 3 ? idx[2] : layered ? layer : 0;
    const uint8_t* p = store.base + size_t(slice) * store.sliceBytes + size_t(row) * store.rowBytes +
                       size_t(idx[0]) * store.texelBytes;
    unsigned channelBytes = store.texelBytes / store.channels;
    for (unsigned ch = 0; ch < 4; ++ch) {
      if (ch < store.channels) {
        c[ch] = readChannel(p + ch * channelBytes, store.format, normalizedFloat);
      } else {  // missing channels read as (0, 0, 1) for alpha
        float v = ch == 3 ? 1.0f : 0.0f;
        c[ch] = {v, readAsInteger ? uint32_t(v) : std::bit_cast<uint32_t>(v)};
      }
    }
  };

  // Float results carry the converted value, integer results the texel's integer.
  auto store4 = [&](const Channel c[4]) {
    for (unsigned ch = 0; ch < 4; ++ch)
      out[ch] = request.result == ptx::exec::TexResult::F32 ? std::bit_cast<uint32_t>(c[ch].f) : c[ch].bits;
  };

  if (!request.floatCoords) {  // integer texel coordinates: no filtering, no normalisation
    long at[3] = {request.icoords[0], request.icoords[1], request.icoords[2]};
    Channel c[4];
    texel(at, c);
    store4(c);
    return true;
  }

  float coords[3] = {request.coords[0], request.coords[1], request.coords[2]};
  for (unsigned d = 0; d < dims; ++d)
    if (normalizedCoords) coords[d] *= float(sizes[d]);

  bool linearFilter = texture.filterMode == CU_TR_FILTER_MODE_LINEAR && !readAsInteger &&
                      store.format != CU_AD_FORMAT_UNSIGNED_INT32 && store.format != CU_AD_FORMAT_SIGNED_INT32;
  if (request.gather >= 0) {  // tld4: the chosen component of the 2x2 footprint, in the hardware's order
    long i0 = long(std::floor(coords[0] - 0.5f)), j0 = long(std::floor(coords[1] - 0.5f));
    const long corners[4][2] = {{i0, j0 + 1}, {i0 + 1, j0 + 1}, {i0 + 1, j0}, {i0, j0}};
    Channel gathered[4];
    for (unsigned k = 0; k < 4; ++k) {
      long at[3] = {corners[k][0], corners[k][1], 0};
      Channel c[4];
      texel(at, c);
      gathered[k] = c[request.gather];
    }
    store4(gathered);
    return true;
  }
  if (!linearFilter) {
    long at[3] = {0, 0, 0};
    for (unsigned d = 0; d < dims; ++d) at[d] = long(std::floor(coords[d]));
    Channel c[4];
    texel(at, c);
    store4(c);
    return true;
  }
  // Linear filtering: weights in 1.8 fixed point, as the texture unit computes them.
  long base[3] = {0, 0, 0};
  float weight[3] = {0, 0, 0};
  for (unsigned d = 0; d < dims; ++d) {
    float u = coords[d] - 0.5f;
    float fl = std::floor(u);
    base[d] = long(fl);
    weight[d] = std::round((u - fl) * 256.0f) / 256.0f;
  }
  float acc[4] = {0, 0, 0, 0};
  unsigned corners = 1u << dims;
  for (unsigned k = 0; k < corners; ++k) {
    long at[3] = {0, 0, 0};
    float w = 1.0f;
    for (unsigned d = 0; d < dims; ++d) {
      bool high = (k >> d) & 1;
      at[d] = base[d] + (high ? 1 : 0);
      w *= high ? weight[d] : 1.0f - weight[d];
    }
    Channel c[4];
    texel(at, c);
    for (unsigned ch = 0; ch < 4; ++ch) acc[ch] += w * c[ch].f;
  }
  for (unsigned ch = 0; ch < 4; ++ch) out[ch] = std::bit_cast<uint32_t>(acc[ch]);
  return true;
}

bool SurfObject::access(const ptx::exec::SurfaceRequest& request, void* data, std::string& error) const {
  using ptx::exec::SurfClamp;
  using ptx::exec::TexGeometry;
  // x is in bytes; layers of layered arrays are their slices (the array's depth).
  bool oneD = request.geometry == TexGeometry::D1 || request.geometry == TexGeometry::A1D;
  bool hasZ = request.geometry == TexGeometry::D3 || request.geometry == TexGeometry::A1D ||
              request.geometry == TexGeometry::A2D;
  long width = long(store.width) * store.texelBytes;
  long height = long(store.height), depth = long(store.depth);
  long x = request.x, y = oneD ? 0 : request.y, z = hasZ ? request.z : 0;
  bool inside = x >= 0 && x + long(request.bytes) <= width && y >= 0 && y < height && z >= 0 && z < depth;
  if (!inside) {
    switch (request.clamp) {
      case SurfClamp::Trap: error = "coordinates outside the surface"; return false;
      case SurfClamp::Zero:
        if (!request.store) std::memset(data, 0, request.bytes);
        return true;
      case SurfClamp::Clamp:
        x = std::clamp<long>(x, 0, width - long(request.bytes));
        y = std::clamp<long>(y, 0, height - 1);
        z = std::clamp<long>(z, 0, depth - 1);
        break;
    }
  }
  uint8_t* p = store.base + size_t(z) * store.sliceBytes + size_t(y) * store.rowBytes + size_t(x);
  if (request.store)
    std::memcpy(p, data, request.bytes);
  else
    std::memcpy(data, p, request.bytes);
  return true;
}

}  // namespace cuemu
