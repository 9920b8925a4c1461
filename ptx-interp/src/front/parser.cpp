// The PTX parser: symbol bindings, constant expressions, module-level directives, and the entry point
// parseModule. Declarations and statements are in parse_declarations.cpp and parse_statements.cpp.
#include "front/parser.h"

#include <algorithm>
#include <cstring>

namespace ptx {
namespace parser_detail {

// ---------------------------------------------------------------------------------------------------------------

void Parser::skipStatement() {
  int depth = 0;
  while (tok_.kind != Tok::End) {
    if (tok_.is('{')) {
      ++depth;
    } else if (tok_.is('}')) {
      if (depth == 0) return;
      --depth;
      if (depth == 0) {
        next();
        if (tok_.is(';')) next();
        return;
      }
    } else if (tok_.is(';') && depth == 0) {
      next();
      return;
    }
    next();
  }
}

void Parser::bindRegName(StrId name, uint32_t reg) {
  ensure(regBind_, name);
  if (scope_ != 0)
    undo_.push_back(Undo{Undo::RegName, name, regBind_[name], {}});
  else
    touched_.push_back(name);
  regBind_[name] = reg + 1;
}

void Parser::bindRange(StrId name, uint32_t decl) {
  ensure(rangeBind_, name);
  if (rangeOuter_.size() <= decl) rangeOuter_.resize(decl + 1);
  rangeOuter_[decl] = rangeBind_[name];
  if (scope_ != 0)
    undo_.push_back(Undo{Undo::RegRange, name, rangeBind_[name], {}});
  else
    touched_.push_back(name);
  rangeBind_[name] = decl + 1;
}

void Parser::bindLocal(StrId name, SymBinding b) {
  ensure(localBind_, name);
  if (scope_ != 0)
    undo_.push_back(Undo{Undo::LocalSym, name, 0, localBind_[name]});
  else
    touched_.push_back(name);
  localBind_[name] = b;
}

void Parser::bindGlobal(StrId name, SymBinding b, SourceLoc loc) {
  ensure(globalBind_, name);
  SymBinding& slot = globalBind_[name];
  if (slot.kind != SymKind::None) {
    // A definition may follow a declaration of the same function or an .extern variable.
    bool redeclaredFunction = slot.kind == SymKind::Function && b.kind == SymKind::Function;
    bool externVar =
        slot.kind == SymKind::Global && b.kind == SymKind::Global &&
        (m_.globals[slot.index].linkage == Linkage::extern_ || m_.globals[b.index].linkage == Linkage::extern_);
    if (!redeclaredFunction && !externVar) {
      errorAt(loc, "redefinition of '{}'", m_.str(name));
      return;
    }
    if (redeclaredFunction && !m_.functions[b.index].hasBody) return;  // keep the first declaration
  }
  setGlobalSlot(name, b);
}

uint32_t Parser::labelFor(StrId name, SourceLoc loc) {
  ensure(labelBind_, name);
  if (labelBind_[name]) return labelBind_[name] - 1;
  auto id = static_cast<uint32_t>(fn_->labels.size());
  Label l;
  l.name = name;
  l.loc = loc;
  l.scope = scope_;
  fn_->labels.push_back(l);
  labelBind_[name] = id + 1;
  touched_.push_back(name);
  return id;
}

// %r123 is register 123 of a `%r<N>` range when such a range is declared; otherwise a plainly declared name. Where
// both name it, the innermost declaration does: registers are numbered in declaration order, and a scope's bindings
// are undone when it closes, so the later of the two live declarations is the inner one. nvcc writes
// `{ .reg .pred %p1; setp.ne.u32 %p1, ...; bar.red.and.pred ...; }` for __syncthreads_and/_or inside functions
// that declare `%p<N>`: that %p1 is the block's own, and writing the outer %p1 there broke CUB's segmented sort
// (tools/repro/cub_radix_passes_in_a_loop.cu).
bool Parser::lookupRegister(std::string_view name, uint32_t& reg) {
  bool plain = false;
  uint32_t plainReg = 0;
  if (StrId id = m_.strings.find(name); id != kNoStr && id < regBind_.size() && regBind_[id]) {
    plain = true;
    plainReg = regBind_[id] - 1;
  }
  size_t digits = 0;
  while (digits < name.size() && name[name.size() - 1 - digits] >= '0' && name[name.size() - 1 - digits] <= '9')
    ++digits;
  if (digits > 0 && digits < name.size() && digits <= 9 && (digits == 1 || name[name.size() - digits] != '0')) {
    StrId prefix = m_.strings.find(name.substr(0, name.size() - digits));
    if (prefix != kNoStr && prefix < rangeBind_.size() && rangeBind_[prefix]) {
      uint32_t idx = 0;
      for (size_t i = name.size() - digits; i < name.size(); ++i) idx = idx * 10 + uint32_t(name[i] - '0');
      // an inner block's %f<11> hides %f0..%f10 of the outer %f<2522> only: %f2521 is still the outer one
      // (ptxas takes it so; CUTLASS's inline assembly declares small ranges inside blocks)
      for (uint32_t decl = rangeBind_[prefix]; decl; decl = rangeOuter_[decl - 1]) {
        const RegDecl& d = fn_->regDecls[decl - 1];
        if (idx < d.count) {
          reg = plain && plainReg > d.firstReg ? plainReg : d.firstReg + idx;
          return true;
        }
      }
    }
  }
  if (plain) reg = plainReg;
  return plain;
}

// ---------------------------------------------------------------------------------------------------------------
// Constant expressions (C-like integer arithmetic on 64 bits).

int Parser::binaryPrecedence(int& width) const {
  width = 1;
  if (tok_.kind != Tok::Punct) return -1;
  switch (tok_.punct) {
    case '*':
    case '/': return 10;
    case '+':
    case '-': return 9;
    case '<':
    case '>': {
      Token n = peek();
      if (n.kind == Tok::Punct && n.punct == tok_.punct && n.begin == tok_.begin + 1) {
        width = 2;
        return 8;
      }
      return -1;  // comparisons are not supported in operand expressions (ambiguous with %r<N>)
    }
    case '&': {
      Token n = peek();
      if (n.is('&') && n.begin == tok_.begin + 1) {
        width = 2;
        return 3;
      }
      return 6;
    }
    case '^': return 5;
    case '|': {
      Token n = peek();
      if (n.is('|') && n.begin == tok_.begin + 1) {
        width = 2;
        return 2;
      }
      return -1;  // a lone '|' separates %r|%p
    }
    default: return -1;
  }
}

bool Parser::parseUnary(int64_t& value, unsigned depth) {
  if (depth > 64) {
    error(tok_, "expression nested too deeply");
    return false;
  }
  if (tok_.kind == Tok::Int) {
    if (tok_.malformed) {
      error(tok_, "malformed integer literal '{}'", tok_.text());
      return false;
    }
    if (tok_.overflow) {
      error(tok_, "integer literal '{}' does not fit in 64 bits", tok_.text());
      return false;
    }
    value = static_cast<int64_t>(tok_.intValue);
    next();
    return true;
  }
  if (tok_.kind == Tok::Word && tok_.text() == kWarpSizeName) {
    value = kWarpSize;
    next();
    return true;
  }
  if (tok_.is('(')) {
    next();
    if (!parseConstExpr(value, depth + 1)) return false;
    return expect(')', "to close the parenthesised expression");
  }
  if (tok_.is('-') || tok_.is('~') || tok_.is('!') || tok_.is('+')) {
    char op = tok_.punct;
    next();
    if (!parseUnary(value, depth + 1)) return false;
    uint64_t u = static_cast<uint64_t>(value);
    if (op == '-')
      value = static_cast<int64_t>(0 - u);
    else if (op == '~')
      value = static_cast<int64_t>(~u);
    else if (op == '!')
      value = value == 0;
    return true;
  }
  error(tok_, "expected a constant expression, found {}", describe(tok_));
  return false;
}

bool Parser::parseBinary(int64_t& lhs, int minPrec, unsigned depth) {
  for (;;) {
    int width = 1;
    int prec = binaryPrecedence(width);
    if (prec < 0 || prec < minPrec) return true;
    Token opTok = tok_;
    char op = tok_.punct;
    for (int i = 0; i < width; ++i) next();
    int64_t rhs = 0;
    if (!parseUnary(rhs, depth + 1)) return false;
    for (;;) {
      int w2 = 1;
      int p2 = binaryPrecedence(w2);
      if (p2 <= prec) break;
      if (!parseBinary(rhs, p2, depth + 1)) return false;
    }
    uint64_t a = static_cast<uint64_t>(lhs), b = static_cast<uint64_t>(rhs);
    switch (op) {
      case '*': lhs = static_cast<int64_t>(a * b); break;
      case '+': lhs = static_cast<int64_t>(a + b); break;
      case '-': lhs = static_cast<int64_t>(a - b); break;
      case '/':
        if (rhs == 0) {
          error(opTok, "division by zero in constant expression");
          return false;
        }
        lhs = (rhs == -1) ? static_cast<int64_t>(0 - a) : lhs / rhs;
        break;
      case '<': lhs = b >= 64 ? 0 : static_cast<int64_t>(a << b); break;
      case '>': lhs = b >= 64 ? (lhs < 0 ? -1 : 0) : (lhs >> b); break;
      case '&': lhs = width == 2 ? (lhs && rhs) : static_cast<int64_t>(a & b); break;
      case '^': lhs = static_cast<int64_t>(a ^ b); break;
      case '|': lhs = lhs || rhs; break;
      default: break;
    }
  }
}

bool Parser::parseConstExpr(int64_t& value, unsigned depth) {
  if (!parseUnary(value, depth)) return false;
  return parseBinary(value, 0, depth);
}

// ---------------------------------------------------------------------------------------------------------------
// Module level.

bool Parser::parseEntryBodyAgain(uint32_t function, const ModuleNames& names, const BodyPlace& place) {
  Function& f = m_.functions[function];
  if (!f.isEntry || !f.hasBody || !tok_.is('{')) {
    error(tok_, "no entry body to parse again");
    return false;
  }
  reparseNames_ = &names;
  reparseVisible_ = place.visibleNames;
  dropEntryBody(f);
  std::vector<Variable>().swap(f.locals);  // declared again by the body
  if (m_.debugLocs.empty()) m_.debugLocs.emplace_back();
  fn_ = &f;
  fnIndex_ = function;
  parseBody();
  fn_ = nullptr;
  return !diags_.hasErrors();
}

void Parser::dropEntryBody(Function& f) {
  std::vector<Register>().swap(f.registers);
  std::vector<RegDecl>().swap(f.regDecls);
  std::vector<Label>().swap(f.labels);
  std::vector<Instruction>().swap(f.instructions);
  std::vector<Operand>().swap(f.operands);
  std::vector<Operand>().swap(f.elems);
  std::vector<Mod>().swap(f.mods);
  std::vector<uint32_t>().swap(f.labelRefs);
  std::vector<Prototype>().swap(f.protos);
  std::vector<BlockScope>().swap(f.scopes);
  std::vector<BodyPragma>().swap(f.bodyPragmas);
}

void Parser::parseModule() {
  if (m_.debugLocs.empty()) m_.debugLocs.emplace_back();
  while (tok_.kind != Tok::End && !diags_.full()) {
    if (tok_.kind != Tok::Word) {
      error(tok_, "expected a directive at module scope, found {}", describe(tok_));
      next();
      skipStatement();
      continue;
    }
    std::string_view w = tok_.text();
    if (w == ".version")
      parseVersion();
    else if (w == ".target")
      parseTarget();
    else if (w == ".address_size")
      parseAddressSize();
    else if (w == ".file")
      parseFile();
    else if (w == ".section")
      parseSection();
    else if (w == ".alias")
      parseAlias();
    else if (w == ".pragma") {
      next();
      if (tok_.kind != Tok::String) {
        error(tok_, "expected a string after .pragma");
        skipStatement();
        continue;
      }
      m_.order.push_back(TopItem{TopKind::Pragma, static_cast<uint32_t>(m_.pragmas.size())});
      m_.pragmas.push_back(intern(tok_.text()));
      next();
      expect(';', "after .pragma");
    } else {
      parseDeclaration();
    }
  }
  if (names_) names_->finish();
  if (lex_.unterminatedComment()) diags_.error(tok_.line, tok_.col, "unterminated /* comment");
  if (m_.versionMajor == 0 && !diags_.hasErrors()) diags_.error(1, 1, "missing .version directive");
  if (m_.targets.empty() && !diags_.hasErrors()) diags_.error(1, 1, "missing .target directive");
  for (const DeferredReloc& r : globalRelocs_) {
    SymBinding b = globalSym(r.name);
    if (b.kind != SymKind::Global && b.kind != SymKind::Function) {
      errorAt(r.loc, "undefined symbol '{}' in initializer", m_.str(r.name));
      continue;
    }
    if (r.var >= m_.globals.size() || r.reloc >= m_.globals[r.var].relocs.size()) continue;
    Relocation& rel = m_.globals[r.var].relocs[r.reloc];
    rel.symKind = b.kind;
    rel.index = b.index;
  }
}

void Parser::parseVersion() {
  Token at = tok_;
  next();
  // "9.0" lexes as a decimal floating literal; keep the text to read major.minor exactly.
  if (tok_.kind == Tok::Float && tok_.floatBits == 64 && !tok_.malformed) {
    std::string_view t = tok_.text();
    size_t dot = t.find('.');
    unsigned major = 0, minor = 0;
    bool ok = dot != std::string_view::npos && dot > 0 && dot + 1 < t.size() && t.size() < 12;
    for (size_t i = 0; ok && i < t.size(); ++i) {
      if (i == dot) continue;
      if (t[i] < '0' || t[i] > '9')
        ok = false;
      else if (i < dot)
        major = major * 10 + unsigned(t[i] - '0');
      else
        minor = minor * 10 + unsigned(t[i] - '0');
    }
    if (ok) {
      if (m_.versionMajor != 0) error(at, "duplicate .version directive");
      m_.versionMajor = major;
      m_.versionMinor = minor;
      next();
      return;
    }
  }
  error(tok_, "expected a version number like 9.0 after .version, found {}", describe(tok_));
  skipStatement();
}

void Parser::parseTarget() {
  Token at = tok_;
  next();
  if (!m_.targets.empty()) error(at, "duplicate .target directive");
  for (;;) {
    if (tok_.kind != Tok::Word) {
      error(tok_, "expected a target name, found {}", describe(tok_));
      return;
    }
    std::string_view t = tok_.text();
    StrId id = intern(t);
    if (t.substr(0, 3) == "sm_" || t.substr(0, 8) == "compute_") {
      Target tg;
      tg.name = id;
      size_t i = t[0] == 's' ? 3 : 8;
      unsigned v = 0;
      size_t start = i;
      while (i < t.size() && t[i] >= '0' && t[i] <= '9' && v < 100000) v = v * 10 + unsigned(t[i++] - '0');
      if (i == start) error(tok_, "unknown target '{}'", t);
      if (i < t.size()) {
        if (t.substr(i) == "a")
          tg.archSpecific = true;
        else if (t.substr(i) == "f")
          tg.familySpecific = true;
        else
          error(tok_, "unknown target '{}'", t);
      }
      tg.smVersion = v;
      m_.targets.push_back(tg);
    } else if (t == "texmode_unified") {
      m_.texmodeUnified = true;
      m_.targetOptions.push_back(id);
    } else if (t == "texmode_independent") {
      m_.texmodeIndependent = true;
      m_.targetOptions.push_back(id);
    } else if (t == "map_f64_to_f32") {
      m_.mapF64ToF32 = true;
      m_.targetOptions.push_back(id);
    } else if (t == "debug") {
      m_.debug = true;
      m_.targetOptions.push_back(id);
    } else {
      error(tok_, "unknown .target option '{}'", t);
    }
    next();
    if (!accept(',')) break;
  }
}

void Parser::parseAddressSize() {
  next();
  uint64_t v = 0;
  Token at = tok_;
  if (!expectUint(v, "an address size")) {
    skipStatement();
    return;
  }
  if (v != 32 && v != 64) error(at, ".address_size must be 32 or 64, not {}", v);
  m_.addressSize = static_cast<unsigned>(v);
  m_.hasAddressSize = true;
}

void Parser::parseFile() {
  next();
  FileEntry f;
  if (!expectUint32(f.number, "a file number")) {
    skipStatement();
    return;
  }
  if (tok_.kind != Tok::String) {
    error(tok_, "expected a file name string after .file {}", f.number);
    skipStatement();
    return;
  }
  f.path = intern(tok_.text());
  next();
  if (accept(',')) {
    f.hasTimestamp = true;
    if (!expectUint(f.timestamp, "a timestamp") || !expect(',', "between timestamp and size") ||
        !expectUint(f.size, "a file size")) {
      skipStatement();
      return;
    }
  }
  m_.order.push_back(TopItem{TopKind::File, static_cast<uint32_t>(m_.files.size())});
  m_.files.push_back(f);
}

void Parser::parseSection() {
  next();
  if (tok_.kind != Tok::Word) {
    error(tok_, "expected a section name after .section");
    skipStatement();
    return;
  }
  Section s;
  // Section names may contain dots (.nv.debug_info); glue the pieces the directive splitting separated.
  const char* nameBegin = tok_.begin;
  const char* nameEnd = tok_.begin + tok_.length;
  next();
  while (tok_.kind == Tok::Word && tok_.begin == nameEnd) {
    nameEnd = tok_.begin + tok_.length;
    next();
  }
  s.name = intern(std::string_view(nameBegin, static_cast<size_t>(nameEnd - nameBegin)));
  if (!expect('{', "to open the section")) {
    skipStatement();
    return;
  }
  while (tok_.kind != Tok::End && !tok_.is('}')) {
    if (tok_.kind != Tok::Word) {
      error(tok_, "expected a label or data directive in section, found {}", describe(tok_));
      skipStatement();
      return;
    }
    Token w = tok_;
    next();
    if (tok_.is(':')) {
      next();
      SectionItem item;
      item.isLabel = true;
      item.label = intern(w.text());
      s.items.push_back(std::move(item));
      continue;
    }
    Type t = findType(w.text());
    if (t != Type::b8 && t != Type::b16 && t != Type::b32 && t != Type::b64) {
      error(w, "expected .b8, .b16, .b32 or .b64 in section, found '{}'", w.text());
      skipStatement();
      return;
    }
    SectionItem item;
    item.type = t;
    for (;;) {
      std::pair<StrId, int64_t> v{kNoStr, 0};
      if (tok_.kind == Tok::Word) {
        v.first = intern(tok_.text());
        next();
        if (tok_.is('+') || tok_.is('-')) {
          if (!parseBinary(v.second, 9, 0)) return;  // "+ expr" / "- expr" folded onto 0
        }
      } else if (!parseConstExpr(v.second)) {
        skipStatement();
        return;
      }
      item.values.push_back(v);
      if (item.values.size() > (size_t(1) << 24)) {
        error(tok_, "section data too large");
        return;
      }
      if (!accept(',')) break;
    }
    s.items.push_back(std::move(item));
    accept(';');
  }
  expect('}', "to close the section");
  m_.order.push_back(TopItem{TopKind::Section, static_cast<uint32_t>(m_.sections.size())});
  m_.sections.push_back(std::move(s));
}

void Parser::parseAlias() {
  Token at = tok_;
  next();
  if (tok_.kind != Tok::Word) {
    error(tok_, "expected a function name after .alias");
    skipStatement();
    return;
  }
  StrId alias = intern(tok_.text());
  next();
  if (!expect(',', "after the alias name") || tok_.kind != Tok::Word) {
    skipStatement();
    return;
  }
  StrId target = intern(tok_.text());
  next();
  expect(';', "after .alias");
  SymBinding a = globalSym(alias), t = globalSym(target);
  if (a.kind != SymKind::Function || t.kind != SymKind::Function) {
    error(at, ".alias needs two declared functions");
    return;
  }
  m_.order.push_back(TopItem{TopKind::Alias, static_cast<uint32_t>(m_.aliases.size())});
  m_.aliases.emplace_back(a.index, t.index);
}

}  // namespace parser_detail

using parser_detail::Parser;

std::unique_ptr<Module> parseModule(std::string_view text, Diagnostics& diags, const ParseOptions& options) {
  auto module = std::make_unique<Module>();
  if (text.size() > options.maxInputBytes) {
    diags.error(0, 0, fmt::format("PTX input too large ({} bytes)", text.size()));
    return module;
  }
  // The lexer reads through a NUL-terminated copy so it never needs an end check to stop at a sentinel.
  std::string buffer;
  buffer.reserve(text.size() + 8);
  buffer.append(text);
  buffer.append(8, '\0');
  // Every function is declared with .entry or .func: room for all up front, so that the records a lazy load keeps
  // for the module's life carry no slack from the vector's doubling (up to half of them: 0.3x the text of a module
  // of many small kernels). Reserved pages that a bad count leaves unused are never touched.
  size_t declared = 0;
  for (std::string_view word : {std::string_view(".entry"), std::string_view(".func")})
    for (const char* at = buffer.data(); (at = static_cast<const char*>(memmem(
                                              at, size_t(buffer.data() + text.size() - at), word.data(), word.size())));
         at += word.size())
      ++declared;
  module->functions.reserve(std::min(declared, text.size() / 16));
  Parser parser(buffer.data(), buffer.data() + text.size(), diags, options, *module);
  parser.parseModule();
  if (options.keepText) *options.keepText = std::move(buffer);
  return module;
}

bool parseEntryBody(Module& module, uint32_t function, std::string_view text, const BodyPlace& place,
                    const ModuleNames& names, Diagnostics& diags) {
  if (function >= module.functions.size() || place.offset > text.size() || place.length > text.size() - place.offset ||
      place.start.col == 0 || place.start.col - 1 > place.offset) {
    diags.error(place.start.line, place.start.col, "no body to parse again");
    return false;
  }
  const char* begin = text.data() + place.offset;
  ParseOptions options;  // the parser keeps a reference
  Parser parser(begin, begin + place.length, diags, options, module, place.start);
  return parser.parseEntryBodyAgain(function, names, place);
}

void ModuleNames::bind(StrId name, Binding b) {
  if (name >= first_.size()) first_.resize(std::max<size_t>(name + 1, first_.size() * 2 + 64));
  Entry e{b, count_++};
  if (first_[name].binding.kind == SymKind::None)
    first_[name] = e;
  else
    later_.emplace_back(name, e);
}

ModuleNames::Binding ModuleNames::lookup(StrId name, uint32_t visible) const {
  if (name >= first_.size() || first_[name].binding.kind == SymKind::None || first_[name].sequence >= visible)
    return {};
  Binding b = first_[name].binding;
  auto it = std::lower_bound(later_.begin(), later_.end(), name, [](const auto& e, StrId n) { return e.first < n; });
  for (; it != later_.end() && it->first == name && it->second.sequence < visible; ++it) b = it->second.binding;
  return b;
}

void ModuleNames::finish() {
  std::stable_sort(later_.begin(), later_.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
}

}  // namespace ptx
