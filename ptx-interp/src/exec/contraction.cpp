// Multiply-add contraction as ptxas does it. The PTX ISA lets the code generator fuse a `mul` and an `add`/`sub`
// that carry no rounding modifier into one fused multiply-add, and ptxas does (its --fmad=true default; the driver's
// JIT likewise), so a GPU rounds such a pair once. NVVM leaves such pairs where it cannot fuse them itself (across a
// floor() call, say: CuPy's float `%` is x - floor(x / y) * y), and programs compare with the GPU's bits. The rules,
// read from ptxas's SASS for sm_90 and the driver's results on an H100 (tools/gpu-probe/fma27, results in
// tools/gpu-probe/results/fma27/):
// - the mul is f32, f64, f16, f16x2, bf16 or bf16x2, unguarded, without rounding modifier or .sat;
// - every use of its product is an add or sub of the same type in the same basic block, without rounding modifier,
//   with the mul's .ftz, naming the product once (.sat allowed: the fused operation saturates); a neg of the product
//   in between counts as the product, negated. A product also stored, compared, used twice by one add or used in
//   another block (a loop's body, after a branch) stays a mul: then no add fuses with it;
// - a factor written between the mul and an add still fuses with its value at the mul (ptxas works on SSA): the
//   mul then copies its factors first;
// - when both operands of an add are such products, the first one fuses.
// Each add/sub becomes fma(+-a, b, +-c); the mul still runs (its product may be dead).
#include "exec/lowerer.h"

namespace ptx::exec::lowering {

namespace {

bool contractibleType(Type t) {
  return t == Type::f32 || t == Type::f64 || t == Type::f16 || t == Type::f16x2 || t == Type::bf16 || t == Type::bf16x2;
}

bool isPlainRegister(const Operand& o) { return o.kind == OperandKind::Reg && !o.sel; }

}  // namespace

void KernelLowerer::findContractions() {
  const auto& ins = fn_->instructions;
  const uint32_t n = uint32_t(ins.size());
  const size_t nregs = fn_->registers.size();
  contractions_.assign(n + 1, Contraction{});
  if (!contractMulAdd_) return;
  // Where the registers a mul or neg may define are mentioned, in one pass (large unrolled blocks hold thousands of
  // muls): per such register, the instructions naming it as a source (once per mention) and those writing it.
  std::vector<uint8_t> watched(nregs, 0);
  for (uint32_t i = 0; i < n; ++i) {
    const Instruction& in = ins[i];
    if ((in.opcode == Opcode::Mul || in.opcode == Opcode::Neg) && in.numOperands >= 2 && contractibleType(in.type())) {
      const Operand& d = fn_->operands[in.firstOperand];
      if (isPlainRegister(d) && d.index < nregs) watched[d.index] = 1;
    }
  }
  std::vector<std::vector<uint32_t>> readAt(nregs), writtenAt(nregs);
  for (uint32_t i = 0; i < n; ++i) {
    const Instruction& in = ins[i];
    for (uint32_t k = 0; k < in.numOperands; ++k)
      forEachRegister(fn_->operands[in.firstOperand + k], [&](uint32_t r) {
        // operand 0 is the destination, except of stores and reductions (their address)
        if (r >= nregs || !watched[r]) return;
        const bool written = k == 0 && in.opcode != Opcode::St && in.opcode != Opcode::Red;
        (written ? writtenAt : readAt)[r].push_back(i);
      });
    if (in.guard < nregs && watched[in.guard]) readAt[in.guard].push_back(i);
  }
  // The instructions that read register `reg` after its definition at `def` (one entry per mention), all in def's
  // block and before any other write of it; ok = false when a mention lies elsewhere.
  auto usesInBlock = [&](uint32_t def, uint32_t reg, bool& ok) {
    std::vector<uint32_t> uses;
    ok = writtenAt[reg].size() == 1;  // the definition only (compilers emit SSA-like registers)
    for (uint32_t j : readAt[reg]) {
      if (j <= def || blockOf_[j] != blockOf_[def]) ok = false;
      uses.push_back(j);
    }
    if (!ok) uses.clear();
    return uses;
  };
  // An add/sub that can take the product in register `reg` of mul `m`: its operand holding it (1 or 2), else 0.
  auto fusesWith = [&](const Instruction& mul, uint32_t m, uint32_t use, uint32_t reg) -> uint8_t {
    const Instruction& in = ins[use];
    if ((in.opcode != Opcode::Add && in.opcode != Opcode::Sub) || in.numOperands != 3 || in.numTypes != 1 ||
        in.type() != mul.type() || in.rounding != ptx::Rounding::none ||
        in.has(ptx::Flag::ftz) != mul.has(ptx::Flag::ftz))
      return 0;
    const Operand& x = fn_->operands[in.firstOperand + 1];
    const Operand& y = fn_->operands[in.firstOperand + 2];
    const bool inX = isPlainRegister(x) && x.index == reg, inY = isPlainRegister(y) && y.index == reg;
    if (inX == inY) return 0;  // not there, or both operands
    for (uint32_t k = 1; k < 3; ++k) {
      const Operand& f = fn_->operands[mul.firstOperand + k];
      if (f.kind != OperandKind::Reg) continue;
      if (f.sel) return 0;
      if (writtenBetween(m + 1, use, f.index)) contractions_[m].saveFactors = true;
    }
    return inX ? 1 : 2;
  };
  struct Fusion {
    uint32_t use;
    uint8_t operand;
    bool negated;
  };
  // The fusions through `neg` instruction u of mul m's product (in register `product`): every use of its result
  // fuses, or false.
  auto negFusions = [&](const Instruction& mul, uint32_t m, uint32_t u, uint32_t product, std::vector<Fusion>& out) {
    const Instruction& neg = ins[u];
    if (neg.opcode != Opcode::Neg || neg.numOperands != 2 || neg.type() != mul.type() || neg.guard != kNoIndex ||
        neg.has(ptx::Flag::ftz) != mul.has(ptx::Flag::ftz))
      return false;
    const Operand& nd = fn_->operands[neg.firstOperand];
    const Operand& ns = fn_->operands[neg.firstOperand + 1];
    if (!isPlainRegister(nd) || !isPlainRegister(ns) || ns.index != product || nd.index == product || nd.index >= nregs)
      return false;
    bool ok = false;
    std::vector<uint32_t> uses = usesInBlock(u, nd.index, ok);
    uses.erase(std::unique(uses.begin(), uses.end()), uses.end());
    if (!ok || uses.empty()) return false;
    for (uint32_t v : uses) {
      const uint8_t operand = fusesWith(mul, m, v, nd.index);
      if (!operand) return false;
      out.push_back({v, operand, true});
    }
    return true;
  };
  // Per add/sub, the products it could take: operand -> (mul, negated)
  std::vector<std::array<std::pair<uint32_t, bool>, 3>> offers(n);
  for (auto& o : offers) o.fill({kNoIndex, false});
  for (uint32_t m = 0; m < n; ++m) {
    const Instruction& mul = ins[m];
    if (mul.opcode != Opcode::Mul || mul.numOperands != 3 || !contractibleType(mul.type()) ||
        mul.rounding != ptx::Rounding::none || mul.has(ptx::Flag::sat) || mul.guard != kNoIndex)
      continue;
    const Operand& d = fn_->operands[mul.firstOperand];
    if (!isPlainRegister(d) || d.index >= nregs) continue;
    bool selfUse = false;  // a factor that is the product's own register is gone at the add
    for (uint32_t k = 1; k < 3; ++k)
      forEachRegister(fn_->operands[mul.firstOperand + k], [&](uint32_t r) { selfUse |= r == d.index; });
    if (selfUse) continue;
    bool ok = false;
    std::vector<uint32_t> uses = usesInBlock(m, d.index, ok);
    if (!ok || uses.empty()) continue;
    uses.erase(std::unique(uses.begin(), uses.end()), uses.end());  // an instruction naming it twice: once
    std::vector<Fusion> fusions;
    for (uint32_t u : uses) {
      if (uint8_t operand = fusesWith(mul, m, u, d.index)) {
        fusions.push_back({u, operand, false});
        continue;
      }
      if (!negFusions(mul, m, u, d.index, fusions)) {  // a use that neither fuses nor is a neg whose uses do
        fusions.clear();
        break;
      }
    }
    for (const Fusion& f : fusions) offers[f.use][f.operand] = {m, f.negated};
  }
  for (uint32_t u = 0; u < n; ++u) {
    const uint8_t operand = offers[u][1].first != kNoIndex ? 1 : offers[u][2].first != kNoIndex ? 2 : 0;
    if (!operand) continue;
    const auto [mul, negated] = offers[u][operand];
    const bool sub = ins[u].opcode == Opcode::Sub;
    // add p, c / add c, p: p + c; sub p, c: p + -c; sub c, p: -p + c
    contractions_[u] = {mul, uint8_t(3 - operand), negated != (sub && operand == 2), sub && operand == 1};
  }
}

std::array<uint32_t, 3> KernelLowerer::contractedSources(const Instruction& add, Type t, Handler negate) {
  const Contraction& c = contractions_[curInst_];
  const Instruction& mul = fn_->instructions[c.mul];
  const auto& saved = contractions_[c.mul].saved;
  std::array<uint32_t, 3> s = {saved[0] != kNoIndex ? saved[0] : src(opnd(mul, 1), t),
                               saved[1] != kNoIndex ? saved[1] : src(opnd(mul, 2), t), src(opnd(add, c.addend), t)};
  auto negated = [&](uint32_t reg) {
    const uint32_t tmp = temp(ptx::typeSize(t));
    Op& op = emit(negate);
    op.d = tmp;
    op.a = reg;
    return tmp;
  };
  if (c.negProduct) s[0] = negated(s[0]);
  if (c.negAddend) s[2] = negated(s[2]);
  return s;
}

void KernelLowerer::saveContractedFactors(const Instruction& mul, Type t) {
  Contraction& c = contractions_[curInst_];
  if (!c.saveFactors) return;
  const uint32_t size = ptx::typeSize(t);
  for (unsigned k = 0; k < 2; ++k) {
    if (opnd(mul, 1 + k).kind != OperandKind::Reg) continue;
    c.saved[k] = allocReg(size);
    Op& op = emit(byBits(size, line_, [](auto x) -> Handler { return &h::mov<decltype(x)>; }));
    op.d = c.saved[k];
    op.a = src(opnd(mul, 1 + k), t);
  }
}

}  // namespace ptx::exec::lowering
