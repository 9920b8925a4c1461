// tex, tld4, suld.b and sust.b: per lane, the operands are gathered into a request that the host (the driver,
// which owns texture and surface objects) answers. Filtering, addressing and formats live in the driver.
#include "exec/texture.h"

#include "exec/handlers.h"

#include <bit>
#include <cstring>

namespace ptx::exec {

bool HostServices::textureFetch(const TextureRequest&, uint32_t*, std::string& error) {
  error = "textures are not available without a driver";
  return false;
}

bool HostServices::surfaceAccess(const SurfaceRequest&, void*, std::string& error) {
  error = "surfaces are not available without a driver";
  return false;
}

namespace tex {
namespace {

using h::R;

// Coordinates of lane `lane`: for layered geometries the first coordinate register is the layer (an integer).
void coordinates(Warp& w, const TextureSite& site, int lane, float f[3], int32_t i[3], int32_t& layer) {
  unsigned k = 0;
  layer = 0;
  if (site.layered) layer = R<int32_t>(w, site.coords[k++])[lane];
  for (unsigned c = 0; k < site.coordCount && c < 3; ++k, ++c) {
    uint32_t bits = R<uint32_t>(w, site.coords[k])[lane];
    f[c] = std::bit_cast<float>(bits);
    i[c] = static_cast<int32_t>(bits);
  }
}

}  // namespace

const Op* fetch(Warp& w, const Op* op) {
  const TextureSite& site = w.cta->job->program->texSites[op->aux];
  const uint64_t* handles = R<uint64_t>(w, site.handle);
  uint32_t m = w.exec;
  while (m) {
    int lane = std::countr_zero(m);
    m &= m - 1;
    TextureRequest request;
    request.handle = handles[lane];
    request.geometry = site.geometry;
    request.floatCoords = site.floatCoords;
    request.result = site.result;
    request.gather = site.gather;
    coordinates(w, site, lane, request.coords, request.icoords, request.layer);
    uint32_t out[4] = {};
    std::string error;
    if (!w.cta->job->host->textureFetch(request, out, error))
      return raiseFault(w, op, lane, FaultKind::IllegalAddress, request.handle, "texture fetch: " + error);
    for (unsigned k = 0; k < site.valueCount; ++k) R<uint32_t>(w, site.values[k])[lane] = out[k];
  }
  return op + 1;
}

const Op* surface(Warp& w, const Op* op) {
  const TextureSite& site = w.cta->job->program->texSites[op->aux];
  const uint64_t* handles = R<uint64_t>(w, site.handle);
  bool store = op->imm != 0;
  uint32_t m = w.exec;
  while (m) {
    int lane = std::countr_zero(m);
    m &= m - 1;
    SurfaceRequest request;
    request.handle = handles[lane];
    request.geometry = site.geometry;
    float f[3];
    int32_t i[3] = {};
    int32_t layer = 0;
    coordinates(w, site, lane, f, i, layer);
    request.x = i[0];
    request.y = i[1];
    request.z = site.layered ? layer : i[2];
    request.bytes = site.valueBytes * site.valueCount;
    request.store = store;
    request.clamp = site.clamp;
    uint8_t data[32] = {};
    if (store)
      for (unsigned k = 0; k < site.valueCount; ++k)
        std::memcpy(data + k * site.valueBytes, w.reg<uint8_t>(site.values[k]) + size_t(lane) * site.valueBytes,
                    site.valueBytes);
    std::string error;
    if (!w.cta->job->host->surfaceAccess(request, data, error))
      return raiseFault(w, op, lane, FaultKind::IllegalAddress, request.handle, "surface access: " + error);
    if (!store)
      for (unsigned k = 0; k < site.valueCount; ++k)
        std::memcpy(w.reg<uint8_t>(site.values[k]) + size_t(lane) * site.valueBytes, data + k * site.valueBytes,
                    site.valueBytes);
  }
  return op + 1;
}

}  // namespace tex
}  // namespace ptx::exec
