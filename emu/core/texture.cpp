#include "core/texture.h"

#include "core/memory_array.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstdlib>
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

std::atomic<int> g_textureFastPath{-1};  // -1: not read yet (CUEMU_TEXTURE_FAST_PATH)

}  // namespace

void setTextureFastPath(bool on) { g_textureFastPath.store(on, std::memory_order_relaxed); }

bool textureFastPathOn() {
  int state = g_textureFastPath.load(std::memory_order_relaxed);
  if (state < 0) [[unlikely]] {
    const char* value = std::getenv("CUEMU_TEXTURE_FAST_PATH");
    state = !value || std::strcmp(value, "0") != 0;
    g_textureFastPath.store(state, std::memory_order_relaxed);
  }
  return state;
}

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

namespace {

// What a fetch needs from the object and from the instruction's shape (geometry, coordinate and result types,
// gather), worked out once for all the lanes of a warp that fetch through one object (TexObject::fetchLanes), then
// applied to each lane's coordinates.
class TexSampler {
 public:
  TexSampler(const TexObject& object, const ptx::exec::TextureRequest& shape) : o_(object), store_(object.store) {
    using ptx::exec::TexGeometry;
    result_ = shape.result;
    gather_ = shape.gather;
    floatCoords_ = shape.floatCoords;
    readAsInteger_ = (o_.texture.flags & CU_TRSF_READ_AS_INTEGER) || shape.result != ptx::exec::TexResult::F32;
    normalizedFloat_ = !readAsInteger_ && isNormalizable(store_.format);
    floatTexels_ =
        !readAsInteger_ && store_.format != CU_AD_FORMAT_UNSIGNED_INT32 && store_.format != CU_AD_FORMAT_SIGNED_INT32;
    normalizedCoords_ = (o_.texture.flags & CU_TRSF_NORMALIZED_COORDINATES) != 0;
    dims_ = shape.geometry == TexGeometry::D1 || shape.geometry == TexGeometry::A1D ? 1
            : shape.geometry == TexGeometry::D3                                     ? 3
                                                                                    : 2;
    layered_ = shape.geometry == TexGeometry::A1D || shape.geometry == TexGeometry::A2D;
    sizes_[0] = long(store_.width);
    sizes_[1] = long(store_.height);
    sizes_[2] = long(store_.depth);
    isLinearMemory_ = o_.resource.resType == CU_RESOURCE_TYPE_LINEAR;
    linearFilter_ = o_.texture.filterMode == CU_TR_FILTER_MODE_LINEAR && !readAsInteger_ &&
                    store_.format != CU_AD_FORMAT_UNSIGNED_INT32 && store_.format != CU_AD_FORMAT_SIGNED_INT32;
    channelBytes_ = store_.texelBytes / store_.channels;
    fast2D_ = textureFastPathOn() && dims_ == 2 && floatCoords_ && gather_ < 0;
    for (unsigned ch = 0; ch < 4; ++ch) {
      float b = isLinearMemory_ ? 0.0f : quantizedBorder(o_.texture.borderColor[ch], store_.format, normalizedFloat_);
      border_[ch] = {b, readAsInteger_ ? uint32_t(b) : std::bit_cast<uint32_t>(b)};
      float missing = ch == 3 ? 1.0f : 0.0f;  // channels the format lacks read as (0, 0, 1) for alpha
      missing_[ch] = {missing, readAsInteger_ ? uint32_t(missing) : std::bit_cast<uint32_t>(missing)};
    }
  }

  void sample(const float coordsIn[3], const int32_t icoords[3], int32_t layerIn, uint32_t out[4]) const {
    long layer = layered_ ? std::clamp<long>(layerIn, 0, long(store_.depth) - 1) : 0;  // layers: the depth
    if (fast2D_ && sample2D(coordsIn[0], coordsIn[1], layer, out)) return;
    if (!floatCoords_) {  // integer texel coordinates: no filtering, no normalisation
      long at[3] = {icoords[0], icoords[1], icoords[2]};
      Channel c[4];
      texel(at, layer, c);
      store4(c, out);
      return;
    }
    float coords[3] = {coordsIn[0], coordsIn[1], coordsIn[2]};
    for (unsigned d = 0; d < dims_; ++d)
      if (normalizedCoords_) coords[d] *= float(sizes_[d]);
    if (gather_ >= 0) {  // tld4: the chosen component of the 2x2 footprint, in the hardware's order
      long i0 = long(std::floor(coords[0] - 0.5f)), j0 = long(std::floor(coords[1] - 0.5f));
      const long corners[4][2] = {{i0, j0 + 1}, {i0 + 1, j0 + 1}, {i0 + 1, j0}, {i0, j0}};
      Channel gathered[4];
      for (unsigned k = 0; k < 4; ++k) {
        long at[3] = {corners[k][0], corners[k][1], 0};
        Channel c[4];
        texel(at, layer, c);
        gathered[k] = c[gather_];
      }
      store4(gathered, out);
      return;
    }
    if (!linearFilter_) {
      long at[3] = {0, 0, 0};
      for (unsigned d = 0; d < dims_; ++d) at[d] = long(std::floor(coords[d]));
      Channel c[4];
      texel(at, layer, c);
      store4(c, out);
      return;
    }
    // Linear filtering: weights in 1.8 fixed point, as the texture unit computes them.
    long base[3] = {0, 0, 0};
    float weight[3] = {0, 0, 0};
    for (unsigned d = 0; d < dims_; ++d) {
      float u = coords[d] - 0.5f;
      float fl = std::floor(u);
      base[d] = long(fl);
      weight[d] = std::round((u - fl) * 256.0f) / 256.0f;
    }
    float acc[4] = {0, 0, 0, 0};
    unsigned corners = 1u << dims_;
    for (unsigned k = 0; k < corners; ++k) {
      long at[3] = {0, 0, 0};
      float w = 1.0f;
      for (unsigned d = 0; d < dims_; ++d) {
        bool high = (k >> d) & 1;
        at[d] = base[d] + (high ? 1 : 0);
        w *= high ? weight[d] : 1.0f - weight[d];
      }
      Channel c[4];
      texel(at, layer, c);
      for (unsigned ch = 0; ch < 4; ++ch) acc[ch] += w * c[ch].f;
    }
    for (unsigned ch = 0; ch < 4; ++ch) out[ch] = std::bit_cast<uint32_t>(acc[ch]);
  }

 private:
  // The fast path (CUEMU_TEXTURE_FAST_PATH=0 turns it off) for what most programs fetch: 2D (or 2D layered)
  // textures at float coordinates, point or linear. The arithmetic is sample()'s, step for step, with each axis
  // addressed once instead of once per corner, floor and round done inline, and float texels read without
  // conversion; coordinates it cannot take (not finite, beyond 2^52 texels) go the general way (false).
  // TextureTest.FastPathSamplesAsTheGeneralPath compares the two over formats, filters, address modes and edges.
  bool sample2D(float x, float y, long layer, uint32_t out[4]) const {
    if (normalizedCoords_) {
      x *= float(sizes_[0]);
      y *= float(sizes_[1]);
    }
    constexpr float kLimit = 4503599627370496.0f;  // 2^52: floor() fits a long, and so does the corner after it
    if (!(std::fabs(x) < kLimit && std::fabs(y) < kLimit)) return false;
    auto floorOf = [](float v) {
      long t = long(v);
      return float(t) > v ? t - 1 : t;
    };
    auto axis = [&](long i, unsigned d) {
      long size = sizes_[d];
      return isLinearMemory_ ? (i >= 0 && i < size ? i : -1)
                             : addressTexel(i, size, o_.texture.addressMode[d], normalizedCoords_);
    };
    const uint8_t* slice = store_.base + size_t(layer) * store_.sliceBytes;
    const unsigned channels = store_.channels;
    const bool floatTexels = store_.format == CU_AD_FORMAT_FLOAT;
    // texel (i, j)'s channels (both indices already addressed; -1: the border)
    auto texel = [&](long i, long j, Channel c[4]) {
      if (i < 0 || j < 0) {
        std::copy(border_, border_ + 4, c);
        return;
      }
      const uint8_t* p = slice + size_t(j) * store_.rowBytes + size_t(i) * store_.texelBytes;
      for (unsigned ch = 0; ch < 4; ++ch) {
        if (ch >= channels) {
          c[ch] = missing_[ch];
        } else if (floatTexels) {
          std::memcpy(&c[ch].f, p + ch * 4, 4);
          c[ch].bits = std::bit_cast<uint32_t>(c[ch].f);
        } else {
          c[ch] = readChannel(p + ch * channelBytes_, store_.format, normalizedFloat_);
        }
      }
    };
    Channel c[4];
    if (!linearFilter_) {
      texel(axis(floorOf(x), 0), axis(floorOf(y), 1), c);
      store4(c, out);
      return true;
    }
    // weights in 1.8 fixed point: round((u - floor(u)) * 256) / 256, the fraction's product in [0, 256)
    auto weight = [](float u, long fl) {
      float r = (u - float(fl)) * 256.0f;
      long t = long(r);
      return (float(t) + (r - float(t) >= 0.5f ? 1.0f : 0.0f)) / 256.0f;
    };
    float u = x - 0.5f, v = y - 0.5f;
    long bx = floorOf(u), by = floorOf(v);
    float a = weight(u, bx), b = weight(v, by);
    long x0 = axis(bx, 0), x1 = axis(bx + 1, 0), y0 = axis(by, 1), y1 = axis(by + 1, 1);
    float acc[4] = {0, 0, 0, 0};
    const long corners[4][2] = {{x0, y0}, {x1, y0}, {x0, y1}, {x1, y1}};
    const float weights[4] = {1.0f - a, a, 1.0f - a, a};
    const float weightsY[4] = {1.0f - b, 1.0f - b, b, b};
    for (unsigned k = 0; k < 4; ++k) {
      texel(corners[k][0], corners[k][1], c);
      float w = weights[k] * weightsY[k];
      for (unsigned ch = 0; ch < 4; ++ch) acc[ch] += w * c[ch].f;
    }
    for (unsigned ch = 0; ch < 4; ++ch) out[ch] = std::bit_cast<uint32_t>(acc[ch]);
    return true;
  }

  // Texel (i, j, k) as four channels; outside the texture: the border colour (or zero for linear memory).
  void texel(const long at[3], long layer, Channel c[4]) const {
    long idx[3] = {0, 0, 0};
    for (unsigned d = 0; d < dims_; ++d) {
      long size = sizes_[d];
      idx[d] = isLinearMemory_ ? (at[d] >= 0 && at[d] < size ? at[d] : -1)
                               : addressTexel(at[d], size, o_.texture.addressMode[d], normalizedCoords_);
      if (idx[d] < 0) {
        std::copy(border_, border_ + 4, c);
        return;
      }
    }
    long row = dims_ >= 2 ? idx[1] : 0;
    long slice = dims_ == 3 ? idx[2] : layer;
    const uint8_t* p = store_.base + size_t(slice) * store_.sliceBytes + size_t(row) * store_.rowBytes +
                       size_t(idx[0]) * store_.texelBytes;
    for (unsigned ch = 0; ch < 4; ++ch)
      c[ch] =
          ch < store_.channels ? readChannel(p + ch * channelBytes_, store_.format, normalizedFloat_) : missing_[ch];
  }

  // Float texels (float and half formats, 8- and 16-bit integers read as normalised floats) give the converted
  // value; integer texels give their integer, also to a `.f32` instruction: an H100 returns the raw bits of a 32-bit
  // integer texel, and of any integer texel read with CU_TRSF_READ_AS_INTEGER (conformance
  // api.texture.LinearResourceFilterModes).
  void store4(const Channel c[4], uint32_t out[4]) const {
    for (unsigned ch = 0; ch < 4; ++ch) out[ch] = floatTexels_ ? std::bit_cast<uint32_t>(c[ch].f) : c[ch].bits;
  }

  const TexObject& o_;
  const TexelStore& store_;
  ptx::exec::TexResult result_;
  int gather_;
  bool floatCoords_, readAsInteger_, normalizedFloat_, normalizedCoords_, layered_, isLinearMemory_, linearFilter_;
  bool fast2D_;       // sample2D applies
  bool floatTexels_;  // store4 writes the converted value (else the texel's integer)
  unsigned dims_, channelBytes_;
  long sizes_[3];
  Channel border_[4], missing_[4];
};

// A cubemap fetch: the face becomes a layer of a 2D layered fetch at normalised face coordinates (faces are slices
// 6 * layer + face of the array); addressing clamps to the face.
bool fetchCube(const TexObject& object, const ptx::exec::TextureRequest& request, uint32_t out[4], std::string& error) {
  using ptx::exec::TexGeometry;
  if (!request.floatCoords || request.gather >= 0) {
    error = "cubemap textures take float coordinates and no gather";
    return false;
  }
  CubeFace f = cubeFace(request.coords[0], request.coords[1], request.coords[2]);
  long layers = std::max<long>(long(object.store.depth) / 6, 1);
  long layer = request.geometry == TexGeometry::ACube ? std::clamp<long>(request.layer, 0, layers - 1) : 0;
  ptx::exec::TextureRequest face = request;
  face.geometry = TexGeometry::A2D;
  face.layer = int32_t(layer * 6 + f.face);
  face.coords[0] = f.s;
  face.coords[1] = f.t;
  TexObject onFace = object;
  onFace.texture.flags |= CU_TRSF_NORMALIZED_COORDINATES;
  onFace.texture.addressMode[0] = onFace.texture.addressMode[1] = CU_TR_ADDRESS_MODE_CLAMP;
  return onFace.fetch(face, out, error);
}

bool isCube(ptx::exec::TexGeometry g) {
  return g == ptx::exec::TexGeometry::Cube || g == ptx::exec::TexGeometry::ACube;
}

}  // namespace

bool TexObject::fetch(const ptx::exec::TextureRequest& request, uint32_t out[4], std::string& error) const {
  if (isCube(request.geometry)) return fetchCube(*this, request, out, error);
  TexSampler(*this, request).sample(request.coords, request.icoords, request.layer, out);
  return true;
}

bool TexObject::fetchLanes(const ptx::exec::TextureWarpRequest& request, uint32_t lanes, int& faultLane,
                           std::string& error) const {
  if (isCube(request.shape.geometry)) {  // rare: lane by lane
    for (uint32_t m = lanes; m; m &= m - 1) {
      int lane = std::countr_zero(m);
      ptx::exec::TextureRequest one = request.lane(lane);
      uint32_t out[4];
      if (!fetchCube(*this, one, out, error)) {
        faultLane = lane;
        return false;
      }
      request.store(lane, out);
    }
    return true;
  }
  const TexSampler sampler(*this, request.shape);
  for (uint32_t m = lanes; m; m &= m - 1) {
    int lane = std::countr_zero(m);
    const ptx::exec::TextureRequest one = request.lane(lane);
    uint32_t out[4];
    sampler.sample(one.coords, one.icoords, one.layer, out);
    request.store(lane, out);
  }
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
