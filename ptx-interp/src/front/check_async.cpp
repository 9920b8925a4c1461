// Asynchronous copies (cp.async, cp.async.bulk, tensor copies) and mbarrier.
#include "front/checker.h"

namespace ptx::check_detail {

void Checker::mbarrier(const Function& f, const Instruction& inst) {
  std::string name = fmt::format("mbarrier{}", modText(f.modsOf(inst)[0]));
  if (inst.type() != Type::b64) {
    error(inst.loc, "'{}' needs the type .b64", name);
    return;
  }
  bool cluster = inst.space == Space::shared_cluster;
  if (inst.space != Space::none && !isSharedSpace(inst.space) && !cluster) {
    error(inst.loc, "'{}' operates on .shared memory only", name);
    return;
  }
  if ((inst.sem != Sem::none || inst.scope != Scope::none))
    requireTarget(inst, "scopes and semantics on mbarrier operations", 0, 80);
  switch (inst.opcode) {
    case Opcode::MbarrierInit:
      if (!operandCount(inst, name, 2) || !addressOperand(f, inst, 0)) return;
      regOperand(f, inst, 1, "a 32-bit integer register or an immediate", is32BitInteger, true, false);
      return;
    case Opcode::MbarrierInval:
      if (operandCount(inst, name, 1)) addressOperand(f, inst, 0);
      return;
    case Opcode::MbarrierExpectTx:
    case Opcode::MbarrierCompleteTx:
      if (!operandCount(inst, name, 2) || !addressOperand(f, inst, 0)) return;
      regOperand(f, inst, 1, "a 32-bit integer register or an immediate", is32BitInteger, true, false);
      return;
    case Opcode::MbarrierArrive:
    case Opcode::MbarrierArriveDrop: {
      if (inst.numOperands != 2 && inst.numOperands != 3) {
        error(inst.loc, "'{}' takes 2 or 3 operands, not {}", name, inst.numOperands);
        return;
      }
      bool expectTx = inst.has(Flag::expect_tx);
      if (expectTx && inst.numOperands != 3) {
        error(inst.loc, "'{}.expect_tx' needs a transaction count", name);
        return;
      }
      if (inst.has(Flag::noComplete) && inst.numOperands != 3) {
        error(inst.loc, "'{}.noComplete' needs a count", name);
        return;
      }
      if (!addressOperand(f, inst, 1)) return;
      if (cluster) {
        if (f.operandsOf(inst)[0].kind != OperandKind::Sink) {
          error(inst.loc, "the result of '{}' on .shared::cluster must be the sink '_'", name);
          return;
        }
      } else if (!regOperand(f, inst, 0, "a 64-bit register or '_'", is64BitInteger, false, true)) {
        return;
      }
      if (inst.numOperands == 3) {
        if (!regOperand(f, inst, 2, "a 32-bit integer register or an immediate", is32BitInteger, true, false)) return;
        if (!expectTx && !inst.has(Flag::noComplete))
          requireTarget(inst, "mbarrier.arrive with a count and without .noComplete", 90, 78);
      }
      return;
    }
    case Opcode::MbarrierTest:
    case Opcode::MbarrierTry: {
      unsigned maxOps = inst.opcode == Opcode::MbarrierTry ? 4 : 3;
      if (inst.numOperands < 3 || inst.numOperands > maxOps) {
        error(inst.loc, "'{}' takes 3{} operands, not {}", name, maxOps == 4 ? " or 4" : "", inst.numOperands);
        return;
      }
      if (!regOperand(
              f, inst, 0, "a .pred register", [](Type t) { return t == Type::pred; }, false, false) ||
          !addressOperand(f, inst, 1))
        return;
      if (inst.has(Flag::parity)) {
        if (!regOperand(f, inst, 2, "a 32-bit integer register or an immediate (the phase parity)", is32BitInteger,
                        true, false))
          return;
      } else if (!regOperand(f, inst, 2, "a 64-bit register (the barrier state)", is64BitInteger, false, false)) {
        return;
      }
      if (inst.numOperands == 4)
        regOperand(f, inst, 3, "a 32-bit integer register or an immediate (the time limit)", is32BitInteger, true,
                   false);
      return;
    }
    case Opcode::MbarrierPendingCount:
      if (!operandCount(inst, name, 2)) return;
      if (regOperand(f, inst, 0, "a 32-bit integer register", is32BitInteger, false, false))
        regOperand(f, inst, 1, "a 64-bit register (the barrier state)", is64BitInteger, false, false);
      return;
    default: return;
  }
}

void Checker::asyncCopy(const Function& f, const Instruction& inst) {
  const Operand* ops = f.operandsOf(inst);
  auto immediateOperand = [&](unsigned index, std::string_view name) {
    if (!operandCount(inst, name, 1)) return false;
    if (ops[index].kind != OperandKind::Imm) {
      error(inst.loc, "operand of '{}' must be an integer constant", name);
      return false;
    }
    return true;
  };
  switch (inst.opcode) {
    case Opcode::CpAsyncWaitGroup: immediateOperand(0, "cp.async.wait_group"); return;
    case Opcode::CpAsyncBulkWaitGroup: immediateOperand(0, "cp.async.bulk.wait_group"); return;
    case Opcode::CpAsync: {
      if (!isSharedSpace(inst.space) || inst.space2 != Space::global) {
        error(inst.loc, "'cp.async' copies from .global to .shared (.shared.global)");
        return;
      }
      if (inst.numOperands < 3 || inst.numOperands > 5) {
        error(inst.loc, "'cp.async' takes 3 to 5 operands, not {}", inst.numOperands);
        return;
      }
      if (!addressOperand(f, inst, 0) || !addressOperand(f, inst, 1)) return;
      if (ops[2].kind != OperandKind::Imm) {
        error(inst.loc, "the copy size of 'cp.async' must be an integer constant");
        return;
      }
      bool cg = inst.cacheOp == CacheOp::cg;
      int64_t size = ops[2].value;
      if (cg ? size != 16 : (size != 4 && size != 8 && size != 16))
        error(inst.loc, "the copy size of 'cp.async{}' must be {}, not {}", cg ? ".cg" : ".ca",
              cg ? "16" : "4, 8 or 16", size);
      return;
    }
    case Opcode::CpAsyncBulk: {
      Space dst = inst.space, src = inst.space2;
      bool mbar = f.hasMod(inst, Mod::mbarrier_complete_tx_bytes);
      bool group = f.hasMod(inst, Mod::bulk_group);
      unsigned expected = 0;
      if ((dst == Space::shared_cluster || isSharedSpace(dst)) && src == Space::global) {
        if (!mbar) {
          error(inst.loc, "'cp.async.bulk' into shared memory needs .mbarrier::complete_tx::bytes");
          return;
        }
        expected = 4 + f.hasMod(inst, Mod::multicast_cluster);
      } else if (dst == Space::shared_cluster && isSharedSpace(src)) {
        if (!mbar) {
          error(inst.loc, "'cp.async.bulk' into shared memory needs .mbarrier::complete_tx::bytes");
          return;
        }
        expected = 4;
      } else if (dst == Space::global && isSharedSpace(src)) {
        if (!group) {
          error(inst.loc, "'cp.async.bulk' from shared to global memory needs .bulk_group");
          return;
        }
        expected = 3;
      } else {
        error(inst.loc, "'cp.async.bulk' does not copy between these state spaces");
        return;
      }
      expected += inst.has(Flag::cache_hint);
      if (!operandCount(inst, "cp.async.bulk", expected)) return;
      if (!addressOperand(f, inst, 0) || !addressOperand(f, inst, 1)) return;
      if (!regOperand(f, inst, 2, "a 32-bit integer register or an immediate (the size)", is32BitInteger, true, false))
        return;
      if (mbar) addressOperand(f, inst, 3);
      return;
    }
    case Opcode::CpAsyncBulkPrefetch:
      if (inst.space != Space::global) {
        error(inst.loc, "'cp.async.bulk.prefetch' reads .global memory only");
        return;
      }
      if (!operandCount(inst, "cp.async.bulk.prefetch", 2 + inst.has(Flag::cache_hint))) return;
      if (addressOperand(f, inst, 0))
        regOperand(f, inst, 1, "a 32-bit integer register or an immediate (the size)", is32BitInteger, true, false);
      return;
    case Opcode::CpReduceAsyncBulk:
    case Opcode::CpReduceAsyncBulkTensor:
      if (inst.redOp == RedOp::none)
        error(inst.loc, "'cp.reduce.async.bulk' needs a reduction operation (.add, .min, ...)");
      if (inst.opcode == Opcode::CpReduceAsyncBulkTensor) tensorCoordinates(f, inst);
      return;
    case Opcode::CpAsyncBulkTensor:
    case Opcode::CpAsyncBulkPrefetchTensor: tensorCoordinates(f, inst); return;
    default: return;
  }
}

// The tensor operand `[tensorMap, {c0, ..}]` of the bulk tensor copies has one coordinate per dimension (.1d .. .5d)
// in tile mode.
void Checker::tensorCoordinates(const Function& f, const Instruction& inst) {
  unsigned dims = f.hasMod(inst, Mod::d1)   ? 1
                  : f.hasMod(inst, Mod::d2) ? 2
                  : f.hasMod(inst, Mod::d3) ? 3
                  : f.hasMod(inst, Mod::d4) ? 4
                  : f.hasMod(inst, Mod::d5) ? 5
                                            : 0;
  if (dims == 0) {
    error(inst.loc, "'{}' needs the tensor's dimensions (.1d .. .5d)", mnemonic(inst));
    return;
  }
  if (f.hasMod(inst, Mod::im2col) || f.hasMod(inst, Mod::im2col_w) || f.hasMod(inst, Mod::im2col_w_128) ||
      f.hasMod(inst, Mod::tile_gather4) || f.hasMod(inst, Mod::tile_scatter4))
    return;  // other coordinate layouts
  const Operand* ops = f.operandsOf(inst);
  for (unsigned i = 0; i < inst.numOperands; ++i) {
    if (ops[i].kind != OperandKind::Bracket || ops[i].value < 2) continue;
    const Operand& coords = f.elems[ops[i].index + 1];
    if (coords.kind == OperandKind::Vector && vectorSize(coords) != dims)
      error(inst.loc, "the tensor coordinates of '{}' .{}d must be a vector of {} elements, not {}", mnemonic(inst),
            dims, dims, vectorSize(coords));
    return;
  }
}

}  // namespace ptx::check_detail
