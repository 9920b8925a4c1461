// Control flow (OpClass Control): calls (direct, indirect, built-in functions, the device runtime), exit and ret.
// Branches are lowered by the core (lower.cpp) with the CFG.
#include "exec/control_ops.h"
#include "exec/lowerer.h"
#include "exec/device_runtime.h"

namespace ptx::exec {

namespace lowering {

void KernelLowerer::lowerControl(const Instruction& in) {
  switch (in.opcode) {
    case Opcode::Ret:  // of a kernel (a function's ret is a branch to its end, lowered with the CFG)
    case Opcode::Exit: emit(&ctl::exitLanes); return;
    case Opcode::Call: return lowerCall(in);
    default: return unsupported(in);
  }
}

void KernelLowerer::lowerMisc(const Instruction& in) {
  switch (in.opcode) {
    case Opcode::Trap: ctl::TrapOperands{ctl::TrapOperands::Trap}.into(emit(&ctl::trap)); return;
    case Opcode::Brkpt: ctl::TrapOperands{ctl::TrapOperands::Brkpt}.into(emit(&ctl::trap)); return;
    case Opcode::Nanosleep: emit(&ctl::nanosleep); return;
    case Opcode::Pmevent: emit(&ctl::nop); return;
    // setmaxnreg moves physical registers between a CTA's warpgroups (warp-specialised kernels give producers few,
    // consumers many); a warp here has every register it declares, whatever the count
    case Opcode::Setmaxnreg: emit(&ctl::nop); return;
    default: return unsupported(in);
  }
}

// Functions the driver provides to PTX (declared `.extern .func`, no body): the single table of built-ins.
// Arguments are loaded into the op's a, b, c, e registers in order; the result (if any) comes back in d.
struct BuiltinFunction {
  std::string_view name;
  Handler handler;
  bool hasResult;
  Type result;
  unsigned argCount;
  std::array<Type, 4> args;
};
constexpr BuiltinFunction kBuiltinFunctions[] = {
    {"vprintf", &ctl::vprintf, true, Type::b32, 2, {Type::b64, Type::b64}},
    // (message, file, line, function[, char size]): the fifth argument is not needed
    {"__assertfail", &ctl::assertFail, false, Type::b32, 4, {Type::b64, Type::b64, Type::b32, Type::b64}},
    {"__assert_fail", &ctl::assertFail, false, Type::b32, 4, {Type::b64, Type::b64, Type::b32, Type::b64}},
    {"malloc", &ctl::deviceMalloc, true, Type::b64, 1, {Type::b64}},
    {"free", &ctl::deviceFree, false, Type::b32, 1, {Type::b64}},
    // ---- CUDA graph conditional nodes (issue 17): libcudadevrt's function on a GPU ----
    {"cudaGraphSetConditional", &ctl::graphSetConditional, false, Type::b32, 2, {Type::b64, Type::b32}},
};

bool builtinNeverReturns(std::string_view name) {
  for (const BuiltinFunction& x : kBuiltinFunctions)
    if (x.name == name) return x.handler == &ctl::assertFail;
  return false;
}

void KernelLowerer::lowerCall(const Instruction& in) {
  std::vector<const Operand*> rets, args;
  const Operand* callee = nullptr;
  for (uint32_t k = 0; k < in.numOperands; ++k) {
    const Operand& o = fn_->operands[in.firstOperand + k];
    if (o.kind == OperandKind::List) {
      std::vector<const Operand*>& into = callee ? args : rets;
      for (int64_t q = 0; q < o.value; ++q) into.push_back(&fn_->elems[o.index + uint32_t(q)]);
    } else if (!callee && (o.kind == OperandKind::Symbol || o.kind == OperandKind::Reg)) {
      callee = &o;
    }
  }
  if (!callee) fail(line_, "call without a target");
  if (callee->kind != OperandKind::Symbol || callee->symKind != SymKind::Function)
    fail(line_, "call target must be a function or a register");
  uint32_t calleeIr = definitionOf(callee->index);
  const ptx::Function& target = mod_.functions[calleeIr];
  if (!target.hasBody) return lowerBuiltinCall(in, mod_.str(target.name), args, rets);
  lowerDirectCall(calleeIr, args, rets);
}

// call through a register (with a .callprototype): function addresses are handles (kFunctionAddressBase | IR
// index), so the call becomes one guarded direct call per address-taken function with the same signature; lanes
// whose address names no such function fault.
void KernelLowerer::lowerIndirectCall(const Instruction& in) {
  std::vector<const Operand*> rets, args;
  const Operand* callee = calleeOperand(*fn_, in);
  for (uint32_t k = 0; k < in.numOperands; ++k) {
    const Operand& o = fn_->operands[in.firstOperand + k];
    if (o.kind == OperandKind::List) {
      std::vector<const Operand*>& into = &o > callee ? args : rets;
      for (int64_t q = 0; q < o.value; ++q) into.push_back(&fn_->elems[o.index + uint32_t(q)]);
    }
  }
  uint32_t target = allocReg(8);
  {
    uint32_t t = src(*callee, Type::u64);
    Op& op = emit(&h::mov<uint64_t>);
    op.d = target;
    op.a = t;
  }
  auto sameSignature = [&](const ptx::Function& f) {
    if (f.params.size() != args.size() || f.returns.size() != rets.size()) return false;
    return true;
  };
  bool guarded = in.guard != kNoIndex;
  // matched: lanes that call some function (or do not execute the call at all)
  uint32_t matched = allocReg(1);
  if (guarded) {
    Op& op = emit(in.guardNegated ? &h::predLogic<4> : &h::predLogic<3>);
    op.d = matched;
    op.a = regOf(in.guard);
    op.b = regOf(in.guard);
  } else {
    Op& op = emit(&h::predLogic<4>);
    op.d = matched;
    op.a = literal(0, 1);
    op.b = op.a;
  }
  std::vector<std::pair<uint32_t, uint32_t>> candidates;  // (IR function, predicate register)
  for (uint32_t f : addressTakenFunctions()) {
    if (!sameSignature(mod_.functions[f]) || !instanceOfIr_.count(f)) continue;
    uint32_t p = allocReg(1);
    Op& op = emit(&h::setp<uint64_t, h::EQ>);
    op.d = p;
    op.a = target;
    op.b = literal(kFunctionAddressBase | f, 8);
    if (guarded) {
      h::CompareOperands v;
      v.combine = h::CompareOperands::And;
      v.predicate = regOf(in.guard);
      v.negated = in.guardNegated;
      v.into(op);
    }
    Op& orOp = emit(&h::predLogic<1>);
    orOp.d = matched;
    orOp.a = matched;
    orOp.b = p;
    candidates.push_back({f, p});
  }
  auto guardedBlock = [&](uint32_t pred, bool negated, auto body) {
    uint32_t guardOp = here();
    ctl::PredicateTest{pred, negated}.into(emit(&ctl::guard));
    body();
    emit(&ctl::unguard);
    pending_.push_back({guardOp, here(), PendingTarget::Absolute});
  };
  guardedBlock(matched, true, [&] {
    ctl::TrapOperands{ctl::TrapOperands::Unsupported, uint32_t(prog_.messages.size())}.into(emit(&ctl::trap));
    prog_.messages.push_back(
        fmt::format("indirect call (PTX line {}) through an address that is not a function "
                    "of the module with the call's signature",
                    in.loc.line));
  });
  // (no structured bindings captured: clang 14 compiles this file for the native tier, and it cannot)
  for (const auto& candidate : candidates)
    guardedBlock(candidate.second, false, [&] { lowerDirectCall(candidate.first, args, rets); });
}

void KernelLowerer::lowerDirectCall(uint32_t calleeIr, const std::vector<const Operand*>& args,
                                    const std::vector<const Operand*>& rets) {
  const ptx::Function& target = mod_.functions[calleeIr];
  std::string_view name = mod_.str(target.name);
  const FuncInstance& ti = instances_[instanceOfIr_.at(calleeIr)];
  CallSite cs;
  cs.callee = calleeIr;  // IR index until the kernel is finished
  cs.callerFrameBytes = fi_->frameBytes;
  if (args.size() != target.params.size() || rets.size() != target.returns.size())
    fail(line_, fmt::format("call to '{}' with the wrong number of arguments", name));
  for (size_t k = 0; k < args.size(); ++k) {
    const Operand& o = *args[k];
    const auto& p = target.params[k];
    uint32_t size = uint32_t(p.size ? p.size : p.elementSize());
    CallArg ca;
    ca.dst = ti.paramOffset[k];
    ca.size = size;
    if (o.kind == OperandKind::Symbol && o.symKind == SymKind::Local) {
      ca.kind = CallArg::FrameToFrame;
      ca.src = fi_->localOffset[o.index] + uint32_t(o.value);
    } else if (o.kind == OperandKind::Symbol && o.symKind == SymKind::Param && !fn_->isEntry) {
      ca.kind = CallArg::FrameToFrame;
      ca.src = fi_->paramOffset[o.index] + uint32_t(o.value);
    } else {
      Type pt = p.type == Type::pred ? Type::pred
                                     : (size == 1   ? Type::b8
                                        : size == 2 ? Type::b16
                                        : size == 4 ? Type::b32
                                                    : Type::b64);
      if (size > 8) fail(line_, "aggregate call argument must be a .param variable");
      ca.kind = CallArg::RegToFrame;
      ca.src = src(o, pt);
    }
    cs.args.push_back(ca);
  }
  for (size_t k = 0; k < rets.size(); ++k) {
    const Operand& o = *rets[k];
    const auto& p = target.returns[k];
    uint32_t size = uint32_t(p.size ? p.size : p.elementSize());
    if (o.kind != OperandKind::Symbol || o.symKind != SymKind::Local)
      fail(line_, "call return value must be a .param variable");
    cs.rets.push_back(
        CallArg{CallArg::FrameToFrame, ti.returnOffset[k], fi_->localOffset[o.index] + uint32_t(o.value), size});
  }
  uint32_t index = uint32_t(prog_.calls.size());
  prog_.calls.push_back(cs);
  callerOf_.push_back(instanceOfIr_.at(fi_->irIndex));
  callOps_.push_back({here(), calleeIr});
  ctl::CallOperands{index}.into(emit(&ctl::call));
}

void KernelLowerer::lowerBuiltinCall(const Instruction& in, std::string_view name,
                                     const std::vector<const Operand*>& args, const std::vector<const Operand*>& rets) {
  // Arguments of builtins are .param variables of the caller (or registers): load them into registers.
  auto argReg = [&](size_t k, Type t) -> uint32_t {
    if (k >= args.size()) fail(line_, fmt::format("{}: missing argument", name));
    const Operand& o = *args[k];
    if (o.kind == OperandKind::Symbol &&
        (o.symKind == SymKind::Local || (o.symKind == SymKind::Param && !fn_->isEntry))) {
      uint32_t off =
          (o.symKind == SymKind::Local ? fi_->localOffset[o.index] : fi_->paramOffset[o.index]) + uint32_t(o.value);
      uint32_t r = temp(sizeOf(t));
      mem::Access{kZeroReg, off, {r}}.into(emit(ldHandler(mem::Frame, 8, t, sizeOf(t), 1)));
      return r;
    }
    return src(o, t);
  };
  const BuiltinFunction* b = nullptr;
  for (const BuiltinFunction& x : kBuiltinFunctions)
    if (x.name == name) b = &x;
  if (!b) {
    if (const RuntimeFunction* f = findRuntimeFunction(name)) return lowerRuntimeCall(name, *f, args, rets);
    return unsupported(in, fmt::format("call to external function '{}'", name));
  }
  uint32_t regs[4] = {kZeroReg, kZeroReg, kZeroReg, kZeroReg};
  for (unsigned k = 0; k < b->argCount; ++k) regs[k] = argReg(k, b->args[k]);
  uint32_t res = b->hasResult ? temp(sizeOf(b->result)) : 0;
  ctl::BuiltinCallOperands{{regs[0], regs[1], regs[2], regs[3]}, res}.into(emit(b->handler));
  if (b->hasResult && !rets.empty()) {
    const Operand& o = *rets[0];
    if (o.kind == OperandKind::Symbol && o.symKind == SymKind::Local) {
      mem::Access{kZeroReg, fi_->localOffset[o.index] + uint32_t(o.value), {res}}.into(
          emit(stHandler(mem::Frame, 8, b->result, sizeOf(b->result), 1)));
    }
  }
}

// A device runtime call (CUDA dynamic parallelism): the arguments stay where they are (.param variables of the
// frame, or registers) and the handler gathers them per lane.
void KernelLowerer::lowerRuntimeCall(std::string_view name, const RuntimeFunction& f,
                                     const std::vector<const Operand*>& args, const std::vector<const Operand*>& rets) {
  if (args.size() != f.argCount || rets.size() > 1)
    fail(line_, fmt::format("call to '{}' with the wrong number of arguments", name));
  RuntimeSite site;
  site.call = f.call;
  for (size_t k = 0; k < args.size(); ++k) {
    const Operand& o = *args[k];
    uint32_t size = f.argSizes[k];
    CallArg ca;
    ca.dst = runtimeArgOffset(f, unsigned(k));
    ca.size = size;
    if (o.kind == OperandKind::Symbol && o.symKind == SymKind::Local) {
      ca.kind = CallArg::FrameToFrame;
      ca.src = fi_->localOffset[o.index] + uint32_t(o.value);
    } else if (o.kind == OperandKind::Symbol && o.symKind == SymKind::Param && !fn_->isEntry) {
      ca.kind = CallArg::FrameToFrame;
      ca.src = fi_->paramOffset[o.index] + uint32_t(o.value);
    } else {
      if (size > 8) fail(line_, fmt::format("{}: aggregate argument must be a .param variable", name));
      ca.kind = CallArg::RegToFrame;
      ca.src = src(o, size == 4 ? Type::b32 : Type::b64);
    }
    site.args.push_back(ca);
  }
  if (!rets.empty() && f.resultSize) {
    const Operand& o = *rets[0];
    if (o.kind != OperandKind::Symbol || o.symKind != SymKind::Local)
      fail(line_, "call return value must be a .param variable");
    site.resultOffset = fi_->localOffset[o.index] + uint32_t(o.value);
    site.resultSize = f.resultSize;
  }
  ctl::RuntimeCallOperands{uint32_t(prog_.runtimeSites.size())}.into(emit(&ctl::deviceRuntime));
  prog_.runtimeSites.push_back(std::move(site));
}

}  // namespace lowering

}  // namespace ptx::exec
