// Function bodies: statements, register declarations, operands, instructions.
#include "front/parser.h"

namespace ptx {
namespace parser_detail {

// ---------------------------------------------------------------------------------------------------------------
// Function bodies.

void Parser::parseBody() {
  next();  // '{'
  Function& f = *fn_;
  bodyEnd_ = nullptr;
  eachScratch(f, [](auto& v, auto& scratch) { intoScratch(v, scratch); });
  scope_ = 0;
  blockDepth_ = 0;
  debugLoc_ = 0;
  f.scopes.push_back(BlockScope{0, 0, 0});
  for (uint32_t i = 0; i < f.params.size(); ++i) bindLocal(f.params[i].name, SymBinding{SymKind::Param, i});
  for (uint32_t i = 0; i < f.returns.size(); ++i) {
    if (f.returns[i].space == Space::reg) {
      auto reg = static_cast<uint32_t>(f.registers.size());
      Register r;
      r.name = f.returns[i].name;
      r.type = f.returns[i].type;
      r.decl = kNoIndex;
      f.registers.push_back(r);
      bindRegName(f.returns[i].name, reg);
    } else {
      bindLocal(f.returns[i].name, SymBinding{SymKind::Return, i});
    }
  }
  for (uint32_t i = 0; i < f.params.size(); ++i) {
    if (f.params[i].space == Space::reg) {
      auto reg = static_cast<uint32_t>(f.registers.size());
      Register r;
      r.name = f.params[i].name;
      r.type = f.params[i].type;
      r.decl = kNoIndex;
      f.registers.push_back(r);
      bindRegName(f.params[i].name, reg);
    }
  }
  for (;;) {
    if (diags_.full()) break;
    if (tok_.kind == Tok::End) {
      error(tok_, "unexpected end of input in the body of '{}'", m_.str(f.name));
      break;
    }
    if (tok_.is('}')) {
      if (scope_ == 0) bodyEnd_ = tok_.begin + 1;
      next();
      if (scope_ == 0) break;
      BlockScope& s = f.scopes[scope_];
      s.end = static_cast<uint32_t>(f.instructions.size());
      resolveBlockLabels(fixupMarks_.back());
      fixupMarks_.pop_back();
      size_t mark = undoMarks_.back();
      undoMarks_.pop_back();
      restoreBindings(mark);
      scope_ = s.parent;
      --blockDepth_;
      continue;
    }
    if (tok_.is('{')) {
      if (blockDepth_ >= opt_.maxNesting) {
        error(tok_, "blocks nested too deeply");
        skipStatement();
        continue;
      }
      next();
      ++blockDepth_;
      undoMarks_.push_back(undo_.size());
      fixupMarks_.push_back(fixups_.size());
      auto id = static_cast<uint32_t>(f.scopes.size());
      f.scopes.push_back(BlockScope{scope_, static_cast<uint32_t>(f.instructions.size()), 0});
      scope_ = id;
      continue;
    }
    parseStatement();
  }
  // Close scopes left open by errors.
  fixupMarks_.clear();
  while (!undoMarks_.empty()) {
    size_t mark = undoMarks_.back();
    undoMarks_.pop_back();
    restoreBindings(mark);
  }
  scope_ = 0;
  f.scopes[0].end = static_cast<uint32_t>(f.instructions.size());
  finishFunction();
}

// A label is local to the block that defines it, as ptxas has it: CUTLASS's inline assembly repeats one
// `{ ... LAB_WAIT: ... bra LAB_WAIT; ... }` block per barrier wait. One defined in a block shadows a label of the
// same name outside it until the block closes (the binding is undone then); a second definition in one block is an
// error. Returns the label's id, or kNoIndex after an error.
uint32_t Parser::defineLabel(StrId name, SourceLoc loc, const Token& word) {
  Function& f = *fn_;
  ensure(labelBind_, name);
  const uint32_t before = labelBind_[name];
  uint32_t id = 0;
  if (before && f.labels[before - 1].defined) {
    if (scope_ == 0 || f.labels[before - 1].scope == scope_) {
      error(word, "redefinition of label '{}'", word.text());
      return kNoIndex;
    }
    id = static_cast<uint32_t>(f.labels.size());
    Label l;
    l.name = name;
    l.loc = loc;
    l.scope = scope_;
    f.labels.push_back(l);
    labelBind_[name] = id + 1;
  } else {
    id = labelFor(name, loc);  // new, or named earlier by a branch-target list
  }
  // at the block's end the name goes back to the label outside it (none when this one was named first)
  if (scope_ != 0) undo_.push_back(Undo{Undo::LabelName, name, before && before != id + 1 ? before : 0, {}});
  return id;
}

// At a block's end: the operands in it that named, before its definition, a label the block defines take that label
// now, before the block's bindings are undone.
void Parser::resolveBlockLabels(size_t fixupMark) {
  Function& f = *fn_;
  size_t kept = fixupMark;
  for (size_t i = fixupMark; i < fixups_.size(); ++i) {
    const Fixup& fx = fixups_[i];
    Operand& op = fx.inElems ? f.elems[fx.index] : f.operands[fx.index];
    const StrId name = op.index;
    const uint32_t bound = name < labelBind_.size() ? labelBind_[name] : 0;
    if (bound && f.labels[bound - 1].defined && f.labels[bound - 1].scope == scope_) {
      op.flags &= static_cast<uint8_t>(~kPendingName);
      op.kind = OperandKind::Label;
      op.symKind = SymKind::None;
      op.index = bound - 1;
      continue;
    }
    fixups_[kept++] = fx;
  }
  fixups_.resize(kept);
}

void Parser::finishFunction() {
  Function& f = *fn_;
  // Names that were not declared when used: labels (forward branches) or module symbols declared later.
  for (const Fixup& fx : fixups_) {
    Operand& op = fx.inElems ? f.elems[fx.index] : f.operands[fx.index];
    StrId name = op.index;
    op.flags &= static_cast<uint8_t>(~kPendingName);
    if (name < labelBind_.size() && labelBind_[name]) {
      op.kind = OperandKind::Label;
      op.symKind = SymKind::None;
      op.index = labelBind_[name] - 1;
      continue;
    }
    SymBinding g = globalSym(name);
    if (g.kind != SymKind::None) {
      op.kind = OperandKind::Symbol;
      op.symKind = g.kind;
      op.index = g.index;
      continue;
    }
    errorAt(fx.loc, "undefined identifier '{}'", m_.str(name));
    op.kind = OperandKind::Sink;
    op.index = kNoIndex;
  }
  fixups_.clear();
  for (const Label& l : f.labels)
    if (!l.defined) errorAt(l.loc, "undefined label '{}'", m_.str(l.name));
  for (StrId n : touched_) {
    if (n < regBind_.size()) regBind_[n] = 0;
    if (n < rangeBind_.size()) rangeBind_[n] = 0;
    if (n < labelBind_.size()) labelBind_[n] = 0;
    if (n < localBind_.size()) localBind_[n] = SymBinding{};
  }
  touched_.clear();
  undo_.clear();
  if (opt_.entryBodyParsed && f.isEntry && bodyEnd_ && !diags_.hasErrors()) {
    body_.length = uint64_t(bodyEnd_ - bodyBegin_);
    if (opt_.entryBodyParsed(m_, fnIndex_, body_)) {
      // The scratch vectors get their capacity back for the next body; the body's .loc entries go with it.
      eachScratch(f, [](auto& v, auto& scratch) {
        v.clear();
        v.swap(scratch);
      });
      dropEntryBody(f);
      m_.debugLocs.resize(body_.debugLocs);
      return;
    }
  }
  eachScratch(f, [](auto& v, auto& scratch) { outOfScratch(v, scratch); });
}

void Parser::parseStatement() {
  Function& f = *fn_;
  SourceLoc loc = here();
  if (tok_.is('@')) {
    next();
    bool negated = accept('!');
    if (tok_.kind != Tok::Word) {
      error(tok_, "expected a predicate register after '@', found {}", describe(tok_));
      skipStatement();
      return;
    }
    uint32_t reg = 0;
    if (!lookupRegister(tok_.text(), reg)) {
      error(tok_, "undefined predicate register '{}'", tok_.text());
      skipStatement();
      return;
    }
    next();
    if (tok_.kind != Tok::Word) {
      error(tok_, "expected an instruction after the guard, found {}", describe(tok_));
      skipStatement();
      return;
    }
    Token mnemonic = tok_;
    next();
    parseInstruction(mnemonic, reg, negated, loc);
    return;
  }
  if (tok_.kind != Tok::Word) {
    error(tok_, "expected an instruction, label or directive, found {}", describe(tok_));
    next();
    skipStatement();
    return;
  }
  Token word = tok_;
  next();
  if (tok_.is(':')) {
    next();
    const uint32_t id = defineLabel(intern(word.text()), loc, word);
    if (id == kNoIndex) return;
    Label& l = f.labels[id];
    l.defined = true;
    l.loc = loc;
    l.scope = scope_;
    l.target = static_cast<uint32_t>(f.instructions.size());
    if (tok_.kind == Tok::Word &&
        (tok_.text() == ".branchtargets" || tok_.text() == ".calltargets" || tok_.text() == ".callprototype"))
      parseLabelDirective(id, word);
    return;
  }
  std::string_view w = word.text();
  if (w[0] == '.') {
    Space space;
    if (w == ".reg")
      parseRegDecl();
    else if (spaceDirective(w, space))
      parseLocalVariable(space, loc);
    else if (w == ".loc")
      parseLoc();
    else if (w == ".pragma") {
      if (tok_.kind != Tok::String) {
        error(tok_, "expected a string after .pragma");
        skipStatement();
        return;
      }
      f.bodyPragmas.push_back(BodyPragma{static_cast<uint32_t>(f.instructions.size()), scope_, intern(tok_.text()),
                                         SourceLoc{word.line, word.col}});
      next();
      expect(';', "after .pragma");
    } else {
      error(word, "unexpected directive '{}' in a function body", w);
      skipStatement();
    }
    return;
  }
  parseInstruction(word, kNoIndex, false, loc);
}

void Parser::parseRegDecl() {
  Function& f = *fn_;
  uint8_t vec = 0;
  Type type = Type::none;
  while (tok_.kind == Tok::Word && tok_.text()[0] == '.') {
    std::string_view w = tok_.text();
    if (w == ".v2" || w == ".v4" || w == ".v8")
      vec = static_cast<uint8_t>(w[2] - '0');
    else if (w == ".align") {
      next();
      uint32_t ignored;
      if (!expectUint32(ignored, "an alignment")) {
        skipStatement();
        return;
      }
      continue;
    } else {
      Type t = findType(w);
      if (t == Type::none || type != Type::none) {
        error(tok_, "unexpected '{}' in .reg declaration", w);
        skipStatement();
        return;
      }
      type = t;
    }
    next();
  }
  if (type == Type::none) {
    error(tok_, "expected a type in .reg declaration, found {}", describe(tok_));
    skipStatement();
    return;
  }
  for (;;) {
    if (tok_.kind != Tok::Word || tok_.text()[0] == '.') {
      error(tok_, "expected a register name, found {}", describe(tok_));
      skipStatement();
      return;
    }
    Token nameTok = tok_;
    StrId name = intern(tok_.text());
    next();
    RegDecl d;
    d.name = name;
    d.type = type;
    d.vec = vec;
    d.scope = scope_;
    d.position = static_cast<uint32_t>(f.instructions.size());
    d.loc = SourceLoc{nameTok.line, nameTok.col};
    d.firstReg = static_cast<uint32_t>(f.registers.size());
    if (tok_.is('<')) {
      next();
      uint32_t n = 0;
      Token at = tok_;
      if (!expectUint32(n, "a register count") || !expect('>', "to close the register range")) {
        skipStatement();
        return;
      }
      if (n > (1u << 22) || f.registers.size() + n > (1u << 24)) {
        error(at, "too many registers declared ({})", n);
        skipStatement();
        return;
      }
      d.isRange = true;
      d.count = n;
    }
    auto declIndex = static_cast<uint32_t>(f.regDecls.size());
    if (d.isRange) {
      if (name < rangeBind_.size() && rangeBind_[name] && f.regDecls[rangeBind_[name] - 1].scope == scope_)
        error(nameTok, "duplicate declaration of register range '{}'", nameTok.text());
      for (uint32_t i = 0; i < d.count; ++i) {
        Register r;
        r.name = name;
        r.rangeIndex = static_cast<int32_t>(i);
        r.type = type;
        r.vec = vec;
        r.decl = declIndex;
        f.registers.push_back(r);
      }
      bindRange(name, declIndex);
    } else {
      if (name < regBind_.size() && regBind_[name]) {
        uint32_t old = regBind_[name] - 1;
        uint32_t od = f.registers[old].decl;
        if (od == kNoIndex || f.regDecls[od].scope == scope_)
          error(nameTok, "duplicate declaration of register '{}'", nameTok.text());
      }
      Register r;
      r.name = name;
      r.type = type;
      r.vec = vec;
      r.decl = declIndex;
      f.registers.push_back(r);
      bindRegName(name, d.firstReg);
      // A vector register's components (`v.x` .. `v.w`, or `.r` .. `.a`) are scalar registers of their own, right
      // after it: operands name them (parseRegisterWord), and the vector itself has no storage of its own.
      static constexpr std::string_view kComponents[] = {"x", "y", "z", "w"};
      for (unsigned c = 0; c < vec && c < 4; ++c) {
        Register component;
        component.name = intern(fmt::format("{}.{}", nameTok.text(), kComponents[c]));
        component.type = type;
        component.decl = declIndex;
        f.registers.push_back(component);
      }
    }
    f.regDecls.push_back(d);
    if (accept(',')) continue;
    expect(';', "after .reg declaration");
    return;
  }
}

void Parser::parseLocalVariable(Space space, SourceLoc loc) {
  Function& f = *fn_;
  for (;;) {
    Variable v;
    v.loc = loc;
    v.scope = scope_;
    v.position = static_cast<uint32_t>(f.instructions.size());
    bool more = false;
    if (!parseVariable(v, space, Linkage::none, true, more)) {
      skipStatement();
      return;
    }
    auto index = static_cast<uint32_t>(f.locals.size());
    StrId name = v.name;
    f.locals.push_back(std::move(v));
    bindLocal(name, SymBinding{SymKind::Local, index});
    if (!more) return;
  }
}

void Parser::parseLoc() {
  DebugLoc d;
  if (!expectUint32(d.file, "a file number") || !expectUint32(d.line, "a line number") ||
      !expectUint32(d.column, "a column number")) {
    skipStatement();
    return;
  }
  while (accept(',')) {
    if (tok_.isWord("function_name")) {
      next();
      if (tok_.kind != Tok::Word) {
        error(tok_, "expected a label after function_name");
        skipStatement();
        return;
      }
      d.functionName = intern(tok_.text());
      next();
      if (tok_.is('+') || tok_.is('-')) {
        if (!parseBinary(d.functionNameOffset, 9, 0)) {
          skipStatement();
          return;
        }
      }
    } else if (tok_.isWord("inlined_at")) {
      next();
      DebugLoc at;
      if (!expectUint32(at.file, "a file number") || !expectUint32(at.line, "a line number") ||
          !expectUint32(at.column, "a column number")) {
        skipStatement();
        return;
      }
      // The call site may itself be inlined: a following `inlined_at` chains to the previous .loc's chain.
      d.inlinedAt = static_cast<uint32_t>(m_.debugLocs.size());
      m_.debugLocs.push_back(at);
    } else {
      error(tok_, "unexpected {} in .loc", describe(tok_));
      skipStatement();
      return;
    }
  }
  debugLoc_ = static_cast<uint32_t>(m_.debugLocs.size());
  m_.debugLocs.push_back(d);
}

void Parser::parseLabelDirective(uint32_t label, const Token& nameTok) {
  Function& f = *fn_;
  std::string_view w = tok_.text();
  next();
  if (w == ".callprototype") {
    Prototype p;
    if (tok_.is('(')) {
      if (!parseParamList(p.returns, true)) {
        skipStatement();
        return;
      }
    }
    if (!tok_.isWord("_")) {
      error(tok_, "expected '_' in .callprototype, found {}", describe(tok_));
      skipStatement();
      return;
    }
    next();
    if (tok_.is('(')) {
      if (!parseParamList(p.params, true)) {
        skipStatement();
        return;
      }
    }
    if (tok_.isWord(".noreturn")) {
      p.noreturn = true;
      next();
    }
    expect(';', "after .callprototype");
    Label& l = f.labels[label];
    l.kind = LabelKind::CallPrototype;
    l.listFirst = static_cast<uint32_t>(f.protos.size());
    l.listCount = 1;
    f.protos.push_back(std::move(p));
    return;
  }
  bool branch = w == ".branchtargets";
  std::vector<uint32_t> refs;
  for (;;) {
    if (tok_.kind != Tok::Word) {
      error(tok_, "expected a name in {}, found {}", w, describe(tok_));
      skipStatement();
      return;
    }
    StrId name = intern(tok_.text());
    if (branch) {
      refs.push_back(labelFor(name, here()));
    } else {
      SymBinding g = globalSym(name);
      if (g.kind != SymKind::Function) {
        error(tok_, "'{}' in .calltargets is not a declared function", tok_.text());
      }
      refs.push_back(g.index);
    }
    next();
    if (refs.size() > (1u << 20)) {
      error(tok_, "target list too long");
      skipStatement();
      return;
    }
    if (!accept(',')) break;
  }
  expect(';', "after the target list");
  (void)nameTok;
  Label& l = f.labels[label];
  l.kind = branch ? LabelKind::BranchTargets : LabelKind::CallTargets;
  l.listFirst = static_cast<uint32_t>(f.labelRefs.size());
  l.listCount = static_cast<uint32_t>(refs.size());
  f.labelRefs.insert(f.labelRefs.end(), refs.begin(), refs.end());
}

// Resolves an identifier that is not a %-register: register declared with a plain name, a local symbol, a label,
// a module symbol, or (not yet declared) a pending name fixed up when the function ends.
void Parser::resolveName(StrId name, Operand& out) {
  // A register: a plainly declared name, or one of a range declared without '%' (`.reg .b64 rd<18>;` then `rd6`,
  // as in the inline assembly of cuFFTDx's code that NVIDIA's nvJitLink writes out as PTX).
  if (uint32_t reg = 0; lookupRegister(m_.str(name), reg)) {
    out.kind = OperandKind::Reg;
    out.index = reg;
    return;
  }
  SymBinding b = localSym(name);
  if (b.kind == SymKind::None) b = globalSym(name);
  if (b.kind != SymKind::None) {
    out.kind = OperandKind::Symbol;
    out.symKind = b.kind;
    out.index = b.index;
    return;
  }
  if (name < labelBind_.size() && labelBind_[name]) {
    out.kind = OperandKind::Label;
    out.index = labelBind_[name] - 1;
    return;
  }
  out.kind = OperandKind::Symbol;
  out.symKind = SymKind::None;
  out.flags |= kPendingName;
  out.index = name;
}

static uint16_t parseSelector(std::string_view s, bool& ok) {
  ok = true;
  if (s.empty()) return 0;
  if (s.size() == 1) {
    static constexpr std::string_view comps = "xyzwrgba";
    size_t i = comps.find(s[0]);
    if (i == std::string_view::npos) ok = false;
    return ok ? makeSel(SelKind::Comp, 1, static_cast<unsigned>(i)) : 0;
  }
  SelKind k = s[0] == 'b' ? SelKind::Byte : s[0] == 'h' ? SelKind::Half : SelKind::None;
  unsigned maxDigit = k == SelKind::Byte ? 7 : 3;
  if (k == SelKind::None || s.size() > 5) {
    ok = false;
    return 0;
  }
  unsigned digits = 0;
  for (size_t i = 1; i < s.size(); ++i) {
    unsigned d = static_cast<unsigned>(s[i] - '0');
    if (s[i] < '0' || d > maxDigit) {
      ok = false;
      return 0;
    }
    digits = (digits << 3) | d;
  }
  return makeSel(k, static_cast<unsigned>(s.size() - 1), digits);
}

bool Parser::parseRegisterWord(std::string_view text, const Token& at, Operand& out) {
  size_t dot = text.find('.');
  std::string_view name = text.substr(0, dot);
  std::string_view selText = dot == std::string_view::npos ? std::string_view() : text.substr(dot + 1);
  bool selOk = true;
  uint16_t sel = parseSelector(selText, selOk);
  uint32_t reg = 0;
  if (lookupRegister(name, reg)) {
    out.kind = OperandKind::Reg;
    out.index = reg;
  } else {
    SpecialReg sr;
    if (findSpecialReg(name, sr)) {
      out.kind = OperandKind::Special;
      out.index = static_cast<uint32_t>(sr);
      if (!selText.empty() && (!specialRegHasComponents(sr) || selKind(sel) != SelKind::Comp || selDigit(sel, 0) > 3)) {
        error(at, "special register {} has no component '.{}'", name, selText);
        return false;
      }
    } else {
      if (!selText.empty()) {
        error(at, "undefined register '{}'", name);
        return false;
      }
      resolveName(intern(name), out);
      return true;
    }
  }
  if (!selOk) {
    error(at, "invalid register selector '.{}'", selText);
    return false;
  }
  if (out.kind == OperandKind::Reg && fn_->registers[reg].vec && fn_->registers[reg].rangeIndex < 0 &&
      selKind(sel) == SelKind::Comp && selCount(sel) == 1) {
    if (selComponent(sel) >= fn_->registers[reg].vec) {
      error(at, "register {} has no component '.{}'", name, selText);
      return false;
    }
    out.index = reg + 1 + selComponent(sel);  // the component's own register (parseRegDecl)
    return true;
  }
  out.sel = sel;
  return true;
}

uint32_t Parser::commitOperands(std::vector<Operand>& pool, size_t scratchStart, bool elemsPool) {
  auto first = static_cast<uint32_t>(pool.size());
  for (size_t i = scratchStart; i < scratch_.size(); ++i) {
    if (scratch_[i].flags & kPendingName)
      fixups_.push_back(Fixup{elemsPool, static_cast<uint32_t>(pool.size()),
                              SourceLoc{static_cast<uint32_t>(scratch_[i].value >> 32),
                                        static_cast<uint32_t>(scratch_[i].value & 0xffffffff)}});
    pool.push_back(scratch_[i]);
    if (scratch_[i].flags & kPendingName) pool.back().value = 0;
  }
  scratch_.resize(scratchStart);
  return first;
}

bool Parser::parseList(Operand& out, char close, OperandKind kind, unsigned depth) {
  Token open = tok_;
  next();
  size_t start = scratch_.size();
  if (!tok_.is(close)) {
    for (;;) {
      Operand e;
      if (!parseOperand(e, depth + 1)) return false;
      scratch_.push_back(e);
      if (scratch_.size() - start > 4096) {
        error(open, "operand list too long");
        return false;
      }
      if (accept(',')) continue;
      break;
    }
  }
  if (!tok_.is(close)) {
    error(tok_, "expected ',' or '{}' in the list opened at {}:{}, found {}", close, open.line, open.col,
          describe(tok_));
    return false;
  }
  next();
  auto count = scratch_.size() - start;
  out.kind = kind;
  out.index = commitOperands(fn_->elems, start, true);
  out.value = static_cast<int64_t>(count);
  return true;
}

bool Parser::parseAddress(Operand& out, unsigned depth) {
  Token open = tok_;
  next();  // '['
  Operand base;
  if (tok_.kind == Tok::Word && tok_.text() != kWarpSizeName) {
    Token w = tok_;
    if (tok_.text()[0] == '%') {
      if (!parseRegisterWord(tok_.text(), tok_, base)) return false;
    } else {
      resolveName(intern(tok_.text()), base);
    }
    next();
    if (base.kind == OperandKind::Special) {
      error(w, "special register in an address");
      return false;
    }
    if (base.flags & kPendingName) base.value = (int64_t(w.line) << 32) | w.col;  // position for the fixup's message
  } else if (tok_.kind == Tok::Int || tok_.kind == Tok::Word || tok_.is('-') || tok_.is('(') || tok_.is('~')) {
    int64_t v = 0;
    if (!parseConstExpr(v)) return false;
    base.kind = OperandKind::Imm;
    base.value = v;
  } else if (tok_.is('{')) {
    if (!parseList(base, '}', OperandKind::Vector, depth + 1)) return false;
  } else {
    error(tok_, "expected an address, found {}", describe(tok_));
    return false;
  }
  if (tok_.is(',')) {
    // [tex, coords] / [surf, {x, y}]: a bracketed tuple.
    size_t start = scratch_.size();
    scratch_.push_back(base);
    while (accept(',')) {
      Operand e;
      if (!parseOperand(e, depth + 1)) return false;
      scratch_.push_back(e);
      if (scratch_.size() - start > 16) {
        error(open, "too many elements in brackets");
        return false;
      }
    }
    if (!expect(']', "to close the bracketed operand")) return false;
    auto count = scratch_.size() - start;
    out.kind = OperandKind::Bracket;
    out.index = commitOperands(fn_->elems, start, true);
    out.value = static_cast<int64_t>(count);
    return true;
  }
  int64_t offset = 0;
  if (tok_.is('+') || tok_.is('-')) {
    if (base.kind == OperandKind::Imm) {
      if (!parseBinary(base.value, 0, depth)) return false;
    } else if (!parseBinary(offset, 0, depth)) {
      return false;
    }
  }
  if (!expect(']', "to close the address")) return false;
  out = Operand{};
  out.kind = OperandKind::Address;
  switch (base.kind) {
    case OperandKind::Reg:
      if (base.sel) {
        error(open, "register selector in an address");
        return false;
      }
      out.index = base.index;
      out.value = offset;
      break;
    case OperandKind::Symbol:
      out.symKind = base.symKind;
      out.index = base.index;
      out.flags = base.flags;
      if (base.flags & kPendingName) {
        // Addresses of undeclared names: remember the position in the high bits until committed.
        out.value = base.value;
        if (offset != 0) {
          error(open, "offset on an undeclared symbol");
          return false;
        }
      } else {
        out.value = base.value + offset;
      }
      break;
    case OperandKind::Imm:
      out.flags = kAddrAbsolute;
      out.value = base.value;
      break;
    case OperandKind::Label: error(open, "label in an address"); return false;
    default: error(open, "unsupported address form"); return false;
  }
  return true;
}

// `arr[i]`, `arr[%r]`, `arr[%r+i]` (PTX "Arrays as Operands"): the address of element i of arr, scaled by the
// size of arr's scalar element type (ptxas scales a `.v2 .u32` or a two-dimensional `.u32` array by 4 too). A
// constant index becomes a byte offset on the symbol; a register index is recorded in pendingArrayIndexReg_ and
// lowerArrayElements computes the address into a fresh register before the instruction.
bool Parser::parseArrayElement(Operand& sym, const Token& nameTok) {
  Token open = tok_;
  next();  // '['
  const Variable* var = nullptr;
  if (sym.kind == OperandKind::Symbol && !(sym.flags & kPendingName)) {
    if (sym.symKind == SymKind::Global)
      var = &m_.globals[sym.index];
    else if (sym.symKind == SymKind::Local)
      var = &fn_->locals[sym.index];
    else if (sym.symKind == SymKind::Param)
      var = &fn_->params[sym.index];
  }
  if (!var || var->dims.empty()) {
    error(nameTok, "array indexing on '{}', which is not an array variable", nameTok.text());
    return false;
  }
  int64_t index = 0;
  if (tok_.kind == Tok::Word && tok_.text()[0] == '%') {
    Operand reg;
    if (!parseRegisterWord(tok_.text(), tok_, reg)) return false;
    if (reg.kind != OperandKind::Reg || reg.sel ||
        (typeSize(fn_->registers[reg.index].type) != 4 && typeSize(fn_->registers[reg.index].type) != 8)) {
      error(tok_, "an array index register must be a 32- or 64-bit register");
      return false;
    }
    next();
    pendingArrayIndexReg_ = reg.index;
    if ((tok_.is('+') || tok_.is('-')) && !parseBinary(index, 0, 0)) return false;
  } else if (!parseConstExpr(index)) {
    return false;
  }
  if (!expect(']', "to close the array index")) return false;
  if (tok_.is('[')) {
    error(open, "only one array index is allowed in an operand");
    return false;
  }
  uint64_t scale = std::max(1u, typeSize(var->type));
  sym.value = static_cast<int64_t>(static_cast<uint64_t>(index) * scale);
  sym.flags |= kArrayElement;
  return true;
}

uint32_t Parser::newTempRegister(Type type) {
  Function& f = *fn_;
  RegDecl d;
  d.name = intern(fmt::format("%__cuemu_a{}", tempRegisters_++));
  d.type = type;
  d.firstReg = static_cast<uint32_t>(f.registers.size());
  d.scope = scope_;
  d.position = static_cast<uint32_t>(f.instructions.size());
  Register r;
  r.name = d.name;
  r.type = type;
  r.decl = static_cast<uint32_t>(f.regDecls.size());
  f.registers.push_back(r);
  f.regDecls.push_back(d);
  return d.firstReg;
}

void Parser::pushSynthetic(Opcode op, std::initializer_list<Mod> mods, std::initializer_list<Operand> operands,
                           SourceLoc loc) {
  Function& f = *fn_;
  Instruction inst;
  inst.opcode = op;
  inst.loc = loc;
  inst.debugLoc = debugLoc_;
  inst.modFirst = static_cast<uint32_t>(f.mods.size());
  inst.modCount = static_cast<uint16_t>(mods.size());
  f.mods.insert(f.mods.end(), mods.begin(), mods.end());
  decodeMods(inst, mods.begin(), mods.size());
  inst.firstOperand = static_cast<uint32_t>(f.operands.size());
  inst.numOperands = static_cast<uint16_t>(operands.size());
  f.operands.insert(f.operands.end(), operands.begin(), operands.end());
  f.instructions.push_back(inst);
}

// ld/st/ldu read an array element as the address of a memory operand (`ld.shared.u32 %r, arr[2]` is
// `[arr+8]`); mov and cvta take it as an address value (`mov.u64 %rd, arr[2]` is `arr+8`). A register index
// becomes `mov %t, arr+off; mad %t, %index, scale, %t` into a new register %t, in the instruction's address
// width, written before the instruction (unguarded: it only writes %t).
bool Parser::lowerArrayElements(Instruction& inst, size_t scratchStart) {
  bool memory = inst.opcode == Opcode::Ld || inst.opcode == Opcode::St || inst.opcode == Opcode::Ldu;
  size_t nextReg = 0;
  for (size_t i = scratchStart; i < scratch_.size(); ++i) {
    Operand& op = scratch_[i];
    if (!(op.flags & kArrayElement)) continue;
    op.flags &= static_cast<uint8_t>(~kArrayElement);
    if (memory) op.kind = OperandKind::Address;
    if (nextReg >= arrayIndexRegs_.size() || arrayIndexRegs_[nextReg].first != i) continue;
    uint32_t indexReg = arrayIndexRegs_[nextReg++].second;
    unsigned width = memory ? m_.addressSize : typeSize(inst.type()) * 8;
    if (width != 32 && width != 64) {
      errorAt(inst.loc, "a register-indexed array element needs a 32- or 64-bit instruction type");
      return false;
    }
    const Variable& var = op.symKind == SymKind::Global  ? m_.globals[op.index]
                          : op.symKind == SymKind::Local ? fn_->locals[op.index]
                                                         : fn_->params[op.index];
    int64_t scale = std::max(1u, typeSize(var.type));
    Type wide = width == 64 ? Type::b64 : Type::b32;
    Mod uW = width == 64 ? Mod::type_u64 : Mod::type_u32;
    uint32_t addr = newTempRegister(wide);
    Operand symbol = op;
    symbol.kind = OperandKind::Symbol;
    Operand addrReg;
    addrReg.kind = OperandKind::Reg;
    addrReg.index = addr;
    Operand index;
    index.kind = OperandKind::Reg;
    index.index = indexReg;
    Operand scaleImm;
    scaleImm.kind = OperandKind::Imm;
    scaleImm.value = scale;
    unsigned indexWidth = typeSize(fn_->registers[indexReg].type) * 8;
    pushSynthetic(Opcode::Mov, {uW}, {addrReg, symbol}, inst.loc);
    if (indexWidth == width) {
      pushSynthetic(Opcode::Mad, {Mod::lo, uW}, {addrReg, index, scaleImm, addrReg}, inst.loc);
    } else if (indexWidth == 32) {
      pushSynthetic(Opcode::Mad, {Mod::wide, Mod::type_u32}, {addrReg, index, scaleImm, addrReg}, inst.loc);
    } else {
      Operand narrow;
      narrow.kind = OperandKind::Reg;
      narrow.index = newTempRegister(Type::b32);
      pushSynthetic(Opcode::Cvt, {Mod::type_u32, Mod::type_u64}, {narrow, index}, inst.loc);
      pushSynthetic(Opcode::Mad, {Mod::lo, Mod::type_u32}, {addrReg, narrow, scaleImm, addrReg}, inst.loc);
    }
    op = Operand{};
    op.kind = memory ? OperandKind::Address : OperandKind::Reg;
    op.index = addr;
  }
  return true;
}

bool Parser::parseOperand(Operand& out, unsigned depth) {
  if (depth > 8) {
    error(tok_, "operand nested too deeply");
    return false;
  }
  out = Operand{};
  switch (tok_.kind) {
    case Tok::Word: {
      Token w = tok_;
      std::string_view t = tok_.text();
      if (t == "_") {
        out.kind = OperandKind::Sink;
        next();
        if (!tok_.is('|')) return true;
        out.kind = OperandKind::Reg;  // `_|%p`: the pair below keeps index == kNoIndex for the sink
        out.index = kNoIndex;
      }
      if (t[0] == '.') {
        error(tok_, "unexpected {} where an operand was expected", describe(tok_));
        return false;
      }
      if (t == kWarpSizeName) {
        int64_t v = 0;
        if (!parseConstExpr(v)) return false;
        out.kind = OperandKind::Imm;
        out.value = v;
        return true;
      }
      if (out.kind == OperandKind::Reg) {
        // sink before '|', already consumed
      } else if (uint32_t vectorReg = 0; t[0] == '%' || (t.find('.') != std::string_view::npos &&
                                                         lookupRegister(t.substr(0, t.find('.')), vectorReg))) {
        // (a component of a vector register with a plain name: `.reg .v2 .f32 mx;` then `mx.x`, as CUTLASS's
        // inline assembly writes it)
        if (!parseRegisterWord(t, tok_, out)) return false;
        next();
      } else {
        resolveName(intern(t), out);
        next();
        if (tok_.is('[')) {
          if (depth > 0) {
            error(w, "an array element cannot be part of an operand list");
            return false;
          }
          return parseArrayElement(out, w);
        }
      }
      if (out.kind == OperandKind::Reg && tok_.is('|')) {
        next();
        Operand second;
        if (tok_.kind != Tok::Word || !parseRegisterWord(tok_.text(), tok_, second) ||
            second.kind != OperandKind::Reg) {
          error(tok_, "expected a predicate register after '|'");
          return false;
        }
        next();
        out.kind = OperandKind::RegPair;
        out.value = second.index;
        return true;
      }
      if (out.kind == OperandKind::Symbol && (tok_.is('+') || tok_.is('-'))) {
        int64_t off = 0;
        if (!parseBinary(off, 0, depth)) return false;
        if (out.flags & kPendingName) {
          error(w, "offset on undeclared symbol '{}'", t);
          return false;
        }
        out.value = off;
        return true;
      }
      if (out.flags & kPendingName) out.value = (int64_t(w.line) << 32) | w.col;
      return true;
    }
    case Tok::Float:
      if (tok_.malformed) {
        error(tok_, "malformed floating-point literal '{}'", tok_.text());
        return false;
      }
      out.kind = OperandKind::FImm;
      out.immBits = tok_.floatBits;
      out.value = static_cast<int64_t>(tok_.intValue);
      next();
      return true;
    case Tok::Int: {
      int64_t v = 0;
      if (!parseConstExpr(v)) return false;
      out.kind = OperandKind::Imm;
      out.value = v;
      return true;
    }
    case Tok::Punct:
      switch (tok_.punct) {
        case '{': {
          if (!parseList(out, '}', OperandKind::Vector, depth)) return false;
          if (!tok_.is('|')) return true;
          next();
          Operand pred;
          if (tok_.kind != Tok::Word || !parseRegisterWord(tok_.text(), tok_, pred) || pred.kind != OperandKind::Reg) {
            error(tok_, "expected a predicate register after '|'");
            return false;
          }
          next();
          // The predicate follows the vector's elements (nothing was added to elems since they were).
          if (fn_->elems.size() != out.index + static_cast<size_t>(out.value)) {
            error(tok_, "nested operand lists before '|'");
            return false;
          }
          fn_->elems.push_back(pred);
          out.flags |= kVectorPredicate;
          return true;
        }
        case '(':
          if (inCall_) return parseList(out, ')', OperandKind::List, depth);
          {
            int64_t v = 0;
            if (!parseConstExpr(v)) return false;
            out.kind = OperandKind::Imm;
            out.value = v;
            return true;
          }
        case '[': return parseAddress(out, depth);
        case '!': {
          next();
          if (tok_.kind != Tok::Word || !parseRegisterWord(tok_.text(), tok_, out) || out.kind != OperandKind::Reg) {
            error(tok_, "expected a predicate register after '!'");
            return false;
          }
          next();
          out.flags |= kOperandNegate;
          return true;
        }
        case '-': {
          Token n = peek();
          if (n.kind == Tok::Word && n.text()[0] == '%') {
            next();
            if (!parseRegisterWord(tok_.text(), tok_, out) || out.kind != OperandKind::Reg) {
              error(tok_, "expected a register after '-'");
              return false;
            }
            next();
            out.flags |= kOperandMinus;
            return true;
          }
          if (n.kind == Tok::Float) {
            next();
            if (tok_.malformed) {
              error(tok_, "malformed floating-point literal '{}'", tok_.text());
              return false;
            }
            out.kind = OperandKind::FImm;
            out.immBits = tok_.floatBits;
            uint64_t bits = tok_.intValue ^ (tok_.floatBits == 32 ? 0x80000000ull : (1ull << 63));
            out.value = static_cast<int64_t>(bits);
            next();
            return true;
          }
          int64_t v = 0;
          if (!parseConstExpr(v)) return false;
          out.kind = OperandKind::Imm;
          out.value = v;
          return true;
        }
        case '~': {
          int64_t v = 0;
          if (!parseConstExpr(v)) return false;
          out.kind = OperandKind::Imm;
          out.value = v;
          return true;
        }
        default: break;
      }
      [[fallthrough]];
    default: error(tok_, "expected an operand, found {}", describe(tok_)); return false;
  }
}

static bool isSetLike(Opcode op) {
  return op == Opcode::Set || op == Opcode::Setp || op == Opcode::Vset || op == Opcode::Vset2 || op == Opcode::Vset4;
}

void Parser::decodeMods(Instruction& inst, const Mod* mods, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    Mod m = mods[i];
    uint8_t v = modValue(m);
    switch (modCategory(m)) {
      case ModCat::Type:
        if (inst.numTypes < 4) inst.types[inst.numTypes++] = static_cast<Type>(v);
        break;
      case ModCat::Rounding: inst.rounding = static_cast<Rounding>(v); break;
      case ModCat::CmpOp: inst.cmp = static_cast<CmpOp>(v); break;
      case ModCat::MulMode:
        if (isSetLike(inst.opcode) && m != Mod::wide)
          inst.cmp = m == Mod::lo ? CmpOp::lo : CmpOp::hi;
        else
          inst.mulMode = static_cast<MulMode>(v);
        break;
      case ModCat::RedOp:
        if ((isSetLike(inst.opcode) || inst.opcode == Opcode::Lop3) &&
            (m == Mod::and_ || m == Mod::or_ || m == Mod::xor_))
          inst.boolOp = m == Mod::and_ ? BoolOp::and_ : m == Mod::or_ ? BoolOp::or_ : BoolOp::xor_;
        else
          inst.redOp = static_cast<RedOp>(v);
        break;
      case ModCat::Space:
        if (inst.space == Space::none)
          inst.space = static_cast<Space>(v);
        else if (inst.space2 == Space::none)
          inst.space2 = static_cast<Space>(v);
        break;
      case ModCat::Vec: inst.vec = v; break;
      case ModCat::CacheOp: inst.cacheOp = static_cast<CacheOp>(v); break;
      case ModCat::Eviction: inst.eviction = static_cast<Eviction>(v); break;
      case ModCat::Scope: inst.scope = static_cast<Scope>(v); break;
      case ModCat::Sem: inst.sem = static_cast<Sem>(v); break;
      case ModCat::ShflMode: inst.shfl = static_cast<ShflMode>(v); break;
      case ModCat::VoteMode: inst.vote = static_cast<VoteMode>(v); break;
      case ModCat::Flag:
        inst.flags |= uint64_t(1) << v;
        if (m == Mod::uni && (inst.opcode == Opcode::Vote || inst.opcode == Opcode::VoteSync))
          inst.vote = VoteMode::uni;
        break;
      case ModCat::Other: break;
    }
  }
}

void Parser::parseInstruction(const Token& mnemonic, uint32_t guard, bool guardNegated, SourceLoc loc) {
  Function& f = *fn_;
  std::string_view text = mnemonic.text();
  size_t dot = text.find('.');
  std::string_view base = text.substr(0, dot);
  const front::Tables& tables = front::tables();
  uint32_t list = tables.mnemonics.find(base);
  if (list == front::KeywordMap::kMissing) {
    error(mnemonic, "unknown instruction '{}'", base);
    skipStatement();
    return;
  }
  modScratch_.clear();
  while (dot != std::string_view::npos) {
    size_t nextDot = text.find('.', dot + 1);
    std::string_view part = text.substr(dot, nextDot == std::string_view::npos ? nextDot : nextDot - dot);
    Mod m = findMod(part);
    if (m == Mod::count_) {
      error(mnemonic, "unknown modifier '{}' in '{}'", part, text);
      skipStatement();
      return;
    }
    modScratch_.push_back(m);
    dot = nextDot;
    if (modScratch_.size() > 32) {
      error(mnemonic, "too many modifiers in '{}'", text.substr(0, 80));
      skipStatement();
      return;
    }
  }
  const front::OpcodeCandidate* chosen = nullptr;
  for (const front::OpcodeCandidate& c : tables.candidateLists[list]) {
    bool all = true;
    for (unsigned i = 0; i < c.numRequired && all; ++i) {
      bool found = false;
      for (Mod m : modScratch_) {
        if (m == c.required[i]) {
          found = true;
          break;
        }
        std::string_view have = modText(m), want = modText(c.required[i]);
        if (have.size() > want.size() + 2 && have.substr(0, want.size()) == want &&
            have.substr(want.size(), 2) == "::") {
          found = true;
          break;
        }
      }
      all = found;
    }
    if (all) {
      chosen = &c;
      break;
    }
  }
  if (!chosen) {
    error(mnemonic, "'{}' is not a valid instruction (missing a sub-operation modifier)", text.substr(0, 80));
    skipStatement();
    return;
  }
  Instruction inst;
  inst.opcode = chosen->opcode;
  inst.guard = guard;
  inst.guardNegated = guardNegated;
  inst.loc = loc;
  inst.debugLoc = debugLoc_;
  inst.modFirst = static_cast<uint32_t>(f.mods.size());
  inst.modCount = static_cast<uint16_t>(modScratch_.size());
  for (Mod m : modScratch_) f.mods.push_back(m);
  decodeMods(inst, modScratch_.data(), modScratch_.size());
  size_t start = scratch_.size();
  inCall_ = inst.opcode == Opcode::Call;
  arrayIndexRegs_.clear();
  if (!tok_.is(';')) {
    for (;;) {
      Operand op;
      pendingArrayIndexReg_ = kNoIndex;
      if (!parseOperand(op, 0)) {
        scratch_.resize(start);
        f.mods.resize(inst.modFirst);
        skipStatement();
        return;
      }
      if (pendingArrayIndexReg_ != kNoIndex) arrayIndexRegs_.emplace_back(scratch_.size(), pendingArrayIndexReg_);
      scratch_.push_back(op);
      if (scratch_.size() - start > 256) {
        error(mnemonic, "too many operands");
        scratch_.resize(start);
        f.mods.resize(inst.modFirst);
        skipStatement();
        return;
      }
      if (accept(',')) continue;
      break;
    }
  }
  if (!tok_.is(';')) {
    error(tok_, "expected ',' or ';' after operand of '{}', found {}", text.substr(0, 80), describe(tok_));
    scratch_.resize(start);
    f.mods.resize(inst.modFirst);
    skipStatement();
    return;
  }
  next();
  if (!lowerArrayElements(inst, start)) {
    scratch_.resize(start);
    f.mods.resize(inst.modFirst);
    return;
  }
  // A scalar ld/ldu/st may name its data register as a vector of one, `ld.global.b32 { %r1 }, [%rd1]`, as
  // Triton's inline assembly does and ptxas accepts: that is the register itself.
  if ((inst.opcode == Opcode::Ld || inst.opcode == Opcode::Ldu || inst.opcode == Opcode::St) && !inst.vec) {
    const size_t data = start + (inst.opcode == Opcode::St ? 1 : 0);
    if (data < scratch_.size() && scratch_[data].kind == OperandKind::Vector && scratch_[data].value == 1)
      scratch_[data] = f.elems[size_t(scratch_[data].index)];
  }
  inst.numOperands = static_cast<uint16_t>(scratch_.size() - start);
  inst.firstOperand = commitOperands(f.operands, start, false);
  f.instructions.push_back(inst);
}

}  // namespace parser_detail
}  // namespace ptx
