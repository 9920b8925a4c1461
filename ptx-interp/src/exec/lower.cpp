// The lowering core: reachability and layouts of the functions a kernel reaches, operands, branches and
// reconvergence, the dispatch of every instruction to its class (isa/*.cpp), and the module-level lowerModule.
#include "exec/lower.h"

#include "exec/control_ops.h"
#include "exec/lowerer.h"
#include "exec/shared_linkage.h"

#include <zstd.h>

#include <algorithm>
#include <functional>

namespace ptx::exec {

namespace lowering {

// ---- reachability, layouts -------------------------------------------------------------------------------------

BodyRefs bodyRefs(const ptx::Module& m, const ptx::Function& fn) {
  BodyRefs refs;
  for (const Instruction& in : fn.instructions) {
    const Operand* callee = in.opcode == Opcode::Call ? calleeOperand(fn, in) : nullptr;
    if (callee && callee->kind == OperandKind::Reg) refs.indirectCall = true;
    for (uint32_t k = 0; k < in.numOperands; ++k) {
      const Operand& o = fn.operands[in.firstOperand + k];
      if (o.kind != OperandKind::Symbol && o.kind != OperandKind::Address) continue;
      if (o.symKind == SymKind::Function) {
        refs.functions.push_back(o.index);
        if (&o != callee) refs.addressTaken.push_back(o.index);
      }
      if (o.symKind == SymKind::Global && m.globals[o.index].space == ptx::Space::shared)
        refs.sharedGlobals.push_back(o.index);
    }
  }
  return refs;
}

const std::vector<uint32_t>& KernelLowerer::addressTakenFunctions() {
  std::optional<std::vector<uint32_t>>& addressTaken = lookups_.addressTaken;
  if (addressTaken) return *addressTaken;
  std::set<uint32_t> taken = lookups_.takenInDroppedBodies;
  for (const ptx::Function& fn : mod_.functions) addressesTakenIn(fn, taken);
  for (const auto& [f, refs] : lookups_.keptBodyRefs)
    for (uint32_t g : refs.addressTaken) taken.insert(definitionOf(g));
  for (const ptx::Variable& v : mod_.globals)
    for (const auto& r : v.relocs)
      if (r.symKind == SymKind::Function) taken.insert(definitionOf(r.index));
  addressTaken.emplace();
  for (uint32_t f : taken)
    if (mod_.functions[f].hasBody && !mod_.functions[f].isEntry) addressTaken->push_back(f);
  return *addressTaken;
}

void KernelLowerer::addressesTakenIn(const ptx::Function& fn, std::set<uint32_t>& taken) {
  for (const Instruction& in : fn.instructions) {
    const Operand* callee = in.opcode == Opcode::Call ? calleeOperand(fn, in) : nullptr;
    for (uint32_t k = 0; k < in.numOperands; ++k) {
      const Operand& o = fn.operands[in.firstOperand + k];
      if (&o != callee && (o.kind == OperandKind::Symbol || o.kind == OperandKind::Address) &&
          o.symKind == SymKind::Function)
        taken.insert(definitionOf(o.index));
    }
  }
}

void KernelLowerer::beforeDroppingBody(uint32_t irFn) {
  if (!lookups_.addressTaken) addressesTakenIn(mod_.functions[irFn], lookups_.takenInDroppedBodies);
}

uint32_t KernelLowerer::definitionOf(uint32_t irFn) {
  if (mod_.functions[irFn].hasBody) return irFn;
  std::optional<std::map<ptx::StrId, uint32_t>>& byName = lookups_.definitionsByName;
  if (!byName) {
    byName.emplace();
    for (uint32_t k = 0; k < mod_.functions.size(); ++k) {
      const ptx::Function& g = mod_.functions[k];
      if (g.hasBody) byName->emplace(g.name, k);
    }
  }
  // A `.extern .entry` (a kernel of another translation unit that a kernel launches) resolves to that kernel, a
  // `.extern .func` to a function.
  auto it = byName->find(mod_.functions[irFn].name);
  if (it == byName->end() || mod_.functions[it->second].isEntry != mod_.functions[irFn].isEntry) return irFn;
  return it->second;
}

void KernelLowerer::collectReachable(uint32_t f, std::set<uint32_t>& seen, std::vector<uint32_t>& order) {
  f = definitionOf(f);
  if (!seen.insert(f).second) return;
  order.push_back(f);
  const ptx::Function& fn = mod_.functions[f];
  if (lookups_.bodyIsText(mod_, f)) {
    auto refs = lookups_.keptBodyRefs.find(f);
    if (refs == lookups_.keptBodyRefs.end()) return;
    if (refs->second.indirectCall)
      for (uint32_t g : addressTakenFunctions()) collectReachable(g, seen, order);
    for (uint32_t g : refs->second.functions) {
      const ptx::Function& callee = mod_.functions[definitionOf(g)];
      if (callee.hasBody && !callee.isEntry) collectReachable(g, seen, order);
    }
    usedModuleShared_.insert(refs->second.sharedGlobals.begin(), refs->second.sharedGlobals.end());
    return;
  }
  for (const Instruction& in : fn.instructions) {
    if (in.opcode == Opcode::Call && isIndirectCall(fn, in))
      for (uint32_t g : addressTakenFunctions()) collectReachable(g, seen, order);
    for (uint32_t k = 0; k < in.numOperands; ++k) {
      const Operand& o = fn.operands[in.firstOperand + k];
      if ((o.kind == OperandKind::Symbol || o.kind == OperandKind::Address) && o.symKind == SymKind::Function) {
        // a kernel's address (a device-side launch, exec/device_runtime.cpp) is not a call into it
        const ptx::Function& g = mod_.functions[definitionOf(o.index)];
        if (g.hasBody && !g.isEntry) collectReachable(o.index, seen, order);
      }
      if ((o.kind == OperandKind::Symbol || o.kind == OperandKind::Address) && o.symKind == SymKind::Global) {
        if (mod_.globals[o.index].space == ptx::Space::shared) usedModuleShared_.insert(o.index);
      }
    }
  }
}

uint32_t varAlign(const ptx::Variable& v) {
  uint32_t a = v.align ? v.align : std::max(1u, ptx::typeSize(v.type));
  return std::max(a, 1u);
}

void KernelLowerer::layoutFunction(FuncInstance& fi) {
  const ptx::Function& fn = mod_.functions[fi.irIndex];
  fi.regOffset.resize(fn.registers.size());
  for (size_t r = 0; r < fn.registers.size(); ++r) {
    const ptx::Register& reg = fn.registers[r];
    if (fn.isEntry && launchConstRegs_.count(uint32_t(r))) continue;  // placed with the constants
    if (reg.vec && reg.rangeIndex >= 0) fail(fn.loc.line, "ranges of vector registers are not supported");
    if (reg.vec) continue;  // its components are registers of their own, next to it (front end: parseRegDecl)
    unsigned sz = sizeOf(reg.type);
    if (sz == 0 || (sz > 8 && sz != 16))
      fail(fn.loc.line, fmt::format("register type {} not supported", ptx::typeName(reg.type)));
    fi.regOffset[r] = allocReg(sz);
  }
  for (size_t r = 0; r < fn.registers.size(); ++r)  // (a vector sits where its first component does)
    if (fn.registers[r].vec && fn.registers[r].rangeIndex < 0) fi.regOffset[r] = fi.regOffset[r + 1];
  uint32_t frame = 0;
  if (!fn.isEntry) {
    for (const auto& p : fn.params) {
      frame = alignUp(frame, varAlign(p));
      fi.paramOffset.push_back(frame);
      frame += uint32_t(p.size ? p.size : p.elementSize());
    }
    for (const auto& p : fn.returns) {
      frame = alignUp(frame, varAlign(p));
      fi.returnOffset.push_back(frame);
      frame += uint32_t(p.size ? p.size : p.elementSize());
    }
  }
  fi.localOffset.assign(fn.locals.size(), 0);
  for (size_t k = 0; k < fn.locals.size(); ++k) {
    const ptx::Variable& v = fn.locals[k];
    uint64_t size = v.size ? v.size : v.elementSize();
    if (v.space == ptx::Space::local || v.space == ptx::Space::param) {
      frame = alignUp(frame, varAlign(v));
      fi.localOffset[k] = frame;
      frame += uint32_t(size);
    } else if (v.space == ptx::Space::shared) {
      fi.localOffset[k] = placeShared(v);  // dynamic: patched later
    } else {
      fail(v.loc.line, "variables of this state space inside a function body are not supported");
    }
  }
  fi.frameBytes = alignUp(frame, frameAlign_);
}

uint32_t KernelLowerer::placeShared(const ptx::Variable& v) {
  sharedAlign_ = std::max(sharedAlign_, varAlign(v));
  if (lowering::isDynamicShared(v)) {
    dynamicSharedAlign_ = std::max(dynamicSharedAlign_, varAlign(v));
    hasDynamicShared_ = true;
    return kDynamicShared;
  }
  sharedTop_ = alignUp(sharedTop_, varAlign(v));
  uint32_t offset = sharedTop_;
  sharedTop_ += uint32_t(v.size ? v.size : v.elementSize());
  return offset;
}

uint32_t KernelLowerer::staticSharedBytes(uint32_t entryIr, bool ownOnly) {
  std::set<uint32_t> seen;
  std::vector<uint32_t> order;
  if (ownOnly)
    order.push_back(entryIr);
  else
    collectReachable(entryIr, seen, order);
  for (uint32_t g : usedModuleShared_) placeShared(mod_.globals[g]);
  for (uint32_t f : order)
    for (const ptx::Variable& v : mod_.functions[f].locals)
      if (v.space == ptx::Space::shared) placeShared(v);
  return kernelSharedBytes();
}

KernelInfo declaredKernelInfo(const ptx::Module& module, uint32_t entryIr) {
  const ptx::Function& entry = module.functions[entryIr];
  KernelInfo info;
  info.name = std::string(module.str(entry.name));
  uint32_t off = 0;
  for (const auto& p : entry.params) {
    uint32_t a = varAlign(p);
    off = alignUp(off, a);
    uint32_t sz = uint32_t(p.size ? p.size : p.elementSize());
    info.params.push_back(ParamLayout{off, sz, a});
    off += sz;
  }
  info.paramBytes = off;
  for (int k = 0; k < 3; ++k) {
    (&info.reqntid.x)[k] = entry.numReqntid > k ? entry.reqntid[k] : (entry.numReqntid ? 1 : 0);
    (&info.maxntid.x)[k] = entry.numMaxntid > k ? entry.maxntid[k] : (entry.numMaxntid ? 1 : 0);
  }
  info.minnctapersm = entry.minnctapersm;
  for (int k = 0; k < 3; ++k)
    (&info.reqnctapercluster.x)[k] =
        entry.numReqnctapercluster > k ? entry.reqnctapercluster[k] : (entry.numReqnctapercluster ? 1 : 0);
  info.maxclusterrank = entry.maxclusterrank;
  info.explicitcluster = entry.explicitcluster;
  info.blocksareclusters = entry.blocksareclusters;
  if (entry.numReqntid)
    info.maxThreadsPerBlock = uint32_t(info.reqntid.count());
  else if (entry.numMaxntid)
    info.maxThreadsPerBlock = std::min<uint32_t>(1024, uint32_t(info.maxntid.count()));
  return info;
}

// ---- operands ----------------------------------------------------------------------------------------------------

Handler KernelLowerer::widthConverter(unsigned dsize, unsigned ssize, bool sext) {
  auto pick = [&](auto d) -> Handler {
    using D = decltype(d);
    switch (ssize) {
      case 1: return sext ? &h::convertWidth<D, int8_t> : &h::convertWidth<D, uint8_t>;
      case 2: return sext ? &h::convertWidth<D, int16_t> : &h::convertWidth<D, uint16_t>;
      case 4: return sext ? &h::convertWidth<D, int32_t> : &h::convertWidth<D, uint32_t>;
      default: return sext ? &h::convertWidth<D, int64_t> : &h::convertWidth<D, uint64_t>;
    }
  };
  return byBits(dsize, line_, pick);
}

uint32_t KernelLowerer::symbolAddress(const Operand& o, unsigned size) {
  int64_t off = o.value;
  switch (o.symKind) {
    case SymKind::Global: {
      const ptx::Variable& v = mod_.globals[o.index];
      if (v.space == ptx::Space::shared) {
        if (lowering::isDynamicShared(v)) return sharedAddress(uint64_t(dynamicSharedBase_ + off), size);
        return sharedAddress(uint64_t(moduleSharedOffset_.at(o.index) + off), size);
      }
      uint32_t g = globalMap_[o.index];
      if (g == kNoIndex) fail(line_, fmt::format("address of '{}' is not supported", mod_.str(v.name)));
      return globalAddress(g, off, size);
    }
    case SymKind::Local: {
      const ptx::Variable& v = fn_->locals[o.index];
      if (v.space == ptx::Space::shared) {
        if (lowering::isDynamicShared(v)) return sharedAddress(uint64_t(dynamicSharedBase_ + off), size);
        return sharedAddress(uint64_t(fi_->localOffset[o.index] + off), size);
      }
      // local / param variable in the frame: frame-relative
      uint32_t t = temp(size);
      ctl::LocalAddress{t, int64_t(fi_->localOffset[o.index]) + off, size}.into(emit(&ctl::localAddr));
      return t;
    }
    case SymKind::Param: {
      if (fn_->isEntry) return literal(uint64_t(info_->params.at(o.index).offset + off), size);
      uint32_t t = temp(size);
      ctl::LocalAddress{t, int64_t(fi_->paramOffset.at(o.index)) + off, size}.into(emit(&ctl::localAddr));
      return t;
    }
    case SymKind::Return: {
      uint32_t t = temp(size);
      ctl::LocalAddress{t, int64_t(fi_->returnOffset.at(o.index)) + off, size}.into(emit(&ctl::localAddr));
      return t;
    }
    case SymKind::Function:
      // Function addresses are opaque handles usable only by indirect calls.
      return literal(kFunctionAddressBase | definitionOf(o.index), size);
    default: fail(line_, "unsupported symbol operand");
  }
}

uint32_t KernelLowerer::src(const Operand& o, Type t) {
  unsigned size = sizeOf(t);
  switch (o.kind) {
    case OperandKind::Reg: {
      if (o.sel) fail(line_, "register component selectors are not supported");
      uint32_t r = regOf(o.index);
      Type rt = regType(o.index);
      unsigned rs = sizeOf(rt);
      if ((rt == Type::pred) != (t == Type::pred)) fail(line_, "predicate/non-predicate operand mismatch");
      if (rs == size) return r;
      uint32_t tmp = temp(size);
      Op& op = emit(widthConverter(size, rs, isSigned(t) || (rs > size ? false : isSigned(rt))));
      op.d = tmp;
      op.a = r;
      return tmp;
    }
    case OperandKind::Imm: {
      uint64_t v = uint64_t(o.value);
      if (t == Type::f32) return literal(std::bit_cast<uint32_t>(float(int64_t(v))), 4);
      if (t == Type::f64) return literal(std::bit_cast<uint64_t>(double(int64_t(v))), 8);
      if (t == Type::pred) return literal(v != 0, 1);
      if (size < 8) v &= (uint64_t(1) << (8 * size)) - 1;
      return literal(v, size);
    }
    case OperandKind::FImm: {
      uint64_t bits = uint64_t(o.value);
      if (t == Type::f32 && o.immBits == 64)
        return literal(std::bit_cast<uint32_t>(float(std::bit_cast<double>(bits))), 4);
      if (t == Type::f64 && o.immBits == 32)
        return literal(std::bit_cast<uint64_t>(double(std::bit_cast<float>(uint32_t(bits)))), 8);
      if (t == Type::f16 || t == Type::bf16) {
        double d = o.immBits == 32 ? double(std::bit_cast<float>(uint32_t(bits))) : std::bit_cast<double>(bits);
        return literal(t == Type::f16 ? num::doubleToHalf(d) : num::floatToBf16(float(d)), 2);
      }
      if (size < 8) bits &= (uint64_t(1) << (8 * size)) - 1;
      return literal(bits, size);
    }
    case OperandKind::Symbol: return symbolAddress(o, size == 4 ? 4 : 8);
    case OperandKind::Special: {
      auto sr = static_cast<ptx::SpecialReg>(o.index);
      unsigned ss = ptx::specialRegSize(sr);
      uint32_t tmp = temp(ss);
      uint32_t component = ptx::specialRegHasComponents(sr) ? ptx::selComponent(o.sel) : 0;
      emitSpecialRegister(tmp, sr, component);
      if (ss == size) return tmp;
      uint32_t t2 = temp(size);
      Op& c = emit(widthConverter(size, ss, false));
      c.d = t2;
      c.a = tmp;
      return t2;
    }
    default: fail(line_, "unsupported source operand");
  }
}

uint32_t KernelLowerer::srcPred(const Operand& o, bool& negated) {
  negated = o.negated();
  return src(o, Type::pred);
}

KernelLowerer::Dst KernelLowerer::dst(const Operand& o, Type t) {
  Dst d;
  d.size = sizeOf(t);
  if (o.kind == OperandKind::Sink) {
    d.off = temp(d.size);
    return d;
  }
  if (o.kind != OperandKind::Reg) fail(line_, "destination must be a register");
  if (o.sel) fail(line_, "register component selectors are not supported");
  uint32_t r = regOf(o.index);
  Type rt = regType(o.index);
  unsigned rs = sizeOf(rt);
  if ((rt == Type::pred) != (t == Type::pred)) fail(line_, "predicate/non-predicate destination mismatch");
  if (rs == d.size) {
    d.off = r;
    return d;
  }
  d.off = temp(d.size);
  d.reg = r;
  d.regSize = rs;
  d.convert = true;
  d.signExtend = isSigned(t);
  return d;
}

void KernelLowerer::finish(const Dst& d) {
  if (!d.convert) return;
  Op& op = emit(widthConverter(d.regSize, d.size, d.signExtend && d.regSize > d.size));
  op.d = d.reg;
  op.a = d.off;
}

// ---- the kernel ----------------------------------------------------------------------------------------------

void KernelLowerer::lowerKernel(uint32_t entryIr) {
  const ptx::Function& entry = mod_.functions[entryIr];
  prog_.kernelCode.emplace_back();
  prog_.kernelInfo.push_back(declaredKernelInfo(mod_, entryIr));
  code_ = &prog_.kernelCode.back();
  info_ = &prog_.kernelInfo.back();
  KernelInfo& info = *info_;
  code_->irFunction = entryIr;

  std::set<uint32_t> seen;
  std::vector<uint32_t> order;
  collectReachable(entryIr, seen, order);
  // module-level shared variables used by this kernel
  for (uint32_t g : usedModuleShared_)
    if (uint32_t offset = placeShared(mod_.globals[g]); offset != kDynamicShared) moduleSharedOffset_[g] = offset;
  if (enabled(Rewrite::LaunchConstants)) findLaunchConstants(entry);
  if (enabled(Rewrite::ThreadConstants)) findThreadConstants(entry);
  if (enabled(Rewrite::CtaIndices)) findCtaIndices(entry);
  for (uint32_t f : order) {
    const ptx::Function& fn = mod_.functions[f];
    for (const ptx::Variable& v : fn.locals)
      if (v.space == ptx::Space::local || v.space == ptx::Space::param)
        frameAlign_ = std::max(frameAlign_, varAlign(v));
    if (!fn.isEntry) {
      for (const ptx::Variable& p : fn.params) frameAlign_ = std::max(frameAlign_, varAlign(p));
      for (const ptx::Variable& p : fn.returns) frameAlign_ = std::max(frameAlign_, varAlign(p));
    }
  }
  instances_.resize(order.size());
  for (size_t k = 0; k < order.size(); ++k) {
    instances_[k].irIndex = order[k];
    instanceOfIr_[order[k]] = uint32_t(k);
    layoutFunction(instances_[k]);
  }
  for (size_t k = 0; k < order.size(); ++k) {
    FunctionCode fc;
    fc.name = std::string(mod_.str(mod_.functions[order[k]].name));
    fc.isEntry = k == 0;
    fc.frameBytes = instances_[k].frameBytes;
    const auto& ro = instances_[k].regOffset;
    if (!ro.empty()) {
      fc.regBase = *std::min_element(ro.begin(), ro.end());
      uint32_t last = *std::max_element(ro.begin(), ro.end());
      fc.regBytes = last + 32 * 16 - fc.regBase;  // up to and including the widest possible last register (.b128)
      fc.regBytes = std::min(fc.regBytes, rfTop_ - fc.regBase);
    }
    instances_[k].codeIndex = uint32_t(prog_.functions.size());
    prog_.functions.push_back(fc);
  }
  info.staticSharedBytes = kernelSharedBytes();
  dynamicSharedBase_ = alignUp(sharedTop_, dynamicSharedAlign_);
  code_->dynamicSharedBase = dynamicSharedBase_;
  code_->sharedAlign = sharedAlign_;
  code_->constStart = rfTop_;  // declared registers end here; constants and temporaries follow
  {
    std::map<std::tuple<uint8_t, uint64_t, unsigned>, uint32_t> slots;
    for (auto& [reg, lc] : launchConstRegs_) {
      auto key = std::make_tuple(uint8_t(lc.kind), lc.value, lc.size);
      auto it = slots.find(key);
      if (it == slots.end()) {
        uint32_t off = allocReg(lc.size);
        ConstSlot s;
        s.offset = off;
        s.size = uint8_t(lc.size);
        s.kind = lc.kind;
        s.value = lc.value;
        bool perCta = lc.kind == ConstKind::ThreadIndex || lc.kind == ConstKind::CtaIndex;
        (perCta ? code_->indexConsts : code_->consts).push_back(s);
        it = slots.emplace(key, off).first;
      }
      instances_[0].regOffset[reg] = it->second;
    }
    // cta-indices: the registers keep their places; set-up writes them (after the prologue: lane terms may be
    // thread constants)
    for (const auto& [reg, a] : ctaAffineRegs_) {
      if (!a.read) continue;
      ConstSlot s;
      s.offset = instances_[0].regOffset[reg];
      s.kind = ConstKind::CtaAffine;
      s.value = a.component | (a.ntid >= 0 ? 4u | uint32_t(a.ntid) << 3 : 0u);
      s.addend = a.addend;
      s.multiplier = a.multiplier;
      s.laneAddend = a.laneReg == kNoIndex ? 0 : instances_[0].regOffset[a.laneReg];
      code_->indexConsts.push_back(s);
    }
  }
  // recursion: functions on a cycle of the call graph
  // (computed after lowering from the call sites)
  uint32_t firstCall = uint32_t(prog_.calls.size());

  for (size_t k = 0; k < order.size(); ++k) {
    fi_ = &instances_[k];
    fn_ = &mod_.functions[order[k]];
    prog_.functions[fi_->codeIndex].firstOp = here();
    if (k == 0) code_->function = fi_->codeIndex;
    // CFG
    const auto& ins = fn_->instructions;
    size_t n = ins.size();
    std::vector<bool> leader(n + 1, false);
    leader[0] = true;
    for (const auto& lab : fn_->labels)
      if (lab.kind == ptx::LabelKind::Code && lab.target != kNoIndex && lab.target <= n) leader[lab.target] = true;
    for (size_t i = 0; i < n; ++i) {
      Opcode oc = ins[i].opcode;
      if (oc == Opcode::Bra || oc == Opcode::BrxIdx || oc == Opcode::Ret || oc == Opcode::Exit) leader[i + 1] = true;
    }
    blockOf_.assign(n + 1, 0);
    blockStart_.clear();
    for (size_t i = 0; i <= n; ++i) {
      if (leader[i]) blockStart_.push_back(uint32_t(i));
      blockOf_[i] = uint32_t(blockStart_.size() - 1);
    }
    // blocks: [0, nb) ; the block starting at n (if any) is the end. Exit node = nb.
    uint32_t nb = uint32_t(blockStart_.size());
    uint32_t exitNode = nb;
    std::vector<std::vector<uint32_t>> succ(nb);
    // Dead ends: blocks that never go on, an unguarded call of the device runtime's assertion failure (which stops
    // the grid) or an unguarded trap in them. They take no part in reconvergence: a branch one of whose sides leads
    // only to a dead end reconverges where its other sides do. (nvcc puts an assertion's failure call last in a
    // function with nothing after it; followed to the function's end it made the exit every surrounding branch's
    // reconvergence point, so lanes that passed an assertion in a loop stayed apart up to the next barrier, which
    // counts a warp's arrival as all of it: CUTLASS's sparse compressor lost rows of its output.)
    auto endsThePath = [&](const Instruction& in) {
      if (in.opcode == Opcode::Trap) return true;
      const Operand* o = in.opcode == Opcode::Call ? calleeOperand(*fn_, in) : nullptr;
      if (!o || o->kind != OperandKind::Symbol || o->symKind != SymKind::Function) return false;
      const ptx::Function& callee = mod_.functions[definitionOf(o->index)];
      return !callee.hasBody && builtinNeverReturns(mod_.str(callee.name));
    };
    std::vector<bool> deadEnd(nb, false);
    for (uint32_t b = 0; b < nb; ++b) {
      const uint32_t s = blockStart_[b], e = b + 1 < nb ? blockStart_[b + 1] : uint32_t(n);
      for (uint32_t i = s; i < e && !deadEnd[b]; ++i) deadEnd[b] = ins[i].guard == kNoIndex && endsThePath(ins[i]);
    }
    auto labelBlock = [&](uint32_t label) -> uint32_t {
      const auto& lab = fn_->labels.at(label);
      if (lab.target == kNoIndex) fail(lab.loc.line, "branch to an undefined label");
      return blockOf_[lab.target];
    };
    for (uint32_t b = 0; b < nb; ++b) {
      uint32_t s = blockStart_[b];
      if (s >= n) {
        succ[b].push_back(exitNode);
        continue;
      }
      uint32_t e = (b + 1 < nb ? blockStart_[b + 1] : uint32_t(n)) - 1;
      const Instruction& last = ins[e];
      bool guarded = last.guard != kNoIndex;
      auto fall = [&]() { succ[b].push_back(e + 1 <= n ? blockOf_[e + 1] : exitNode); };
      if (deadEnd[b]) continue;
      switch (last.opcode) {
        case Opcode::Bra: {
          const Operand& t = fn_->operands[last.firstOperand + last.numOperands - 1];
          if (t.kind != OperandKind::Label) fail(last.loc.line, "bra needs a label");
          succ[b].push_back(branchExits(last) ? exitNode : labelBlock(t.index));
          if (guarded) fall();
          break;
        }
        case Opcode::BrxIdx: {
          const Operand& t = fn_->operands[last.firstOperand + last.numOperands - 1];
          if (t.kind != OperandKind::Label) fail(last.loc.line, "brx.idx needs a .branchtargets label");
          const auto& lab = fn_->labels.at(t.index);
          for (uint32_t q = 0; q < lab.listCount; ++q) succ[b].push_back(labelBlock(fn_->labelRefs[lab.listFirst + q]));
          if (guarded) fall();
          break;
        }
        case Opcode::Ret:
        case Opcode::Exit:
          succ[b].push_back(exitNode);
          if (guarded) fall();
          break;
        default: fall(); break;
      }
    }
    // post-dominators (iterative, on reverse post-order of the reverse graph)
    std::vector<std::vector<uint32_t>> pred(nb + 1);
    for (uint32_t b = 0; b < nb; ++b)
      for (uint32_t s : succ[b]) pred[s].push_back(b);
    // nodes that cannot reach the exit get an edge to it (infinite loops), unless they reach a dead end (their
    // paths stop there: they stay out of the post-dominator tree, and branches reconverge without them)
    auto reachable = [&](std::vector<uint32_t> stack) {
      std::vector<bool> reach(nb + 1, false);
      for (uint32_t x : stack) reach[x] = true;
      while (!stack.empty()) {
        uint32_t x = stack.back();
        stack.pop_back();
        for (uint32_t p : pred[x])
          if (!reach[p]) {
            reach[p] = true;
            stack.push_back(p);
          }
      }
      return reach;
    };
    std::vector<uint32_t> deadEnds;
    for (uint32_t b = 0; b < nb; ++b)
      if (deadEnd[b]) deadEnds.push_back(b);
    const std::vector<bool> reach = reachable({exitNode});
    const std::vector<bool> stops = deadEnds.empty() ? std::vector<bool>(nb + 1, false) : reachable(deadEnds);
    for (uint32_t b = 0; b < nb; ++b)
      if (!reach[b] && !stops[b]) {
        succ[b].push_back(exitNode);
        pred[exitNode].push_back(b);
      }
    // order: DFS from exit over pred edges, postorder
    std::vector<uint32_t> po, rpoIndex(nb + 1, 0);
    {
      std::vector<bool> vis(nb + 1, false);
      std::vector<std::pair<uint32_t, size_t>> st{{exitNode, 0}};
      vis[exitNode] = true;
      while (!st.empty()) {
        auto& [x, i] = st.back();
        if (i < pred[x].size()) {
          uint32_t p = pred[x][i++];
          if (!vis[p]) {
            vis[p] = true;
            st.push_back({p, 0});
          }
        } else {
          po.push_back(x);
          st.pop_back();
        }
      }
    }
    for (size_t i = 0; i < po.size(); ++i) rpoIndex[po[i]] = uint32_t(i);
    std::vector<int64_t> ipd(nb + 1, -1);
    ipd[exitNode] = exitNode;
    bool changed = true;
    auto intersect = [&](int64_t a, int64_t b2) {
      while (a != b2) {
        while (rpoIndex[a] < rpoIndex[b2]) a = ipd[a];
        while (rpoIndex[b2] < rpoIndex[a]) b2 = ipd[b2];
      }
      return a;
    };
    while (changed) {
      changed = false;
      for (size_t i = po.size(); i-- > 0;) {
        uint32_t b = po[i];
        if (b == exitNode) continue;
        int64_t nd = -1;
        for (uint32_t s : succ[b]) {
          if (ipd[s] == -1) continue;
          nd = nd == -1 ? int64_t(s) : intersect(s, nd);
        }
        if (nd != ipd[b]) {
          ipd[b] = nd;
          changed = true;
        }
      }
    }
    ipdom_.assign(nb, -1);
    std::vector<bool> needReconv(nb, false);
    for (uint32_t b = 0; b < nb; ++b) {
      int64_t d = ipd[b];
      ipdom_[b] = (d == -1 || d == exitNode) ? -1 : int32_t(d);
      uint32_t s = blockStart_[b];
      if (s >= n) continue;
      uint32_t e = (b + 1 < nb ? blockStart_[b + 1] : uint32_t(n)) - 1;
      const Instruction& last = ins[e];
      bool divergent = (last.opcode == Opcode::Bra && last.guard != kNoIndex) || last.opcode == Opcode::BrxIdx ||
                       (last.opcode == Opcode::Ret && last.guard != kNoIndex && !fn_->isEntry);
      if (divergent && ipdom_[b] >= 0) needReconv[ipdom_[b]] = true;
    }
    runFunctionRewrites(k == 0);
    // emit
    instOp_.assign(n + 1, 0);
    uint32_t funcStart = here();
    std::vector<uint32_t> blockOp(nb, 0);
    for (uint32_t i = 0; i < n; ++i) {
      line_ = ins[i].loc.line;
      if (ins[i].debugLoc) recordSourceLine(prog_, mod_, line_, ins[i].debugLoc);
      if (leader[i]) {
        uint32_t b = blockOf_[i];
        blockOp[b] = here();
        if (needReconv[b]) emit(&ctl::reconv);
      }
      instOp_[i] = leader[i] ? blockOp[blockOf_[i]] : here();
      resetTemps();
      if (rewrites_[i].emitsNothing()) continue;
      if (rewrites_[i].fmaChainTriples) emitSharedFma(i);
      if (rewrites_[i].sharedAddStep) emitSharedAddStep(i);
      lowerInstruction(i);
      if (i == addStepLast_) {
        if (here() != addStepOp_ + 5) prog_.ops[addStepOp_].fn = &ctl::nop;  // the four did not lower to four ops
        addStepLast_ = kNoIndex;
      }
    }
    line_ = n ? ins[n - 1].loc.line : fn_->loc.line;
    funcEndOp_ = here();
    instOp_[n] = funcEndOp_;
    if (leader[n]) blockOp[blockOf_[n]] = funcEndOp_;
    emit(k == 0 ? &ctl::kernelEnd : &ctl::funcEnd);
    // resolve branch targets and reconvergence points of this function
    for (auto& pt : pending_) {
      if (pt.kind == PendingTarget::RpcBlock) {
        pt.value = pt.value == 0xffffffffu ? funcEndOp_ : blockOp[pt.value];
        pt.kind = PendingTarget::Absolute;
        pt.rpc = true;
      } else if (pt.kind == PendingTarget::Inst) {
        pt.value = instOp_[pt.value];
        pt.kind = PendingTarget::Absolute;
      } else if (pt.kind == PendingTarget::BrxInst) {
        pt.value = instOp_[pt.value];
      }
    }
    fuseBranchesToBarriers(funcStart);
    for (const auto& pt : pending_) resolved_.push_back(pt);
    pending_.clear();
    for (auto [local, progIdx] : brxPending_) {
      if (prog_.brxTableIndices.size() <= progIdx) prog_.brxTableIndices.resize(progIdx + 1);
      for (uint32_t inst : brxTargets_[local]) prog_.brxTableIndices[progIdx].push_back(instOp_.at(inst));
    }
    brxPending_.clear();
    brxTargets_.clear();
    if (enabled(Rewrite::LoopWatches)) recordLoopWatches(succ, blockOp);
    (void)funcStart;
  }
  // call sites: callee frame/entry
  for (uint32_t c = firstCall; c < prog_.calls.size(); ++c) {
    CallSite& cs = prog_.calls[c];
    cs.callee = instances_[instanceOfIr_.at(cs.callee)].codeIndex;
  }
  for (auto& [opIndex, irCallee] : callOps_) {
    uint32_t ci = instanceOfIr_.at(irCallee);
    resolved_.push_back(
        PendingTarget{opIndex, prog_.functions[instances_[ci].codeIndex].firstOp, PendingTarget::Absolute});
  }
  callOps_.clear();
  emitThreadConstantPrologue();
  // recursion detection over the call graph of this kernel
  {
    size_t nf = instances_.size();
    std::vector<std::set<uint32_t>> edges(nf);
    for (uint32_t c = firstCall; c < prog_.calls.size(); ++c) {
      uint32_t from = callerOf_[c - firstCall];
      uint32_t to = prog_.calls[c].callee - instances_[0].codeIndex;
      edges[from].insert(to);
    }
    for (size_t f = 0; f < nf; ++f) {
      // f is recursive if f reaches itself
      std::vector<bool> vis(nf, false);
      std::vector<uint32_t> st(edges[f].begin(), edges[f].end());
      bool rec = false;
      while (!st.empty() && !rec) {
        uint32_t x = st.back();
        st.pop_back();
        if (x == f) rec = true;
        if (vis[x]) continue;
        vis[x] = true;
        for (uint32_t y : edges[x]) st.push_back(y);
      }
      prog_.functions[instances_[f].codeIndex].recursive = rec;
    }
    // local memory: deepest frame chain; recursion gets a fixed stack budget
    std::function<uint64_t(uint32_t, std::vector<bool>&)> depth = [&](uint32_t f,
                                                                      std::vector<bool>& onPath) -> uint64_t {
      uint64_t best = 0;
      onPath[f] = true;
      for (uint32_t c = firstCall; c < prog_.calls.size(); ++c) {
        if (callerOf_[c - firstCall] != f) continue;
        uint32_t to = prog_.calls[c].callee - instances_[0].codeIndex;
        uint64_t d = onPath[to] ? (uint64_t(1) << 14) : depth(to, onPath);
        best = std::max<uint64_t>(best, prog_.calls[c].callerFrameBytes + d);
      }
      onPath[f] = false;
      return std::max<uint64_t>(best, instances_[f].frameBytes);
    };
    std::vector<bool> onPath(nf, false);
    uint64_t local = depth(0, onPath);
    if (local > (uint64_t(1) << 24)) fail(entry.loc.line, "local memory per thread too large");
    code_->localBytes = alignUp(uint32_t(local), frameAlign_);
    callerOf_.clear();
  }
  code_->localAlign = frameAlign_;
  info.localBytesPerThread = code_->localBytes;
  info.unsupported = code_->unsupported;
  info.staticSharedBytes = kernelSharedBytes();
  code_->usesBarriers = usesBarriers_;
  code_->fastPaths = rewriteMask_ & kRuntimeFastPaths;
  info.mayWaitForOtherWork = hasBackwardBranch_ && observesOthers_;
  code_->regFileBytes = alignUp(rfTop_, 64);
  uint32_t regs = 0;
  for (auto& fi : instances_) {
    const ptx::Function& f = mod_.functions[fi.irIndex];
    for (const auto& r : f.registers) regs += r.type == Type::pred ? 0 : (sizeOf(r.type) + 3) / 4;
  }
  info.registerCount = std::min<uint32_t>(255, std::max<uint32_t>(regs, 1));
  if (entry.maxnreg) info.registerCount = std::min(info.registerCount, entry.maxnreg);  // `.maxnreg` bounds it
}

// The hoisted definitions (thread-constants), lowered as the entry function's instructions without any other
// rewrite, after all the kernel's functions so that they stand in none of their op ranges.
void KernelLowerer::emitThreadConstantPrologue() {
  if (hoisted_.empty()) return;
  fi_ = &instances_[0];
  fn_ = &mod_.functions[instances_[0].irIndex];
  rewrites_.assign(fn_->instructions.size() + 1, InstRewrite{});
  contractions_.assign(fn_->instructions.size() + 1, Contraction{});
  code_->prologueOp = here();
  for (uint32_t i : hoisted_) {
    curInst_ = i;
    line_ = fn_->instructions[i].loc.line;
    resetTemps();
    lowerInstruction(i);
  }
  for (const PrologueLayout& l : prologueLayouts_) {
    const bool wide = sizeOf(regType(l.reg)) == 8;
    Handler compute = nullptr;
    auto pick = [&]<size_t Size>() {
      compute = wide ? &mem::computeSharedLayout<uint64_t, Size> : &mem::computeSharedLayout<uint32_t, Size>;
    };
    switch (l.accessSize) {
      case 1: pick.operator()<1>(); break;
      case 2: pick.operator()<2>(); break;
      case 4: pick.operator()<4>(); break;
      case 8: pick.operator()<8>(); break;
      default: pick.operator()<16>(); break;
    }
    Op& op = emit(compute);
    op.a = regOf(l.reg);
    op.aux = l.slot;
  }
  emit(&ctl::endPrologue);
}

// ---- instructions ----------------------------------------------------------------------------------------------

void KernelLowerer::unsupported(const Instruction& in, std::string_view why) {
  // Unsupported instructions do not fail the module load: the kernel that contains them fails at launch (and the
  // op traps if reached), so modules that mix supported and unsupported kernels still load.
  std::string name(ptx::opcodeMnemonic(in.opcode));
  for (uint32_t k = 0; k < in.modCount; ++k) name += ptx::modText(fn_->mods[in.modFirst + k]);
  std::string msg = fmt::format("instruction '{}' (PTX line {}) is not supported by the interpreter{}{}", name,
                                in.loc.line, why.empty() ? "" : ": ", why);
  if (code_->unsupported.empty()) code_->unsupported = msg;
  ctl::TrapOperands{ctl::TrapOperands::Unsupported, uint32_t(prog_.messages.size())}.into(emit(&ctl::trap));
  prog_.messages.push_back(msg);
}

// A grid can wait for work outside itself only in a loop that reads what that work writes: weak loads may not
// observe other threads' writes (PTX memory model), so such a read is strong (volatile, relaxed, acquire), atomic,
// an mbarrier wait, or follows a nanosleep. A loop that reads a clock may wait for time to pass (simpleHyperQ's
// clock_block kernels on 32 streams must wait together, not one after the other on the launching thread).
void KernelLowerer::noteWaitingHazards(const Instruction& in, uint32_t idx) {
  switch (in.opcode) {
    case Opcode::Bra: {
      const Operand& t = opnd(in, in.numOperands - 1);
      if (fn_->labels.at(t.index).target <= idx) hasBackwardBranch_ = true;
      break;
    }
    case Opcode::BrxIdx:
    case Opcode::Call:  // an indirect call or one to a recursive function may loop as well
      hasBackwardBranch_ = true;
      break;
    case Opcode::Ld:
    case Opcode::Ldu:
      if (in.sem != Sem::none && in.sem != Sem::weak) observesOthers_ = true;
      break;
    case Opcode::Mov:
      for (uint32_t k = 0; k < in.numOperands; ++k) {
        const Operand& o = opnd(in, k);
        if (o.kind != OperandKind::Special) continue;
        const auto reg = static_cast<ptx::SpecialReg>(o.index);
        if (reg == ptx::SpecialReg::clock || reg == ptx::SpecialReg::clock_hi || reg == ptx::SpecialReg::clock64 ||
            reg == ptx::SpecialReg::globaltimer || reg == ptx::SpecialReg::globaltimer_lo ||
            reg == ptx::SpecialReg::globaltimer_hi)
          observesOthers_ = true;
      }
      break;
    case Opcode::Atom:
    case Opcode::MbarrierTest:
    case Opcode::MbarrierTry:
    case Opcode::Nanosleep:
    case Opcode::Suld:
    case Opcode::BarrierClusterWait: observesOthers_ = true; break;
    default: break;
  }
}

// setp-branch: a setp on the guard of branch `bra` right before it (same block, nothing in between but
// instructions that emit nothing) runs the op about to be emitted for the branch itself, which `then` names.
void KernelLowerer::markSetpBefore(uint32_t idx, const Instruction& bra, bool h::CompareOperands::*then) {
  uint32_t prev = idx;
  while (prev > 0 && rewrites_[prev - 1].emitsNothing()) --prev;
  if (prev > 0 && rewrites_[prev - 1].setpOp == here() - 1 && prog_.ops[here() - 1].d == regOf(bra.guard)) {
    h::CompareOperands setp = h::CompareOperands::of(prog_.ops[here() - 1]);
    setp.*then = true;
    setp.into(prog_.ops[here() - 1]);
  }
}

void KernelLowerer::lowerInstruction(uint32_t idx) {
  const Instruction& in = fn_->instructions[idx];
  curInst_ = idx;
  noteWaitingHazards(in, idx);
  bool guarded = in.guard != kNoIndex;
  // control flow first: these consume the guard themselves
  switch (in.opcode) {
    case Opcode::Bra: {
      if (branchExits(in)) break;  // lowered as the exit it is, below
      const Operand& t = opnd(in, in.numOperands - 1);
      const auto& lab = fn_->labels.at(t.index);
      uint32_t block = blockOf_[idx];
      if (!guarded) {
        pending_.push_back({here(), lab.target, PendingTarget::Inst});
        emit(&ctl::braUniform);
      } else {
        pending_.push_back({here(), lab.target, PendingTarget::Inst});
        int32_t r = ipdom_[block];
        pending_.push_back({here(), r < 0 ? 0xffffffffu : uint32_t(r), PendingTarget::RpcBlock});
        markSetpBefore(idx, in, &h::CompareOperands::thenBranch);
        ctl::PredicateTest{regOf(in.guard), in.guardNegated, false,
                           fn_->isEntry && threadConstRegs_.count(in.guard) != 0}
            .into(emit(&ctl::braCond));
      }
      return;
    }
    case Opcode::Ret:
      if (!fn_->isEntry) {
        uint32_t block = blockOf_[idx];
        pending_.push_back({here(), uint32_t(fn_->instructions.size()), PendingTarget::Inst});
        if (!guarded) {
          emit(&ctl::braUniform);
        } else {
          int32_t r = ipdom_[block];
          pending_.push_back({here(), r < 0 ? 0xffffffffu : uint32_t(r), PendingTarget::RpcBlock});
          ctl::PredicateTest{regOf(in.guard), in.guardNegated}.into(emit(&ctl::braCond));
        }
        return;
      }
      break;
    case Opcode::BrxIdx: {
      if (guarded) return unsupported(in, "guarded brx.idx");
      const Operand& t = opnd(in, in.numOperands - 1);
      const auto& lab = fn_->labels.at(t.index);
      uint32_t table = uint32_t(brxTargets_.size());
      brxTargets_.emplace_back();
      for (uint32_t q = 0; q < lab.listCount; ++q) {
        const auto& target = fn_->labels.at(fn_->labelRefs[lab.listFirst + q]);
        brxTargets_.back().push_back(target.target);
      }
      brxPending_.push_back({table, uint32_t(prog_.brxTables.size())});
      prog_.brxTables.emplace_back();
      uint32_t block = blockOf_[idx];
      int32_t r = ipdom_[block];
      uint32_t a = src(opnd(in, 0), Type::u32);
      pending_.push_back({here(), r < 0 ? 0xffffffffu : uint32_t(r), PendingTarget::RpcBlock});
      ctl::IndexedBranch{a, brxPending_.back().second}.into(emit(&ctl::brxIdx));
      return;
    }
    case Opcode::Call:
      if (isIndirectCall(*fn_, in)) return lowerIndirectCall(in);  // consumes the guard itself
      break;
    default: break;
  }
  if (guarded && in.opcode == Opcode::Bra && enabled(Rewrite::GuardedExits)) {  // branchExits
    markSetpBefore(idx, in, &h::CompareOperands::thenExit);
    // (threadConstant as braCond's: barrier credits ending at this exit are then remembered per warp)
    ctl::PredicateTest{regOf(in.guard), in.guardNegated, false, fn_->isEntry && threadConstRegs_.count(in.guard) != 0}
        .into(emit(&ctl::exitWhere));
    return;
  }
  uint32_t guardOp = 0;
  if (guarded) {
    guardOp = here();
    ctl::PredicateTest{regOf(in.guard), in.guardNegated}.into(emit(&ctl::guard));
  }
  if (in.opcode == Opcode::Bra)  // branchExits
    emit(&ctl::exitLanes);
  else
    lowerBody(in);
  if (guarded) {
    emit(&ctl::unguard);
    pending_.push_back({guardOp, here(), PendingTarget::Absolute});
  }
}

// Lanes of a kernel that branch to its `ret` (`if (i >= n) return;`) have nothing left to run, and on the GPU they
// have exited there: ptxas compiles such a branch to EXIT. So they exit here too, rather than wait at the `ret` for
// the other lanes as alive lanes. The difference shows in warp collectives (a shfl.sync reading such a lane gets 0,
// an H100's answer, not the lane's register: tools/gpu-probe/results/synccheck19-h100-2026-11-27.txt, variant 11),
// in the barrier counts of the lanes left, and in synccheck, which sees exited lanes, not a divergent warp.
bool KernelLowerer::branchExits(const Instruction& bra) const {
  if (!fn_->isEntry || bra.opcode != Opcode::Bra) return false;
  const Operand& t = fn_->operands[bra.firstOperand + bra.numOperands - 1];
  if (t.kind != OperandKind::Label) return false;
  uint32_t target = fn_->labels.at(t.index).target;
  if (target == kNoIndex || target >= fn_->instructions.size()) return false;
  const Instruction& first = fn_->instructions[target];
  return (first.opcode == Opcode::Ret || first.opcode == Opcode::Exit) && first.guard == kNoIndex;
}

// Every instruction goes to the lowering of its class (the opcode table's OpClass); arithmetic and logic are
// further split by type (integer, single/double, half precision, 16-bit SIMD pairs).
void KernelLowerer::lowerBody(const Instruction& in) {
  Type t = in.type();
  switch (ptx::opcodeClass(in.opcode)) {
    case ptx::OpClass::Arith:
    case ptx::OpClass::Logic:
      if (t == Type::f32 || t == Type::f64) return lowerFloat(in);
      if (t == Type::f32x2 && (in.opcode == Opcode::Add || in.opcode == Opcode::Sub || in.opcode == Opcode::Mul ||
                               in.opcode == Opcode::Fma))
        return lowerFloat(in);
      if (t == Type::f16 || t == Type::f16x2 || t == Type::bf16 || t == Type::bf16x2) return lowerHalf(in);
      if (t == Type::u16x2 || t == Type::s16x2) return lowerPacked16(in);
      if (isFloat(t)) return unsupported(in);
      return lowerArith(in);
    case ptx::OpClass::Compare: return lowerCompare(in);
    case ptx::OpClass::Move: return lowerMove(in);
    case ptx::OpClass::Convert: return lowerConvert(in);
    case ptx::OpClass::Memory: return lowerMemory(in);
    case ptx::OpClass::Atomic: return lowerAtomic(in);
    case ptx::OpClass::Texture: return lowerTexture(in);
    case ptx::OpClass::Control: return lowerControl(in);
    case ptx::OpClass::Sync: return lowerSync(in);
    case ptx::OpClass::Warp: return lowerWarp(in);
    case ptx::OpClass::Video: return lowerVideo(in);
    case ptx::OpClass::Misc: return lowerMisc(in);
    case ptx::OpClass::AsyncCopy: return lowerAsyncCopy(in);
    case ptx::OpClass::Matrix: return lowerMatrix(in);
  }
  unsupported(in);
}

}  // namespace lowering

namespace {

// The module-level part of a program: the variables the driver allocates (with their relocations) and the IR
// index of every kernel. Fails on initializers the interpreter cannot place.
bool describeModule(const ptx::Module& module, Program& prog, std::vector<uint32_t>& globalMap, std::string& error) {
  globalMap.assign(module.globals.size(), kNoIndex);
  for (size_t g = 0; g < module.globals.size(); ++g) {
    const ptx::Variable& v = module.globals[g];
    if (v.space != ptx::Space::global && v.space != ptx::Space::const_) continue;
    GlobalInfo gi;
    gi.name = std::string(module.str(v.name));
    gi.space = v.space == ptx::Space::const_ ? VarSpace::Const : VarSpace::Global;
    switch (v.linkage) {
      case ptx::Linkage::extern_: gi.linkage = Linkage::Extern; break;
      case ptx::Linkage::visible: gi.linkage = Linkage::Visible; break;
      case ptx::Linkage::weak: gi.linkage = Linkage::Weak; break;
      case ptx::Linkage::common: gi.linkage = Linkage::Common; break;
      default: gi.linkage = Linkage::Internal; break;
    }
    gi.size = v.size ? v.size : v.elementSize();
    gi.align = lowering::varAlign(v);
    gi.managed = v.managed;
    if (v.hasInit) gi.init = v.init;
    globalMap[g] = uint32_t(prog.globalInfo.size());
    prog.globalInfo.push_back(std::move(gi));
  }
  for (size_t g = 0; g < module.globals.size(); ++g) {
    const ptx::Variable& v = module.globals[g];
    if (globalMap[g] == kNoIndex) continue;
    for (const auto& r : v.relocs) {
      Relocation rel;
      rel.offset = r.offset;
      rel.size = r.size;
      rel.addend = r.addend;
      if (r.isMask) {
        error = fmt::format("line {}: mask() initializers are not supported", v.loc.line);
        return false;
      }
      if (r.symKind == SymKind::Function) {
        rel.isFunction = true;
        rel.symbol = r.index;
        if (!module.functions[r.index].hasBody)  // a declaration: the definition of the same name, if any
          for (uint32_t k = 0; k < module.functions.size(); ++k)
            if (module.functions[k].hasBody && !module.functions[k].isEntry &&
                module.functions[k].name == module.functions[r.index].name)
              rel.symbol = k;
      } else {
        if (globalMap[r.index] == kNoIndex) {
          error = fmt::format("line {}: initializer refers to a variable that has no global address", v.loc.line);
          return false;
        }
        rel.symbol = globalMap[r.index];
      }
      prog.globalInfo[globalMap[g]].relocations.push_back(rel);
    }
  }
  for (size_t f = 0; f < module.functions.size(); ++f)
    if (module.functions[f].isEntry && module.functions[f].hasBody) prog.kernelEntries.push_back(uint32_t(f));
  return true;
}

// Turns the lowering's op indices into pointers (the ops do not move any more).
void patchTargets(Program& prog) {
  for (const auto& pt : prog.pendingTargets) {
    Op& op = prog.ops[pt.op];
    const Op* target = &prog.ops[pt.target];
    if (pt.rpc)
      op.rpc = target;
    else
      op.target = target;
  }
  prog.pendingTargets.clear();
  prog.pendingTargets.shrink_to_fit();
  prog.brxTables.resize(prog.brxTableIndices.size());
  for (size_t t = 0; t < prog.brxTableIndices.size(); ++t)
    for (uint32_t i : prog.brxTableIndices[t]) prog.brxTables[t].push_back(&prog.ops[i]);
}

// Lowers one kernel into `prog` (appending its code); false with `error` ("line N: message") on a LowerError.
bool lowerInto(const ptx::Module& module, Program& prog, const std::vector<uint32_t>& globalMap, uint32_t rewrites,
               bool contractMulAdd, lowering::ModuleLookups& lookups, uint32_t entryIr, std::string& error) {
  try {
    lowering::KernelLowerer kl(module, prog, globalMap, rewrites, lookups, contractMulAdd);
    kl.lowerKernel(entryIr);
    // ops do not move any more within this kernel, but the vector may still grow: indices now, pointers at the end
    for (auto& pt : kl.resolved()) prog.pendingTargets.push_back({pt.op, pt.value, pt.rpc});
  } catch (const LowerError& e) {
    error = fmt::format("line {}: {}", e.line, e.message);
    return false;
  }
  return true;
}

// A body's instructions and what only they use: what a lowered entry no longer needs (nothing calls an entry).
void dropBody(ptx::Function& fn) {
  std::vector<ptx::Register>().swap(fn.registers);
  std::vector<ptx::RegDecl>().swap(fn.regDecls);
  std::vector<ptx::Label>().swap(fn.labels);
  std::vector<Instruction>().swap(fn.instructions);
  std::vector<Operand>().swap(fn.operands);
  std::vector<Operand>().swap(fn.elems);
  std::vector<ptx::Mod>().swap(fn.mods);
  std::vector<uint32_t>().swap(fn.labelRefs);
  std::vector<ptx::BlockScope>().swap(fn.scopes);
  std::vector<ptx::BodyPragma>().swap(fn.bodyPragmas);
}

// The text a lazy load keeps for the bodies not lowered yet; from 1 MiB on zstd-compressed in blocks of 256 KiB
// (PTX from nvcc compresses about 7x; the text was about a third of what a load of many small kernels kept: 30,000
// kernels, 14.3 MB, kept 3.36x the text plain, 2.42x compressed, with the load's CPU time unchanged at 0.15 s).
// A kernel's first lowering decompresses the blocks its body spans. Below 1 MiB the text is kept as is.
// Not thread-safe: used under LazyKernels::mutex.
class CompressedText {
 public:
  CompressedText() = default;
  explicit CompressedText(std::string&& text) : size_(text.size()) {
    if (text.size() < kCompressFrom) {
      plain_ = std::move(text);
      return;
    }
    ZSTD_CCtx* context = ZSTD_createCCtx();
    for (size_t at = 0; at < text.size(); at += kBlock) {
      size_t n = std::min(kBlock, text.size() - at);
      std::string packed(ZSTD_compressBound(n), '\0');
      size_t written =
          context ? ZSTD_compressCCtx(context, packed.data(), packed.size(), text.data() + at, n, kLevel) : size_t(-1);
      if (!context || ZSTD_isError(written)) {
        packed.assign(text.data() + at, n);  // stored as is
        stored_.push_back(true);
      } else {
        packed.resize(written);
        packed.shrink_to_fit();
        stored_.push_back(false);
      }
      blocks_.push_back(std::move(packed));
    }
    ZSTD_freeCCtx(context);
  }
  // Bytes [begin, end) of the text, valid until the next call; empty when they cannot be read back.
  std::string_view range(uint64_t begin, uint64_t end) {
    if (begin > end || end > size_) return {};
    if (blocks_.empty()) return std::string_view(plain_).substr(size_t(begin), size_t(end - begin));
    size_t first = size_t(begin / kBlock), last = size_t((end - (end > begin)) / kBlock);
    if (first == last) {
      if (!block(first)) return {};
      return std::string_view(cache_).substr(size_t(begin - uint64_t(first) * kBlock), size_t(end - begin));
    }
    joined_.clear();
    for (size_t b = first; b <= last; ++b) {
      if (!block(b)) return {};
      joined_ += cache_;
    }
    return std::string_view(joined_).substr(size_t(begin - uint64_t(first) * kBlock), size_t(end - begin));
  }

 private:
  static constexpr size_t kBlock = size_t(256) << 10;
  static constexpr size_t kCompressFrom = size_t(1) << 20;
  static constexpr int kLevel = 1;
  bool block(size_t b) {
    if (cached_ == b) return true;
    cached_ = SIZE_MAX;
    size_t n = std::min<uint64_t>(kBlock, size_ - uint64_t(b) * kBlock);
    if (stored_[b]) {
      cache_ = blocks_[b];
    } else {
      cache_.resize(n);
      size_t got = ZSTD_decompress(cache_.data(), n, blocks_[b].data(), blocks_[b].size());
      if (ZSTD_isError(got) || got != n) return false;
    }
    cached_ = b;
    return true;
  }
  uint64_t size_ = 0;
  std::string plain_;  // below kCompressFrom
  std::vector<std::string> blocks_;
  std::vector<bool> stored_;
  std::string cache_, joined_;
  size_t cached_ = SIZE_MAX;
};

}  // namespace

struct LazyKernels {
  std::unique_ptr<ptx::Module> module;  // the checked IR; released once every kernel is lowered
  // The entry bodies the load kept as text (lookups.keptBodies): where they stand, the names before them, and the
  // text itself (moved to `text`).
  ptx::KeptBodies kept;
  CompressedText text;
  std::vector<uint32_t> globalMap;
  uint32_t rewrites = 0;
  bool contractMulAdd = true;
  lowering::ModuleLookups lookups;
  std::mutex mutex;                                     // lowering is one kernel at a time
  std::unique_ptr<std::atomic<const Program*>[]> code;  // per kernel, null until lowered
  std::vector<std::unique_ptr<Program>> owned;
  size_t unlowered = 0;
  std::once_flag allLowered;
  std::vector<KernelInfo> complete;  // every kernel's complete info, once kernels() asked for it
};

std::unique_ptr<Program> lowerModule(const ptx::Module& module, std::string& error, uint32_t rewrites,
                                     bool contractMulAdd) {
  auto prog = std::make_unique<Program>();
  std::vector<uint32_t> globalMap;
  if (!describeModule(module, *prog, globalMap, error)) return nullptr;
  lowering::ModuleLookups lookups;
  // The tree stays whole until the program is complete: dropping lowered bodies on the way lowers the peak little
  // and scatters the program over the tree's pages, which then cannot be given back (7.5x the text resident after
  // a 48 MB load instead of 3x).
  for (uint32_t entry : prog->kernelEntries)
    if (!lowerInto(module, *prog, globalMap, rewrites, contractMulAdd, lookups, entry, error)) return nullptr;
  patchTargets(*prog);
  return prog;
}

bool KeptKernelBodies::keep(const ptx::Module& module, uint32_t function) {
  // map_f64_to_f32 demotes the tree after the check (demoteF64ToF32): such old modules keep their bodies.
  if (module.mapF64ToF32) return false;
  lowering::BodyRefs refs = lowering::bodyRefs(module, module.functions[function]);
  if (refs.indirectCall || !refs.functions.empty() || !refs.sharedGlobals.empty())
    this->refs.emplace(function, std::move(refs));
  return true;
}

std::unique_ptr<Program> describeForLazyLowering(std::unique_ptr<ptx::Module> module, std::string& error,
                                                 uint32_t rewrites, KeptKernelBodies kept, bool contractMulAdd) {
  auto prog = std::make_unique<Program>();
  auto lazy = std::make_shared<LazyKernels>();
  lazy->kept = std::move(kept.bodies);
  if (!lazy->kept.bodies.empty()) lazy->text = CompressedText(std::move(lazy->kept.text));
  std::string().swap(lazy->kept.text);
  lazy->lookups.keptBodyRefs = std::move(kept.refs);
  lazy->lookups.keptBodies.reserve(lazy->kept.bodies.size());
  for (const auto& [function, place] : lazy->kept.bodies) lazy->lookups.keptBodies.push_back(function);
  if (!describeModule(*module, *prog, lazy->globalMap, error)) return nullptr;
  lazy->rewrites = rewrites;
  lazy->contractMulAdd = contractMulAdd;
  size_t n = prog->kernelEntries.size();
  lazy->code = std::make_unique<std::atomic<const Program*>[]>(n);
  lazy->owned.resize(n);
  lazy->unlowered = n;
  Program scratch;
  prog->kernelInfo.reserve(n);
  // Without static .shared data outside the entries (module-level or in functions), a kernel's static shared memory
  // is its own: no walk over what it may call.
  auto staticShared = [](const ptx::Variable& v) {
    return v.space == ptx::Space::shared && !lowering::isDynamicShared(v);
  };
  bool sharedOutsideEntries = std::any_of(module->globals.begin(), module->globals.end(), staticShared);
  for (const ptx::Function& fn : module->functions)
    if (!fn.isEntry && std::any_of(fn.locals.begin(), fn.locals.end(), staticShared)) sharedOutsideEntries = true;
  for (uint32_t entry : prog->kernelEntries) {
    KernelInfo info = lowering::declaredKernelInfo(*module, entry);
    info.staticSharedBytes = lowering::KernelLowerer(*module, scratch, lazy->globalMap, rewrites, lazy->lookups)
                                 .staticSharedBytes(entry, !sharedOutsideEntries);
    prog->kernelInfo.push_back(std::move(info));
  }
  lazy->module = std::move(module);
  prog->lazy = std::move(lazy);
  return prog;
}

const Program& loweredKernel(const Program& program, int kernel, int& codeKernel) {
  codeKernel = kernel;
  if (!program.lazy) return program;
  LazyKernels& lazy = *program.lazy;
  codeKernel = 0;
  if (const Program* code = lazy.code[size_t(kernel)].load(std::memory_order_acquire)) return *code;
  std::lock_guard lock(lazy.mutex);
  if (const Program* code = lazy.code[size_t(kernel)].load(std::memory_order_relaxed)) return *code;
  auto code = std::make_unique<Program>();
  uint32_t entry = program.kernelEntries[size_t(kernel)];
  std::string error;
  bool parsed = true;
  if (lazy.lookups.bodyIsText(*lazy.module, entry)) {
    auto kept = std::lower_bound(lazy.kept.bodies.begin(), lazy.kept.bodies.end(), entry,
                                 [](const auto& body, uint32_t f) { return body.first < f; });
    ptx::Diagnostics diags;
    // The body and the start of its first line (the parser counts columns from there).
    ptx::BodyPlace place = kept->second;
    uint64_t lineStart = place.offset - std::min<uint64_t>(place.offset, place.start.col - 1);
    std::string_view text = lazy.text.range(lineStart, place.offset + place.length);
    place.offset -= lineStart;
    parsed = ptx::parseEntryBody(*lazy.module, entry, text, place, lazy.kept.names, diags);
    if (!parsed)  // it parsed when the module was loaded: only an inconsistency of cuemu's gets here
      error = diags.all().empty() ? std::string("the kept body does not parse again")
                                  : fmt::format("line {}: {}", diags.all()[0].line, diags.all()[0].message);
  }
  if (parsed &&
      lowerInto(*lazy.module, *code, lazy.globalMap, lazy.rewrites, lazy.contractMulAdd, lazy.lookups, entry, error)) {
    patchTargets(*code);
  } else {
    // Found only by lowering (an interpreter limit the checker does not know): the kernel's launches fail with
    // it, as an eager load would have failed.
    code = std::make_unique<Program>();
    code->kernelInfo.push_back(program.kernelInfo[size_t(kernel)]);
    code->kernelCode.emplace_back();
    code->kernelCode[0].irFunction = entry;
    code->kernelInfo[0].unsupported = code->kernelCode[0].unsupported = std::move(error);
  }
  code->kernelEntries = {entry};
  {
    Program scratch;
    lowering::KernelLowerer(*lazy.module, scratch, lazy.globalMap, lazy.rewrites, lazy.lookups)
        .beforeDroppingBody(entry);
  }
  dropBody(lazy.module->functions[entry]);
  if (--lazy.unlowered == 0) {
    lazy.module.reset();
    lazy.kept = ptx::KeptBodies{};
    lazy.text = CompressedText();
  }
  const Program* published = code.get();
  lazy.owned[size_t(kernel)] = std::move(code);
  lazy.code[size_t(kernel)].store(published, std::memory_order_release);
  return *published;
}

const Program& programOfLine(const Program& program, uint32_t ptxLine) {
  if (!program.lazy || program.sourceLines.count(ptxLine)) return program;
  std::lock_guard lock(program.lazy->mutex);
  for (const std::unique_ptr<Program>& code : program.lazy->owned)
    if (code && code->sourceLines.count(ptxLine)) return *code;
  return program;
}

const KernelInfo& kernelInfo(const Program& program, int kernel) {
  int codeKernel = 0;
  const Program& code = loweredKernel(program, kernel, codeKernel);
  return code.kernelInfo[size_t(codeKernel)];
}

const std::vector<KernelInfo>& kernels(const Program& program) {
  if (!program.lazy) return program.kernelInfo;
  LazyKernels& lazy = *program.lazy;
  std::call_once(lazy.allLowered, [&] {
    std::vector<KernelInfo> all;
    for (size_t k = 0; k < program.kernelInfo.size(); ++k) all.push_back(kernelInfo(program, int(k)));
    lazy.complete = std::move(all);
  });
  return lazy.complete;
}

const std::vector<KernelInfo>& declaredKernels(const Program& program) { return program.kernelInfo; }

bool lowersLazily(const Program& program) { return program.lazy != nullptr; }

size_t loweredKernelCount(const Program& program) {
  if (!program.lazy) return program.kernelInfo.size();
  size_t n = 0;
  for (size_t k = 0; k < program.kernelInfo.size(); ++k)
    n += program.lazy->code[k].load(std::memory_order_acquire) != nullptr;
  return n;
}

}  // namespace ptx::exec
