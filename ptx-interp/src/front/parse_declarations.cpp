// Declarations: variables and their initializers, parameters, function headers.
#include "front/parser.h"

namespace ptx {
namespace parser_detail {

void Parser::parseDeclaration() {
  SourceLoc loc = here();
  Linkage linkage = Linkage::none;
  for (;;) {
    std::string_view w = tok_.text();
    Linkage l = Linkage::none;
    if (w == ".extern")
      l = Linkage::extern_;
    else if (w == ".visible")
      l = Linkage::visible;
    else if (w == ".weak")
      l = Linkage::weak;
    else if (w == ".common")
      l = Linkage::common;
    else
      break;
    if (linkage != Linkage::none) error(tok_, "more than one linkage directive");
    linkage = l;
    next();
    if (tok_.kind != Tok::Word) break;
  }
  if (tok_.kind != Tok::Word) {
    error(tok_, "expected a declaration, found {}", describe(tok_));
    skipStatement();
    return;
  }
  std::string_view w = tok_.text();
  if (w == ".entry" || w == ".func") {
    bool entry = w == ".entry";
    next();
    parseFunction(linkage, entry, loc);
    return;
  }
  Space space;
  if (!spaceDirective(w, space) || space == Space::reg || space == Space::param) {
    error(tok_, "unexpected {} at module scope", describe(tok_));
    next();
    skipStatement();
    return;
  }
  next();
  for (;;) {
    Variable v;
    bool more = false;
    v.loc = loc;
    size_t relocMark = globalRelocs_.size();
    if (!parseVariable(v, space, linkage, false, more)) {
      globalRelocs_.resize(relocMark);  // they refer to the variable that was not added
      skipStatement();
      return;
    }
    auto index = static_cast<uint32_t>(m_.globals.size());
    StrId name = v.name;
    m_.globals.push_back(std::move(v));
    m_.order.push_back(TopItem{TopKind::Global, index});
    bindGlobal(name, SymBinding{SymKind::Global, index}, loc);
    if (!more) break;
  }
}

bool Parser::parseAttribute(Variable& v) {
  // .attribute(.managed) / .attribute(.unified(a, b))
  next();
  if (!expect('(', "after .attribute")) return false;
  while (tok_.kind == Tok::Word) {
    if (tok_.text() == ".managed") {
      v.managed = true;
      next();
    } else if (tok_.text() == ".unified") {
      next();
      if (accept('(')) {
        int64_t ignored = 0;
        if (!parseConstExpr(ignored) || !expect(',', "in .unified") || !parseConstExpr(ignored) ||
            !expect(')', "to close .unified"))
          return false;
      }
    } else {
      error(tok_, "unknown attribute '{}'", tok_.text());
      return false;
    }
    if (!accept(',')) break;
  }
  return expect(')', "to close .attribute");
}

bool Parser::parseArrayDims(Variable& v) {
  while (tok_.is('[')) {
    Token at = tok_;
    next();
    if (tok_.is(']')) {
      if (!v.dims.empty()) {
        error(at, "only the first array dimension may be left unspecified");
        return false;
      }
      v.dims.push_back(0);
      next();
      continue;
    }
    int64_t n = 0;
    if (!parseConstExpr(n)) return false;
    if (n <= 0) {
      error(at, "array dimension must be positive, not {}", n);
      return false;
    }
    v.dims.push_back(static_cast<uint64_t>(n));
    if (v.dims.size() > 8) {
      error(at, "too many array dimensions");
      return false;
    }
    if (!expect(']', "to close the array dimension")) return false;
  }
  return true;
}

// Reads `[.align N] [.vN] .type [.ptr ...] name[dims] [= init]`, with the state space already consumed.
bool Parser::parseVariable(Variable& v, Space space, Linkage linkage, bool inBody, bool& more) {
  v.space = space;
  v.linkage = linkage;
  bool sawPtr = false;
  while (tok_.kind == Tok::Word && tok_.text()[0] == '.') {
    std::string_view w = tok_.text();
    if (w == ".align") {
      next();
      Token at = tok_;
      if (!expectUint32(v.align, "an alignment")) return false;
      if (v.align == 0 || (v.align & (v.align - 1))) {
        error(at, "alignment must be a power of two, not {}", v.align);
        return false;
      }
      if (sawPtr) v.ptrAlign = v.align, v.align = 0;
      continue;
    }
    if (w == ".attribute") {
      if (!parseAttribute(v)) return false;
      continue;
    }
    if (w == ".ptr") {
      sawPtr = v.ptr = true;
      next();
      continue;
    }
    if (w == ".v2" || w == ".v4" || w == ".v8") {
      v.vec = static_cast<uint8_t>(w[2] - '0');
      next();
      continue;
    }
    Space ps;
    if (sawPtr && spaceDirective(w, ps)) {
      v.ptrSpace = ps;
      next();
      continue;
    }
    if (w.size() > 4 && w.substr(0, 4) == ".ptr") {  // `.ptr.global.align 8` written without spaces
      sawPtr = v.ptr = true;
      std::string_view rest = w.substr(4);
      while (!rest.empty()) {
        size_t dot = rest.find('.', 1);
        std::string_view part = rest.substr(0, dot);
        rest = dot == std::string_view::npos ? std::string_view() : rest.substr(dot);
        if (spaceDirective(part, ps))
          v.ptrSpace = ps;
        else if (part == ".align") {
          next();
          if (!expectUint32(v.ptrAlign, "an alignment")) return false;
          goto nextWord;
        } else {
          error(tok_, "unexpected '{}' in .ptr attribute", part);
          return false;
        }
      }
      next();
    nextWord:
      continue;
    }
    Type t = findType(w);
    if (t == Type::none) break;
    if (v.type != Type::none) {
      error(tok_, "more than one type in declaration");
      return false;
    }
    v.type = t;
    next();
  }
  if (v.type == Type::none) {
    error(tok_, "expected a type in declaration, found {}", describe(tok_));
    return false;
  }
  if (tok_.kind != Tok::Word || tok_.text()[0] == '.') {
    error(tok_, "expected a variable name, found {}", describe(tok_));
    return false;
  }
  v.name = intern(tok_.text());
  next();
  if (!parseArrayDims(v)) return false;
  uint64_t elems = 1;
  for (size_t i = 0; i < v.dims.size(); ++i) {
    uint64_t d = v.dims[i] == 0 ? 1 : v.dims[i];
    if (elems > opt_.maxVariableBytes / d) {
      errorAt(v.loc, "variable '{}' is too large", m_.str(v.name));
      return false;
    }
    elems *= d;
  }
  uint64_t esize = v.elementSize();
  if (esize && elems > opt_.maxVariableBytes / esize) {
    errorAt(v.loc, "variable '{}' is too large", m_.str(v.name));
    return false;
  }
  v.size = (v.dims.empty() || v.dims[0] != 0) ? elems * esize : 0;
  if (accept('=')) {
    if (!parseInitializer(v, inBody)) return false;
  }
  more = false;
  if (tok_.is(',')) {
    more = true;
    next();
    return true;
  }
  return expect(';', "after the declaration");
}

bool Parser::parseInitializer(Variable& v, bool inBody) {
  if (v.type == Type::texref || v.type == Type::samplerref || v.type == Type::surfref) {
    if (!v.dims.empty() || !expect('{', "to open the texture/sampler initializer")) return false;
    v.hasInit = true;
    for (;;) {
      if (tok_.kind != Tok::Word) {
        error(tok_, "expected a field name in {} initializer, found {}", typeName(v.type), describe(tok_));
        return false;
      }
      OpaqueField f;
      f.field = intern(tok_.text());
      next();
      if (!expect('=', "after the field name")) return false;
      if (tok_.kind == Tok::Word) {
        f.word = intern(tok_.text());
        next();
      } else if (!parseConstExpr(f.value)) {
        return false;
      }
      v.opaqueInit.push_back(f);
      if (v.opaqueInit.size() > 64) {
        error(tok_, "too many fields in initializer");
        return false;
      }
      if (!accept(',')) break;
    }
    return expect('}', "to close the texture/sampler initializer");
  }
  uint64_t esize = v.elementSize();
  if (esize == 0) {
    error(tok_, "variable of type {} cannot be initialised", typeName(v.type));
    return false;
  }
  v.hasInit = true;
  bool unsized = !v.dims.empty() && v.dims[0] == 0;
  if (!unsized) {
    if (v.size > opt_.maxVariableBytes) return false;
    v.init.assign(v.size, 0);
  }
  uint64_t count = 0;
  if (tok_.is('{')) {
    if (v.dims.empty() && v.vec == 0) {
      error(tok_, "brace initializer for a scalar variable");
      return false;
    }
    if (!parseInitItems(v, 0, 0, count, inBody, 0)) return false;
  } else {
    if (!v.dims.empty() || v.vec) {
      error(tok_, "array initializer must be in braces");
      return false;
    }
    if (!parseInitScalar(v, 0, inBody)) return false;
  }
  if (unsized) {
    // The first dimension is the number of top-level items.
    v.dims[0] = count == 0 ? 1 : count;
    uint64_t elems = 1;
    for (uint64_t d : v.dims) elems *= d;
    v.size = elems * esize;
    v.init.resize(v.size, 0);
  }
  return true;
}

// Items at array level `level` (dims.size() levels, then the vector level if any).
bool Parser::parseInitItems(Variable& v, size_t level, uint64_t base, uint64_t& count, bool inBody, unsigned depth) {
  if (depth > opt_.maxNesting) {
    error(tok_, "initializer nested too deeply");
    return false;
  }
  Token open = tok_;
  next();  // '{'
  size_t levels = v.dims.size() + (v.vec ? 1 : 0);
  uint64_t stride = v.elementSize();
  for (size_t i = level + 1; i < v.dims.size(); ++i) stride *= v.dims[i];
  if (level >= v.dims.size()) stride = typeSize(v.type);  // vector components
  uint64_t limit = level < v.dims.size() ? v.dims[level] : v.vec;
  bool unsizedLevel = level == 0 && !v.dims.empty() && v.dims[0] == 0;
  uint64_t scalarStride = typeSize(v.type);
  uint64_t flat = 0;  // for flat lists of scalars filling a multi-level array
  count = 0;
  if (tok_.is('}')) {
    next();
    return true;
  }
  for (;;) {
    if (tok_.is('{')) {
      if (level + 1 >= levels) {
        error(tok_, "too many braces in initializer");
        return false;
      }
      if (!unsizedLevel && count >= limit) {
        error(tok_, "too many initializers for '{}'", m_.str(v.name));
        return false;
      }
      uint64_t sub = 0;
      if (unsizedLevel && v.init.size() < (count + 1) * stride) {
        if ((count + 1) * stride > opt_.maxVariableBytes) return false;
        v.init.resize((count + 1) * stride, 0);
      }
      if (!parseInitItems(v, level + 1, base + count * stride, sub, inBody, depth + 1)) return false;
      ++count;
    } else {
      uint64_t off = base + flat * scalarStride;
      uint64_t capacity = unsizedLevel ? opt_.maxVariableBytes : base + limit * stride;
      if (off + scalarStride > capacity) {
        error(tok_, "too many initializers for '{}'", m_.str(v.name));
        return false;
      }
      if (v.init.size() < off + scalarStride) v.init.resize(off + scalarStride, 0);
      if (!parseInitScalar(v, off, inBody)) return false;
      ++flat;
      uint64_t perItem = stride / (scalarStride ? scalarStride : 1);
      count = perItem ? (flat + perItem - 1) / perItem : flat;
    }
    if (tok_.is(',')) {
      next();
      continue;
    }
    break;
  }
  if (!tok_.is('}')) {
    error(tok_, "expected ',' or '}}' in initializer opened at {}:{}, found {}", open.line, open.col, describe(tok_));
    return false;
  }
  next();
  return true;
}

static void storeLE(std::vector<uint8_t>& bytes, uint64_t offset, uint64_t value, unsigned size) {
  for (unsigned i = 0; i < size && offset + i < bytes.size(); ++i) bytes[offset + i] = uint8_t(value >> (8 * i));
}

static uint16_t floatToHalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000, exp = (x >> 23) & 0xff, man = x & 0x7fffff;
  if (exp == 0xff) return static_cast<uint16_t>(sign | 0x7c00 | (man ? 0x200 : 0));
  int e = int(exp) - 127 + 15;
  if (e >= 31) return static_cast<uint16_t>(sign | 0x7c00);
  if (e <= 0) {
    if (e < -10) return static_cast<uint16_t>(sign);
    man |= 0x800000;
    unsigned shift = unsigned(14 - e);
    uint32_t h = man >> shift;
    uint32_t rem = man & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (h & 1))) ++h;
    return static_cast<uint16_t>(sign | h);
  }
  uint32_t h = (uint32_t(e) << 10) | (man >> 13);
  uint32_t rem = man & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (h & 1))) ++h;
  return static_cast<uint16_t>(sign | h);
}

bool Parser::parseInitScalar(Variable& v, uint64_t offset, bool inBody) {
  unsigned size = typeSize(v.type);
  TypeKind kind = typeKind(v.type);
  // Symbol addresses: name, name+off, generic(name), generic(name)+off, mask(...)
  if (tok_.kind == Tok::Word && tok_.text() != kWarpSizeName) {
    Token at = tok_;
    std::string_view w = tok_.text();
    Relocation r;
    r.offset = offset;
    r.size = static_cast<uint8_t>(size);
    StrId name;
    if (w == "generic") {
      next();
      if (!expect('(', "after generic")) return false;
      if (tok_.kind != Tok::Word) {
        error(tok_, "expected a symbol name, found {}", describe(tok_));
        return false;
      }
      name = intern(tok_.text());
      next();
      r.generic = true;
      if (!expect(')', "to close generic()")) return false;
    } else {
      name = intern(w);
      next();
    }
    if (tok_.is('+') || tok_.is('-')) {
      int64_t add = 0;
      if (!parseBinary(add, 9, 0)) return false;
      r.addend += add;
    }
    if (size < 4 && !r.isMask) {
      error(at, "symbol address in an initializer of {} elements", typeName(v.type));
      return false;
    }
    if (inBody) {
      error(at, "symbol addresses in initializers are only allowed at module scope");
      return false;
    }
    SymBinding b = globalSym(name);
    if (b.kind == SymKind::Global || b.kind == SymKind::Function) {
      r.symKind = b.kind;
      r.index = b.index;
    } else {
      globalRelocs_.push_back(DeferredReloc{static_cast<uint32_t>(m_.globals.size()),
                                            static_cast<uint32_t>(v.relocs.size()), name, SourceLoc{at.line, at.col}});
    }
    v.relocs.push_back(r);
    return true;
  }
  bool negate = false;
  Token at = tok_;
  if (tok_.kind == Tok::Int && !tok_.malformed && !tok_.overflow && peek().is('(')) {
    // 0xFF00(sym) / 0xFF(generic(sym)+4): selected bytes of a symbol's address.
    Relocation r;
    r.offset = offset;
    r.size = static_cast<uint8_t>(size);
    r.isMask = true;
    r.maskValue = tok_.intValue;
    if (r.maskValue == 0) {
      error(tok_, "address mask must not be zero");
      return false;
    }
    next();
    next();  // '('
    bool generic = tok_.isWord("generic");
    if (generic) {
      next();
      if (!expect('(', "after generic")) return false;
    }
    if (tok_.kind != Tok::Word) {
      error(tok_, "expected a symbol name in the masked address, found {}", describe(tok_));
      return false;
    }
    StrId name = intern(tok_.text());
    Token nameTok = tok_;
    next();
    if (generic && !expect(')', "to close generic()")) return false;
    r.generic = generic;
    if (tok_.is('+') || tok_.is('-')) {
      if (!parseBinary(r.addend, 9, 0)) return false;
    }
    if (!expect(')', "to close the masked address")) return false;
    if (inBody) {
      error(at, "symbol addresses in initializers are only allowed at module scope");
      return false;
    }
    SymBinding b = globalSym(name);
    if (b.kind == SymKind::Global || b.kind == SymKind::Function) {
      r.symKind = b.kind;
      r.index = b.index;
    } else {
      globalRelocs_.push_back(DeferredReloc{static_cast<uint32_t>(m_.globals.size()),
                                            static_cast<uint32_t>(v.relocs.size()), name,
                                            SourceLoc{nameTok.line, nameTok.col}});
    }
    v.relocs.push_back(r);
    return true;
  }
  if (tok_.kind == Tok::Float || (tok_.is('-') && peek().kind == Tok::Float)) {
    if (tok_.is('-')) {
      negate = true;
      next();
    }
    if (tok_.malformed) {
      error(tok_, "malformed floating-point literal '{}'", tok_.text());
      return false;
    }
    uint64_t bits = tok_.intValue;
    unsigned fbits = tok_.floatBits;
    next();
    if (kind != TypeKind::Float) {
      error(at, "floating-point initial value for a variable of type {}", typeName(v.type));
      return false;
    }
    if (fbits == 32) {
      if (negate) bits ^= 0x80000000u;
      if (size == 4)
        storeLE(v.init, offset, bits, 4);
      else {
        float f;
        uint32_t b32 = static_cast<uint32_t>(bits);
        std::memcpy(&f, &b32, 4);
        double d = f;
        std::memcpy(&bits, &d, 8);
        fbits = 64;
      }
    } else if (negate) {
      bits ^= uint64_t(1) << 63;
    }
    if (fbits == 64) {
      double d;
      std::memcpy(&d, &bits, 8);
      if (size == 8)
        storeLE(v.init, offset, bits, 8);
      else if (size == 4 || v.type == Type::f16 || v.type == Type::bf16) {
        float f = static_cast<float>(d);
        uint32_t fb;
        std::memcpy(&fb, &f, 4);
        if (size == 4)
          storeLE(v.init, offset, fb, 4);
        else if (v.type == Type::bf16)
          storeLE(v.init, offset, fb >> 16, 2);
        else
          storeLE(v.init, offset, floatToHalf(f), 2);
      } else {
        storeLE(v.init, offset, bits, size);
      }
    }
    return true;
  }
  int64_t value = 0;
  if (!parseConstExpr(value)) return false;
  if (kind == TypeKind::Float) {
    error(at, "integer initial value for a variable of type {}", typeName(v.type));
    return false;
  }
  storeLE(v.init, offset, static_cast<uint64_t>(value), size);
  return true;
}

bool Parser::parseParam(Param& p, bool allowReg) {
  p.loc = here();
  if (tok_.kind != Tok::Word) {
    error(tok_, "expected a parameter declaration, found {}", describe(tok_));
    return false;
  }
  Space space;
  if (!spaceDirective(tok_.text(), space) || (space != Space::param && !(allowReg && space == Space::reg))) {
    error(tok_, "expected .param{} in parameter list, found {}", allowReg ? " or .reg" : "", describe(tok_));
    return false;
  }
  next();
  p.space = space;
  bool sawPtr = false;
  while (tok_.kind == Tok::Word && tok_.text()[0] == '.') {
    std::string_view w = tok_.text();
    if (w == ".align") {
      next();
      uint32_t a = 0;
      Token at = tok_;
      if (!expectUint32(a, "an alignment")) return false;
      if (a == 0 || (a & (a - 1))) {
        error(at, "alignment must be a power of two, not {}", a);
        return false;
      }
      (sawPtr ? p.ptrAlign : p.align) = a;
      continue;
    }
    if (w == ".ptr") {
      sawPtr = p.ptr = true;
      next();
      continue;
    }
    Space ps;
    if (sawPtr && spaceDirective(w, ps)) {
      p.ptrSpace = ps;
      next();
      continue;
    }
    if (w == ".v2" || w == ".v4" || w == ".v8") {
      p.vec = static_cast<uint8_t>(w[2] - '0');
      next();
      continue;
    }
    Type t = findType(w);
    if (t == Type::none) {
      error(tok_, "unexpected '{}' in parameter declaration", w);
      return false;
    }
    if (p.type != Type::none) {
      error(tok_, "more than one type in parameter declaration");
      return false;
    }
    p.type = t;
    next();
  }
  if (p.type == Type::none) {
    error(tok_, "expected a parameter type, found {}", describe(tok_));
    return false;
  }
  if (tok_.kind != Tok::Word) {
    error(tok_, "expected a parameter name, found {}", describe(tok_));
    return false;
  }
  p.name = intern(tok_.text());
  next();
  if (!parseArrayDims(p)) return false;
  uint64_t elems = 1;
  for (uint64_t d : p.dims) {
    if (d == 0) continue;
    if (elems > opt_.maxVariableBytes / d) {
      errorAt(p.loc, "parameter too large");
      return false;
    }
    elems *= d;
  }
  p.size = elems * p.elementSize();
  return true;
}

bool Parser::parseParamList(std::vector<Param>& out, bool allowReg) {
  next();  // '('
  if (accept(')')) return true;
  for (;;) {
    Param p;
    if (!parseParam(p, allowReg)) return false;
    out.push_back(std::move(p));
    if (out.size() > 65536) {
      error(tok_, "too many parameters");
      return false;
    }
    if (accept(',')) continue;
    return expect(')', "to close the parameter list");
  }
}

void Parser::parseFunction(Linkage linkage, bool isEntry, SourceLoc loc) {
  Function f;
  f.isEntry = isEntry;
  f.linkage = linkage;
  f.loc = loc;
  if (!isEntry && tok_.is('(')) {
    if (!parseParamList(f.returns, true)) {
      skipStatement();
      return;
    }
  }
  if (tok_.kind != Tok::Word || tok_.text()[0] == '.') {
    error(tok_, "expected a function name, found {}", describe(tok_));
    skipStatement();
    return;
  }
  f.name = intern(tok_.text());
  Token nameTok = tok_;
  next();
  if (tok_.is('(')) {
    if (!parseParamList(f.params, !isEntry)) {
      skipStatement();
      return;
    }
  }
  // Performance-tuning and other directives between the header and the body.
  while (tok_.kind == Tok::Word) {
    std::string_view w = tok_.text();
    Token at = tok_;
    auto dims = [&](uint32_t(&out)[3], uint8_t& n) {
      next();
      n = 0;
      for (;;) {
        if (n == 3) {
          error(tok_, "at most three dimensions");
          return false;
        }
        if (!expectUint32(out[n], "a dimension")) return false;
        ++n;
        if (!accept(',')) return true;
      }
    };
    bool ok = true;
    if (w == ".maxntid")
      ok = dims(f.maxntid, f.numMaxntid);
    else if (w == ".reqntid")
      ok = dims(f.reqntid, f.numReqntid);
    else if (w == ".reqnctapercluster")
      ok = dims(f.reqnctapercluster, f.numReqnctapercluster);
    else if (w == ".minnctapersm")
      next(), ok = expectUint32(f.minnctapersm, "a CTA count");
    else if (w == ".maxnctapersm")
      next(), ok = expectUint32(f.maxnctapersm, "a CTA count");
    else if (w == ".maxnreg")
      next(), ok = expectUint32(f.maxnreg, "a register count");
    else if (w == ".maxclusterrank")
      next(), ok = expectUint32(f.maxclusterrank, "a cluster rank");
    else if (w == ".explicitcluster")
      next(), f.explicitcluster = true;
    else if (w == ".blocksareclusters")
      next(), f.blocksareclusters = true;
    else if (w == ".noreturn") {
      next();
      if (isEntry) error(at, ".noreturn is not allowed on .entry");
      f.noreturn = true;
    } else if (w == ".pragma") {
      next();
      if (tok_.kind != Tok::String) {
        error(tok_, "expected a string after .pragma");
        ok = false;
      } else {
        f.pragmas.push_back(intern(tok_.text()));
        next();
        ok = expect(';', "after .pragma");
      }
    } else {
      break;
    }
    if (!ok) {
      skipStatement();
      return;
    }
  }
  auto index = static_cast<uint32_t>(m_.functions.size());
  SymBinding previous = globalSym(f.name);
  bool hasBody = tok_.is('{');
  f.hasBody = hasBody;
  m_.functions.push_back(std::move(f));
  if (previous.kind == SymKind::Function) {
    Function& old = m_.functions[previous.index];
    if (old.hasBody && hasBody) errorAt(loc, "redefinition of function '{}'", m_.str(old.name));
  }
  bindGlobal(m_.functions.back().name, SymBinding{SymKind::Function, index}, SourceLoc{nameTok.line, nameTok.col});
  if (previous.kind == SymKind::Function && hasBody && globalSym(m_.functions.back().name).index != index)
    setGlobalSlot(m_.functions.back().name, SymBinding{SymKind::Function, index});
  m_.order.push_back(TopItem{TopKind::Function, index});
  if (!hasBody) {
    expect(';', "after the function declaration");
    return;
  }
  fn_ = &m_.functions[index];
  fnIndex_ = index;
  bodyBegin_ = tok_.begin;
  body_ = BodyPlace{uint64_t(tok_.begin - textBegin_), 0, here(), names_ ? names_->count() : 0,
                    uint32_t(m_.debugLocs.size())};
  parseBody();
  fn_ = nullptr;
}

}  // namespace parser_detail
}  // namespace ptx
