#include "native/jit/vector_prefix.h"

#include "exec/control_ops.h"
#include "exec/engine.h"
#include "exec/handlers.h"
#include "exec/memory.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Intrinsics.h>

#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>

namespace ptx::exec::native {

bool vectorPrefixEnabled() {
  const char* v = std::getenv("CUEMU_NATIVE_VECTOR");
  return !(v && std::strcmp(v, "0") == 0);
}

uint64_t prefetchDistance() {
  const char* v = std::getenv("CUEMU_NATIVE_PREFETCH");
  return v ? std::strtoull(v, nullptr, 10) : kDefaultPrefetchDistance;
}

namespace {

constexpr unsigned kLanes = 32;

// Emits the prefix op by op. Registers live in `values` (a <32 x iN> each, N the register's bits) from their first
// read or write; the dirty ones are stored to the register file at every way out.
class Emitter {
 public:
  Emitter(llvm::Module& m, const llvm::Module& handlers, llvm::Function& fn, const VectorPrefixPlaces& places)
      : m_(m), handlers_(handlers), fn_(fn), places_(places), b_(fn.getContext()) {}

  VectorPrefix kernelEntry(const Op* ops, size_t count, const CuemuNativeOptions& options, llvm::BasicBlock* from);
  void ctaEntry(const Op* ops, size_t count, const CuemuNativeOptions& options, llvm::BasicBlock* from);

 private:
  struct Register {
    llvm::Value* value;
    unsigned bytes;
    bool dirty;
  };

  llvm::LLVMContext& ctx() { return fn_.getContext(); }
  llvm::Type* i8() { return llvm::Type::getInt8Ty(ctx()); }
  llvm::Type* i32() { return llvm::Type::getInt32Ty(ctx()); }
  llvm::Type* i64() { return llvm::Type::getInt64Ty(ctx()); }
  llvm::FixedVectorType* lanesOf(unsigned bytes) {
    return llvm::FixedVectorType::get(llvm::Type::getIntNTy(ctx(), bytes * 8), kLanes);
  }
  // A `type` at `offset` bytes into object (the warp, the CTA, a register file)
  llvm::Value* addressOf(llvm::IRBuilder<>& b, llvm::Value* object, size_t offset, llvm::Type* type) {
    return b.CreatePointerCast(b.CreateConstInBoundsGEP1_64(i8(), object, offset), type->getPointerTo());
  }
  llvm::Value* field(llvm::Value* object, size_t offset, llvm::Type* type) {
    return b_.CreateLoad(type, addressOf(b_, object, offset, type));
  }
  llvm::Value* warpField(size_t offset, llvm::Type* type) { return field(warp_, offset, type); }
  bool overlapsAnother(uint32_t offset, unsigned bytes) const {
    for (const auto& [at, r] : values_)
      if (at != offset && at < offset + kLanes * bytes && offset < at + kLanes * r.bytes) return true;
    return false;
  }
  // A register's 32 lanes; nullptr where a register of another size overlaps it (the prefix ends there).
  llvm::Value* read(uint32_t offset, unsigned bytes) {
    if (auto it = values_.find(offset); it != values_.end())
      return it->second.bytes == bytes ? it->second.value : nullptr;
    if (overlapsAnother(offset, bytes)) return nullptr;
    llvm::Value* v =
        b_.CreateAlignedLoad(lanesOf(bytes), addressOf(b_, rf_, offset, lanesOf(bytes)), llvm::Align(bytes));
    values_[offset] = {v, bytes, false};
    return v;
  }
  // Its first lane (the scaled accesses' base, the same in every lane, which their handlers read there too)
  llvm::Value* readFirst(uint32_t offset, unsigned bytes) {
    if (auto it = values_.find(offset); it != values_.end())
      return it->second.bytes == bytes ? first(it->second.value) : nullptr;
    if (overlapsAnother(offset, bytes)) return nullptr;
    llvm::Type* lane = llvm::Type::getIntNTy(ctx(), bytes * 8);
    return b_.CreateAlignedLoad(lane, addressOf(b_, rf_, offset, lane), llvm::Align(bytes));
  }
  bool write(uint32_t offset, unsigned bytes, llvm::Value* v) {
    if (auto it = values_.find(offset);
        it != values_.end() ? it->second.bytes != bytes : overlapsAnother(offset, bytes))
      return false;
    values_[offset] = {v, bytes, true};
    return true;
  }
  // The registers the prefix wrote so far, to the register file.
  void storeDirty(llvm::IRBuilder<>& e) {
    for (const auto& [offset, r] : values_)
      if (r.dirty) e.CreateAlignedStore(r.value, addressOf(e, rf_, offset, lanesOf(r.bytes)), llvm::Align(r.bytes));
  }
  // A new block that stores the dirty registers and goes on at op `at`: in its block, or through the switch where
  // it has none; from the CTA entry, back to the interpreter (ctaEntry).
  llvm::BasicBlock* exitTo(size_t at) {
    auto* block = llvm::BasicBlock::Create(ctx(), "vector.exit", &fn_);
    llvm::IRBuilder<> e(block);
    if (index_) {  // (the dirty registers are a started warp's)
      if (rf_) storeDirty(e);
      e.CreateStore(index_, addressOf(e, cta_, offsetof(Cta, warpsFinishedByCode), i32()));
      e.CreateRet(e.CreatePointerCast(places_.opAt(at), fn_.getReturnType()));
      return block;
    }
    storeDirty(e);
    llvm::BasicBlock* next = places_.blockOf(at);
    if (!next) {
      next = places_.dispatch;
      result_.exits.push_back({block, places_.opAt(at)});
    }
    e.CreateBr(next);
    return block;
  }
  // Goes on in a new block where `ok` holds, leaves for op `at` where not.
  void continueWhere(llvm::Value* ok, size_t at) {
    auto* next = llvm::BasicBlock::Create(ctx(), "vector.op", &fn_);
    b_.CreateCondBr(ok, next, exitTo(at));
    b_.SetInsertPoint(next);
  }
  // A warp-wide function of the handler bitcode, called with its vectors in stack slots that SROA turns back into
  // values once it is inlined; nullptr where the bitcode has no such function.
  llvm::Function* function(const char* name) {
    const llvm::Function* source = handlers_.getFunction(name);
    if (!source) return nullptr;
    return llvm::cast<llvm::Function>(m_.getOrInsertFunction(name, source->getFunctionType()).getCallee());
  }
  llvm::Value* slot(llvm::Type* type) {
    llvm::IRBuilder<> a(places_.entry, places_.entry->begin());
    llvm::AllocaInst* s = a.CreateAlloca(type);
    s->setAlignment(llvm::Align(64));
    return s;
  }
  // d = f(operands..., d, parameter) with the operands and d <32 x lanes> in stack slots of type `operand` and
  // `result`
  llvm::Value* callWarpFunction(llvm::Function* f, std::initializer_list<llvm::Value*> operands, llvm::Type* operand,
                                llvm::Type* result, uint32_t parameter) {
    llvm::FunctionType* type = f->getFunctionType();
    std::vector<llvm::Value*> arguments;
    for (llvm::Value* v : operands) {
      llvm::Value* s = slot(operand);
      b_.CreateStore(b_.CreateBitCast(v, operand), s);
      arguments.push_back(b_.CreatePointerCast(s, type->getParamType(unsigned(arguments.size()))));
    }
    llvm::Value* sd = slot(result);
    arguments.push_back(b_.CreatePointerCast(sd, type->getParamType(unsigned(arguments.size()))));
    arguments.push_back(llvm::ConstantInt::get(type->getParamType(unsigned(arguments.size())), parameter));
    llvm::CallInst* call = b_.CreateCall(f, arguments);
    call->addFnAttr(llvm::Attribute::AlwaysInline);
    return b_.CreateLoad(result, sd);
  }
  // The first lane's element
  llvm::Value* first(llvm::Value* lanes) { return b_.CreateExtractElement(lanes, uint64_t(0)); }
  // <0, step, 2 step, ...> of `type`
  llvm::Constant* steps(llvm::Type* type, uint64_t step) {
    std::vector<llvm::Constant*> lanes;
    for (unsigned k = 0; k < kLanes; ++k) lanes.push_back(llvm::ConstantInt::get(type, k * step));
    return llvm::ConstantVector::get(lanes);
  }
  // Where all 32 lanes of the i1 vector hold
  llvm::Value* allLanes(llvm::Value* bits) {
    return b_.CreateICmpEQ(b_.CreateBitCast(bits, i32()), llvm::ConstantInt::get(i32(), 0xffffffffu));
  }
  // Whether the kernel allows the whole-warp global accesses (the global-runs fast path)
  llvm::Value* globalRuns() {
    return b_.CreateICmpNE(b_.CreateAnd(warpField(offsetof(Warp, fastPaths), i32()), rewriteBit(Rewrite::GlobalRuns)),
                           llvm::ConstantInt::get(i32(), 0));
  }
  static const CuemuVectorOp* rowOf(const Op* ops, size_t count, const CuemuNativeOptions& options, size_t i);
  void body(const Op* ops, size_t count, const CuemuNativeOptions& options, llvm::BasicBlock* done);
  bool floatOp(const Op& op, uint32_t parameter, unsigned operands);
  bool integerOp(const Op& op, uint32_t parameter);
  bool mulWide(const Op& op, uint32_t parameter);
  bool compare(const Op* ops, size_t count, size_t& i, uint32_t parameter, unsigned bytes);
  bool shift(const Op& op, uint32_t parameter);
  bool access(const Op& op, size_t at, bool store, uint32_t parameter);

  llvm::Module& m_;
  const llvm::Module& handlers_;
  llvm::Function& fn_;
  const VectorPrefixPlaces& places_;
  llvm::IRBuilder<> b_;
  llvm::Value* warp_ = nullptr;
  llvm::Value* rf_ = nullptr;
  llvm::Value* cta_ = nullptr;      // the CTA entry's
  llvm::PHINode* index_ = nullptr;  // the CTA entry's warp (nullptr: the kernel's entry)
  std::map<uint32_t, Register> values_;
  VectorPrefix result_;
};

// d = a op b, or fma(a, b, c) (`operands` 3), on f32 or f64 lanes (the parameter's bytes)
bool Emitter::floatOp(const Op& op, uint32_t parameter, unsigned operands) {
  const unsigned bytes = parameter >> 8;
  llvm::Function* f = function(bytes == 8 ? "cuemuVectorFloat64" : "cuemuVectorFloat32");
  llvm::Value* a = f ? read(op.a, bytes) : nullptr;
  llvm::Value* b = a ? read(op.b, bytes) : nullptr;
  llvm::Value* c = b ? (operands == 3 ? read(op.c, bytes) : b) : nullptr;
  if (!c) return false;
  auto* floats =
      llvm::FixedVectorType::get(bytes == 8 ? llvm::Type::getDoubleTy(ctx()) : llvm::Type::getFloatTy(ctx()), kLanes);
  llvm::Value* d = callWarpFunction(f, {a, b, c}, floats, floats, parameter & 0xff);
  return write(op.d, bytes, b_.CreateBitCast(d, lanesOf(bytes)));
}

// d = a op b on 32- or 64-bit integer lanes (the parameter's bytes)
bool Emitter::integerOp(const Op& op, uint32_t parameter) {
  const unsigned bytes = parameter >> 8;
  llvm::Function* f = function(bytes == 8 ? "cuemuVectorInt64" : "cuemuVectorInt32");
  llvm::Value* a = f ? read(op.a, bytes) : nullptr;
  llvm::Value* b = a ? read(op.b, bytes) : nullptr;
  if (!b) return false;
  return write(op.d, bytes, callWarpFunction(f, {a, b}, lanesOf(bytes), lanesOf(bytes), parameter & 0xff));
}

// d = a shifted by the op's immediate amount (the parameter says which shift, on lanes of how many bytes)
bool Emitter::shift(const Op& op, uint32_t parameter) {
  const unsigned bytes = parameter >> 8;
  llvm::Function* f = function(bytes == 8 ? "cuemuVectorShift64" : "cuemuVectorShift32");
  llvm::Value* a = f ? read(op.a, bytes) : nullptr;
  if (!a || uint64_t(op.imm) > 0xffffffu) return false;
  return write(op.d, bytes,
               callWarpFunction(f, {a}, lanesOf(bytes), lanesOf(bytes), (parameter & 3) | uint32_t(op.imm) << 8));
}

// d (64-bit lanes) = a * b of 32-bit lanes
bool Emitter::mulWide(const Op& op, uint32_t parameter) {
  llvm::Function* f = function("cuemuVectorMulWide");
  llvm::Value* a = f ? read(op.a, 4) : nullptr;
  llvm::Value* b = a ? read(op.b, 4) : nullptr;
  if (!b) return false;
  return write(op.d, 8, callWarpFunction(f, {a, b}, lanesOf(4), lanesOf(8), parameter));
}

// setp d = a cmp b (plain); with its fused exit (thenExit), the exit op after it runs here where no lane leaves.
bool Emitter::compare(const Op* ops, size_t count, size_t& i, uint32_t parameter, unsigned bytes) {
  const Op& op = ops[i];
  const h::CompareOperands v = h::CompareOperands::of(op);
  if (!v.plain() || v.thenBranch) return false;
  const ctl::PredicateTest exit =
      v.thenExit && i + 1 < count ? ctl::PredicateTest::of(ops[i + 1]) : ctl::PredicateTest{};
  if (v.thenExit && (i + 1 >= count || exit.predicate != op.d)) return false;
  llvm::Function* f = function(bytes == 8 ? "cuemuVectorCompare64" : "cuemuVectorCompare32");
  llvm::Value* a = f ? read(op.a, bytes) : nullptr;
  llvm::Value* b = a ? read(op.b, bytes) : nullptr;
  if (!b) return false;
  llvm::Value* d = callWarpFunction(f, {a, b}, lanesOf(bytes), lanesOf(1), parameter);
  if (!write(op.d, 1, d)) return false;
  ++i;
  if (!v.thenExit) return true;
  // the lanes where the predicate holds, as the exit tests them
  llvm::Value* holds = b_.CreateBitCast(b_.CreateICmpNE(d, llvm::Constant::getNullValue(lanesOf(1))), i32());
  llvm::Value* leaving = exit.negated ? b_.CreateNot(holds) : holds;
  continueWhere(b_.CreateIsNull(leaving), i);
  ++i;
  return true;
}

// A 4- or 8-byte global load or store through a 64-bit address: plain (a register), the sum of two registers, or
// base + (32-bit index << log2 bytes) (the base read in the first lane, as its handler reads it). Where the 32
// addresses are consecutive elements (scaled: the indices consecutive without wrapping), the span aligned, below the
// address space's end and valid, as the handlers' whole-warp path requires (mem::consecutiveGlobal), one vector
// access; elsewhere the op runs through the switch.
bool Emitter::access(const Op& op, size_t at, bool store, uint32_t parameter) {
  const int mode = int(parameter & 3);
  const unsigned bytes = parameter >> 8;
  const mem::FusedAccess v = mem::FusedAccess::of(op);  // (a plain access's address is `base`, its value `value`)
  const bool scaled = mode == mem::kAddrScaledSigned || mode == mem::kAddrScaledUnsigned;
  if (scaled && (uint64_t(1) << v.shift) != bytes) return false;
  llvm::Function* spanValid = function("cuemuVectorSpanValid");
  if (!spanValid) return false;
  llvm::Value* value = store ? read(v.value, bytes) : nullptr;
  if (store && !value) return false;
  llvm::Value* start = nullptr;  // the first lane's address, less the offset
  llvm::Value* consecutive = nullptr;
  if (scaled) {
    const bool signedIndex = mode == mem::kAddrScaledSigned;
    llvm::Value* base = readFirst(v.base, 8);
    llvm::Value* index = base ? read(v.index, 4) : nullptr;
    if (!index) return false;
    llvm::Value* i0 = first(index);
    consecutive = allLanes(b_.CreateICmpEQ(index, b_.CreateAdd(b_.CreateVectorSplat(kLanes, i0), steps(i32(), 1))));
    const uint32_t lastFirst = (signedIndex ? uint32_t(std::numeric_limits<int32_t>::max()) : ~0u) - (kLanes - 1);
    consecutive =
        b_.CreateAnd(consecutive, signedIndex ? b_.CreateICmpSLE(i0, llvm::ConstantInt::get(i32(), lastFirst))
                                              : b_.CreateICmpULE(i0, llvm::ConstantInt::get(i32(), lastFirst)));
    llvm::Value* element = signedIndex ? b_.CreateSExt(i0, i64()) : b_.CreateZExt(i0, i64());
    start = b_.CreateAdd(base, b_.CreateShl(element, v.shift));
  } else {
    llvm::Value* addresses = read(v.base, 8);
    if (addresses && mode == mem::kAddrSum) {
      llvm::Value* index = read(v.index, 8);
      addresses = index ? b_.CreateAdd(addresses, index) : nullptr;
    }
    if (!addresses) return false;
    start = first(addresses);
    consecutive =
        allLanes(b_.CreateICmpEQ(addresses, b_.CreateAdd(b_.CreateVectorSplat(kLanes, start), steps(i64(), bytes))));
  }
  llvm::Value* lo = b_.CreateAdd(start, llvm::ConstantInt::get(i64(), uint64_t(v.offset)));
  const uint64_t kLast = ~uint64_t(0) - kLanes * bytes;
  llvm::Value* aligned = b_.CreateICmpEQ(b_.CreateAnd(lo, bytes - 1), llvm::ConstantInt::get(i64(), 0));
  llvm::Value* inRange = b_.CreateICmpULE(lo, llvm::ConstantInt::get(i64(), kLast));
  continueWhere(b_.CreateAnd(consecutive, b_.CreateAnd(aligned, inRange)), at);
  llvm::FunctionType* type = spanValid->getFunctionType();
  llvm::Value* valid = b_.CreateCall(spanValid, {b_.CreatePointerCast(warp_, type->getParamType(0)), lo,
                                                 b_.CreateAdd(lo, llvm::ConstantInt::get(i64(), kLanes * bytes))});
  llvm::cast<llvm::CallInst>(valid)->addFnAttr(llvm::Attribute::AlwaysInline);
  continueWhere(b_.CreateICmpNE(valid, llvm::Constant::getNullValue(valid->getType())), at);
  llvm::Value* memory = b_.CreateIntToPtr(lo, lanesOf(bytes)->getPointerTo());
  // The warps after this one usually go on along the same arrays: their lines, `ahead` bytes on, are fetched while
  // this warp runs (in memory, each warp's accesses waited for their own lines, one warp at a time).
  if (const uint64_t ahead = prefetchDistance()) {
    llvm::Function* prefetch =
        llvm::Intrinsic::getDeclaration(&m_, llvm::Intrinsic::prefetch, {llvm::Type::getInt8PtrTy(ctx())});
    for (uint64_t line = 0; line < kLanes * bytes; line += 64)
      b_.CreateCall(prefetch, {b_.CreateIntToPtr(b_.CreateAdd(lo, llvm::ConstantInt::get(i64(), ahead + line)),
                                                 llvm::Type::getInt8PtrTy(ctx())),
                               llvm::ConstantInt::get(i32(), store ? 1 : 0), llvm::ConstantInt::get(i32(), 3),
                               llvm::ConstantInt::get(i32(), 1)});
  }
  if (store) {
    b_.CreateAlignedStore(value, memory, llvm::Align(bytes));
    return true;
  }
  return write(v.value, bytes, b_.CreateAlignedLoad(lanesOf(bytes), memory, llvm::Align(bytes)));
}

// The prefix's ops from the kernel's entry, at the builder's block, with warp_ and rf_ set. Where they reach the
// kernel's exit of a whole warp and `done` is given, the code goes on there with its registers stored; elsewhere
// it leaves through exitTo (result_.endsAtExit: the prefix stops at such an exit).
void Emitter::body(const Op* ops, size_t count, const CuemuNativeOptions& options, llvm::BasicBlock* done) {
  size_t i = options.entryOp;
  for (const CuemuVectorOp* row = rowOf(ops, count, options, i); row; row = rowOf(ops, count, options, i)) {
    const Op& op = ops[i];
    bool compiled = false;
    const size_t before = i;
    switch (row->kind) {
      case kCuemuVectorFloatBinary: compiled = floatOp(op, row->parameter, 2), ++i; break;
      case kCuemuVectorFloatTernary: compiled = floatOp(op, row->parameter, 3), ++i; break;
      case kCuemuVectorIntBinary: compiled = integerOp(op, row->parameter), ++i; break;
      case kCuemuVectorMulWide: compiled = mulWide(op, row->parameter), ++i; break;
      case kCuemuVectorCompare32: compiled = compare(ops, count, i, row->parameter, 4); break;
      case kCuemuVectorCompare64: compiled = compare(ops, count, i, row->parameter, 8); break;
      case kCuemuVectorShiftImmediate: compiled = shift(op, row->parameter), ++i; break;
      case kCuemuVectorLoadGlobal:
      case kCuemuVectorStoreGlobal:
        compiled = access(op, i, row->kind == kCuemuVectorStoreGlobal, row->parameter), ++i;
        break;
      case kCuemuVectorExitAll:
        // all 32 lanes leave: the warp ends (with nothing on its stacks, which no op of the prefix touches)
        if (!done) break;
        storeDirty(b_);
        b_.CreateBr(done);
        result_.ops += 1;
        return;
      default: break;
    }
    if (!compiled) {
      // (what an op that could not be compiled left in the block is dead, or leaves for that op: it runs where the
      // prefix ends)
      i = before;
      break;
    }
    result_.ops += uint32_t(i - before);
  }
  b_.CreateBr(exitTo(i));
  const CuemuVectorOp* stop = rowOf(ops, count, options, i);
  result_.endsAtExit = stop && stop->kind == kCuemuVectorExitAll;
}

const CuemuVectorOp* Emitter::rowOf(const Op* ops, size_t count, const CuemuNativeOptions& options, size_t i) {
  if (i >= count || (options.compileOp && !options.compileOp[i]) || (options.leaveOp && options.leaveOp[i]))
    return nullptr;
  for (uint32_t k = 0; k < options.vectorOpCount; ++k)
    if (options.vectorOps[k].handler == reinterpret_cast<const void*>(ops[i].fn)) return &options.vectorOps[k];
  return nullptr;
}

// The kernel's entry: a warp at the kernel's first op with all 32 lanes executing and the whole-warp accesses allowed
// (the global-runs fast path) runs the prefix; any other goes to the switch.
VectorPrefix Emitter::kernelEntry(const Op* ops, size_t count, const CuemuNativeOptions& options,
                                  llvm::BasicBlock* from) {
  warp_ = fn_.getArg(0);
  const size_t start = options.entryOp;
  if (!vectorPrefixEnabled() || !rowOf(ops, count, options, start)) {
    b_.SetInsertPoint(from);
    b_.CreateBr(places_.dispatch);
    result_.exits.push_back({from, fn_.getArg(1)});
    return result_;
  }
  auto* check = llvm::BasicBlock::Create(ctx(), "vector.check", &fn_);
  auto* code = llvm::BasicBlock::Create(ctx(), "vector", &fn_);
  b_.SetInsertPoint(from);
  b_.CreateCondBr(b_.CreateICmpEQ(fn_.getArg(1), b_.CreatePointerCast(places_.opAt(start), fn_.getArg(1)->getType())),
                  check, places_.dispatch);
  result_.exits.push_back({from, fn_.getArg(1)});
  b_.SetInsertPoint(check);
  llvm::Value* full = llvm::ConstantInt::get(i32(), kFullMask);
  llvm::Value* wholeWarp = b_.CreateAnd(b_.CreateICmpEQ(warpField(offsetof(Warp, exec), i32()), full),
                                        b_.CreateICmpEQ(warpField(offsetof(Warp, active), i32()), full));
  b_.CreateCondBr(b_.CreateAnd(wholeWarp, globalRuns()), code, places_.dispatch);
  result_.exits.push_back({check, fn_.getArg(1)});
  b_.SetInsertPoint(code);
  rf_ = warpField(offsetof(Warp, rf), llvm::Type::getInt8PtrTy(ctx()));
  body(ops, count, options, nullptr);
  return result_;
}

// The CTA entry (launch.cpp: runCompiledCta), for a prefix that ends at the kernel's exit: the warp argument is the
// CTA's first; its warps, full and not set up for scheduling, run the prefix in index order. A warp that ends there
// goes on to the next one, and after the last the code returns nullptr; at any other way out the code stores how many
// warps it finished (Cta::warpsFinishedByCode) and returns the op where the stopped one goes on. Where the job has
// faulted, the next warp does not start (it goes on at the kernel's entry).
void Emitter::ctaEntry(const Op* ops, size_t count, const CuemuNativeOptions& options, llvm::BasicBlock* from) {
  llvm::Type* i8p = llvm::Type::getInt8PtrTy(ctx());
  b_.SetInsertPoint(from);
  llvm::Value* first = fn_.getArg(0);
  cta_ = field(first, offsetof(Warp, cta), i8p);
  llvm::Value* job = field(cta_, offsetof(Cta, job), i8p);
  llvm::Value* warps = field(cta_, offsetof(Cta, nwarps), i32());
  auto* loop = llvm::BasicBlock::Create(ctx(), "cta.warp", &fn_);
  auto* run = llvm::BasicBlock::Create(ctx(), "cta.run", &fn_);
  auto* next = llvm::BasicBlock::Create(ctx(), "cta.next", &fn_);
  auto* finished = llvm::BasicBlock::Create(ctx(), "cta.done", &fn_);
  b_.CreateBr(loop);
  b_.SetInsertPoint(loop);
  index_ = b_.CreatePHI(i32(), 2, "warp");
  index_->addIncoming(llvm::ConstantInt::get(i32(), 0), from);
  // (Job::faulted: another CTA's warp faulted; this CTA stops between warps, as runFreshCta does)
  auto* faulted = b_.CreateLoad(i8(), addressOf(b_, job, offsetof(Job, faulted), i8()));
  faulted->setAtomic(llvm::AtomicOrdering::Monotonic);
  faulted->setAlignment(llvm::Align(1));
  warp_ = b_.CreateGEP(i8(), first,
                       b_.CreateMul(b_.CreateZExt(index_, i64()), llvm::ConstantInt::get(i64(), sizeof(Warp))));
  continueWhere(b_.CreateAnd(b_.CreateIsNull(faulted), globalRuns()), options.entryOp);
  b_.CreateBr(run);
  b_.SetInsertPoint(run);
  rf_ = warpField(offsetof(Warp, rf), i8p);
  body(ops, count, options, next);
  b_.SetInsertPoint(next);
  llvm::Value* after = b_.CreateAdd(index_, llvm::ConstantInt::get(i32(), 1));
  index_->addIncoming(after, next);
  b_.CreateCondBr(b_.CreateICmpULT(after, warps), loop, finished);
  b_.SetInsertPoint(finished);
  b_.CreateRet(llvm::ConstantPointerNull::get(llvm::cast<llvm::PointerType>(fn_.getReturnType())));
}

}  // namespace

VectorPrefix emitVectorPrefix(llvm::Module& m, const llvm::Module& handlers, llvm::Function& fn,
                              const VectorPrefixPlaces& places, const Op* ops, size_t count,
                              const CuemuNativeOptions& options) {
  // the CTA entry's test: the op one past the program's last (launch.cpp: runCompiledCta)
  llvm::IRBuilder<> b(places.entry);
  auto* kernel = llvm::BasicBlock::Create(fn.getContext(), "kernel.entry", &fn);
  auto* cta = llvm::BasicBlock::Create(fn.getContext(), "cta.entry", &fn);
  b.CreateCondBr(b.CreateICmpEQ(fn.getArg(1), b.CreatePointerCast(places.opAt(count), fn.getArg(1)->getType())), cta,
                 kernel);
  VectorPrefix prefix = Emitter(m, handlers, fn, places).kernelEntry(ops, count, options, kernel);
  if (prefix.endsAtExit) {
    Emitter(m, handlers, fn, places).ctaEntry(ops, count, options, cta);
  } else {
    b.SetInsertPoint(cta);  // no CTA entry: the caller gets its op back
    b.CreateRet(fn.getArg(1));
  }
  return prefix;
}

}  // namespace ptx::exec::native
