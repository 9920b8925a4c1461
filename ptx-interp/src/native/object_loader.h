// Loads the object code of a compiled kernel from the native tier's cache into this process without LLVM
// (docs/native-tier.md, "Cache"): an ELF64 x86-64 relocatable object as the tier's compiler writes it (LLVM's
// large code model: absolute 64-bit relocations, PC-relative ones in .eh_frame). Loading LLVM, the interpreter's
// symbols and a JIT session cost a process 20-25 ms before its first cached kernel ran; this loads one in well
// under a millisecond. What it does not know (a relocation type, an unresolvable name, a section it cannot place)
// it refuses, and the caller loads the file through the compiler instead.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace ptx::exec::native {

// Why an object was not loaded: Damaged, the file is not a whole, consistent object (cut short, bytes changed: the
// cache removes it and compiles again); Unsupported, it is one, with something this loader does not handle (a
// relocation type, a name it cannot resolve, a section kind: the compiler's library may load it).
enum class LoadRefusal { None, Damaged, Unsupported };

// Resolves an undefined symbol of the object to its address in this process; 0: unknown.
using SymbolResolver = std::function<uint64_t(std::string_view name)>;

// A loaded object: its sections mapped (code executable, the rest read-only or writable as the object says), its
// unwind information registered with the C++ runtime (so that exceptions pass through its frames), until destroyed.
class LoadedObject {
 public:
  ~LoadedObject();
  LoadedObject(const LoadedObject&) = delete;
  LoadedObject& operator=(const LoadedObject&) = delete;
  const void* symbol(std::string_view name) const;  // a defined global symbol's address; nullptr: none
  size_t codeBytes() const { return codeBytes_; }

 private:
  friend std::unique_ptr<LoadedObject> loadObject(std::string_view, const SymbolResolver&, std::string&, LoadRefusal*);
  LoadedObject() = default;
  void* memory_ = nullptr;
  size_t mappedBytes_ = 0, codeBytes_ = 0;
  void* ehFrame_ = nullptr;  // registered with __register_frame
  std::string symbols_;      // "name\0" + 8-byte address, for each defined global symbol
};

// The object whose ELF image is `image`; nullptr and `why` where it cannot be loaded. Every offset, size and index
// of the image is checked first: a damaged cache file is refused, never followed.
std::unique_ptr<LoadedObject> loadObject(std::string_view image, const SymbolResolver& resolve, std::string& why,
                                         LoadRefusal* refusal = nullptr);

}  // namespace ptx::exec::native
