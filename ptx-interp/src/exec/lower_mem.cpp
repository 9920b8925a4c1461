#include "exec/lower_tables.h"

namespace ptx::exec {

namespace {

using mem::Space;
using ptx::Type;

template <Space S, class A, int Indexed = mem::kAddrPlain> Handler ldFor(Type m, unsigned rs, unsigned n) {
  using namespace mem;
  if (n == 1) {
    switch (m) {
      case Type::b8: case Type::u8:
        switch (rs) {
          case 1: return ldScalar<S, A, uint8_t, uint8_t, Indexed>();
          case 2: return ldScalar<S, A, uint8_t, uint16_t, Indexed>();
          case 4: return ldScalar<S, A, uint8_t, uint32_t, Indexed>();
          case 8: return ldScalar<S, A, uint8_t, uint64_t, Indexed>();
        }
        break;
      case Type::s8:
        switch (rs) {
          case 1: return ldScalar<S, A, uint8_t, uint8_t, Indexed>();
          case 2: return ldScalar<S, A, int8_t, uint16_t, Indexed>();
          case 4: return ldScalar<S, A, int8_t, uint32_t, Indexed>();
          case 8: return ldScalar<S, A, int8_t, uint64_t, Indexed>();
        }
        break;
      case Type::b16: case Type::u16: case Type::f16: case Type::bf16:
        switch (rs) {
          case 2: return ldScalar<S, A, uint16_t, uint16_t, Indexed>();
          case 4: return ldScalar<S, A, uint16_t, uint32_t, Indexed>();
          case 8: return ldScalar<S, A, uint16_t, uint64_t, Indexed>();
        }
        break;
      case Type::s16:
        switch (rs) {
          case 2: return ldScalar<S, A, uint16_t, uint16_t, Indexed>();
          case 4: return ldScalar<S, A, int16_t, uint32_t, Indexed>();
          case 8: return ldScalar<S, A, int16_t, uint64_t, Indexed>();
        }
        break;
      case Type::b32: case Type::u32: case Type::f32: case Type::f16x2: case Type::bf16x2:
        switch (rs) {
          case 4: return ldScalar<S, A, uint32_t, uint32_t, Indexed>();
          case 8: return ldScalar<S, A, uint32_t, uint64_t, Indexed>();
        }
        break;
      case Type::s32:
        switch (rs) {
          case 4: return ldScalar<S, A, uint32_t, uint32_t, Indexed>();
          case 8: return ldScalar<S, A, int32_t, uint64_t, Indexed>();
        }
        break;
      case Type::b64: case Type::u64: case Type::s64: case Type::f64:
        if (rs == 8) return ldScalar<S, A, uint64_t, uint64_t, Indexed>();
        break;
      case Type::b128:
        if (rs == 16) return ldScalar<S, A, B128, B128, Indexed>();
        break;
      default: break;
    }
    return nullptr;
  }
  if constexpr (Indexed != mem::kAddrPlain) return nullptr;  // vectors have no indexed form
  unsigned ms = m == Type::pred ? 1 : ptx::typeSize(m);
  if (ms != rs) return nullptr;
  switch (ms) {
    case 1: return n == 2 ? &ld<S, A, uint8_t, uint8_t, 2> : n == 4 ? &ld<S, A, uint8_t, uint8_t, 4> : nullptr;
    case 2: return n == 2 ? &ld<S, A, uint16_t, uint16_t, 2> : n == 4 ? &ld<S, A, uint16_t, uint16_t, 4> : nullptr;
    case 4: return n == 2 ? &ld<S, A, uint32_t, uint32_t, 2> : n == 4 ? &ld<S, A, uint32_t, uint32_t, 4> : nullptr;
    case 8: return n == 2 ? &ld<S, A, uint64_t, uint64_t, 2> : nullptr;
  }
  return nullptr;
}

template <Space S, class A, int Indexed = mem::kAddrPlain> Handler stFor(Type m, unsigned rs, unsigned n) {
  using namespace mem;
  unsigned ms = ptx::typeSize(m);
  if (n == 1) {
    if (rs < ms) return nullptr;
    switch (ms) {
      case 1:
        switch (rs) {
          case 1: return stScalar<S, A, uint8_t, uint8_t, Indexed>();
          case 2: return stScalar<S, A, uint8_t, uint16_t, Indexed>();
          case 4: return stScalar<S, A, uint8_t, uint32_t, Indexed>();
          case 8: return stScalar<S, A, uint8_t, uint64_t, Indexed>();
        }
        break;
      case 2:
        switch (rs) {
          case 2: return stScalar<S, A, uint16_t, uint16_t, Indexed>();
          case 4: return stScalar<S, A, uint16_t, uint32_t, Indexed>();
          case 8: return stScalar<S, A, uint16_t, uint64_t, Indexed>();
        }
        break;
      case 4:
        switch (rs) {
          case 4: return stScalar<S, A, uint32_t, uint32_t, Indexed>();
          case 8: return stScalar<S, A, uint32_t, uint64_t, Indexed>();
        }
        break;
      case 8:
        return stScalar<S, A, uint64_t, uint64_t, Indexed>();
      case 16:
        if (rs == 16) return stScalar<S, A, B128, B128, Indexed>();
        break;
    }
    return nullptr;
  }
  if constexpr (Indexed != mem::kAddrPlain) return nullptr;  // vectors have no indexed form
  if (ms != rs) return nullptr;
  switch (ms) {
    case 1: return n == 2 ? &st<S, A, uint8_t, uint8_t, 2> : n == 4 ? &st<S, A, uint8_t, uint8_t, 4> : nullptr;
    case 2: return n == 2 ? &st<S, A, uint16_t, uint16_t, 2> : n == 4 ? &st<S, A, uint16_t, uint16_t, 4> : nullptr;
    case 4: return n == 2 ? &st<S, A, uint32_t, uint32_t, 2> : n == 4 ? &st<S, A, uint32_t, uint32_t, 4> : nullptr;
    case 8: return n == 2 ? &st<S, A, uint64_t, uint64_t, 2> : nullptr;
  }
  return nullptr;
}

template <Space S, class A, class T> Handler atomOps(mem::AOp op) {
  using namespace mem;
  constexpr bool fp = std::is_floating_point_v<T>;
  switch (op) {
    case AAdd: return &atom<S, A, T, AAdd>;
    case AMin: return &atom<S, A, T, AMin>;
    case AMax: return &atom<S, A, T, AMax>;
    case AExch: return &atom<S, A, T, AExch>;
    case ACas: return &atom<S, A, T, ACas>;
    default: break;
  }
  if constexpr (!fp) {
    switch (op) {
      case AInc: if constexpr (std::is_unsigned_v<T> && sizeof(T) == 4) return &atom<S, A, T, AInc>; break;
      case ADec: if constexpr (std::is_unsigned_v<T> && sizeof(T) == 4) return &atom<S, A, T, ADec>; break;
      case AAnd: return &atom<S, A, T, AAnd>;
      case AOr: return &atom<S, A, T, AOr>;
      case AXor: return &atom<S, A, T, AXor>;
      default: break;
    }
  }
  return nullptr;
}

template <Space S, class A> Handler atomFor(Type t, mem::AOp op) {
  switch (t) {
    case Type::b32: case Type::u32: return atomOps<S, A, uint32_t>(op);
    case Type::s32: return atomOps<S, A, int32_t>(op);
    case Type::b64: case Type::u64: return atomOps<S, A, uint64_t>(op);
    case Type::s64: return atomOps<S, A, int64_t>(op);
    case Type::f32: return atomOps<S, A, float>(op);
    case Type::f64: return atomOps<S, A, double>(op);
    case Type::f16:
      return op == mem::AAdd   ? &mem::atom<S, A, uint16_t, mem::AAddF16>
             : op == mem::AMin ? &mem::atom<S, A, uint16_t, mem::AMinF16>
             : op == mem::AMax ? &mem::atom<S, A, uint16_t, mem::AMaxF16>
                               : nullptr;
    case Type::bf16:
      return op == mem::AAdd   ? &mem::atom<S, A, uint16_t, mem::AAddBF16>
             : op == mem::AMin ? &mem::atom<S, A, uint16_t, mem::AMinBF16>
             : op == mem::AMax ? &mem::atom<S, A, uint16_t, mem::AMaxBF16>
                               : nullptr;
    case Type::b16: return op == mem::ACas ? &mem::atom<S, A, uint16_t, mem::ACas> : nullptr;   // sm_70 atomicCAS on 16 bits
    case Type::f16x2: return op == mem::AAdd ? &mem::atom<S, A, uint32_t, mem::AAddF16x2> : nullptr;
    case Type::bf16x2: return op == mem::AAdd ? &mem::atom<S, A, uint32_t, mem::AAddBF16x2> : nullptr;
    case Type::b128:
      if (op == mem::AExch) return &mem::atom<S, A, mem::B128, mem::AExch>;
      if (op == mem::ACas) return &mem::atom<S, A, mem::B128, mem::ACas>;
      return nullptr;
    default: return nullptr;
  }
}

}  // namespace

Handler ldHandler(Space space, unsigned addrSize, Type m, unsigned rs, unsigned n) {
  bool a32 = addrSize == 4;
  switch (space) {
    case Space::Global: return a32 ? ldFor<Space::Global, uint32_t>(m, rs, n) : ldFor<Space::Global, uint64_t>(m, rs, n);
    case Space::Shared: return a32 ? ldFor<Space::Shared, uint32_t>(m, rs, n) : ldFor<Space::Shared, uint64_t>(m, rs, n);
    case Space::Local: return a32 ? ldFor<Space::Local, uint32_t>(m, rs, n) : ldFor<Space::Local, uint64_t>(m, rs, n);
    case Space::Frame: return ldFor<Space::Frame, uint64_t>(m, rs, n);
    case Space::Param: return a32 ? ldFor<Space::Param, uint32_t>(m, rs, n) : ldFor<Space::Param, uint64_t>(m, rs, n);
    case Space::Generic: return a32 ? nullptr : ldFor<Space::Generic, uint64_t>(m, rs, n);
  }
  return nullptr;
}

namespace {
template <Space S, class A> Handler ldMaskedFor(unsigned elemSize, unsigned n) {
  using namespace mem;
  switch (elemSize * 8 + n) {
    case 8 + 1: return &ldMasked<S, A, uint8_t, 1>;
    case 8 + 2: return &ldMasked<S, A, uint8_t, 2>;
    case 8 + 4: return &ldMasked<S, A, uint8_t, 4>;
    case 16 + 1: return &ldMasked<S, A, uint16_t, 1>;
    case 16 + 2: return &ldMasked<S, A, uint16_t, 2>;
    case 16 + 4: return &ldMasked<S, A, uint16_t, 4>;
    case 32 + 1: return &ldMasked<S, A, uint32_t, 1>;
    case 32 + 2: return &ldMasked<S, A, uint32_t, 2>;
    case 32 + 4: return &ldMasked<S, A, uint32_t, 4>;
    case 64 + 1: return &ldMasked<S, A, uint64_t, 1>;
    case 64 + 2: return &ldMasked<S, A, uint64_t, 2>;
    case 64 + 4: return &ldMasked<S, A, uint64_t, 4>;
    default: return nullptr;
  }
}
}  // namespace

Handler ldMaskedHandler(Space space, unsigned addrSize, unsigned elemSize, unsigned n) {
  bool a32 = addrSize == 4;
  switch (space) {
    case Space::Global: return a32 ? ldMaskedFor<Space::Global, uint32_t>(elemSize, n) : ldMaskedFor<Space::Global, uint64_t>(elemSize, n);
    case Space::Shared: return a32 ? ldMaskedFor<Space::Shared, uint32_t>(elemSize, n) : ldMaskedFor<Space::Shared, uint64_t>(elemSize, n);
    case Space::Local: return a32 ? ldMaskedFor<Space::Local, uint32_t>(elemSize, n) : ldMaskedFor<Space::Local, uint64_t>(elemSize, n);
    case Space::Frame: return ldMaskedFor<Space::Frame, uint64_t>(elemSize, n);
    case Space::Param: return a32 ? ldMaskedFor<Space::Param, uint32_t>(elemSize, n) : ldMaskedFor<Space::Param, uint64_t>(elemSize, n);
    case Space::Generic: return a32 ? nullptr : ldMaskedFor<Space::Generic, uint64_t>(elemSize, n);
  }
  return nullptr;
}

Handler stHandler(Space space, unsigned addrSize, Type m, unsigned rs, unsigned n) {
  bool a32 = addrSize == 4;
  switch (space) {
    case Space::Global: return a32 ? stFor<Space::Global, uint32_t>(m, rs, n) : stFor<Space::Global, uint64_t>(m, rs, n);
    case Space::Shared: return a32 ? stFor<Space::Shared, uint32_t>(m, rs, n) : stFor<Space::Shared, uint64_t>(m, rs, n);
    case Space::Local: return a32 ? stFor<Space::Local, uint32_t>(m, rs, n) : stFor<Space::Local, uint64_t>(m, rs, n);
    case Space::Frame: return stFor<Space::Frame, uint64_t>(m, rs, n);
    case Space::Param: return nullptr;
    case Space::Generic: return a32 ? nullptr : stFor<Space::Generic, uint64_t>(m, rs, n);
  }
  return nullptr;
}

Handler ldIndexedHandler(Type m, unsigned rs) { return ldFor<Space::Global, uint64_t, mem::kAddrSum>(m, rs, 1); }
Handler stIndexedHandler(Type m, unsigned rs) { return stFor<Space::Global, uint64_t, mem::kAddrSum>(m, rs, 1); }
Handler ldScaledHandler(Type m, unsigned rs, bool signedIndex) {
  return signedIndex ? ldFor<Space::Global, uint64_t, mem::kAddrScaledSigned>(m, rs, 1)
                     : ldFor<Space::Global, uint64_t, mem::kAddrScaledUnsigned>(m, rs, 1);
}
Handler stScaledHandler(Type m, unsigned rs, bool signedIndex) {
  return signedIndex ? stFor<Space::Global, uint64_t, mem::kAddrScaledSigned>(m, rs, 1)
                     : stFor<Space::Global, uint64_t, mem::kAddrScaledUnsigned>(m, rs, 1);
}

Handler ldParamHandler(Type m, unsigned rs) {
  using namespace mem;
  unsigned ms = ptx::typeSize(m);
  bool sgn = ptx::typeKind(m) == ptx::TypeKind::Signed;
  switch (ms) {
    case 1:
      switch (rs) {
        case 1: return &ldParamUniform<uint8_t, uint8_t>;
        case 2: return sgn ? &ldParamUniform<int8_t, uint16_t> : &ldParamUniform<uint8_t, uint16_t>;
        case 4: return sgn ? &ldParamUniform<int8_t, uint32_t> : &ldParamUniform<uint8_t, uint32_t>;
        case 8: return sgn ? &ldParamUniform<int8_t, uint64_t> : &ldParamUniform<uint8_t, uint64_t>;
      }
      break;
    case 2:
      switch (rs) {
        case 2: return &ldParamUniform<uint16_t, uint16_t>;
        case 4: return sgn ? &ldParamUniform<int16_t, uint32_t> : &ldParamUniform<uint16_t, uint32_t>;
        case 8: return sgn ? &ldParamUniform<int16_t, uint64_t> : &ldParamUniform<uint16_t, uint64_t>;
      }
      break;
    case 4:
      switch (rs) {
        case 4: return &ldParamUniform<uint32_t, uint32_t>;
        case 8: return sgn ? &ldParamUniform<int32_t, uint64_t> : &ldParamUniform<uint32_t, uint64_t>;
      }
      break;
    case 8:
      if (rs == 8) return &ldParamUniform<uint64_t, uint64_t>;
      break;
    case 16:
      if (rs == 16) return &ldParamUniform<B128, B128>;
      break;
  }
  return nullptr;
}

Handler atomHandler(Space space, unsigned addrSize, Type t, mem::AOp op) {
  bool a32 = addrSize == 4;
  switch (space) {
    case Space::Global: return a32 ? nullptr : atomFor<Space::Global, uint64_t>(t, op);
    case Space::Shared: return a32 ? atomFor<Space::Shared, uint32_t>(t, op) : atomFor<Space::Shared, uint64_t>(t, op);
    case Space::Generic: return a32 ? nullptr : atomFor<Space::Generic, uint64_t>(t, op);
    default: return nullptr;
  }
}

}  // namespace ptx::exec
