#include "native/jit/registers.h"

#include <llvm/ADT/BitVector.h>
#include <llvm/Analysis/ValueTracking.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/CFG.h>
#include <llvm/Transforms/Utils/BasicBlockUtils.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Operator.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <vector>

namespace ptx::exec::native {

namespace {

// The warp's register file pointer is its first field (engine.h: Warp::rf).
bool isWarpType(llvm::Type* t) {
  auto* p = llvm::dyn_cast<llvm::PointerType>(t);
  if (!p || p->isOpaque()) return false;
  auto* s = llvm::dyn_cast<llvm::StructType>(p->getNonOpaquePointerElementType());
  if (!s || !s->hasName()) return false;
  llvm::StringRef name = s->getName();
  return name == "struct.ptx::exec::Warp" || name.startswith("struct.ptx::exec::Warp.");
}

// Whether `load` reads a Warp's rf field; its Warp pointer in `warp`.
bool readsRegisterFile(const llvm::LoadInst& load, const llvm::Value*& warp) {
  if (!load.getType()->isPointerTy()) return false;
  const llvm::Value* base = load.getPointerOperand()->stripPointerCasts();
  if (!isWarpType(base->getType())) return false;
  warp = base;
  return true;
}

// One access to the register file: operand `operand` of `inst` points `offset` bytes into it.
struct Access {
  llvm::Instruction* inst;
  unsigned operand;
  int64_t offset;
  uint64_t bytes;
  bool known;  // false: offset is a lower bound, the access is somewhere in [offset, offset + bytes)
};

// What the register file's users do; `refused` says why promotion is unsafe.
struct Uses {
  std::vector<Access> accesses;
  std::set<const llvm::Instruction*> passedTo;  // calls given a register-file address
  std::string refused;
};

// How far past its constant base a lane loop's access may reach: registers are arrays of 32 lanes (engine.h), and
// an element is never wider than the access that reads it.
constexpr uint64_t kLanes = 32;

// Where a pointer points in the register file, through choices (phi, select) between pointers that all point to the
// same place. Pending: a choice being looked at, met again around a loop (it adds no other place).
struct Place {
  enum Kind { Known, Pending, Unknown } kind = Unknown;
  int64_t offset = 0;
};
Place placeOf(const llvm::Value* v, const llvm::Value* root, const llvm::DataLayout& dl,
              std::map<const llvm::Value*, Place>& places) {
  llvm::APInt delta(64, 0);
  const llvm::Value* base = v->stripAndAccumulateConstantOffsets(dl, delta, true);
  const int64_t offset = delta.getSExtValue();
  if (base == root) return {Place::Known, offset};
  if (!llvm::isa<llvm::PHINode>(base) && !llvm::isa<llvm::SelectInst>(base)) return {};
  auto [it, inserted] = places.try_emplace(base, Place{Place::Pending, 0});
  if (!inserted) {
    if (it->second.kind == Place::Known) return {Place::Known, it->second.offset + offset};
    return it->second;
  }
  Place result{Place::Pending, 0};
  auto choices = llvm::isa<llvm::PHINode>(base) ? llvm::cast<llvm::PHINode>(base)->incoming_values()
                                                : llvm::drop_begin(llvm::cast<llvm::User>(base)->operands());
  for (const llvm::Value* choice : choices) {
    const Place p = placeOf(choice, root, dl, places);
    if (p.kind == Place::Unknown ||
        (p.kind == Place::Known && result.kind == Place::Known && p.offset != result.offset)) {
      result = {};
      break;
    }
    if (p.kind == Place::Known) result = p;
  }
  places[base] = result;
  if (result.kind != Place::Known) return result.kind == Place::Pending ? Place{} : result;
  return {Place::Known, result.offset + offset};
}

void collect(llvm::Value* root, const llvm::DataLayout& dl, Uses& uses) {
  struct Item {
    llvm::Value* v;
    int64_t offset;
    bool known;
  };
  std::vector<Item> work{{root, 0, true}};
  std::set<const llvm::Value*> merged;
  while (!work.empty() && uses.refused.empty()) {
    Item item = work.back();
    work.pop_back();
    for (llvm::Use& u : item.v->uses()) {
      auto* user = llvm::dyn_cast<llvm::Instruction>(u.getUser());
      if (!user) {
        uses.refused = "a constant refers to the register file";
        return;
      }
      if (auto* cast = llvm::dyn_cast<llvm::BitCastInst>(user)) {
        work.push_back({cast, item.offset, item.known});
      } else if (auto* gep = llvm::dyn_cast<llvm::GetElementPtrInst>(user)) {
        llvm::APInt delta(64, 0);
        if (item.known && gep->accumulateConstantOffset(dl, delta))
          work.push_back({gep, item.offset + delta.getSExtValue(), true});
        else
          work.push_back({gep, item.offset, false});
      } else if (auto* load = llvm::dyn_cast<llvm::LoadInst>(user)) {
        const uint64_t size = dl.getTypeStoreSize(load->getType());
        uses.accesses.push_back(
            {load, u.getOperandNo(), item.offset, item.known ? size : size * kLanes, item.known && load->isSimple()});
      } else if (auto* store = llvm::dyn_cast<llvm::StoreInst>(user)) {
        if (u.getOperandNo() != store->getPointerOperandIndex()) {
          uses.refused = "a register-file address is stored";
          return;
        }
        const uint64_t size = dl.getTypeStoreSize(store->getValueOperand()->getType());
        uses.accesses.push_back(
            {store, u.getOperandNo(), item.offset, item.known ? size : size * kLanes, item.known && store->isSimple()});
      } else if (auto* mem = llvm::dyn_cast<llvm::MemIntrinsic>(user)) {
        auto* length = llvm::dyn_cast<llvm::ConstantInt>(mem->getLength());
        if (!length || !item.known || mem->isVolatile()) {
          uses.refused = "a copy of a register-file range of unknown place or size";
          return;
        }
        uses.accesses.push_back({mem, u.getOperandNo(), item.offset, length->getZExtValue(), true});
      } else if (auto* call = llvm::dyn_cast<llvm::CallBase>(user)) {
        if (auto* intrinsic = llvm::dyn_cast<llvm::IntrinsicInst>(call)) {
          const llvm::Intrinsic::ID id = intrinsic->getIntrinsicID();
          // alignment facts and lifetimes say nothing about the contents
          if (id == llvm::Intrinsic::assume || id == llvm::Intrinsic::lifetime_start ||
              id == llvm::Intrinsic::lifetime_end)
            continue;
          if (!intrinsic->mayReadOrWriteMemory() || intrinsic->getType()->isPtrOrPtrVectorTy()) {
            uses.refused = "an intrinsic derives an address from the register file";
            return;
          }
          // a masked or target-specific access through a register-file address: its range stays in memory (the
          // widest such access is 32 lanes of 64 bytes)
          uses.accesses.push_back({call, u.getOperandNo(), item.offset, 64 * kLanes, false});
          continue;
        }
        // passed to a call: the call sees the register file in memory, written back before it (promoteRegisters)
        uses.passedTo.insert(call);
        continue;
      } else if (llvm::isa<llvm::ICmpInst>(user)) {
        continue;
      } else if (llvm::isa<llvm::PHINode>(user) || llvm::isa<llvm::SelectInst>(user)) {
        // a choice between places of the register file: followed when every choice is the same place (the
        // paths of a handler that compute one operand's address twice)
        if (!merged.insert(user).second) continue;
        std::map<const llvm::Value*, Place> places;
        const Place place = placeOf(user, root, dl, places);
        if (place.kind != Place::Known) {
          std::string text;
          llvm::raw_string_ostream os(text);
          user->print(os);
          uses.refused = "the register file reaches a choice between different registers:" + text;
          return;
        }
        work.push_back({user, place.offset, true});
      } else {
        std::string text;
        llvm::raw_string_ostream os(text);
        user->print(os);
        uses.refused = std::string("the register file reaches a ") + user->getOpcodeName() + ":" + text;
        return;
      }
    }
  }
}

// Whether a call may read or write the register file in memory (a call into the interpreter, a handler that is
// not inlined). Intrinsics that only touch their own arguments do not: those arguments are not the register file,
// or collect() kept that range in memory.
bool seesRegisterFile(const llvm::CallBase& call) {
  if (!call.mayReadOrWriteMemory()) return false;
  if (auto* intrinsic = llvm::dyn_cast<llvm::IntrinsicInst>(&call)) {
    switch (intrinsic->getIntrinsicID()) {
      case llvm::Intrinsic::assume:
      case llvm::Intrinsic::lifetime_start:
      case llvm::Intrinsic::lifetime_end:
      case llvm::Intrinsic::memcpy:
      case llvm::Intrinsic::memmove:
      case llvm::Intrinsic::memset:
      case llvm::Intrinsic::masked_load:
      case llvm::Intrinsic::masked_store:
      case llvm::Intrinsic::masked_gather:
      case llvm::Intrinsic::masked_scatter:
      case llvm::Intrinsic::masked_expandload:
      case llvm::Intrinsic::masked_compressstore:
      case llvm::Intrinsic::prefetch: return false;
      default: return !intrinsic->onlyAccessesArgMemory();
    }
  }
  return true;
}

}  // namespace

// Whether `writer` can run after `source` and before `load` (source dominates load): some path from writer reaches
// load without passing source again.
bool writesBetween(const llvm::Instruction* writer, const llvm::Instruction* source, const llvm::Instruction* load) {
  const llvm::BasicBlock* sourceBlock = source->getParent();
  const llvm::BasicBlock* loadBlock = load->getParent();
  const llvm::BasicBlock* writerBlock = writer->getParent();
  if (writerBlock == sourceBlock) return !writer->comesBefore(source);  // before: source overwrites it
  if (writerBlock == loadBlock && writer->comesBefore(load)) return true;
  std::vector<const llvm::BasicBlock*> work(llvm::succ_begin(writerBlock), llvm::succ_end(writerBlock));
  std::set<const llvm::BasicBlock*> seen;
  while (!work.empty()) {
    const llvm::BasicBlock* b = work.back();
    work.pop_back();
    if (b == loadBlock) return true;
    if (b == sourceBlock || !seen.insert(b).second) continue;
    work.insert(work.end(), llvm::succ_begin(b), llvm::succ_end(b));
  }
  return false;
}

uint32_t forwardStackConstants(llvm::Function& kernel) {
  const llvm::DataLayout& dl = kernel.getParent()->getDataLayout();
  llvm::DominatorTree dom(kernel);
  uint32_t replaced = 0;
  for (llvm::Instruction& i : kernel.getEntryBlock()) {
    auto* object = llvm::dyn_cast<llvm::AllocaInst>(&i);
    if (!object || !object->isStaticAlloca()) continue;
    struct Write {
      llvm::StoreInst* store;  // nullptr: a call that may write any of the object's bytes
      int64_t offset, bytes;
      llvm::Instruction* call = nullptr;
    };
    std::vector<Write> writes;
    std::vector<std::pair<llvm::LoadInst*, int64_t>> loads;
    bool usable = true;
    std::vector<std::pair<llvm::Value*, int64_t>> work{{object, 0}};
    while (!work.empty() && usable) {
      auto [v, offset] = work.back();
      work.pop_back();
      for (llvm::Use& u : v->uses()) {
        auto* user = llvm::cast<llvm::Instruction>(u.getUser());
        if (auto* cast = llvm::dyn_cast<llvm::BitCastInst>(user)) {
          work.push_back({cast, offset});
        } else if (auto* gep = llvm::dyn_cast<llvm::GetElementPtrInst>(user)) {
          llvm::APInt delta(64, 0);
          if (!gep->accumulateConstantOffset(dl, delta)) usable = false;
          work.push_back({gep, offset + delta.getSExtValue()});
        } else if (auto* load = llvm::dyn_cast<llvm::LoadInst>(user)) {
          if (load->isSimple()) loads.push_back({load, offset});
        } else if (auto* store = llvm::dyn_cast<llvm::StoreInst>(user)) {
          if (u.getOperandNo() != store->getPointerOperandIndex()) usable = false;  // the address escapes
          if (!store->isSimple()) usable = false;
          writes.push_back({store, offset, int64_t(dl.getTypeStoreSize(store->getValueOperand()->getType()))});
        } else if (auto* call = llvm::dyn_cast<llvm::CallBase>(user)) {
          if (auto* intrinsic = llvm::dyn_cast<llvm::IntrinsicInst>(call)) {
            const llvm::Intrinsic::ID id = intrinsic->getIntrinsicID();
            if (id == llvm::Intrinsic::lifetime_start || id == llvm::Intrinsic::lifetime_end ||
                id == llvm::Intrinsic::assume)
              continue;
          }
          if (!call->isArgOperand(&u) || !call->doesNotCapture(call->getArgOperandNo(&u))) {
            usable = false;
          } else if (!call->onlyReadsMemory(call->getArgOperandNo(&u))) {
            writes.push_back({nullptr, 0, std::numeric_limits<int64_t>::max(), call});
          }
        } else {
          usable = false;  // ptrtoint, phi, select, compare: the address leaves what this follows
        }
      }
    }
    if (!usable) continue;
    for (auto [load, offset] : loads) {
      const int64_t bytes = int64_t(dl.getTypeStoreSize(load->getType()));
      // the store that gives the load its value: the one of exactly its bytes that dominates it
      llvm::StoreInst* source = nullptr;
      for (const Write& w : writes)
        if (w.store && w.offset == offset && w.bytes == bytes && dom.dominates(w.store, load) &&
            (!source || dom.dominates(source, w.store)))
          source = w.store;
      if (!source) continue;
      auto* value = llvm::dyn_cast<llvm::Constant>(source->getValueOperand());
      if (!value || value->getType() != load->getType()) continue;
      bool clobbered = false;
      for (const Write& w : writes) {
        if (w.store == source) continue;
        if (w.store && !(w.offset < offset + bytes && offset < w.offset + w.bytes)) continue;
        llvm::Instruction* writer = w.store ? static_cast<llvm::Instruction*>(w.store) : w.call;
        if (writesBetween(writer, source, load)) clobbered = true;
      }
      if (clobbered) continue;
      load->replaceAllUsesWith(value);
      load->eraseFromParent();
      ++replaced;
    }
  }
  return replaced;
}

PromotionStats promoteRegisters(llvm::Function& kernel) {
  PromotionStats stats;
  if (kernel.arg_empty()) return stats;
  llvm::Value* warp = kernel.getArg(0);
  const llvm::DataLayout& dl = kernel.getParent()->getDataLayout();
  llvm::LLVMContext& ctx = kernel.getContext();
  auto* i8 = llvm::Type::getInt8Ty(ctx);
  auto* i8p = i8->getPointerTo();

  // every load of the rf field becomes one load at the entry (no code of the kernel changes the field)
  std::vector<llvm::LoadInst*> rfLoads;
  for (llvm::Instruction& i : llvm::instructions(kernel)) {
    if (auto* store = llvm::dyn_cast<llvm::StoreInst>(&i)) {
      int64_t offset = 0;
      const llvm::Value* base = llvm::GetPointerBaseWithConstantOffset(store->getPointerOperand(), offset, dl);
      if (base == warp && offset < int64_t(sizeof(void*)) &&
          offset + int64_t(dl.getTypeStoreSize(store->getValueOperand()->getType())) > 0) {
        stats.refused = "the kernel writes the warp's register-file pointer";
        return stats;
      }
    }
    auto* load = llvm::dyn_cast<llvm::LoadInst>(&i);
    if (!load || !load->getType()->isPointerTy()) continue;
    int64_t offset = 0;
    const llvm::Value* base = llvm::GetPointerBaseWithConstantOffset(load->getPointerOperand(), offset, dl);
    if (base == warp && offset == 0) rfLoads.push_back(load);
  }
  if (rfLoads.empty()) return stats;
  llvm::BasicBlock& entry = kernel.getEntryBlock();
  llvm::IRBuilder<> b(&entry, entry.getFirstInsertionPt());
  llvm::LoadInst* rf = b.CreateAlignedLoad(i8p, b.CreateBitCast(warp, i8p->getPointerTo()), llvm::Align(8), "rf");
  for (llvm::LoadInst* load : rfLoads) {
    load->replaceAllUsesWith(b.CreateBitCast(rf, load->getType()));
    load->eraseFromParent();
  }

  Uses uses;
  collect(rf, dl, uses);
  if (!uses.refused.empty()) {
    stats.refused = uses.refused;
    return stats;
  }
  // the calls the copies are written back before and reloaded after
  std::set<const llvm::Instruction*> syncs;
  for (llvm::Instruction& i : llvm::instructions(kernel)) {
    auto* call = llvm::dyn_cast<llvm::CallBase>(&i);
    if (!call || !seesRegisterFile(*call)) continue;
    if (!llvm::isa<llvm::CallInst>(call)) {
      stats.refused = "an invoke";  // the handlers have none
      return stats;
    }
    const llvm::Function* callee = call->getCalledFunction();
    if (callee && callee->hasFnAttribute(kRegistersUntouched) && !uses.passedTo.count(call)) continue;
    syncs.insert(call);
  }

  // ranges: accesses that overlap share a stack copy; one whose place is known only at run time keeps its range
  // (and whatever overlaps it) in memory
  struct Range {
    int64_t begin, end;
    bool memory;
    llvm::AllocaInst* copy = nullptr;
    int64_t copyBase = 0;  // the register-file offset of the copy's first byte (64-byte aligned, as rf is)
  };
  std::vector<const Access*> order;
  for (const Access& a : uses.accesses) order.push_back(&a);
  std::sort(order.begin(), order.end(), [](const Access* x, const Access* y) { return x->offset < y->offset; });
  std::vector<Range> ranges;
  std::map<const Access*, size_t> rangeOf;
  for (const Access* a : order) {
    const int64_t end = a->offset + int64_t(a->bytes);
    if (ranges.empty() || a->offset >= ranges.back().end) ranges.push_back({a->offset, end, false});
    Range& r = ranges.back();
    r.end = std::max(r.end, end);
    r.memory |= !a->known;
    rangeOf[a] = ranges.size() - 1;
  }
  if (ranges.empty()) return stats;

  // the copies, filled at the entry
  for (Range& r : ranges) {
    if (r.memory) {
      ++stats.memorySlots;
      continue;
    }
    ++stats.slots;
    r.copyBase = r.begin & ~int64_t(63);
    b.SetInsertPoint(&entry, entry.getFirstInsertionPt());
    r.copy = b.CreateAlloca(llvm::ArrayType::get(i8, uint64_t(r.end - r.copyBase)), nullptr, "reg");
    r.copy->setAlignment(llvm::Align(64));
  }
  auto copyAt = [&](llvm::IRBuilder<>& builder, const Range& r) {
    return builder.CreateConstInBoundsGEP1_64(i8, builder.CreateBitCast(r.copy, i8p), uint64_t(r.begin - r.copyBase));
  };
  auto memoryAt = [&](llvm::IRBuilder<>& builder, const Range& r) {
    return builder.CreateConstInBoundsGEP1_64(i8, rf, uint64_t(r.begin));
  };
  auto alignOf = [](int64_t offset) { return llvm::Align(std::min<uint64_t>(64, uint64_t(offset & -offset))); };
  auto load = [&](llvm::IRBuilder<>& builder, const Range& r) {
    builder.CreateMemCpy(copyAt(builder, r), alignOf(r.begin | 64), memoryAt(builder, r), alignOf(r.begin | 64),
                         uint64_t(r.end - r.begin));
  };
  auto writeBack = [&](llvm::IRBuilder<>& builder, const Range& r) {
    builder.CreateMemCpy(memoryAt(builder, r), alignOf(r.begin | 64), copyAt(builder, r), alignOf(r.begin | 64),
                         uint64_t(r.end - r.begin));
  };
  // What each instruction does to the copies: reads, writes, and writes whole (which ends the earlier value's life).
  const size_t n = ranges.size();
  struct Effect {
    std::vector<size_t> reads, writes, kills;
  };
  std::map<const llvm::Instruction*, Effect> effects;
  for (const Access* a : order) {
    const size_t r = rangeOf[a];
    if (!ranges[r].copy) continue;
    Effect& e = effects[a->inst];
    const bool writes =
        llvm::isa<llvm::StoreInst>(a->inst) || (llvm::isa<llvm::MemIntrinsic>(a->inst) && a->operand == 0);
    if (!writes) {
      e.reads.push_back(r);
      continue;
    }
    e.writes.push_back(r);
    if (a->offset == ranges[r].begin && a->offset + int64_t(a->bytes) == ranges[r].end) e.kills.push_back(r);
  }

  // Dirty: the copies written since the last write-back on some path (forward). A call that may look at the
  // register file, and the kernel's exits, write back the dirty ones.
  auto forward = [&](const llvm::BasicBlock& block, llvm::BitVector dirty,
                     std::map<const llvm::Instruction*, llvm::BitVector>* at) {
    for (const llvm::Instruction& i : block) {
      if (auto it = effects.find(&i); it != effects.end())
        for (size_t r : it->second.writes) dirty.set(r);
      const bool sync = syncs.count(&i) != 0;
      if ((sync || llvm::isa<llvm::ReturnInst>(i)) && at) (*at)[&i] = dirty;
      if (sync) dirty.reset();
    }
    return dirty;
  };
  std::map<const llvm::BasicBlock*, llvm::BitVector> dirtyOut;
  for (const llvm::BasicBlock& block : kernel) dirtyOut[&block] = llvm::BitVector(n);
  for (bool changed = true; changed;) {
    changed = false;
    for (const llvm::BasicBlock& block : kernel) {
      llvm::BitVector in(n);
      for (const llvm::BasicBlock* pred : llvm::predecessors(&block)) in |= dirtyOut[pred];
      llvm::BitVector result = forward(block, in, nullptr);
      if (result != dirtyOut[&block]) {
        dirtyOut[&block] = std::move(result);
        changed = true;
      }
    }
  }
  std::map<const llvm::Instruction*, llvm::BitVector> dirtyAt;
  for (const llvm::BasicBlock& block : kernel) {
    llvm::BitVector in(n);
    for (const llvm::BasicBlock* pred : llvm::predecessors(&block)) in |= dirtyOut[pred];
    forward(block, in, &dirtyAt);
  }

  // Live: the copies whose value may be read later (backward). A write-back reads the dirty copies; after a call the
  // live copies are reloaded, so nothing is live across it.
  auto leaves = [](const llvm::BasicBlock* b) { return llvm::isa<llvm::ReturnInst>(b->getTerminator()); };
  auto backward = [&](const llvm::BasicBlock& block, llvm::BitVector live,
                      std::map<const llvm::Instruction*, llvm::BitVector>* after) {
    // the way out writes back what this path left dirty (below)
    for (const llvm::BasicBlock* succ : llvm::successors(&block))
      if (leaves(succ)) live |= dirtyOut[&block];
    for (auto it = block.rbegin(); it != block.rend(); ++it) {
      const llvm::Instruction& i = *it;
      if (syncs.count(&i)) {
        if (after) (*after)[&i] = live;
        live = dirtyAt[&i];
        continue;
      }
      if (auto e = effects.find(&i); e != effects.end()) {
        for (size_t r : e->second.kills) live.reset(r);
        for (size_t r : e->second.reads) live.set(r);
      }
    }
    return live;
  };
  std::vector<const llvm::BasicBlock*> blocksBackward;
  for (const llvm::BasicBlock& block : kernel) blocksBackward.insert(blocksBackward.begin(), &block);
  std::map<const llvm::BasicBlock*, llvm::BitVector> liveIn;
  for (const llvm::BasicBlock& block : kernel) liveIn[&block] = llvm::BitVector(n);
  for (bool changed = true; changed;) {
    changed = false;
    for (auto it = blocksBackward.begin(); it != blocksBackward.end(); ++it) {
      const llvm::BasicBlock& block = **it;
      llvm::BitVector out(n);
      for (const llvm::BasicBlock* succ : llvm::successors(&block)) out |= liveIn[succ];
      llvm::BitVector result = backward(block, out, nullptr);
      if (result != liveIn[&block]) {
        liveIn[&block] = std::move(result);
        changed = true;
      }
    }
  }
  std::map<const llvm::Instruction*, llvm::BitVector> liveAfter;
  for (const llvm::BasicBlock& block : kernel) {
    llvm::BitVector out(n);
    for (const llvm::BasicBlock* succ : llvm::successors(&block)) out |= liveIn[succ];
    backward(block, out, &liveAfter);
  }

  // the accesses go to the copies
  for (const Access* a : order) {
    const Range& r = ranges[rangeOf[a]];
    if (!r.copy) continue;
    llvm::IRBuilder<> at(a->inst);
    llvm::Value* old = a->inst->getOperand(a->operand);
    llvm::Value* p = at.CreateConstInBoundsGEP1_64(i8, at.CreateBitCast(r.copy, i8p), uint64_t(a->offset - r.copyBase));
    a->inst->setOperand(a->operand, at.CreatePointerCast(p, old->getType()));
  }

  // Entering: the kernel starts at any op (its entry's switch), and each way in loads what is live there.
  llvm::Instruction* start = entry.getTerminator();
  std::map<llvm::BasicBlock*, llvm::BasicBlock*> ways;
  for (unsigned k = 0; k < start->getNumSuccessors(); ++k) {
    llvm::BasicBlock* target = start->getSuccessor(k);
    auto [it, inserted] = ways.try_emplace(target, nullptr);
    if (inserted) {
      it->second = llvm::BasicBlock::Create(ctx, "enter." + target->getName(), &kernel, target);
      llvm::IRBuilder<> way(it->second);
      for (size_t r : liveIn[target].set_bits()) load(way, ranges[r]);
      way.CreateBr(target);
      target->replacePhiUsesWith(&entry, it->second);
    }
    start->setSuccessor(k, it->second);
  }
  // Leaving: each way into the return writes back what its path left dirty (at the return itself, the union over
  // every path would be written back, and so loaded at every entry).
  std::vector<std::pair<llvm::BasicBlock*, llvm::BasicBlock*>> exits;
  for (llvm::BasicBlock& block : kernel)
    if (leaves(&block))
      for (llvm::BasicBlock* pred : llvm::predecessors(&block))
        if (dirtyOut[pred].any()) exits.push_back({pred, &block});
  for (auto [pred, out] : exits) {
    const llvm::BitVector dirty = dirtyOut[pred];
    llvm::BasicBlock* at = pred->getSingleSuccessor() == out ? pred : llvm::SplitEdge(pred, out);
    llvm::IRBuilder<> before(at->getTerminator());
    for (size_t r : dirty.set_bits()) writeBack(before, ranges[r]);
  }
  for (auto& [point, dirty] : dirtyAt) {
    if (!syncs.count(point)) continue;
    auto* at = const_cast<llvm::Instruction*>(point);
    llvm::IRBuilder<> before(at);
    for (size_t r : dirty.set_bits()) writeBack(before, ranges[r]);
    if (!syncs.count(point)) continue;
    llvm::IRBuilder<> after(at->getNextNode());
    for (size_t r : liveAfter[point].set_bits()) load(after, ranges[r]);
    ++stats.calls;
  }
  return stats;
}

void RegisterFileUsers::record(llvm::Module& unit, size_t index) {
  for (llvm::Function& f : unit) {
    if (f.isDeclaration()) continue;
    Node& node = nodes_[{index, &f}];
    for (llvm::Instruction& i : llvm::instructions(f)) {
      const llvm::Value* warp = nullptr;
      if (auto* load = llvm::dyn_cast<llvm::LoadInst>(&i); load && readsRegisterFile(*load, warp)) node.direct = true;
      if (auto* call = llvm::dyn_cast<llvm::CallBase>(&i)) {
        if (llvm::isa<llvm::IntrinsicInst>(call)) continue;
        if (auto* callee = llvm::dyn_cast<llvm::Function>(call->getCalledOperand()->stripPointerCasts()))
          node.calleeFunctions.push_back(callee);
        else
          node.direct = true;
      }
    }
  }
}

void RegisterFileUsers::nameAfterPreparing(size_t index) {
  for (auto& [key, node] : nodes_) {
    if (key.first != index) continue;
    node.name = key.second->getName().str();
    for (const llvm::Function* callee : node.calleeFunctions) node.callees.push_back(callee->getName().str());
    node.calleeFunctions.clear();
  }
}

void RegisterFileUsers::mark(llvm::Module& linked, const std::function<bool(const std::string&)>& isInterpreter) {
  // names after preparing -> nodes; a definition also under its name before (other units declare it by that name)
  // a unit declares a function of another unit by the name its definition has there after preparing, unless the
  // definition was bound to the interpreter's (then the declaration is the interpreter's, below)
  std::map<std::string, std::vector<Node*>> byName;
  for (auto& [key, node] : nodes_) byName[node.name].push_back(&node);
  std::map<const Node*, int> touches;  // 1: may touch registers
  auto resolve = [&](const std::string& callee) -> std::vector<Node*>* {
    auto it = byName.find(callee);
    return it == byName.end() ? nullptr : &it->second;
  };
  for (auto& [key, node] : nodes_) touches[&node] = node.direct ? 1 : 0;
  for (bool changed = true; changed;) {
    changed = false;
    for (auto& [key, node] : nodes_) {
      if (touches[&node]) continue;
      for (const std::string& callee : node.callees) {
        bool t = false;
        if (std::vector<Node*>* defined = resolve(callee)) {
          for (Node* d : *defined) t |= touches[d] != 0;
        } else {
          // not defined in any unit: the interpreter's (unknown: it may) or the libraries'
          t = isInterpreter(callee);
        }
        if (t) {
          touches[&node] = 1;
          changed = true;
          break;
        }
      }
    }
  }
  for (llvm::Function& f : linked) {
    auto it = byName.find(f.getName().str());
    if (it == byName.end()) continue;
    bool t = false;
    for (Node* d : it->second) t |= touches[d] != 0;
    if (!t) f.addFnAttr(kRegistersUntouched);
  }
}

void keepOtherWarpsOutOfLine(llvm::Module& unit) {
  for (llvm::Function& f : unit) {
    if (f.isDeclaration()) continue;
    for (llvm::Instruction& i : llvm::instructions(f)) {
      auto* load = llvm::dyn_cast<llvm::LoadInst>(&i);
      const llvm::Value* warp = nullptr;
      if (!load || !readsRegisterFile(*load, warp) || llvm::isa<llvm::Argument>(warp)) continue;
      f.removeFnAttr(llvm::Attribute::AlwaysInline);
      f.addFnAttr(llvm::Attribute::NoInline);
      break;
    }
  }
}

}  // namespace ptx::exec::native
