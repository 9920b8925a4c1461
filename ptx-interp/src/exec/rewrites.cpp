// The lowering rewrites (ptx/rewrites.def): passes over a kernel's PTX IR that record, per instruction, where a
// faster op sequence with the same results and faults applies (KernelLowerer::InstRewrite); the lowering of each
// instruction reads its record. Each pass runs only when its rewrite is enabled, so switching one off leaves the
// plain lowering of every instruction it would have touched.
#include "exec/lowerer.h"

namespace ptx::exec::lowering {

// Runs the per-function passes for the function being lowered (fn_, blockOf_ set). The entry function also gets
// the launch-constants pass's per-instruction result (computed once per kernel by findLaunchConstants).
void KernelLowerer::runFunctionRewrites(bool entry) {
  rewrites_.assign(fn_->instructions.size() + 1, InstRewrite{});
  if (entry) {
    for (const auto& [reg, lc] : launchConstRegs_)
      if (lc.defInst < fn_->instructions.size()) rewrites_[lc.defInst].launchConstant = true;
    for (uint32_t i : hoisted_) rewrites_[i].hoisted = true;
    for (const auto& [reg, a] : ctaAffineRegs_) rewrites_[a.defInst].ctaIndex = true;
  }
  countMentions();
  if (enabled(Rewrite::AddressAdds)) findAddressAdds();
  if (enabled(Rewrite::ScaledIndices)) findScaledIndices();
  if (enabled(Rewrite::SharedLayouts)) findSharedLayoutChains();
  if (enabled(Rewrite::SharedFmaChains)) findSharedFmaTriples();
  if (enabled(Rewrite::SharedAddSteps)) findSharedAddSteps();
  if (enabled(Rewrite::MaskedCompares) || enabled(Rewrite::IntegerMads)) findFoldedIntegerPairs();
  findContractions();  // semantics, not a fast path: CompileOptions::contractMulAdd switches it
}

namespace {
// How often each register of fn is the destination of an instruction (its first operand; registers of a vector or
// pair destination count twice, so that they never look like a single definition), and the last such instruction.
void countDefinitions(const ptx::Function& fn, std::vector<uint32_t>& defs, std::vector<int64_t>& defInst) {
  size_t nregs = fn.registers.size();
  defs.assign(nregs, 0);
  defInst.assign(nregs, -1);
  auto countDef = [&](const Operand& o, size_t i) {
    if (o.kind == OperandKind::Reg || o.kind == OperandKind::RegPair) {
      if (o.index < nregs) {
        defs[o.index]++;
        defInst[o.index] = int64_t(i);
      }
      if (o.kind == OperandKind::RegPair && uint64_t(o.value) < nregs) defs[size_t(o.value)] += 2;
    } else if (o.kind == OperandKind::Vector) {
      for (int64_t q = 0; q < o.value; ++q) {
        const Operand& e = fn.elems[o.index + uint32_t(q)];
        if (e.kind == OperandKind::Reg && e.index < nregs) defs[e.index] += 2;
      }
    }
  };
  for (size_t i = 0; i < fn.instructions.size(); ++i) {
    const Instruction& in = fn.instructions[i];
    if (in.numOperands) countDef(fn.operands[in.firstOperand], i);
  }
}

// Pure lane-wise integer and predicate work: no memory, no faults, no state beyond the destination register (the
// carry-flag forms, division and remainder are left out).
bool threadConstantOpcode(Opcode oc) {
  switch (oc) {
    case Opcode::Add:
    case Opcode::Sub:
    case Opcode::Mul:
    case Opcode::Mad:
    case Opcode::Mul24:
    case Opcode::Mad24:
    case Opcode::Sad:
    case Opcode::Abs:
    case Opcode::Neg:
    case Opcode::Min:
    case Opcode::Max:
    case Opcode::Popc:
    case Opcode::Clz:
    case Opcode::Bfind:
    case Opcode::Brev:
    case Opcode::Bfe:
    case Opcode::Bfi:
    case Opcode::Setp:
    case Opcode::Selp:
    case Opcode::And:
    case Opcode::Or:
    case Opcode::Xor:
    case Opcode::Not:
    case Opcode::Cnot:
    case Opcode::Lop3:
    case Opcode::Shl:
    case Opcode::Shr:
    case Opcode::Mov:
    case Opcode::Cvt:
    case Opcode::Prmt: return true;
    default: return false;
  }
}
}  // namespace

void KernelLowerer::findLaunchConstants(const ptx::Function& fn) {
  size_t nregs = fn.registers.size();
  std::vector<uint32_t> defs;
  std::vector<int64_t> defInst;
  countDefinitions(fn, defs, defInst);
  bool changed = true;
  while (changed) {
    changed = false;
    for (size_t r = 0; r < nregs; ++r) {
      if (defs[r] != 1 || launchConstRegs_.count(uint32_t(r))) continue;
      const Instruction& in = fn.instructions[size_t(defInst[r])];
      if (in.guard != kNoIndex || in.numOperands != 2) continue;
      const Operand& d = fn.operands[in.firstOperand];
      const Operand& s = fn.operands[in.firstOperand + 1];
      if (d.kind != OperandKind::Reg || d.sel) continue;
      unsigned rs = sizeOf(fn.registers[r].type);
      std::optional<LaunchConst> lc;
      if (in.opcode == Opcode::Ld && (in.space == ptx::Space::param || in.space == ptx::Space::param_entry) &&
          !in.vec && s.kind == OperandKind::Address && s.symKind == SymKind::Param && ptx::typeSize(in.type()) == rs &&
          s.index < info_->params.size()) {
        lc = LaunchConst{ConstKind::ParamValue, info_->params[s.index].offset + uint64_t(s.value), rs};
      } else if (in.opcode == Opcode::Mov && s.kind == OperandKind::Special && rs == 4) {
        auto sr = static_cast<ptx::SpecialReg>(s.index);
        if (sr == ptx::SpecialReg::ntid)
          lc = LaunchConst{ConstKind::LaunchDim, ptx::selComponent(s.sel), 4};
        else if (sr == ptx::SpecialReg::nctaid)
          lc = LaunchConst{ConstKind::LaunchDim, 3 + ptx::selComponent(s.sel), 4};
        // written once per CTA instead of by an op in every warp: the value is the same wherever the only
        // definition stands (a use before it reads an undefined register in PTX)
        else if (sr == ptx::SpecialReg::tid)
          lc = LaunchConst{ConstKind::ThreadIndex, ptx::selComponent(s.sel), 4};
        else if (sr == ptx::SpecialReg::ctaid)
          lc = LaunchConst{ConstKind::CtaIndex, ptx::selComponent(s.sel), 4};
      } else if ((in.opcode == Opcode::Mov ||
                  (in.opcode == Opcode::Cvta && in.has(ptx::Flag::to) && (in.space == ptx::Space::global))) &&
                 s.kind == OperandKind::Reg && !s.sel) {
        auto it = launchConstRegs_.find(s.index);
        if (it != launchConstRegs_.end() && it->second.size == rs) lc = it->second;
      }
      if (!lc) continue;
      lc->defInst = uint32_t(defInst[r]);
      launchConstRegs_[uint32_t(r)] = *lc;
      changed = true;
    }
  }
}

void KernelLowerer::findThreadConstants(const ptx::Function& fn) {
  std::vector<uint32_t> defs;
  std::vector<int64_t> defInst;
  countDefinitions(fn, defs, defInst);
  auto integral = [](Type t) {
    const TypeKind k = ptx::typeKind(t);
    return k == TypeKind::Pred || k == TypeKind::Bits || k == TypeKind::Unsigned || k == TypeKind::Signed;
  };
  // what a source may be: the same value in every CTA, and lowered to a register without an op that reads the warp
  auto constantSource = [&](const Operand& o) {
    switch (o.kind) {
      case OperandKind::Imm: return true;
      case OperandKind::Reg: {
        if (o.sel) return false;
        if (threadConstRegs_.count(o.index)) return true;
        auto it = launchConstRegs_.find(o.index);
        return it != launchConstRegs_.end() && it->second.kind != ConstKind::CtaIndex &&
               it->second.kind != ConstKind::CtaAffine;
      }
      case OperandKind::Symbol:
        // shared variables are offsets, globals launch constants, entry parameters offsets; local variables
        // and the parameters of other functions are frame addresses (ctl::localAddr)
        return o.symKind == SymKind::Global || o.symKind == SymKind::Function ||
               (o.symKind == SymKind::Param && fn.isEntry) ||
               (o.symKind == SymKind::Local && o.index < fn.locals.size() &&
                fn.locals[o.index].space == ptx::Space::shared);
      default: return false;
    }
  };
  const size_t n = fn.instructions.size();
  std::vector<bool> taken(n, false);
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = 0; i < n; ++i) {
      const Instruction& in = fn.instructions[i];
      if (taken[i] || in.guard != kNoIndex || in.numOperands < 2 || !threadConstantOpcode(in.opcode)) continue;
      const Operand& d = fn.operands[in.firstOperand];
      if (d.kind != OperandKind::Reg || d.sel || d.index >= defs.size() || defs[d.index] != 1 ||
          launchConstRegs_.count(d.index))
        continue;
      bool ok = integral(fn.registers[d.index].type);
      for (unsigned t = 0; t < in.numTypes && ok; ++t) ok = integral(in.types[t]);
      for (unsigned k = 1; k < in.numOperands && ok; ++k) ok = constantSource(fn.operands[in.firstOperand + k]);
      if (!ok) continue;
      taken[i] = true;
      threadConstRegs_.insert(d.index);
      hoisted_.push_back(uint32_t(i));
      changed = true;
    }
  }
}

void KernelLowerer::findCtaIndices(const ptx::Function& fn) {
  std::vector<uint32_t> defs;
  std::vector<int64_t> defInst;
  countDefinitions(fn, defs, defInst);
  auto u32Reg = [&](const Operand& o) {
    return o.kind == OperandKind::Reg && !o.sel && o.index < fn.registers.size() &&
           fn.registers[o.index].type != Type::pred && sizeOf(fn.registers[o.index].type) == 4;
  };
  auto launchKind = [&](const Operand& o, ConstKind kind) -> const LaunchConst* {
    if (!u32Reg(o)) return nullptr;
    auto it = launchConstRegs_.find(o.index);
    return it != launchConstRegs_.end() && it->second.kind == kind ? &it->second : nullptr;
  };
  // %ctaid.c itself, or a register found below with no lane term: c * multiplier (* %ntid) + addend
  auto uniform = [&](const Operand& o) -> std::optional<CtaAffine> {
    if (const LaunchConst* lc = launchKind(o, ConstKind::CtaIndex)) return CtaAffine{uint32_t(lc->value)};
    if (!u32Reg(o)) return std::nullopt;
    auto it = ctaAffineRegs_.find(o.index);
    if (it == ctaAffineRegs_.end() || it->second.laneReg != kNoIndex) return std::nullopt;
    return it->second;
  };
  auto laneTerm = [&](const Operand& o) {
    return u32Reg(o) && (threadConstRegs_.count(o.index) || launchKind(o, ConstKind::ThreadIndex));
  };
  auto ntidOf = [&](const Operand& o) {
    const LaunchConst* lc = launchKind(o, ConstKind::LaunchDim);
    return lc && lc->value < 3 ? int(lc->value) : -1;
  };
  // a times b, b an immediate or %ntid; a without a lane term
  auto times = [&](CtaAffine a, const Operand& b) -> std::optional<CtaAffine> {
    if (b.kind == OperandKind::Imm) {
      a.multiplier *= uint32_t(b.value);
      a.addend *= uint32_t(b.value);
      return a;
    }
    if (int n = ntidOf(b); n >= 0 && a.ntid < 0 && a.addend == 0) {
      a.ntid = n;
      return a;
    }
    return std::nullopt;
  };
  // a plus b, b an immediate or a lane term; a without a lane term
  auto plus = [&](CtaAffine a, const Operand& b) -> std::optional<CtaAffine> {
    if (b.kind == OperandKind::Imm) {
      a.addend += uint32_t(b.value);
      return a;
    }
    if (laneTerm(b)) {
      a.laneReg = b.index;
      return a;
    }
    return std::nullopt;
  };
  const size_t n = fn.instructions.size();
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = 0; i < n; ++i) {
      const Instruction& in = fn.instructions[i];
      if (in.guard != kNoIndex || in.flags != 0 || in.numOperands < 3) continue;
      const Type t = in.type();
      if (t != Type::u32 && t != Type::s32 && t != Type::b32) continue;
      const Operand* o = &fn.operands[in.firstOperand];
      const Operand& d = o[0];
      if (!u32Reg(d) || defs[d.index] != 1 || launchConstRegs_.count(d.index) || threadConstRegs_.count(d.index) ||
          ctaAffineRegs_.count(d.index))
        continue;
      std::optional<CtaAffine> r;
      const bool lo = in.mulMode == ptx::MulMode::lo;
      if (in.opcode == Opcode::Add && in.numOperands == 3) {
        if (auto a = uniform(o[1])) r = plus(*a, o[2]);
        if (!r)
          if (auto a = uniform(o[2])) r = plus(*a, o[1]);
      } else if (in.opcode == Opcode::Shl && in.numOperands == 3 && o[2].kind == OperandKind::Imm &&
                 uint64_t(o[2].value) < 32) {
        if (auto a = uniform(o[1])) {
          a->multiplier <<= o[2].value;
          a->addend <<= o[2].value;
          r = a;
        }
      } else if (in.opcode == Opcode::Mul && lo && in.numOperands == 3) {
        if (auto a = uniform(o[1])) r = times(*a, o[2]);
        if (!r)
          if (auto a = uniform(o[2])) r = times(*a, o[1]);
      } else if (in.opcode == Opcode::Mad && lo && in.numOperands == 4) {
        std::optional<CtaAffine> product;
        if (auto a = uniform(o[1])) product = times(*a, o[2]);
        if (!product)
          if (auto a = uniform(o[2])) product = times(*a, o[1]);
        if (product) r = plus(*product, o[3]);
      }
      if (!r) continue;
      r->defInst = uint32_t(i);
      ctaAffineRegs_[d.index] = *r;
      changed = true;
    }
  }
  // registers only other such definitions read (`(blockIdx.x << 8)` on the way to the global index) need no lanes
  std::set<uint32_t> defInsts, read;
  for (const auto& [reg, a] : ctaAffineRegs_) defInsts.insert(a.defInst);
  for (size_t i = 0; i < n; ++i) {
    if (defInsts.count(uint32_t(i))) continue;
    const Instruction& in = fn.instructions[i];
    if (in.guard != kNoIndex) read.insert(in.guard);
    for (unsigned k = 0; k < in.numOperands; ++k)
      forEachRegister(fn, fn.operands[in.firstOperand + k], [&](uint32_t r) { read.insert(r); });
  }
  for (auto& [reg, a] : ctaAffineRegs_) a.read = read.count(reg) != 0;
}

bool KernelLowerer::mayWrite(const Instruction& in, uint32_t reg) const {
  if (in.opcode == Opcode::Call) return true;
  bool writes = false;
  if (in.numOperands) forEachRegister(fn_->operands[in.firstOperand], [&](uint32_t r) { writes |= r == reg; });
  return writes;
}

uint32_t KernelLowerer::lastWriteInBlock(uint32_t before, uint32_t reg) const {
  for (uint32_t j = before; j-- > 0 && blockOf_[j] == blockOf_[before];)
    if (mayWrite(fn_->instructions[j], reg)) return j;
  return kNoIndex;
}

bool KernelLowerer::writtenBetween(uint32_t first, uint32_t end, uint32_t reg) const {
  for (uint32_t j = first; j < end; ++j)
    if (mayWrite(fn_->instructions[j], reg)) return true;
  return false;
}

void KernelLowerer::findAddressAdds() {
  const auto& ins = fn_->instructions;
  size_t n = ins.size(), nregs = fn_->registers.size();
  // The add's destination must have exactly two mentions, its definition and the address, so no other
  // instruction sees that the sum was never written.
  const std::vector<uint32_t>& mentions = mentions_;
  auto wide = [&](const Operand& o) {
    return o.kind == OperandKind::Reg && !o.sel && o.index < nregs && regType(o.index) != Type::pred &&
           sizeOf(regType(o.index)) == 8;
  };
  for (uint32_t m = 0; m < n; ++m) {
    const Instruction& mi = ins[m];
    bool isStore = mi.opcode == Opcode::St;
    if ((mi.opcode != Opcode::Ld && !isStore) || mi.vec || mi.space != ptx::Space::global || mi.numOperands != 2)
      continue;
    const Operand& addr = fn_->operands[mi.firstOperand + (isStore ? 0 : 1)];
    if (addr.kind != OperandKind::Address || addr.symKind != SymKind::None || (addr.flags & ptx::kAddrAbsolute) ||
        addr.index >= nregs || mentions[addr.index] != 2 || sizeOf(regType(addr.index)) != 8)
      continue;
    // the definition: earlier in the same block
    uint32_t def = lastWriteInBlock(m, addr.index);
    if (def == kNoIndex) continue;
    const Instruction& add = ins[def];
    if (add.opcode != Opcode::Add || add.guard != kNoIndex || add.flags != 0 || add.numTypes != 1 ||
        (add.type() != Type::s64 && add.type() != Type::u64) || add.numOperands != 3 || rewrites_[def].addFolded)
      continue;
    const Operand& d = fn_->operands[add.firstOperand];
    const Operand& a = fn_->operands[add.firstOperand + 1];
    const Operand& b = fn_->operands[add.firstOperand + 2];
    if (d.sel || !wide(a) || !wide(b)) continue;
    // base and offset must still hold the add's values at the memory op
    if (writtenBetween(def + 1, m, a.index) || writtenBetween(def + 1, m, b.index)) continue;
    rewrites_[m].foldedAdd = def;
    rewrites_[def].addFolded = true;
  }
}

void KernelLowerer::findScaledIndices() {
  const auto& ins = fn_->instructions;
  size_t n = ins.size(), nregs = fn_->registers.size();
  if (!fn_->isEntry) return;  // launch constants exist in kernels only
  // candidate accesses per offset register
  struct Use {
    uint32_t access, mul;
  };
  std::map<uint32_t, std::vector<Use>> uses;
  for (uint32_t m = 0; m < n; ++m) {
    uint32_t def = rewrites_[m].foldedAdd;
    if (def == kNoIndex) continue;
    const Instruction& add = ins[def];
    const Operand& x = fn_->operands[add.firstOperand + 1];
    const Operand& y = fn_->operands[add.firstOperand + 2];
    bool xConst = launchConstRegs_.count(x.index) != 0, yConst = launchConstRegs_.count(y.index) != 0;
    if (xConst == yConst) continue;
    uint32_t offset = xConst ? y.index : x.index;
    // the offset's definition: the last write before the add, in the same block
    uint32_t mul = lastWriteInBlock(def, offset);
    if (mul == kNoIndex) continue;
    const Instruction& mi = ins[mul];
    if (mi.opcode != Opcode::Mul || mi.mulMode != ptx::MulMode::wide || mi.guard != kNoIndex || mi.flags != 0 ||
        mi.numOperands != 3 || (mi.type() != Type::s32 && mi.type() != Type::u32))
      continue;
    const Operand& d = fn_->operands[mi.firstOperand];
    const Operand& i = fn_->operands[mi.firstOperand + 1];
    const Operand& k = fn_->operands[mi.firstOperand + 2];
    if (d.kind != OperandKind::Reg || d.index != offset || d.sel || i.kind != OperandKind::Reg || i.sel ||
        i.index >= nregs || regType(i.index) == Type::pred || sizeOf(regType(i.index)) != 4 ||
        k.kind != OperandKind::Imm || k.value <= 0 || k.value > 16 || !std::has_single_bit(uint64_t(k.value)))
      continue;
    // the index must still hold its value at the access
    if (!writtenBetween(mul + 1, m, i.index)) uses[offset].push_back(Use{m, mul});
  }
  for (auto& [offset, list] : uses) {
    // every mention of the product is its one definition or a folded add's operand
    uint32_t mul = list.front().mul;
    bool sameMul = std::all_of(list.begin(), list.end(), [&](const Use& u) { return u.mul == mul; });
    if (!sameMul || mentions_[offset] != 1 + list.size()) continue;
    for (const Use& u : list) rewrites_[u.access].foldedMul = mul;
    rewrites_[mul].mulFolded = true;
  }
}

void KernelLowerer::countMentions() {
  size_t nregs = fn_->registers.size();
  mentions_.assign(nregs, 0);
  for (const Instruction& in : fn_->instructions) {
    if (in.guard != kNoIndex && in.guard < nregs) mentions_[in.guard]++;
    for (uint32_t k = 0; k < in.numOperands; ++k)
      forEachRegister(fn_->operands[in.firstOperand + k], [&](uint32_t r) {
        if (r < nregs) mentions_[r]++;
      });
  }
}

void KernelLowerer::findSharedLayoutChains() {
  const auto& ins = fn_->instructions;
  size_t n = ins.size(), nregs = fn_->registers.size();
  struct Chain {
    uint32_t reg, accessSize, first, slot;
    bool reused;
  };
  std::vector<Chain> chains;  // of the current block
  uint32_t block = ~0u, nextSlot = 0;
  // an access after a body pragma (used_bytes_mask) may be lowered to an op without the layout tag: it neither
  // computes nor reuses a layout
  std::vector<bool> afterPragma(n, false);
  for (const ptx::BodyPragma& pr : fn_->bodyPragmas)
    if (pr.position < n) afterPragma[pr.position] = true;
  for (uint32_t m = 0; m < n; ++m) {
    const Instruction& in = ins[m];
    if (blockOf_[m] != block) {
      block = blockOf_[m];
      chains.clear();
      nextSlot = 0;
    }
    if (in.opcode == Opcode::Call) {
      chains.clear();  // the callee is not looked into
      continue;
    }
    bool isStore = in.opcode == Opcode::St;
    if ((in.opcode == Opcode::Ld || isStore) && in.vec <= 4 && in.space == ptx::Space::shared && in.numOperands == 2 &&
        !afterPragma[m]) {
      const Operand& addr = fn_->operands[in.firstOperand + (isStore ? 0 : 1)];
      // a vector's layout is that of its lanes' whole vectors (mem::LaneVector)
      uint32_t size = ptx::typeSize(in.type()) * (in.vec ? in.vec : 1);
      if (addr.kind == OperandKind::Address && addr.symKind == SymKind::None && !(addr.flags & ptx::kAddrAbsolute) &&
          addr.index < nregs && size > 0 && size <= 16) {
        auto it = std::find_if(chains.begin(), chains.end(),
                               [&](const Chain& c) { return c.reg == addr.index && c.accessSize == size; });
        // a thread-constant base register's layout is the same in every CTA: the prologue computes it once into
        // a slot of its own (emitThreadConstantPrologue), which every access through it reuses
        uint32_t fixedSlot = 0;
        if (fi_ == &instances_[0] && threadConstRegs_.count(addr.index)) {
          auto fixed = std::find_if(prologueLayouts_.begin(), prologueLayouts_.end(), [&](const PrologueLayout& l) {
            return l.reg == addr.index && l.accessSize == size;
          });
          if (fixed != prologueLayouts_.end()) {
            fixedSlot = fixed->slot;
          } else if (prologueLayouts_.size() < kSharedLayoutSlots - kChainLayoutSlots) {
            fixedSlot = uint32_t(kChainLayoutSlots + prologueLayouts_.size());
            prologueLayouts_.push_back(PrologueLayout{addr.index, size, fixedSlot});
          }
        }
        if (fixedSlot) {  // prologue slots start at kChainLayoutSlots, never 0
          rewrites_[m].sharedLayout = mem::kLayoutReuse | fixedSlot;
        } else if (it != chains.end()) {
          rewrites_[m].sharedLayout = mem::kLayoutReuse | it->slot;
          if (!it->reused) rewrites_[it->first].sharedLayout = mem::kLayoutCompute | it->slot;
          it->reused = true;
        } else if (nextSlot < kChainLayoutSlots && in.guard == kNoIndex) {
          // a guarded access may not run at all, so it cannot be the one that computes the layout
          chains.push_back(Chain{addr.index, size, m, nextSlot++, false});
        }
      }
    }
    // what the instruction writes ends the chains of those registers: the destination is the first operand
    // (a store's first operand is its address, which it only reads)
    if (isStore || in.numOperands == 0) continue;
    forEachRegister(fn_->operands[in.firstOperand],
                    [&](uint32_t r) { std::erase_if(chains, [&](const Chain& c) { return c.reg == r; }); });
  }
}

void KernelLowerer::findSharedFmaTriples() {
  const std::vector<uint32_t>& mentions = mentions_;
  const auto& ins = fn_->instructions;
  size_t n = ins.size(), nregs = fn_->registers.size();
  // the loaded register of a scalar 32-bit shared load through a base register, or kNoIndex
  auto sharedLoad = [&](const Instruction& in) -> uint32_t {
    if (in.opcode != Opcode::Ld || in.vec || in.space != ptx::Space::shared || in.numOperands != 2 ||
        in.guard != kNoIndex || in.numTypes != 1 || ptx::typeSize(in.type()) != 4)
      return kNoIndex;
    const Operand& d = fn_->operands[in.firstOperand];
    const Operand& addr = fn_->operands[in.firstOperand + 1];
    if (!plain32BitRegister(d) || mentions[d.index] != 2 || addr.kind != OperandKind::Address ||
        addr.symKind != SymKind::None || (addr.flags & ptx::kAddrAbsolute) || addr.index >= nregs)
      return kNoIndex;
    return d.index;
  };
  for (size_t m = 0; m + 2 < n; ++m) {
    const Instruction& f = ins[m + 2];
    if (blockOf_[m] != blockOf_[m + 2] || f.opcode != Opcode::Fma || f.guard != kNoIndex || f.numTypes != 1 ||
        f.type() != Type::f32 || roundingOf(f.rounding) != num::RN || f.has(ptx::Flag::ftz) || f.has(ptx::Flag::sat) ||
        f.numOperands != 4)
      continue;
    uint32_t x = sharedLoad(ins[m]), y = sharedLoad(ins[m + 1]);
    if (x == kNoIndex || y == kNoIndex || x == y) continue;
    const Operand* o = &fn_->operands[f.firstOperand];
    if (!plain32BitRegister(o[0]) || !plain32BitRegister(o[1]) || !plain32BitRegister(o[2]) ||
        !plain32BitRegister(o[3]))
      continue;
    bool product = (o[1].index == x && o[2].index == y) || (o[1].index == y && o[2].index == x);
    if (!product || o[3].index == x || o[3].index == y) continue;
    rewrites_[m].fmaChainTriples = 1;
    m += 2;
  }
  // chains: the next triple right after, accumulating into this one's result, which only it reads
  auto fmaOperand = [&](size_t triple, int k) { return fn_->operands[ins[triple + 2].firstOperand + k].index; };
  for (size_t m = 0; m < n; ++m) {
    if (!rewrites_[m].fmaChainTriples) continue;
    size_t last = m;
    uint32_t length = 1;
    while (length < kMaxSharedFmaChain && last + 3 < n && rewrites_[last + 3].fmaChainTriples &&
           blockOf_[last + 3] == blockOf_[m] && fmaOperand(last + 3, 3) == fmaOperand(last, 0) &&
           mentions[fmaOperand(last, 0)] == 2) {
      rewrites_[last + 3].fmaChainTriples = 0;
      last += 3;
      ++length;
    }
    rewrites_[m].fmaChainTriples = length;
    m = last + 2;
  }
}

void KernelLowerer::findSharedAddSteps() {
  const auto& ins = fn_->instructions;
  const size_t n = ins.size();
  auto sharedAccess = [&](const Instruction& in, Opcode oc, int addrOperand) {
    return in.opcode == oc && !in.vec && in.space == ptx::Space::shared && in.numOperands == 2 &&
           in.guard == kNoIndex && in.numTypes == 1 && ptx::typeSize(in.type()) == 4 &&
           fn_->operands[in.firstOperand + addrOperand].kind == OperandKind::Address &&
           fn_->operands[in.firstOperand + addrOperand].symKind == SymKind::None &&
           !(fn_->operands[in.firstOperand + addrOperand].flags & ptx::kAddrAbsolute);
  };
  // a prologue layout slot: the base register is a thread constant whose layout the kernel's prologue computed
  auto prologueSlot = [&](size_t i) {
    const uint32_t tag = rewrites_[i].sharedLayout;
    return (tag & mem::kLayoutReuse) && (tag & mem::kLayoutSlotMask) >= kChainLayoutSlots;
  };
  for (size_t m = 0; m + 3 < n; ++m) {
    const Instruction &l1 = ins[m], &l2 = ins[m + 1], &add = ins[m + 2], &st = ins[m + 3];
    if (blockOf_[m] != blockOf_[m + 3] || !sharedAccess(l1, Opcode::Ld, 1) || !sharedAccess(l2, Opcode::Ld, 1) ||
        !sharedAccess(st, Opcode::St, 0) || add.opcode != Opcode::Add || add.guard != kNoIndex || add.numTypes != 1 ||
        add.numOperands != 3)
      continue;
    const bool isFloat = add.type() == Type::f32;
    if (isFloat ? (roundingOf(add.rounding) != num::RN || add.has(ptx::Flag::ftz) || add.has(ptx::Flag::sat))
                : ((add.type() != Type::u32 && add.type() != Type::s32) || add.flags != 0))
      continue;
    if (isFloat != (l1.type() == Type::f32) || isFloat != (l2.type() == Type::f32) ||
        isFloat != (st.type() == Type::f32))
      continue;
    const Operand* a = &fn_->operands[add.firstOperand];
    const Operand &x = fn_->operands[l1.firstOperand], &y = fn_->operands[l2.firstOperand];
    const Operand &a1 = fn_->operands[l1.firstOperand + 1], &a2 = fn_->operands[l2.firstOperand + 1];
    const Operand &sa = fn_->operands[st.firstOperand], &sv = fn_->operands[st.firstOperand + 1];
    if (!plain32BitRegister(x) || !plain32BitRegister(y) || !plain32BitRegister(a[0]) || !plain32BitRegister(a[1]) ||
        !plain32BitRegister(a[2]) || !plain32BitRegister(sv) || x.index == y.index)
      continue;
    const bool operands =
        (a[1].index == x.index && a[2].index == y.index) || (a[1].index == y.index && a[2].index == x.index);
    const uint32_t base = a1.index;
    if (!operands || sv.index != a[0].index || a2.index != base || sa.index != base || sa.value != a1.value ||
        x.index == base || y.index == base || a[0].index == base || rewrites_[m].emitsNothing() ||
        rewrites_[m + 1].emitsNothing() || rewrites_[m + 2].emitsNothing() || rewrites_[m + 3].emitsNothing() ||
        rewrites_[m].fmaChainTriples || !prologueSlot(m) ||
        rewrites_[m + 1].sharedLayout != rewrites_[m].sharedLayout ||
        rewrites_[m + 3].sharedLayout != rewrites_[m].sharedLayout)
      continue;
    rewrites_[m].sharedAddStep = true;
    m += 3;
  }
}

// Pairs of integer instructions in a row, in one block, where the first's result is read by the second only (its
// register has two mentions, the definition and that read): the second computes it (foldedIntoNext), which saves an
// op and a register write per pair (the divergent Collatz loop's `x & 1 == 1` and `3 * x + 1`). Neither may be
// guarded or taken by another rewrite.
void KernelLowerer::findFoldedIntegerPairs() {
  const auto& ins = fn_->instructions;
  const size_t n = ins.size(), nregs = fn_->registers.size();
  auto integer = [](Type t) {
    const TypeKind k = ptx::typeKind(t);
    return (k == TypeKind::Bits || k == TypeKind::Unsigned || k == TypeKind::Signed) &&
           (ptx::typeSize(t) == 2 || ptx::typeSize(t) == 4 || ptx::typeSize(t) == 8);
  };
  auto plainRegister = [&](const Operand& o) {
    return o.kind == OperandKind::Reg && !o.sel && o.flags == 0 && o.index < nregs && regType(o.index) != Type::pred;
  };
  // the second's operands 1 and 2: exactly one of them is the first's result
  auto readsOnce = [&](const Operand* o, uint32_t reg) {
    const bool x = plainRegister(o[1]) && o[1].index == reg, y = plainRegister(o[2]) && o[2].index == reg;
    return x != y;
  };
  for (size_t m = 0; m + 1 < n; ++m) {
    const Instruction &first = ins[m], &second = ins[m + 1];
    if (blockOf_[m] != blockOf_[m + 1] || first.guard != kNoIndex || second.guard != kNoIndex ||
        first.numOperands != 3 || second.numOperands != 3 || first.numTypes != 1 || second.numTypes != 1 ||
        first.flags != 0 || second.flags != 0 || !integer(first.type()) || !integer(second.type()) ||
        ptx::typeSize(first.type()) != ptx::typeSize(second.type()) || rewrites_[m].emitsNothing() ||
        rewrites_[m + 1].emitsNothing() || rewrites_[m].foldedIntoNext)
      continue;
    const Operand& t = fn_->operands[first.firstOperand];
    if (!plainRegister(t) || mentions_[t.index] != 2 || sizeOf(regType(t.index)) != ptx::typeSize(first.type()))
      continue;
    const Operand* o = &fn_->operands[second.firstOperand];
    if (!readsOnce(o, t.index)) continue;
    const bool bitTest = enabled(Rewrite::MaskedCompares) && first.opcode == Opcode::And &&
                         second.opcode == Opcode::Setp && second.boolOp == ptx::BoolOp::none &&
                         (second.cmp == ptx::CmpOp::eq || second.cmp == ptx::CmpOp::ne) &&
                         o[0].kind == OperandKind::Reg;
    const bool mad = enabled(Rewrite::IntegerMads) && first.opcode == Opcode::Mul &&
                     first.mulMode == ptx::MulMode::lo && second.opcode == Opcode::Add && o[0].kind == OperandKind::Reg;
    if (!bitTest && !mad) continue;
    rewrites_[m].foldedIntoNext = true;
    ++m;  // the second is no first of another pair: it is lowered with the first's work
  }
}

void KernelLowerer::emitSharedAddStep(uint32_t first) {
  const auto& ins = fn_->instructions;
  Addr x = address(ins[first], fn_->operands[ins[first].firstOperand + 1]);
  Addr y = address(ins[first + 1], fn_->operands[ins[first + 1].firstOperand + 1]);
  // offsets go to 32-bit fields; one that does not fit leaves the instructions unfused
  if (x.space != mem::Shared || y.space != mem::Shared || x.base != y.base || x.baseSize != y.baseSize || x.imm < 0 ||
      x.imm > INT32_MAX || y.imm < 0 || y.imm > INT32_MAX)
    return;
  const bool isFloat = ins[first + 2].type() == Type::f32;
  const Operand* add = &fn_->operands[ins[first + 2].firstOperand];
  mem::SharedAddStep{x.base,
                     regOf(fn_->operands[ins[first].firstOperand].index),
                     regOf(fn_->operands[ins[first + 1].firstOperand].index),
                     regOf(add[0].index),
                     uint32_t(x.imm),
                     uint32_t(y.imm),
                     rewrites_[first].sharedLayout}
      .into(emit(mem::sharedAddStepHandler(x.baseSize, isFloat)));
  // where the fast path continues: after the original instructions' own ops
  pending_.push_back({here() - 1, first + 4, PendingTarget::Inst});
  addStepOp_ = here() - 1;
  addStepLast_ = first + 3;
}

void KernelLowerer::emitSharedFma(uint32_t first) {
  const auto& ins = fn_->instructions;
  const uint32_t length = rewrites_[first].fmaChainTriples;
  std::vector<SharedFmaStep> steps;
  uint32_t baseSize = 0;
  for (uint32_t k = 0; k < length; ++k) {
    uint32_t t = first + 3 * k;
    Addr x = address(ins[t], fn_->operands[ins[t].firstOperand + 1]);
    Addr y = address(ins[t + 1], fn_->operands[ins[t + 1].firstOperand + 1]);
    // offsets go to 32-bit fields; one that does not fit leaves the instructions unfused
    if (x.space != mem::Shared || y.space != mem::Shared || x.baseSize != y.baseSize ||
        (baseSize && x.baseSize != baseSize) || x.imm < 0 || x.imm > int64_t(UINT32_MAX) || y.imm < 0 ||
        y.imm > int64_t(UINT32_MAX))
      return;
    baseSize = x.baseSize;
    steps.push_back(SharedFmaStep{x.base, y.base, uint32_t(x.imm), uint32_t(y.imm), rewrites_[t].sharedLayout,
                                  rewrites_[t + 1].sharedLayout});
  }
  const Operand* firstFma = &fn_->operands[ins[first + 2].firstOperand];
  const Operand* lastFma = &fn_->operands[ins[first + 3 * length - 1].firstOperand];
  mem::SharedFmaChain chain{uint32_t(prog_.fmaSteps.size()), length, regOf(firstFma[3].index), regOf(lastFma[0].index)};
  // one base register for every x and one for every y, every offset aligned, and tags that the first step's stand
  // for (the later steps reuse the slot the first computes, or none has one): the one-base form
  // (mem::fmaSharedChainOneBaseAvx) checks each operand once, at its largest offset
  auto sameSlot = [](uint32_t tag, uint32_t firstTag) {
    return (tag & mem::kLayoutCompute) == 0 && (tag == 0) == (firstTag == 0) &&
           (tag & mem::kLayoutSlotMask) == (firstTag & mem::kLayoutSlotMask);
  };
  bool oneBase = true;
  for (const SharedFmaStep& s : steps) {
    const bool first = &s == &steps.front();
    oneBase = oneBase && s.xBase == steps[0].xBase && s.yBase == steps[0].yBase && s.xOffset % 4 == 0 &&
              s.yOffset % 4 == 0 && (first || (sameSlot(s.xTag, steps[0].xTag) && sameSlot(s.yTag, steps[0].yTag)));
    chain.largestXOffset = std::max(chain.largestXOffset, s.xOffset);
    chain.largestYOffset = std::max(chain.largestYOffset, s.yOffset);
  }
  chain.into(emit(mem::fmaSharedChainHandler(baseSize, oneBase)));
  prog_.fmaSteps.insert(prog_.fmaSteps.end(), steps.begin(), steps.end());
  // where the fast path continues: after the original instructions' own ops
  pending_.push_back({here() - 1, first + 3 * length, PendingTarget::Inst});
}

}  // namespace ptx::exec::lowering

namespace ptx::exec::lowering {

// A warp in a spin loop is found by comparing its state at one back edge with its state at the next (ctl::backEdge):
// registers the loop never writes cannot differ, so only those it writes are compared. Copying and comparing every
// declared register cost more than the spinning itself in kernels with hundreds of registers (cuSPARSE's triangular
// solves wait at a level barrier in a 3-instruction loop: 43% of the run was the 170 KB snapshot). The loop of a
// header is the natural loop: the blocks that reach one of its back edges without passing the header. Writes are
// the first operand's registers, as mayWrite counts them; a loop with a call keeps the whole comparison.
void KernelLowerer::recordLoopWatches(const std::vector<std::vector<uint32_t>>& succ,
                                      const std::vector<uint32_t>& blockOp) {
  const auto& ins = fn_->instructions;
  const uint32_t n = uint32_t(ins.size()), nb = uint32_t(blockStart_.size());
  auto blockEnd = [&](uint32_t b) { return b + 1 < nb ? blockStart_[b + 1] : n; };  // one past its last instruction
  std::vector<std::vector<uint32_t>> pred(nb);
  std::map<uint32_t, std::vector<uint32_t>> latchesOf;  // header block -> blocks with a back edge to it
  for (uint32_t b = 0; b < nb; ++b)
    for (uint32_t s : succ[b]) {
      if (s >= nb) continue;
      pred[s].push_back(b);
      if (blockStart_[b] < n && blockStart_[s] < blockEnd(b)) latchesOf[s].push_back(b);
    }
  for (const auto& [header, latches] : latchesOf) {
    std::vector<bool> inLoop(nb, false);
    inLoop[header] = true;
    std::vector<uint32_t> work;
    for (uint32_t l : latches)
      if (!inLoop[l]) {
        inLoop[l] = true;
        work.push_back(l);
      }
    while (!work.empty()) {
      uint32_t x = work.back();
      work.pop_back();
      for (uint32_t p : pred[x])
        if (!inLoop[p]) {
          inLoop[p] = true;
          work.push_back(p);
        }
    }
    std::set<uint32_t> written;  // IR registers
    bool calls = false;
    for (uint32_t b = 0; b < nb && !calls; ++b) {
      if (!inLoop[b]) continue;
      for (uint32_t i = blockStart_[b]; i < blockEnd(b) && !calls; ++i) {
        const Instruction& in = ins[i];
        if (in.opcode == Opcode::Call) calls = true;
        if (in.numOperands) forEachRegister(fn_->operands[in.firstOperand], [&](uint32_t r) { written.insert(r); });
      }
    }
    if (calls) continue;
    std::vector<RegisterRange> slots;  // each register's whole slot
    for (uint32_t r : written) {
      uint32_t offset = regOf(r);
      if (offset >= code_->constStart) continue;  // a launch constant: written once per launch, not by the loop
      slots.push_back({offset, regSlotBytes(sizeOf(fn_->registers[r].type))});
    }
    std::sort(slots.begin(), slots.end(), [](const auto& x, const auto& y) { return x.offset < y.offset; });
    std::vector<RegisterRange> ranges;
    for (const RegisterRange& slot : slots) {
      if (!ranges.empty() && ranges.back().offset + ranges.back().bytes >= slot.offset)
        ranges.back().bytes = std::max(ranges.back().bytes, slot.offset + slot.bytes - ranges.back().offset);
      else
        ranges.push_back(slot);
    }
    if (ranges.size() > kMaxLoopWatchRanges) continue;
    LoopWatch watch{blockOp[header], uint32_t(prog_.loopWatchRanges.size()), uint32_t(ranges.size())};
    prog_.loopWatchRanges.insert(prog_.loopWatchRanges.end(), ranges.begin(), ranges.end());
    auto at = std::upper_bound(prog_.loopWatches.begin(), prog_.loopWatches.end(), watch.headerOp,
                               [](uint32_t op, const LoopWatch& w) { return op < w.headerOp; });
    prog_.loopWatches.insert(at, watch);
  }
}

}  // namespace ptx::exec::lowering
