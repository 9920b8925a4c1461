#include "native/object_loader.h"

#include <elf.h>
#include <sys/mman.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cstring>
#include <limits>
#include <vector>

// The C++ runtime's registry of unwind information for code it did not load (libgcc; LLVM's JIT registers its code's
// .eh_frame the same way).
extern "C" void __register_frame(void* begin);
extern "C" void __deregister_frame(void* begin);

namespace ptx::exec::native {

namespace {

constexpr uint32_t kUnwindSection = 0x70000001;  // SHT_X86_64_UNWIND: .eh_frame on x86-64
constexpr uint64_t kMaxAlignment = 4096;
constexpr uint64_t kMaxMappedBytes = uint64_t(1) << 30;  // a kernel's code and data are megabytes at most

// Where a section goes: code, read-only data (.eh_frame among it) or writable data, each region page-aligned.
enum Region : uint8_t { Code, ReadOnly, Writable, kRegions, Unplaced = 0xff };

struct Placement {
  Region region = Unplaced;
  uint64_t offset = 0;  // within its region, then (after layout) within the mapping
};

struct Symbol {
  uint64_t address = 0;
  bool resolved = false;
};

bool fits(std::string_view image, uint64_t offset, uint64_t bytes) {
  return offset <= image.size() && bytes <= image.size() - offset;
}

// A NUL-terminated name at `offset` of the string table `table` (bounded); nullopt-like empty view + ok=false.
bool nameAt(std::string_view image, const Elf64_Shdr& table, uint32_t offset, std::string_view& name) {
  if (table.sh_type != SHT_STRTAB || !fits(image, table.sh_offset, table.sh_size) || offset >= table.sh_size)
    return false;
  const char* begin = image.data() + table.sh_offset + offset;
  const void* end = std::memchr(begin, 0, table.sh_size - offset);
  if (!end) return false;
  name = std::string_view(begin, size_t(static_cast<const char*>(end) - begin));
  return true;
}

uint64_t alignUp(uint64_t v, uint64_t alignment) { return (v + alignment - 1) & ~(alignment - 1); }

}  // namespace

LoadedObject::~LoadedObject() {
  if (ehFrame_) __deregister_frame(ehFrame_);
  if (memory_) munmap(memory_, mappedBytes_);
}

const void* LoadedObject::symbol(std::string_view name) const {
  for (size_t at = 0; at < symbols_.size();) {
    const size_t end = symbols_.find('\0', at);
    if (end == std::string::npos || end + 1 + sizeof(uint64_t) > symbols_.size()) break;
    uint64_t address;
    std::memcpy(&address, symbols_.data() + end + 1, sizeof address);
    if (std::string_view(symbols_).substr(at, end - at) == name) return reinterpret_cast<const void*>(address);
    at = end + 1 + sizeof address;
  }
  return nullptr;
}

std::unique_ptr<LoadedObject> loadObject(std::string_view image, const SymbolResolver& resolve, std::string& why,
                                         LoadRefusal* refusal) {
  // (damaged: the file is not a whole, consistent object; otherwise it is one this loader does not handle)
  auto refuseAs = [&](LoadRefusal kind, std::string reason) -> std::unique_ptr<LoadedObject> {
    why = std::move(reason);
    if (refusal) *refusal = kind;
    return nullptr;
  };
  auto refuse = [&](std::string reason) { return refuseAs(LoadRefusal::Damaged, std::move(reason)); };
  auto unsupported = [&](std::string reason) { return refuseAs(LoadRefusal::Unsupported, std::move(reason)); };
  if (refusal) *refusal = LoadRefusal::None;
  Elf64_Ehdr header;
  if (image.size() < sizeof header) return refuse("not an ELF object (too short)");
  std::memcpy(&header, image.data(), sizeof header);
  if (std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 || header.e_ident[EI_CLASS] != ELFCLASS64 ||
      header.e_ident[EI_DATA] != ELFDATA2LSB || header.e_type != ET_REL || header.e_machine != EM_X86_64)
    return refuse("not an x86-64 ELF relocatable object");
  if (header.e_shentsize != sizeof(Elf64_Shdr) || header.e_shnum == 0 || header.e_shnum >= SHN_LORESERVE ||
      !fits(image, header.e_shoff, uint64_t(header.e_shnum) * sizeof(Elf64_Shdr)) ||
      header.e_shstrndx >= header.e_shnum)
    return refuse("section headers out of bounds");
  std::vector<Elf64_Shdr> sections(header.e_shnum);
  std::memcpy(sections.data(), image.data() + header.e_shoff, sections.size() * sizeof(Elf64_Shdr));
  const Elf64_Shdr& names = sections[header.e_shstrndx];

  // ---- layout: each allocated section in its region, then the regions one after another, page-aligned
  std::vector<Placement> place(sections.size());
  uint64_t regionBytes[kRegions] = {};
  size_t ehFrame = 0;  // index of .eh_frame; 0: none
  for (size_t i = 1; i < sections.size(); ++i) {
    const Elf64_Shdr& s = sections[i];
    if (!(s.sh_flags & SHF_ALLOC)) continue;
    if (s.sh_type != SHT_PROGBITS && s.sh_type != SHT_NOBITS && s.sh_type != kUnwindSection)
      return unsupported(fmt::format("allocated section {} of type {:#x}", i, s.sh_type));
    if (s.sh_type != SHT_NOBITS && !fits(image, s.sh_offset, s.sh_size))
      return refuse(fmt::format("section {} out of bounds", i));
    const uint64_t alignment = s.sh_addralign ? s.sh_addralign : 1;
    if ((alignment & (alignment - 1)) != 0 || alignment > kMaxAlignment || s.sh_size > (uint64_t(1) << 32))
      return unsupported(fmt::format("section {}: alignment {} or size {}", i, alignment, s.sh_size));
    std::string_view name;
    if (!nameAt(image, names, s.sh_name, name)) return refuse(fmt::format("section {}: bad name", i));
    const Region region = (s.sh_flags & SHF_EXECINSTR) ? Code : (s.sh_flags & SHF_WRITE) ? Writable : ReadOnly;
    place[i] = {region, alignUp(regionBytes[region], alignment)};
    // .eh_frame gets the terminator the registry reads to its end (a linker adds it; a relocatable object has none)
    const bool unwind = name == ".eh_frame";
    if (unwind) ehFrame = i;
    regionBytes[region] = place[i].offset + s.sh_size + (unwind ? 4 : 0);
  }
  const uint64_t page = uint64_t(sysconf(_SC_PAGESIZE));
  uint64_t regionStart[kRegions], mapped = 0;
  for (int r = 0; r < kRegions; ++r) {
    regionStart[r] = mapped;
    mapped += alignUp(regionBytes[r], page);
  }
  if (regionBytes[Code] == 0) return unsupported("no code");
  // (zero-filled sections take no bytes of the file: a damaged size would map gigabytes)
  if (mapped > kMaxMappedBytes) return refuse(fmt::format("sections of {} bytes", mapped));

  std::unique_ptr<LoadedObject> object(new LoadedObject());
  void* memory = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) return unsupported("mmap failed");
  object->memory_ = memory;
  object->mappedBytes_ = mapped;
  object->codeBytes_ = regionBytes[Code];
  uint8_t* const base = static_cast<uint8_t*>(memory);
  std::vector<uint64_t> sectionAddress(sections.size(), 0);
  for (size_t i = 1; i < sections.size(); ++i) {
    if (place[i].region == Unplaced) continue;
    uint8_t* at = base + regionStart[place[i].region] + place[i].offset;
    sectionAddress[i] = reinterpret_cast<uint64_t>(at);
    if (sections[i].sh_type != SHT_NOBITS) std::memcpy(at, image.data() + sections[i].sh_offset, sections[i].sh_size);
  }

  // ---- symbols
  size_t symtab = 0;
  for (size_t i = 1; i < sections.size(); ++i)
    if (sections[i].sh_type == SHT_SYMTAB) {
      if (symtab) return unsupported("two symbol tables");
      symtab = i;
    }
  if (!symtab) return unsupported("no symbol table");
  const Elf64_Shdr& st = sections[symtab];
  if (st.sh_entsize != sizeof(Elf64_Sym) || !fits(image, st.sh_offset, st.sh_size) || st.sh_link >= sections.size())
    return refuse("bad symbol table");
  const Elf64_Shdr& strings = sections[st.sh_link];
  const size_t symbolCount = st.sh_size / sizeof(Elf64_Sym);
  std::vector<Symbol> symbols(symbolCount);
  for (size_t k = 1; k < symbolCount; ++k) {
    Elf64_Sym sym;
    std::memcpy(&sym, image.data() + st.sh_offset + k * sizeof sym, sizeof sym);
    std::string_view name;
    if (!nameAt(image, strings, sym.st_name, name)) return refuse(fmt::format("symbol {}: bad name", k));
    if (sym.st_shndx == SHN_UNDEF) {
      if (name.empty()) continue;
      const uint64_t address = resolve(name);
      symbols[k] = {address, address != 0};  // unresolved is an error only where a relocation uses it
    } else if (sym.st_shndx == SHN_ABS) {
      symbols[k] = {sym.st_value, true};
    } else if (sym.st_shndx < sections.size() && place[sym.st_shndx].region != Unplaced) {
      if (sym.st_value > sections[sym.st_shndx].sh_size) return refuse(fmt::format("symbol {} out of its section", k));
      symbols[k] = {sectionAddress[sym.st_shndx] + sym.st_value, true};
      const uint8_t binding = ELF64_ST_BIND(sym.st_info);
      if ((binding == STB_GLOBAL || binding == STB_WEAK) && !name.empty()) {
        object->symbols_.append(name).push_back('\0');
        object->symbols_.append(reinterpret_cast<const char*>(&symbols[k].address), sizeof(uint64_t));
      }
    }
  }

  // ---- relocations of the allocated sections (others, such as .rela of unallocated sections, do not run)
  for (size_t i = 1; i < sections.size(); ++i) {
    const Elf64_Shdr& rs = sections[i];
    if (rs.sh_type == SHT_REL) return unsupported("REL relocations");
    if (rs.sh_type != SHT_RELA) continue;
    if (rs.sh_info >= sections.size()) return refuse(fmt::format("relocations {}: bad target", i));
    if (place[rs.sh_info].region == Unplaced) continue;
    if (rs.sh_link != symtab || rs.sh_entsize != sizeof(Elf64_Rela) || !fits(image, rs.sh_offset, rs.sh_size))
      return refuse(fmt::format("relocations {}: bad table", i));
    const Elf64_Shdr& target = sections[rs.sh_info];
    for (uint64_t at = 0; at + sizeof(Elf64_Rela) <= rs.sh_size; at += sizeof(Elf64_Rela)) {
      Elf64_Rela r;
      std::memcpy(&r, image.data() + rs.sh_offset + at, sizeof r);
      const uint32_t type = ELF64_R_TYPE(r.r_info);
      const uint64_t index = ELF64_R_SYM(r.r_info);
      if (type == R_X86_64_NONE) continue;
      const uint64_t width = type == R_X86_64_64 || type == R_X86_64_PC64 ? 8 : 4;
      if (r.r_offset > target.sh_size || width > target.sh_size - r.r_offset)
        return refuse(fmt::format("relocation out of section {}", rs.sh_info));
      if (index == 0 || index >= symbolCount) return refuse(fmt::format("relocation of symbol {}", index));
      if (!symbols[index].resolved) {
        std::string_view name = "?";
        Elf64_Sym sym;
        std::memcpy(&sym, image.data() + st.sh_offset + index * sizeof sym, sizeof sym);
        nameAt(image, strings, sym.st_name, name);
        return unsupported(fmt::format("unresolved symbol '{}'", name));
      }
      const uint64_t s = symbols[index].address, p = sectionAddress[rs.sh_info] + r.r_offset;
      const uint64_t a = uint64_t(r.r_addend);
      uint8_t* where = reinterpret_cast<uint8_t*>(p);
      auto put32 = [&](int64_t v, bool isSigned) {
        const bool ok = isSigned ? v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max()
                                 : uint64_t(v) <= std::numeric_limits<uint32_t>::max();
        const uint32_t bits = uint32_t(uint64_t(v));
        std::memcpy(where, &bits, 4);
        return ok;
      };
      switch (type) {
        case R_X86_64_64: {
          const uint64_t v = s + a;
          std::memcpy(where, &v, 8);
          break;
        }
        case R_X86_64_PC64: {
          const uint64_t v = s + a - p;
          std::memcpy(where, &v, 8);
          break;
        }
        case R_X86_64_PC32:
        case R_X86_64_PLT32:
          if (!put32(int64_t(s + a - p), true)) return unsupported("PC-relative relocation out of range");
          break;
        case R_X86_64_32:
          if (!put32(int64_t(s + a), false)) return unsupported("32-bit relocation out of range");
          break;
        case R_X86_64_32S:
          if (!put32(int64_t(s + a), true)) return unsupported("32-bit relocation out of range");
          break;
        default: return unsupported(fmt::format("relocation type {}", type));
      }
    }
  }

  // ---- protection, then the unwind information
  if (mprotect(base + regionStart[Code], alignUp(regionBytes[Code], page), PROT_READ | PROT_EXEC) != 0 ||
      (regionBytes[ReadOnly] &&
       mprotect(base + regionStart[ReadOnly], alignUp(regionBytes[ReadOnly], page), PROT_READ) != 0))
    return unsupported("mprotect failed");
  if (ehFrame && sections[ehFrame].sh_size) {
    object->ehFrame_ = reinterpret_cast<void*>(sectionAddress[ehFrame]);
    __register_frame(object->ehFrame_);
  }
  return object;
}

}  // namespace ptx::exec::native
