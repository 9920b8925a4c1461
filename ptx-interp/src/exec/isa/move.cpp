// Moves (OpClass Move): mov (registers, special registers, vector pack and unpack), cvta, isspacep.
#include "exec/lowerer.h"

namespace ptx::exec {

namespace {

using h::R;

namespace {
PTX_LANES void broadcast32(uint32_t* d, uint32_t v, uint32_t m) {
  for (int i = 0; i < 32; ++i) d[i] = ((m >> i) & 1) ? v : d[i];
}
PTX_LANES void iota32(uint32_t* d, uint32_t base, uint32_t m) {
  for (int i = 0; i < 32; ++i) d[i] = ((m >> i) & 1) ? base + uint32_t(i) : d[i];
}
}  // namespace

// The windows of cvta and isspacep.
enum AddressWindow : uint32_t {
  kWindowGlobal = 0,
  kWindowShared = 1,
  kWindowLocal = 2,
  kWindowParam = 3,
  kWindowCluster = 4
};

// Typed operand views of the move class's ops beyond d = a (control_ops.h explains the idea): one place packs the
// Op's fields (into, the lowering) and reads them (of, the handler).

// mov of a special register: component `component` (x, y, z) of `reg` into `result`, of `bytes` bytes.
struct SpecialRegOperands {
  uint32_t result = 0;
  ptx::SpecialReg reg{};
  uint32_t component = 0;
  uint32_t bytes = 4;

  static SpecialRegOperands of(const Op& op) { return {op.d, ptx::SpecialReg(op.aux), op.e, op.f}; }
  void into(Op& op) const {
    op.d = result;
    op.aux = uint32_t(reg);
    op.e = component;
    op.f = bytes;
  }
};

// cvta (to or from generic: the handler says which) and isspacep: the address register and the window it converts
// to or from, or tests; `width` is the non-generic address's size (4 or 8; cvta only). Generic addresses are u64.
struct WindowOperands {
  uint32_t result = 0;
  uint32_t address = 0;
  AddressWindow window = kWindowGlobal;
  uint32_t width = 8;

  static WindowOperands of(const Op& op) { return {op.d, op.a, AddressWindow(op.aux), op.f}; }
  void into(Op& op) const {
    op.d = result;
    op.a = address;
    op.aux = window;
    op.f = width;
  }
};

// mapa (rank: the target CTA's, a u32 register) and getctarank: generic addresses (u64), or shared::cluster ones
// of `width` bytes.
struct ClusterAddressOperands {
  uint32_t result = 0;
  uint32_t address = 0;
  uint32_t rank = 0;
  bool generic = false;
  uint32_t width = 8;

  static ClusterAddressOperands of(const Op& op) { return {op.d, op.a, op.b, op.aux == 1, op.f}; }
  void into(Op& op) const {
    op.d = result;
    op.a = address;
    op.b = rank;
    op.aux = generic ? 1 : 0;
    op.f = width;
  }
};

// ExecConfig::timeWaitsYield: the warp's next backward branch goes through ctl::backEdge (budget 0), which yields.
void noteTimeRead(Warp& w) {
  if (!w.cta->job->lp.config.timeWaitsYield) return;
  w.readTime = true;
  w.budget = 0;
}

// SpecialRegOperands
const Op* sreg(Warp& w, const Op* op) {
  Cta& cta = *w.cta;
  const Job& job = *cta.job;
  const SpecialRegOperands o = SpecialRegOperands::of(*op);
  Dim3 blk = job.lp.block, grid = job.lp.grid;
  uint32_t comp = o.component;
  uint32_t m = w.exec;
  uint32_t* d32 = R<uint32_t>(w, o.result);
  uint64_t v = 0;
  bool wide = false;
  const ptx::SpecialReg sr = o.reg;
  switch (sr) {
    case ptx::SpecialReg::tid: {  // sregHandler gives %tid.x/y/z their own handler; kept for completeness
      alignas(64) uint32_t lanes[32];
      threadIndexLanes(blk, w.index, comp, lanes);
      h::forActive(m, [&](int i) { d32[i] = lanes[i]; });
      return op + 1;
    }
    case ptx::SpecialReg::laneid: iota32(d32, 0, m); return op + 1;
    case ptx::SpecialReg::lanemask_eq: h::forActive(m, [&](int i) { d32[i] = 1u << i; }); return op + 1;
    case ptx::SpecialReg::lanemask_le:
      h::forActive(m, [&](int i) { d32[i] = uint32_t((2ull << i) - 1); });
      return op + 1;
    case ptx::SpecialReg::lanemask_lt: h::forActive(m, [&](int i) { d32[i] = (1u << i) - 1; }); return op + 1;
    case ptx::SpecialReg::lanemask_ge: h::forActive(m, [&](int i) { d32[i] = ~((1u << i) - 1); }); return op + 1;
    case ptx::SpecialReg::lanemask_gt:
      h::forActive(m, [&](int i) { d32[i] = uint32_t(~((2ull << i) - 1)); });
      return op + 1;
    case ptx::SpecialReg::ntid: v = blk.component(comp); break;
    case ptx::SpecialReg::ctaid: v = cta.id.component(comp); break;
    case ptx::SpecialReg::nctaid: v = grid.component(comp); break;
    case ptx::SpecialReg::warpid: v = w.index; break;
    case ptx::SpecialReg::nwarpid: v = cta.nwarps; break;
    case ptx::SpecialReg::smid: v = cta.linearId % job.smCount; break;
    case ptx::SpecialReg::nsmid: v = job.smCount; break;
    case ptx::SpecialReg::gridid:
      v = job.lp.gridId;
      wide = true;
      break;
    case ptx::SpecialReg::clock:
    case ptx::SpecialReg::clock_hi:
    case ptx::SpecialReg::clock64: {
      noteTimeRead(w);
      uint64_t t = uint64_t(std::chrono::steady_clock::now().time_since_epoch().count());
      if (sr == ptx::SpecialReg::clock64) {
        v = t;
        wide = true;
      } else
        v = sr == ptx::SpecialReg::clock ? uint32_t(t) : uint32_t(t >> 32);
      break;
    }
    case ptx::SpecialReg::globaltimer:
    case ptx::SpecialReg::globaltimer_lo:
    case ptx::SpecialReg::globaltimer_hi: {
      noteTimeRead(w);
      uint64_t t = cta.job->host->globalTimerNs();
      if (sr == ptx::SpecialReg::globaltimer) {
        v = t;
        wide = true;
      } else
        v = sr == ptx::SpecialReg::globaltimer_lo ? uint32_t(t) : uint32_t(t >> 32);
      break;
    }
    // (an H200: the kernel's bytes in 128-byte units; with the reserved bytes, exactly. smemwindow29.cu)
    case ptx::SpecialReg::total_smem_size: v = sharedAllocationBytes(cta.sharedBytes - kReservedSharedBytes); break;
    case ptx::SpecialReg::aggr_smem_size: v = cta.sharedBytes; break;
    case ptx::SpecialReg::reserved_smem_offset_end: v = kReservedSharedUsed; break;
    case ptx::SpecialReg::reserved_smem_offset_cap: v = kReservedSharedBytes; break;
    case ptx::SpecialReg::dynamic_smem_size: v = job.lp.dynamicSharedBytes; break;
    case ptx::SpecialReg::is_explicit_cluster: {
      uint8_t* d8 = R<uint8_t>(w, o.result);
      const uint8_t given = job.explicitCluster;
      h::forActive(m, [&](int i) { d8[i] = given; });
      return op + 1;
    }
    case ptx::SpecialReg::clusterid: v = cta.id.component(comp) / job.clusterShape.component(comp); break;
    case ptx::SpecialReg::nclusterid: v = grid.component(comp) / job.clusterShape.component(comp); break;
    case ptx::SpecialReg::cluster_ctaid: v = cta.id.component(comp) % job.clusterShape.component(comp); break;
    case ptx::SpecialReg::cluster_nctaid: v = job.clusterShape.component(comp); break;
    case ptx::SpecialReg::cluster_ctarank: v = cta.clusterRank; break;
    case ptx::SpecialReg::cluster_nctarank: v = job.clusterSize; break;
    default:
      if (sr >= ptx::SpecialReg::envreg0 && sr <= ptx::SpecialReg::envreg31)
        v = job.lp.envRegs[uint32_t(sr) - uint32_t(ptx::SpecialReg::envreg0)];
      else
        v = 0;
      wide = o.bytes == 8;
      break;
  }
  if (wide) {
    uint64_t* d64 = R<uint64_t>(w, o.result);
    h::forActive(m, [&](int i) { d64[i] = v; });
  } else {
    broadcast32(d32, uint32_t(v), m);
  }
  return op + 1;
}

namespace {
// The special registers every kernel reads, without the generic handler's switch: %tid (one-dimensional blocks:
// consecutive lanes) and the launch-uniform %ctaid.
template <int Comp> PTX_LANES const Op* sregTid(Warp& w, const Op* op) {
  alignas(64) uint32_t v[32];
  threadIndexLanes(w.cta->job->lp.block, w.index, Comp, v);
  h::storeLanes<uint32_t>(w, SpecialRegOperands::of(*op).result, v);
  return op + 1;
}
template <int Comp> PTX_LANES const Op* sregCtaid(Warp& w, const Op* op) {
  const uint32_t v = w.cta->id.component(Comp);
  h::store<uint32_t>(w, SpecialRegOperands::of(*op).result, [&](int) { return v; });
  return op + 1;
}
}  // namespace

// WindowOperands
const Op* cvtaToGeneric(Warp& w, const Op* op) {
  Cta& cta = *w.cta;
  const WindowOperands o = WindowOperands::of(*op);
  auto src = [&](int i) -> uint64_t {
    return o.width == 4 ? uint64_t(R<uint32_t>(w, o.address)[i]) : R<uint64_t>(w, o.address)[i];
  };
  uint64_t sh = reinterpret_cast<uint64_t>(cta.shared);
  uint64_t lo = reinterpret_cast<uint64_t>(w.local);
  uint64_t pb = reinterpret_cast<uint64_t>(cta.job->paramBuffer.data());
  alignas(64) uint64_t tmp[32];
  for (int i = 0; i < 32; ++i) {
    uint64_t a = src(i);
    switch (o.window) {
      case kWindowShared:
      case kWindowCluster: {
        // the CTA the rank bits name, in either window (an H200 converts a plain offset in a CTA of rank 1 to rank
        // 0's window: tools/gpu-probe/results/rankbits30-h200-2026-11-28.txt); a rank outside the cluster gives no
        // usable address
        ClusterSharedTarget t = clusterSharedTarget(cta, a);
        tmp[i] = t.cta                        ? reinterpret_cast<uint64_t>(t.cta->shared) + t.offset
                 : o.window == kWindowCluster ? 0
                                              : sh + (a - cta.sharedWindow);
        break;
      }
      case kWindowLocal: tmp[i] = lo + uint64_t(i) * w.localStride + a; break;
      default: tmp[i] = pb + a; break;
    }
  }
  h::storeLanes<uint64_t>(w, o.result, tmp);
  return op + 1;
}

const Op* cvtaFromGeneric(Warp& w, const Op* op) {
  Cta& cta = *w.cta;
  const WindowOperands o = WindowOperands::of(*op);
  const uint64_t* a = R<uint64_t>(w, o.address);
  uint64_t sh = reinterpret_cast<uint64_t>(cta.shared);
  uint64_t lo = reinterpret_cast<uint64_t>(w.local);
  uint64_t pb = reinterpret_cast<uint64_t>(cta.job->paramBuffer.data());
  alignas(64) uint64_t tmp[32];
  for (int i = 0; i < 32; ++i) {
    switch (o.window) {
      case kWindowShared:
      case kWindowCluster: {  // the owner's rank bits, in either window (as on an H100: clusters18)
        const Cta* owner = clusterSharedOwner(cta, a[i]);
        tmp[i] = owner ? clusterSharedAddress(owner->clusterRank, a[i] - reinterpret_cast<uint64_t>(owner->shared))
                       : a[i] - sh + cta.sharedWindow;
        break;
      }
      case kWindowLocal: tmp[i] = a[i] - (lo + uint64_t(i) * w.localStride); break;
      default: tmp[i] = a[i] - pb; break;
    }
  }
  if (o.width == 4)
    h::store<uint32_t>(w, o.result, [&](int i) { return uint32_t(tmp[i]); });
  else
    h::storeLanes<uint64_t>(w, o.result, tmp);
  return op + 1;
}

// ld/st/atom/red.shared::cluster through a register (WindowOperands, op.imm the access's offset): the address as a
// generic one, the host address in the block of the CTA its rank bits name; the access then goes through the generic
// window, so that shared-space accesses keep the own block's one range check (mem::resolve<Shared>).
const Op* clusterAccessToGeneric(Warp& w, const Op* op) {
  Cta& cta = *w.cta;
  const WindowOperands o = WindowOperands::of(*op);
  uint64_t* out = R<uint64_t>(w, o.result);
  for (uint32_t m = w.exec; m; m &= m - 1) {
    const int i = std::countr_zero(m);
    const uint64_t a = o.width == 4 ? mem::laneAddr(R<uint32_t>(w, o.address), i, op->imm)
                                    : mem::laneAddr(R<uint64_t>(w, o.address), i, op->imm);
    const ClusterSharedTarget t = clusterSharedTarget(cta, a);
    if (!t.cta) return raiseFault(w, op, i, FaultKind::ClusterAddress, a, mem::kOutsideCluster);
    if (t.offset >= t.cta->sharedBytes)
      return raiseFault(w, op, i, FaultKind::IllegalAddress, a, "out-of-range shared address");
    out[i] = reinterpret_cast<uint64_t>(t.cta->shared) + t.offset;
  }
  return op + 1;
}

// WindowOperands (no width)
const Op* isspacep(Warp& w, const Op* op) {
  Cta& cta = *w.cta;
  const WindowOperands o = WindowOperands::of(*op);
  const uint64_t* a = R<uint64_t>(w, o.address);
  uint64_t sh = reinterpret_cast<uint64_t>(cta.shared);
  uint64_t lo = reinterpret_cast<uint64_t>(w.local);
  uint64_t pb = reinterpret_cast<uint64_t>(cta.job->paramBuffer.data());
  const MemoryValidator& mv = *cta.job->lp.memory;
  h::store<uint8_t>(w, o.result, [&](int i) -> uint8_t {
    uint64_t x = a[i];
    bool s = x - sh < cta.sharedBytes;
    bool l = x - (lo + uint64_t(i) * w.localStride) < w.localStride;
    bool p = x - pb < cta.job->paramBuffer.size();
    switch (o.window) {
      case kWindowShared: return s;
      case kWindowCluster: return s || clusterSharedOwner(cta, x);
      case kWindowLocal: return l;
      case kWindowParam: return p;
      default: return !s && !l && !p && !clusterSharedOwner(cta, x) && mv.check(x, 1, false);
    }
  });
  return op + 1;
}

// mapa: the address of the same shared variable in the CTA of the given rank (ClusterAddressOperands).
const Op* mapa(Warp& w, const Op* op) {
  Cta& cta = *w.cta;
  const std::vector<Cta*>& ctas = cta.cluster->ctas;
  const ClusterAddressOperands o = ClusterAddressOperands::of(*op);
  const uint32_t* rank = R<uint32_t>(w, o.rank);
  uint32_t m = w.exec;
  while (m) {
    int i = std::countr_zero(m);
    m &= m - 1;
    if (o.generic) {
      const uint64_t a = R<uint64_t>(w, o.address)[i];
      const Cta* owner = clusterSharedOwner(cta, a);
      if (!owner)
        return raiseFault(w, op, i, FaultKind::IllegalAddress, a, "mapa of a generic address outside shared memory");
      if (rank[i] >= ctas.size())
        return raiseFault(w, op, i, FaultKind::ClusterAddress, rank[i], "mapa to a CTA rank outside the cluster");
      R<uint64_t>(w, o.result)[i] =
          reinterpret_cast<uint64_t>(ctas[rank[i]]->shared) + (a - reinterpret_cast<uint64_t>(owner->shared));
    } else {
      // the rank is checked where the address is used, as on an H100 (an access through it fails the launch)
      const uint64_t a = o.width == 4 ? R<uint32_t>(w, o.address)[i] : R<uint64_t>(w, o.address)[i];
      const uint64_t v = clusterSharedAddress(rank[i], a & ((1u << kClusterRankShift) - 1));
      if (o.width == 4)
        R<uint32_t>(w, o.result)[i] = uint32_t(v);
      else
        R<uint64_t>(w, o.result)[i] = v;
    }
  }
  return op + 1;
}

// getctarank: the rank (u32) of the CTA whose shared memory the address names (ClusterAddressOperands, no rank).
const Op* getctarank(Warp& w, const Op* op) {
  Cta& cta = *w.cta;
  const ClusterAddressOperands o = ClusterAddressOperands::of(*op);
  uint32_t m = w.exec;
  while (m) {
    int i = std::countr_zero(m);
    m &= m - 1;
    uint32_t rank;
    if (o.generic) {
      const uint64_t a = R<uint64_t>(w, o.address)[i];
      const Cta* owner = clusterSharedOwner(cta, a);
      if (!owner)
        return raiseFault(w, op, i, FaultKind::IllegalAddress, a,
                          "getctarank of a generic address outside shared memory");
      rank = owner->clusterRank;
    } else {
      const uint64_t a = o.width == 4 ? R<uint32_t>(w, o.address)[i] : R<uint64_t>(w, o.address)[i];
      rank = uint32_t(a >> kClusterRankShift);  // a plain offset is rank 0's, as on an H200 (rankbits30)
    }
    R<uint32_t>(w, o.result)[i] = rank;
  }
  return op + 1;
}

}  // namespace

Handler sregHandler(ptx::SpecialReg sr, uint32_t component, bool specialisedForms) {
  if (!specialisedForms) return &sreg;
  if (component < 3 && sr == ptx::SpecialReg::tid)
    return component == 0 ? &sregTid<0> : component == 1 ? &sregTid<1> : &sregTid<2>;
  if (component < 3 && sr == ptx::SpecialReg::ctaid)
    return component == 0 ? &sregCtaid<0> : component == 1 ? &sregCtaid<1> : &sregCtaid<2>;
  return &sreg;
}

namespace lowering {

void KernelLowerer::lowerMov(const Instruction& in) {
  Type t = in.type();
  const Operand& d0 = opnd(in, 0);
  const Operand& s0 = opnd(in, 1);
  unsigned size = sizeOf(t);
  if (d0.kind == OperandKind::Vector) {  // unpack
    unsigned n = unsigned(d0.value);
    unsigned part = size / n;
    uint32_t a = src(s0, t);
    uint32_t regs[4] = {0, 0, 0, 0};
    std::vector<Dst> dsts;
    Type pt = part == 1 ? Type::b8 : part == 2 ? Type::b16 : part == 4 ? Type::b32 : Type::b64;
    for (unsigned k = 0; k < n; ++k) {
      const Operand& e = fn_->elems[d0.index + k];
      if (e.kind == OperandKind::Sink) continue;
      Dst d = dst(e, pt);
      regs[k] = d.off;
      dsts.push_back(d);
    }
    Handler hnd = nullptr;
    if (size == 8 && n == 2)
      hnd = &h::unpack<uint32_t, uint64_t, 2>;
    else if (size == 8 && n == 4)
      hnd = &h::unpack<uint16_t, uint64_t, 4>;
    else if (size == 4 && n == 2)
      hnd = &h::unpack<uint16_t, uint32_t, 2>;
    else if (size == 4 && n == 4)
      hnd = &h::unpack<uint8_t, uint32_t, 4>;
    else if (size == 2 && n == 2)
      hnd = &h::unpack<uint8_t, uint16_t, 2>;
    else if (size == 16 && n == 2)
      hnd = &h::unpack128;
    else
      return unsupported(in);
    h::VectorParts{a, {regs[0], regs[1], regs[2], regs[3]}}.intoUnpack(emit(hnd));
    for (auto& d : dsts) finish(d);
    return;
  }
  if (s0.kind == OperandKind::Vector) {  // pack
    unsigned n = unsigned(s0.value);
    unsigned part = size / n;
    Type pt = part == 1 ? Type::b8 : part == 2 ? Type::b16 : part == 4 ? Type::b32 : Type::b64;
    uint32_t regs[4] = {0, 0, 0, 0};
    for (unsigned k = 0; k < n; ++k) regs[k] = src(fn_->elems[s0.index + k], pt);
    Handler hnd = nullptr;
    if (size == 8 && n == 2)
      hnd = &h::pack<uint32_t, uint64_t, 2>;
    else if (size == 8 && n == 4)
      hnd = &h::pack<uint16_t, uint64_t, 4>;
    else if (size == 4 && n == 2)
      hnd = &h::pack<uint16_t, uint32_t, 2>;
    else if (size == 4 && n == 4)
      hnd = &h::pack<uint8_t, uint32_t, 4>;
    else if (size == 2 && n == 2)
      hnd = &h::pack<uint8_t, uint16_t, 2>;
    else if (size == 16 && n == 2)
      hnd = &h::pack128;
    else
      return unsupported(in);
    Dst d = dst(d0, t);
    h::VectorParts{d.off, {regs[0], regs[1], regs[2], regs[3]}}.intoPack(emit(hnd));
    finish(d);
    return;
  }
  if (s0.kind == OperandKind::Special && d0.kind == OperandKind::Reg) {
    auto sr = static_cast<ptx::SpecialReg>(s0.index);
    unsigned ss = ptx::specialRegSize(sr);
    if (ss == sizeOf(regType(d0.index))) {
      uint32_t component = ptx::specialRegHasComponents(sr) ? ptx::selComponent(s0.sel) : 0;
      emitSpecialRegister(regOf(d0.index), sr, component);
      return;
    }
  }
  uint32_t a = src(s0, t);
  Dst d = dst(d0, t);
  Op& op =
      emit(size == 16 ? &h::mov<h::B128> : byBits(size, line_, [](auto x) -> Handler { return &h::mov<decltype(x)>; }));
  op.d = d.off;
  op.a = a;
  finish(d);
}

void KernelLowerer::emitSpecialRegister(uint32_t result, ptx::SpecialReg sr, uint32_t component) {
  SpecialRegOperands{result, sr, component, ptx::specialRegSize(sr)}.into(
      emit(sregHandler(sr, component, enabled(Rewrite::SpecialRegisterForms))));
}

void KernelLowerer::lowerMove(const Instruction& in) {
  switch (in.opcode) {
    case Opcode::Mov: return lowerMov(in);
    case Opcode::Prmt: return lowerArith(in);
    case Opcode::Cvta: return lowerCvta(in);
    case Opcode::Isspacep: return lowerIsspacep(in);
    case Opcode::Mapa:
    case Opcode::Getctarank: return lowerClusterAddress(in);
    default: return unsupported(in);
  }
}

// cvta{.to}.space: global and generic addresses are the same; the other windows convert per lane.
void KernelLowerer::lowerCvta(const Instruction& in) {
  Type t = in.type();
  bool to = in.has(ptx::Flag::to);
  AddressWindow space = kWindowGlobal;
  switch (in.space) {
    case ptx::Space::global:
    case ptx::Space::const_: space = kWindowGlobal; break;
    case ptx::Space::shared:
    case ptx::Space::shared_cta: space = kWindowShared; break;
    case ptx::Space::shared_cluster: space = kWindowCluster; break;
    case ptx::Space::local: space = kWindowLocal; break;
    case ptx::Space::param:
    case ptx::Space::param_entry: space = fn_->isEntry ? kWindowParam : kWindowLocal; break;
    default: return unsupported(in);
  }
  unsigned size = sizeOf(t);
  if (space == kWindowGlobal) {  // global and generic addresses are the same
    uint32_t a = src(opnd(in, 1), t);
    Dst d = dst(opnd(in, 0), t);
    Op& op = emit(size == 8 ? &h::mov<uint64_t> : &h::mov<uint32_t>);
    op.d = d.off;
    op.a = a;
    finish(d);
    return;
  }
  if (to) {
    uint32_t a = src(opnd(in, 1), Type::u64);
    Dst d = dst(opnd(in, 0), t);
    WindowOperands{d.off, a, space, size}.into(emit(&cvtaFromGeneric));
    finish(d);
  } else {
    uint32_t a = src(opnd(in, 1), t);
    Dst d = dst(opnd(in, 0), Type::u64);
    WindowOperands{d.off, a, space, size}.into(emit(&cvtaToGeneric));
    finish(d);
  }
  return;
}

void KernelLowerer::clusterAccessAsGeneric(const Instruction& in, const Operand& o, Addr& a) {
  if (in.space != ptx::Space::shared_cluster || o.symKind != SymKind::None || a.space != mem::Shared) return;
  const uint32_t t = temp(8);
  Op& op = emit(&clusterAccessToGeneric);
  WindowOperands{t, a.base, kWindowCluster, a.baseSize}.into(op);
  op.imm = a.imm;
  a.base = t;
  a.baseSize = 8;
  a.imm = 0;
  a.space = mem::Generic;
}

void KernelLowerer::lowerIsspacep(const Instruction& in) {
  AddressWindow space = kWindowGlobal;
  switch (in.space) {
    case ptx::Space::global: space = kWindowGlobal; break;
    case ptx::Space::shared:
    case ptx::Space::shared_cta: space = kWindowShared; break;
    case ptx::Space::shared_cluster: space = kWindowCluster; break;
    case ptx::Space::local: space = kWindowLocal; break;
    case ptx::Space::param:
    case ptx::Space::param_entry: space = kWindowParam; break;
    case ptx::Space::const_: space = kWindowGlobal; break;
    default: return unsupported(in);
  }
  uint32_t a = src(opnd(in, 1), Type::u64);
  Dst d = dst(opnd(in, 0), Type::pred);
  WindowOperands{d.off, a, space, 0}.into(emit(&isspacep));
  finish(d);
  return;
}

// mapa{.space}.type d, a, rank; getctarank{.space}.type d, a: without a space the addresses are generic (64-bit).
void KernelLowerer::lowerClusterAddress(const Instruction& in) {
  const Type t = in.type();
  const bool generic = in.space == ptx::Space::none;
  if (!generic && in.space != ptx::Space::shared_cluster) return unsupported(in);
  const unsigned size = sizeOf(t);
  if ((size != 4 && size != 8) || (generic && size != 8)) return unsupported(in);
  const Type at = size == 4 ? Type::u32 : Type::u64;
  if (in.opcode == Opcode::Mapa) {
    uint32_t a = src(opnd(in, 1), at);
    uint32_t rank = src(opnd(in, 2), Type::u32);
    Dst d = dst(opnd(in, 0), at);
    ClusterAddressOperands{d.off, a, rank, generic, size}.into(emit(&mapa));
    finish(d);
    return;
  }
  uint32_t a = src(opnd(in, 1), at);
  Dst d = dst(opnd(in, 0), Type::u32);
  ClusterAddressOperands{d.off, a, 0, generic, size}.into(emit(&getctarank));
  finish(d);
}

}  // namespace lowering

}  // namespace ptx::exec
