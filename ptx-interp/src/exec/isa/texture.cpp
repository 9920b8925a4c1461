// tex, tld4, suld.b and sust.b: per lane, the operands are gathered into a request that the host (the driver,
// which owns texture and surface objects) answers. Filtering, addressing and formats live in the driver.
#include "exec/lowerer.h"
#include "exec/texture.h"

#include <bit>
#include <cstring>

namespace ptx::exec {

bool HostServices::textureFetch(const TextureRequest&, uint32_t*, std::string& error) {
  error = "textures are not available without a driver";
  return false;
}

bool HostServices::textureFetchWarp(const TextureWarpRequest& request, int& faultLane, std::string& error) {
  for (uint32_t m = request.lanes; m; m &= m - 1) {
    int lane = std::countr_zero(m);
    uint32_t out[4] = {};
    if (!textureFetch(request.lane(lane), out, error)) {
      faultLane = lane;
      return false;
    }
    request.store(lane, out);
  }
  return true;
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
  const TextureSite& site = w.cta->job->program->texSites[TextureOperands::of(*op).site];
  TextureWarpRequest request;
  request.lanes = w.exec;
  request.handles = R<uint64_t>(w, site.handle);
  request.shape.geometry = site.geometry;
  request.shape.floatCoords = site.floatCoords;
  request.shape.result = site.result;
  request.shape.gather = site.gather;
  // for layered geometries the first coordinate register is the layer (an integer)
  unsigned k = 0;
  if (site.layered) request.layers = R<int32_t>(w, site.coords[k++]);
  for (unsigned c = 0; k < site.coordCount && c < 3; ++k, ++c) request.coords[c] = R<uint32_t>(w, site.coords[k]);
  for (unsigned v = 0; v < site.valueCount && v < 4; ++v) request.values[v] = R<uint32_t>(w, site.values[v]);
  int faultLane = 0;
  std::string error;
  if (!w.cta->job->host->textureFetchWarp(request, faultLane, error))
    return raiseFault(w, op, faultLane, FaultKind::IllegalAddress, request.handles[faultLane],
                      "texture fetch: " + error);
  return op + 1;
}

const Op* surface(Warp& w, const Op* op) {
  const TextureOperands v = TextureOperands::of(*op);
  const TextureSite& site = w.cta->job->program->texSites[v.site];
  const uint64_t* handles = R<uint64_t>(w, site.handle);
  const bool store = v.store;
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

namespace lowering {

// tex.geom.v4.dtype.ctype d, [handle, {coords}];  tld4.comp.2d.v4.dtype.f32 d, [handle, {coords}];
// suld.b.geom{.v2,.v4}.btype.clamp d, [handle, {coords}];  sust.b.geom{.vec}.btype.clamp [handle, {coords}], v;
// Only the unified (object handle) mode; the operands go to a TextureSite.
void KernelLowerer::lowerTexture(const Instruction& in) {
  if (in.opcode != Opcode::Tex && in.opcode != Opcode::Tld4 && in.opcode != Opcode::Suld && in.opcode != Opcode::Sust)
    return unsupported(in);
  bool isSurface = in.opcode == Opcode::Suld || in.opcode == Opcode::Sust;
  bool isStore = in.opcode == Opcode::Sust;
  TextureSite site;
  struct GeometryMod {
    ptx::Mod mod;
    TexGeometry geometry;
    unsigned coords;
    bool layered;
  };
  static constexpr GeometryMod kGeometries[] = {
      {ptx::Mod::d1, TexGeometry::D1, 1, false},     {ptx::Mod::d2, TexGeometry::D2, 2, false},
      {ptx::Mod::d3, TexGeometry::D3, 3, false},     {ptx::Mod::a1d, TexGeometry::A1D, 1, true},
      {ptx::Mod::a2d, TexGeometry::A2D, 2, true},    {ptx::Mod::cube, TexGeometry::Cube, 3, false},
      {ptx::Mod::acube, TexGeometry::ACube, 3, true}};
  const GeometryMod* geometry = nullptr;
  for (const auto& g : kGeometries)
    if (fn_->hasMod(in, g.mod)) geometry = &g;
  if (!geometry) return unsupported(in, "texture geometry");
  if (isSurface && (fn_->hasMod(in, ptx::Mod::comp_p) || geometry->geometry == TexGeometry::Cube ||
                    geometry->geometry == TexGeometry::ACube))
    return unsupported(in, "formatted or cube surface access");
  site.geometry = geometry->geometry;
  site.layered = geometry->layered;
  if (fn_->hasMod(in, ptx::Mod::clamp))
    site.clamp = SurfClamp::Clamp;
  else if (fn_->hasMod(in, ptx::Mod::zero))
    site.clamp = SurfClamp::Zero;
  // The [handle, {coords}] tuple: register operands only (the unified texture mode).
  const Operand& tuple = opnd(in, isStore ? 0 : 1);
  if (tuple.kind != OperandKind::Bracket || tuple.value < 2)
    return unsupported(in, "texture reference (non-unified) mode");
  const Operand& handle = fn_->elems[tuple.index];
  const Operand& coordVec = fn_->elems[tuple.index + 1];
  if (handle.kind != OperandKind::Reg || sizeOf(regType(handle.index)) != 8)
    return unsupported(in, "a texture or surface named by a symbol");
  site.handle = regOf(handle.index);
  Type coordType = isSurface ? Type::s32 : in.numTypes > 1 ? in.types[1] : Type::s32;
  site.floatCoords = coordType == Type::f32;
  if (!site.floatCoords && coordType != Type::s32) return unsupported(in, "texture coordinate type");
  auto addCoord = [&](const Operand& c, bool layer) {
    if (site.coordCount >= 4) fail(line_, "too many texture coordinates");
    site.coords[site.coordCount++] = src(c, layer ? Type::s32 : coordType == Type::f32 ? Type::f32 : Type::s32);
  };
  if (coordVec.kind == OperandKind::Vector) {
    unsigned n = unsigned(coordVec.value);
    // Layered geometries put the layer (an integer) first; 2d arrays pad the vector to four elements.
    unsigned wanted = geometry->coords + (geometry->layered ? 1 : 0);
    for (unsigned k = 0; k < n && k < wanted; ++k)
      addCoord(fn_->elems[coordVec.index + k], geometry->layered && k == 0);
  } else {
    addCoord(coordVec, false);
  }
  // Values: the destination vector (tex, tld4, suld) or the source vector (sust).
  const Operand& values = opnd(in, isStore ? 1 : 0);
  Type valueType = in.type();
  if (isSurface) {
    unsigned bytes = ptx::typeSize(valueType);
    if (bytes != 1 && bytes != 2 && bytes != 4 && bytes != 8) return unsupported(in, "surface element type");
    site.valueBytes = bytes;
  } else {
    if (valueType == Type::f32)
      site.result = TexResult::F32;
    else if (valueType == Type::s32)
      site.result = TexResult::S32;
    else if (valueType == Type::u32)
      site.result = TexResult::U32;
    else
      return unsupported(in, "texture result type");
    if (in.opcode == Opcode::Tld4) {
      site.gather = fn_->hasMod(in, ptx::Mod::comp_g)   ? 1
                    : fn_->hasMod(in, ptx::Mod::comp_b) ? 2
                    : fn_->hasMod(in, ptx::Mod::comp_a) ? 3
                                                        : 0;
    }
  }
  std::vector<Dst> pendingDst;
  auto addValue = [&](const Operand& v) {
    if (isStore) {
      site.values[site.valueCount++] = src(v, valueType);
    } else if (v.kind == OperandKind::Sink) {
      site.values[site.valueCount++] = temp(isSurface ? site.valueBytes : 4);
    } else {
      Dst d = dst(v, valueType);
      site.values[site.valueCount++] = d.off;
      pendingDst.push_back(d);
    }
  };
  if (values.kind == OperandKind::Vector) {
    for (unsigned k = 0; k < unsigned(values.value) && k < 4; ++k) addValue(fn_->elems[values.index + k]);
  } else {
    addValue(values);
  }
  if (!isSurface && site.valueCount != 4) return unsupported(in, "texture fetch without a 4-vector destination");
  tex::TextureOperands{uint32_t(prog_.texSites.size()), isStore}.into(emit(isSurface ? &tex::surface : &tex::fetch));
  prog_.texSites.push_back(site);
  for (const Dst& d : pendingDst) finish(d);
}

}  // namespace lowering

}  // namespace ptx::exec
