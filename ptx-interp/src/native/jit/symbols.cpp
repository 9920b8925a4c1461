#include "native/jit/symbols.h"

#include <llvm/BinaryFormat/ELF.h>
#include <llvm/Object/ELFObjectFile.h>
#include <llvm/Object/ObjectFile.h>
#include <llvm/Support/MemoryBuffer.h>

// after LLVM's ELF.h: <link.h> brings <elf.h>, whose macros have the names of LLVM's enumerators
#include <link.h>

#include <cstring>
#include <unordered_map>
#include <unordered_set>

namespace ptx::exec::native {

namespace {

struct Found {
  uintptr_t anchor;
  std::string path;
  uint64_t bias = 0;
  bool found = false;
};

int findObject(dl_phdr_info* info, size_t, void* data) {
  auto* f = static_cast<Found*>(data);
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD) continue;
    uintptr_t start = info->dlpi_addr + ph.p_vaddr;
    if (f->anchor >= start && f->anchor < start + ph.p_memsz) {
      f->path = info->dlpi_name && info->dlpi_name[0] ? info->dlpi_name : "/proc/self/exe";
      f->bias = info->dlpi_addr;
      f->found = true;
      return 1;
    }
  }
  return 0;
}

// gcc's clones of a target_clones function: the op holds the clone the loader picked.
std::string withoutCloneSuffix(llvm::StringRef name) {
  size_t dot = name.find('.');
  if (dot == llvm::StringRef::npos) return name.str();
  llvm::StringRef suffix = name.substr(dot + 1);
  if (suffix.startswith("arch_") || suffix == "default") return name.substr(0, dot).str();
  return name.str();
}

}  // namespace

SymbolIndex readSymbols(const void* anchor) {
  SymbolIndex index;
  Found f{reinterpret_cast<uintptr_t>(anchor), {}, 0, false};
  dl_iterate_phdr(findObject, &f);
  if (!f.found) {
    index.error = "the interpreter's object was not found";
    return index;
  }
  index.object = f.path;
  index.bias = f.bias;
  // mapped, not read: createObjectFile(path) reads the whole file (it asks for a terminating null), 180 MB for a
  // libcuda.so with debug information, 80 ms of every compiling process; only the symbol tables are touched here
  auto bytes = llvm::MemoryBuffer::getFile(f.path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!bytes) {
    index.error = f.path + ": " + bytes.getError().message();
    return index;
  }
  auto file = llvm::object::ObjectFile::createObjectFile((*bytes)->getMemBufferRef());
  if (!file) {
    index.error = llvm::toString(file.takeError());
    return index;
  }
  auto* elf = llvm::dyn_cast<llvm::object::ELFObjectFileBase>(file->get());
  if (!elf) {
    index.error = f.path + " is not an ELF object";
    return index;
  }
  std::unordered_set<std::string> ifuncs;
  for (const llvm::object::ELFSymbolRef& sym : elf->symbols()) {
    auto flags = sym.getFlags();
    if (!flags || (*flags & llvm::object::SymbolRef::SF_Undefined)) continue;
    auto name = sym.getName();
    auto value = sym.getValue();
    if (!name || !value || name->empty()) continue;
    const uint8_t type = sym.getELFType();
    if (type != STT_FUNC && type != STT_OBJECT && type != STT_GNU_IFUNC) continue;
    if (sym.getSection() && *sym.getSection() == elf->section_end()) continue;
    if (type == STT_GNU_IFUNC) {  // its value is the resolver: bound to the clone below
      ifuncs.insert(name->str());
      continue;
    }
    const uint64_t address = *value + f.bias;
    auto [it, inserted] = index.byName.emplace(name->str(), address);
    if (!inserted && it->second != address) it->second = 0;
    if (type == STT_FUNC) index.functions.emplace(address, withoutCloneSuffix(*name));
  }
  // A shared library's code takes an ifunc's address as the PLT entry that calls it (objdump: *ABS*+resolver@plt),
  // so the ops of a program lowered in libcuda.so hold those entries: they are named by their ifunc's clone, and are
  // the ifunc's address there, which the compiled code's own `&braCond` must equal (the barrier run ahead compares
  // handlers). An executable's code takes the clone the loader picked (the ops of the test programs hold it).
  const bool sharedObject = f.path != "/proc/self/exe";
  std::unordered_map<std::string, uint64_t> pltEntries;
  for (const llvm::object::SectionRef& section : elf->sections()) {
    auto name = section.getName();
    if (!name || (*name != ".plt" && *name != ".plt.sec")) continue;
    // each 16-byte entry jumps through its GOT slot (jmp *disp(%rip), after an endbr64 and a bnd prefix where the
    // build has them); the loader has resolved the slot by now, to the clone it picked
    const uint8_t* entries = reinterpret_cast<const uint8_t*>(section.getAddress() + f.bias);
    for (uint64_t at = 0; at + 16 <= section.getSize(); at += 16) {
      const uint8_t* entry = entries + at;
      for (unsigned k = 0; k + 6 <= 16; ++k) {
        if (entry[k] != 0xff || entry[k + 1] != 0x25) continue;
        int32_t displacement;
        std::memcpy(&displacement, entry + k + 2, 4);
        uint64_t target;
        std::memcpy(&target, entry + k + 6 + displacement, 8);
        auto clone = index.functions.find(target);
        if (clone != index.functions.end() && ifuncs.count(clone->second)) {
          index.functions.emplace(reinterpret_cast<uint64_t>(entry), clone->second);
          pltEntries.emplace(clone->second, reinterpret_cast<uint64_t>(entry));
        }
        break;
      }
    }
  }
  // an ifunc's callers reach the clone the loader picks: the same test as gcc's resolver
  const bool v3 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi2");
  for (const std::string& name : ifuncs) {
    uint64_t clone = index.address(name + (v3 ? ".arch_x86_64_v3" : ".default"));
    if (auto plt = pltEntries.find(name); sharedObject && plt != pltEntries.end()) clone = plt->second;
    if (clone) index.byName[name] = clone;
  }
  if (index.byName.empty()) index.error = f.path + " has no symbol table (stripped)";
  return index;
}

}  // namespace ptx::exec::native
