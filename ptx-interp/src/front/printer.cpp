#include "ptx/print.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

namespace ptx {
namespace {

std::string_view spaceText(Space s) {
  switch (s) {
    case Space::global: return ".global";
    case Space::shared: return ".shared";
    case Space::shared_cta: return ".shared::cta";
    case Space::shared_cluster: return ".shared::cluster";
    case Space::local: return ".local";
    case Space::const_: return ".const";
    case Space::param: return ".param";
    case Space::param_entry: return ".param::entry";
    case Space::param_func: return ".param::func";
    case Space::tex: return ".tex";
    case Space::reg: return ".reg";
    default: return "";
  }
}

std::string_view linkageText(Linkage l) {
  switch (l) {
    case Linkage::extern_: return ".extern ";
    case Linkage::visible: return ".visible ";
    case Linkage::weak: return ".weak ";
    case Linkage::common: return ".common ";
    default: return "";
  }
}

class Printer {
 public:
  explicit Printer(const Module& m) : m_(m) {}

  std::string out;

  void module();
  void variable(const Variable& v, bool isParam);
  void function(const Function& f);
  void operand(const Function& f, const Operand& op);
  void instruction(const Function& f, const Instruction& inst);

 private:
  void append(std::string_view s) { out.append(s.data(), s.size()); }
  void appendInt(int64_t v) { fmt::format_to(std::back_inserter(out), "{}", v); }
  void appendUint(uint64_t v) { fmt::format_to(std::back_inserter(out), "{}", v); }
  void initializer(const Variable& v);
  void paramList(const std::vector<Param>& ps);
  void body(const Function& f);
  void label(const Function& f, const Label& l);
  void debugLoc(uint32_t index);
  std::string_view name(StrId id) const { return m_.str(id); }
  void regName(const Function& f, uint32_t reg) {
    if (reg >= f.registers.size()) {
      append("%<bad>");
      return;
    }
    const Register& r = f.registers[reg];
    append(name(r.name));
    if (r.rangeIndex >= 0) appendInt(r.rangeIndex);
  }
  void symbolName(const Function* f, SymKind kind, uint32_t index) {
    switch (kind) {
      case SymKind::Global:
        if (index < m_.globals.size()) return append(name(m_.globals[index].name));
        break;
      case SymKind::Function:
        if (index < m_.functions.size()) return append(name(m_.functions[index].name));
        break;
      case SymKind::Local:
        if (f && index < f->locals.size()) return append(name(f->locals[index].name));
        break;
      case SymKind::Param:
        if (f && index < f->params.size()) return append(name(f->params[index].name));
        break;
      case SymKind::Return:
        if (f && index < f->returns.size()) return append(name(f->returns[index].name));
        break;
      default: break;
    }
    append("<bad-symbol>");
  }
  void selector(uint16_t sel) {
    if (!sel) return;
    static constexpr char comps[] = "xyzwrgba";
    switch (selKind(sel)) {
      case SelKind::Comp:
        out += '.';
        out += comps[selDigit(sel, 0) & 7];
        return;
      case SelKind::Byte:
      case SelKind::Half:
        out += selKind(sel) == SelKind::Byte ? ".b" : ".h";
        for (unsigned i = 0; i < selCount(sel); ++i) out += char('0' + selDigit(sel, i));
        return;
      default: return;
    }
  }

  const Module& m_;
};

void Printer::module() {
  fmt::format_to(std::back_inserter(out), ".version {}.{}\n", m_.versionMajor, m_.versionMinor);
  if (!m_.targets.empty() || !m_.targetOptions.empty()) {
    append(".target ");
    bool first = true;
    for (const Target& t : m_.targets) {
      if (!first) append(", ");
      first = false;
      append(name(t.name));
    }
    for (StrId o : m_.targetOptions) {
      if (!first) append(", ");
      first = false;
      append(name(o));
    }
    out += '\n';
  }
  if (m_.hasAddressSize) fmt::format_to(std::back_inserter(out), ".address_size {}\n", m_.addressSize);
  out += '\n';
  for (const TopItem& item : m_.order) {
    switch (item.kind) {
      case TopKind::Global:
        variable(m_.globals[item.index], false);
        append(";\n");
        break;
      case TopKind::Function: function(m_.functions[item.index]); break;
      case TopKind::File: {
        const FileEntry& fe = m_.files[item.index];
        fmt::format_to(std::back_inserter(out), ".file {} \"{}\"", fe.number, name(fe.path));
        if (fe.hasTimestamp) fmt::format_to(std::back_inserter(out), ", {}, {}", fe.timestamp, fe.size);
        out += '\n';
        break;
      }
      case TopKind::Section: {
        const Section& s = m_.sections[item.index];
        fmt::format_to(std::back_inserter(out), ".section {}\n{{\n", name(s.name));
        for (const SectionItem& si : s.items) {
          if (si.isLabel) {
            fmt::format_to(std::back_inserter(out), "{}:\n", name(si.label));
            continue;
          }
          append(typeName(si.type));
          out += ' ';
          for (size_t i = 0; i < si.values.size(); ++i) {
            if (i) append(", ");
            const auto& [sym, val] = si.values[i];
            if (sym != kNoStr) {
              append(name(sym));
              if (val) {
                out += '+';
                appendInt(val);
              }
            } else {
              appendInt(val);
            }
          }
          out += '\n';
        }
        append("}\n");
        break;
      }
      case TopKind::Pragma:
        fmt::format_to(std::back_inserter(out), ".pragma \"{}\";\n", name(m_.pragmas[item.index]));
        break;
      case TopKind::Alias: {
        const auto& [a, b] = m_.aliases[item.index];
        fmt::format_to(std::back_inserter(out), ".alias {}, {};\n", name(m_.functions[a].name),
                       name(m_.functions[b].name));
        break;
      }
    }
  }
}

static uint32_t halfToFloatBits(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  if (exp == 0x1f) return sign | 0x7f800000 | (man << 13);
  if (exp == 0) {
    if (man == 0) return sign;
    int e = -1;
    do {
      man <<= 1;
      ++e;
    } while (!(man & 0x400));
    return sign | (uint32_t(127 - 15 - e) << 23) | ((man & 0x3ff) << 13);
  }
  return sign | ((exp + 127 - 15) << 23) | (man << 13);
}

void Printer::initializer(const Variable& v) {
  unsigned esize = typeSize(v.type);
  if (esize == 0) return;
  uint64_t count = v.init.size() / esize;
  bool braces = !v.dims.empty() || v.vec;
  // Sized arrays are zero-filled, so trailing zero elements need not be written.
  uint64_t last = count;
  if (braces) {
    while (last > 1) {
      uint64_t off = (last - 1) * esize;
      bool zero = true;
      for (unsigned i = 0; i < esize && zero; ++i) zero = v.init[off + i] == 0;
      for (const Relocation& r : v.relocs) zero = zero && !(r.offset >= off && r.offset < off + esize);
      if (!zero) break;
      --last;
    }
  }
  append(" = ");
  if (braces) out += '{';
  size_t relocCursor = 0;
  std::vector<const Relocation*> relocs;
  relocs.reserve(v.relocs.size());
  for (const Relocation& r : v.relocs) relocs.push_back(&r);
  std::sort(relocs.begin(), relocs.end(),
            [](const Relocation* a, const Relocation* b) { return a->offset < b->offset; });
  for (uint64_t i = 0; i < (braces ? last : std::min<uint64_t>(count, 1)); ++i) {
    if (i) append(", ");
    uint64_t off = i * esize;
    while (relocCursor < relocs.size() && relocs[relocCursor]->offset < off) ++relocCursor;
    if (relocCursor < relocs.size() && relocs[relocCursor]->offset == off) {
      const Relocation& r = *relocs[relocCursor++];
      std::string target(r.symKind == SymKind::Function && r.index < m_.functions.size()
                             ? name(m_.functions[r.index].name)
                         : r.index < m_.globals.size() ? name(m_.globals[r.index].name)
                                                       : std::string_view("<bad>"));
      if (r.isMask) {
        fmt::format_to(std::back_inserter(out), "0x{:X}(", r.maskValue);
        if (r.generic)
          fmt::format_to(std::back_inserter(out), "generic({})", target);
        else
          append(target);
        if (r.addend) fmt::format_to(std::back_inserter(out), "+{}", r.addend);
        out += ')';
      } else {
        if (r.generic)
          fmt::format_to(std::back_inserter(out), "generic({})", target);
        else
          append(target);
        if (r.addend) fmt::format_to(std::back_inserter(out), "+{}", r.addend);
      }
      continue;
    }
    uint64_t bits = 0;
    for (unsigned b = 0; b < esize && b < 8; ++b) bits |= uint64_t(v.init[off + b]) << (8 * b);
    if (typeKind(v.type) == TypeKind::Float) {
      if (esize == 8)
        fmt::format_to(std::back_inserter(out), "0d{:016X}", bits);
      else if (esize == 4)
        fmt::format_to(std::back_inserter(out), "0f{:08X}", bits);
      else if (v.type == Type::bf16)
        fmt::format_to(std::back_inserter(out), "0f{:08X}", uint32_t(bits << 16));
      else if (v.type == Type::f16)
        fmt::format_to(std::back_inserter(out), "0f{:08X}", halfToFloatBits(uint16_t(bits)));
      else
        appendUint(bits);
    } else if (typeKind(v.type) == TypeKind::Signed) {
      int64_t sv = esize == 1   ? int64_t(int8_t(bits))
                   : esize == 2 ? int64_t(int16_t(bits))
                   : esize == 4 ? int64_t(int32_t(bits))
                                : int64_t(bits);
      appendInt(sv);
    } else {
      appendUint(bits);
    }
  }
  if (braces) out += '}';
}

void Printer::variable(const Variable& v, bool isParam) {
  if (!isParam) append(linkageText(v.linkage));
  append(spaceText(v.space));
  if (v.managed) append(" .attribute(.managed)");
  if (v.align) fmt::format_to(std::back_inserter(out), " .align {}", v.align);
  if (v.vec) fmt::format_to(std::back_inserter(out), " .v{}", v.vec);
  out += ' ';
  append(typeName(v.type));
  if (v.ptr) {
    append(" .ptr");
    if (v.ptrSpace != Space::none) {
      out += ' ';
      append(spaceText(v.ptrSpace));
    }
    if (v.ptrAlign) fmt::format_to(std::back_inserter(out), " .align {}", v.ptrAlign);
  }
  out += ' ';
  append(name(v.name));
  for (uint64_t d : v.dims) {
    if (d)
      fmt::format_to(std::back_inserter(out), "[{}]", d);
    else
      append("[]");
  }
  if (v.hasInit && !v.opaqueInit.empty()) {
    append(" = {");
    for (size_t i = 0; i < v.opaqueInit.size(); ++i) {
      const OpaqueField& f = v.opaqueInit[i];
      fmt::format_to(std::back_inserter(out), "{}{} = ", i ? ", " : " ", name(f.field));
      if (f.word != kNoStr)
        append(name(f.word));
      else
        appendInt(f.value);
    }
    append(" }");
  } else if (v.hasInit) {
    initializer(v);
  }
}

void Printer::paramList(const std::vector<Param>& ps) {
  append("(\n");
  for (size_t i = 0; i < ps.size(); ++i) {
    append("\t");
    variable(ps[i], true);
    append(i + 1 < ps.size() ? ",\n" : "\n");
  }
  append(")");
}

void Printer::function(const Function& f) {
  append(linkageText(f.linkage));
  append(f.isEntry ? ".entry " : ".func ");
  if (!f.isEntry && !f.returns.empty()) {
    paramList(f.returns);
    out += ' ';
  }
  append(name(f.name));
  if (!f.params.empty() || f.isEntry || f.hasBody) {
    if (f.params.empty())
      append("()");
    else
      paramList(f.params);
  }
  out += '\n';
  if (f.noreturn) append(".noreturn\n");
  auto dims = [&](const char* d, const uint32_t(&v)[3], uint8_t n) {
    if (!n) return;
    append(d);
    for (uint8_t i = 0; i < n; ++i) fmt::format_to(std::back_inserter(out), "{}{}", i ? ", " : " ", v[i]);
    out += '\n';
  };
  dims(".maxntid", f.maxntid, f.numMaxntid);
  dims(".reqntid", f.reqntid, f.numReqntid);
  dims(".reqnctapercluster", f.reqnctapercluster, f.numReqnctapercluster);
  if (f.minnctapersm) fmt::format_to(std::back_inserter(out), ".minnctapersm {}\n", f.minnctapersm);
  if (f.maxnctapersm) fmt::format_to(std::back_inserter(out), ".maxnctapersm {}\n", f.maxnctapersm);
  if (f.maxnreg) fmt::format_to(std::back_inserter(out), ".maxnreg {}\n", f.maxnreg);
  if (f.maxclusterrank) fmt::format_to(std::back_inserter(out), ".maxclusterrank {}\n", f.maxclusterrank);
  if (f.explicitcluster) append(".explicitcluster\n");
  if (f.blocksareclusters) append(".blocksareclusters\n");
  for (StrId p : f.pragmas) fmt::format_to(std::back_inserter(out), ".pragma \"{}\";\n", name(p));
  if (!f.hasBody) {
    append(";\n");
    return;
  }
  body(f);
}

void Printer::debugLoc(uint32_t index) {
  if (index == 0 || index >= m_.debugLocs.size()) return;
  const DebugLoc& d = m_.debugLocs[index];
  fmt::format_to(std::back_inserter(out), "\t.loc {} {} {}", d.file, d.line, d.column);
  if (d.functionName != kNoStr) {
    fmt::format_to(std::back_inserter(out), ", function_name {}", name(d.functionName));
    if (d.functionNameOffset) fmt::format_to(std::back_inserter(out), "+{}", d.functionNameOffset);
  }
  if (d.inlinedAt && d.inlinedAt < m_.debugLocs.size()) {
    const DebugLoc& at = m_.debugLocs[d.inlinedAt];
    fmt::format_to(std::back_inserter(out), ", inlined_at {} {} {}", at.file, at.line, at.column);
  }
  out += '\n';
}

void Printer::label(const Function& f, const Label& l) {
  append(name(l.name));
  out += ':';
  switch (l.kind) {
    case LabelKind::Code: break;
    case LabelKind::BranchTargets:
    case LabelKind::CallTargets:
      append(l.kind == LabelKind::BranchTargets ? " .branchtargets " : " .calltargets ");
      for (uint32_t i = 0; i < l.listCount && l.listFirst + i < f.labelRefs.size(); ++i) {
        if (i) append(", ");
        uint32_t ref = f.labelRefs[l.listFirst + i];
        if (l.kind == LabelKind::BranchTargets)
          append(ref < f.labels.size() ? name(f.labels[ref].name) : "<bad>");
        else
          append(ref < m_.functions.size() ? name(m_.functions[ref].name) : "<bad>");
      }
      out += ';';
      break;
    case LabelKind::CallPrototype: {
      append(" .callprototype ");
      if (l.listFirst < f.protos.size()) {
        const Prototype& p = f.protos[l.listFirst];
        if (!p.returns.empty()) {
          paramList(p.returns);
          out += ' ';
        }
        append("_ ");
        if (!p.params.empty()) paramList(p.params);
        if (p.noreturn) append(" .noreturn");
      }
      out += ';';
      break;
    }
  }
  out += '\n';
}

void Printer::body(const Function& f) {
  append("{\n");
  size_t n = f.instructions.size();
  // Items attached to positions, each vector in source order.
  std::vector<uint32_t> labelOrder;
  for (uint32_t i = 0; i < f.labels.size(); ++i)
    if (f.labels[i].defined) labelOrder.push_back(i);
  std::stable_sort(labelOrder.begin(), labelOrder.end(),
                   [&](uint32_t a, uint32_t b) { return f.labels[a].target < f.labels[b].target; });
  size_t rd = 0, lv = 0, pr = 0, lb = 0;
  uint32_t nextScope = 1, current = 0;
  uint32_t lastLoc = 0;
  auto emitItems = [&](uint32_t pos, bool force) {
    bool any = false;
    while (rd < f.regDecls.size() && f.regDecls[rd].position <= pos && (force || f.regDecls[rd].scope == current)) {
      const RegDecl& d = f.regDecls[rd++];
      append("\t.reg ");
      if (d.vec) fmt::format_to(std::back_inserter(out), ".v{} ", d.vec);
      append(typeName(d.type));
      out += ' ';
      append(name(d.name));
      if (d.isRange) fmt::format_to(std::back_inserter(out), "<{}>", d.count);
      append(";\n");
      any = true;
    }
    while (lv < f.locals.size() && f.locals[lv].position <= pos && (force || f.locals[lv].scope == current)) {
      out += '\t';
      variable(f.locals[lv++], false);
      append(";\n");
      any = true;
    }
    while (pr < f.bodyPragmas.size() && f.bodyPragmas[pr].position <= pos &&
           (force || f.bodyPragmas[pr].scope == current)) {
      fmt::format_to(std::back_inserter(out), "\t.pragma \"{}\";\n", name(f.bodyPragmas[pr++].text));
      any = true;
    }
    while (lb < labelOrder.size() && f.labels[labelOrder[lb]].target <= pos &&
           (force || f.labels[labelOrder[lb]].scope == current)) {
      label(f, f.labels[labelOrder[lb++]]);
      any = true;
    }
    return any;
  };
  for (uint32_t pos = 0; pos <= n; ++pos) {
    for (;;) {
      emitItems(pos, false);
      if (nextScope < f.scopes.size() && f.scopes[nextScope].begin == pos && f.scopes[nextScope].parent == current) {
        append("\t{\n");
        current = nextScope++;
        continue;
      }
      if (current != 0 && f.scopes[current].end == pos) {
        append("\t}\n");
        current = f.scopes[current].parent;
        continue;
      }
      break;
    }
    emitItems(pos, true);
    if (pos == n) break;
    const Instruction& inst = f.instructions[pos];
    if (inst.debugLoc != lastLoc) {
      debugLoc(inst.debugLoc);
      lastLoc = inst.debugLoc;
    }
    out += '\t';
    instruction(f, inst);
    out += '\n';
  }
  while (current != 0) {
    append("\t}\n");
    current = f.scopes[current].parent;
  }
  append("}\n");
}

void Printer::operand(const Function& f, const Operand& op) {
  switch (op.kind) {
    case OperandKind::None: append("<none>"); return;
    case OperandKind::Reg:
      if (op.negated()) out += '!';
      if (op.flags & kOperandMinus) out += '-';
      regName(f, op.index);
      selector(op.sel);
      return;
    case OperandKind::RegPair:
      if (op.index == kNoIndex)
        out += '_';
      else
        regName(f, op.index);
      out += '|';
      regName(f, static_cast<uint32_t>(op.value));
      return;
    case OperandKind::Imm: appendInt(op.value); return;
    case OperandKind::FImm:
      if (op.immBits == 32)
        fmt::format_to(std::back_inserter(out), "0f{:08X}", uint32_t(op.value));
      else
        fmt::format_to(std::back_inserter(out), "0d{:016X}", uint64_t(op.value));
      return;
    case OperandKind::Symbol:
      symbolName(&f, op.symKind, op.index);
      if (op.value) {
        out += '+';
        appendInt(op.value);
      }
      return;
    case OperandKind::Address:
      out += '[';
      if (op.flags & kAddrAbsolute) {
        appendInt(op.value);
      } else {
        if (op.symKind == SymKind::None)
          regName(f, op.index);
        else
          symbolName(&f, op.symKind, op.index);
        if (op.value) {
          out += '+';
          appendInt(op.value);
        }
      }
      out += ']';
      return;
    case OperandKind::Vector:
    case OperandKind::List:
    case OperandKind::Bracket: {
      char open = op.kind == OperandKind::Vector ? '{' : op.kind == OperandKind::List ? '(' : '[';
      char close = op.kind == OperandKind::Vector ? '}' : op.kind == OperandKind::List ? ')' : ']';
      out += open;
      for (int64_t i = 0; i < op.value; ++i) {
        if (i) append(", ");
        size_t e = op.index + static_cast<size_t>(i);
        if (e < f.elems.size()) operand(f, f.elems[e]);
      }
      out += close;
      if ((op.flags & kVectorPredicate) && op.index + static_cast<size_t>(op.value) < f.elems.size()) {
        out += '|';
        operand(f, f.elems[op.index + static_cast<size_t>(op.value)]);
      }
      return;
    }
    case OperandKind::Label: append(op.index < f.labels.size() ? name(f.labels[op.index].name) : "<bad>"); return;
    case OperandKind::Special:
      append(specialRegName(static_cast<SpecialReg>(op.index)));
      selector(op.sel);
      return;
    case OperandKind::Sink: out += '_'; return;
  }
}

void Printer::instruction(const Function& f, const Instruction& inst) {
  if (inst.guard != kNoIndex) {
    out += '@';
    if (inst.guardNegated) out += '!';
    regName(f, inst.guard);
    out += ' ';
  }
  append(opcodeMnemonic(inst.opcode));
  for (uint32_t i = 0; i < inst.modCount; ++i) append(modText(f.mods[inst.modFirst + i]));
  for (uint32_t i = 0; i < inst.numOperands; ++i) {
    append(i ? ", " : " ");
    operand(f, f.operands[inst.firstOperand + i]);
  }
  out += ';';
}

// ---------------------------------------------------------------------------------------------------------------
// Comparison.

class Differ {
 public:
  Differ(const Module& a, const Module& b) : a_(a), b_(b) {}
  std::string run();

 private:
  bool var(const Variable& x, const Variable& y, const std::string& where);
  bool params(const std::vector<Param>& x, const std::vector<Param>& y, const std::string& where);
  bool fn(const Function& x, const Function& y);
  bool operand(const Function& fx, const Function& fy, const Operand& x, const Operand& y);
  bool loc(uint32_t x, uint32_t y);
  std::string_view sa(StrId id) const { return a_.str(id); }
  std::string_view sb(StrId id) const { return b_.str(id); }
  bool fail(std::string why) {
    if (why_.empty()) why_ = std::move(why);
    return false;
  }
  const Module& a_;
  const Module& b_;
  std::string why_;
};

bool Differ::var(const Variable& x, const Variable& y, const std::string& where) {
  if (sa(x.name) != sb(y.name)) return fail(fmt::format("{}: name {} vs {}", where, sa(x.name), sb(y.name)));
  if (x.space != y.space || x.type != y.type || x.linkage != y.linkage || x.vec != y.vec || x.align != y.align ||
      x.ptr != y.ptr || x.ptrSpace != y.ptrSpace || x.ptrAlign != y.ptrAlign || x.dims != y.dims || x.size != y.size ||
      x.hasInit != y.hasInit || x.managed != y.managed)
    return fail(fmt::format("{}: declaration of '{}' differs", where, sa(x.name)));
  if (x.init != y.init) return fail(fmt::format("{}: initializer of '{}' differs", where, sa(x.name)));
  if (x.relocs.size() != y.relocs.size()) return fail(fmt::format("{}: relocations of '{}' differ", where, sa(x.name)));
  if (x.opaqueInit.size() != y.opaqueInit.size())
    return fail(fmt::format("{}: initializer of '{}' differs", where, sa(x.name)));
  for (size_t i = 0; i < x.opaqueInit.size(); ++i)
    if (sa(x.opaqueInit[i].field) != sb(y.opaqueInit[i].field) ||
        sa(x.opaqueInit[i].word) != sb(y.opaqueInit[i].word) || x.opaqueInit[i].value != y.opaqueInit[i].value)
      return fail(fmt::format("{}: initializer of '{}' differs", where, sa(x.name)));
  for (size_t i = 0; i < x.relocs.size(); ++i) {
    const Relocation &p = x.relocs[i], &q = y.relocs[i];
    if (p.offset != q.offset || p.symKind != q.symKind || p.index != q.index || p.addend != q.addend ||
        p.generic != q.generic || p.isMask != q.isMask || p.maskValue != q.maskValue)
      return fail(fmt::format("{}: relocation {} of '{}' differs", where, i, sa(x.name)));
  }
  return true;
}

bool Differ::params(const std::vector<Param>& x, const std::vector<Param>& y, const std::string& where) {
  if (x.size() != y.size()) return fail(fmt::format("{}: parameter count {} vs {}", where, x.size(), y.size()));
  for (size_t i = 0; i < x.size(); ++i)
    if (!var(x[i], y[i], where)) return false;
  return true;
}

bool Differ::loc(uint32_t x, uint32_t y) {
  if ((x == 0) != (y == 0)) return false;
  if (x == 0) return true;
  const DebugLoc &p = a_.debugLocs[x], &q = b_.debugLocs[y];
  if (p.file != q.file || p.line != q.line || p.column != q.column || p.functionNameOffset != q.functionNameOffset ||
      sa(p.functionName) != sb(q.functionName))
    return false;
  return loc(p.inlinedAt, q.inlinedAt);
}

bool Differ::operand(const Function& fx, const Function& fy, const Operand& x, const Operand& y) {
  if (x.kind != y.kind || x.flags != y.flags || x.sel != y.sel || x.symKind != y.symKind) return false;
  switch (x.kind) {
    case OperandKind::Vector:
    case OperandKind::List:
    case OperandKind::Bracket:
      if (x.value != y.value) return false;
      for (int64_t i = 0; i < x.value + ((x.flags & kVectorPredicate) ? 1 : 0); ++i)
        if (!operand(fx, fy, fx.elems[x.index + i], fy.elems[y.index + i])) return false;
      return true;
    case OperandKind::Label: return sa(fx.labels[x.index].name) == sb(fy.labels[y.index].name);
    case OperandKind::FImm: return x.immBits == y.immBits && x.value == y.value;
    default: return x.index == y.index && x.value == y.value;
  }
}

bool Differ::fn(const Function& x, const Function& y) {
  std::string where(sa(x.name));
  if (sa(x.name) != sb(y.name)) return fail(fmt::format("function {} vs {}", sa(x.name), sb(y.name)));
  if (x.isEntry != y.isEntry || x.hasBody != y.hasBody || x.noreturn != y.noreturn || x.linkage != y.linkage ||
      x.minnctapersm != y.minnctapersm || x.maxnctapersm != y.maxnctapersm || x.maxnreg != y.maxnreg ||
      x.maxclusterrank != y.maxclusterrank || x.explicitcluster != y.explicitcluster ||
      x.blocksareclusters != y.blocksareclusters || x.numMaxntid != y.numMaxntid || x.numReqntid != y.numReqntid ||
      x.numReqnctapercluster != y.numReqnctapercluster || !std::equal(x.maxntid, x.maxntid + 3, y.maxntid) ||
      !std::equal(x.reqntid, x.reqntid + 3, y.reqntid) ||
      !std::equal(x.reqnctapercluster, x.reqnctapercluster + 3, y.reqnctapercluster) ||
      x.pragmas.size() != y.pragmas.size())
    return fail(where + ": header differs");
  if (!params(x.returns, y.returns, where) || !params(x.params, y.params, where)) return false;
  if (x.registers.size() != y.registers.size()) return fail(where + ": register count differs");
  for (size_t i = 0; i < x.registers.size(); ++i) {
    const Register &p = x.registers[i], &q = y.registers[i];
    if (sa(p.name) != sb(q.name) || p.rangeIndex != q.rangeIndex || p.type != q.type || p.vec != q.vec)
      return fail(fmt::format("{}: register {} differs", where, i));
  }
  if (x.locals.size() != y.locals.size()) return fail(where + ": local variable count differs");
  for (size_t i = 0; i < x.locals.size(); ++i) {
    if (!var(x.locals[i], y.locals[i], where)) return false;
    if (x.locals[i].position != y.locals[i].position) return fail(where + ": local variable position differs");
  }
  if (x.scopes.size() != y.scopes.size()) return fail(where + ": block structure differs");
  for (size_t i = 0; i < x.scopes.size(); ++i)
    if (x.scopes[i].parent != y.scopes[i].parent || x.scopes[i].begin != y.scopes[i].begin ||
        x.scopes[i].end != y.scopes[i].end)
      return fail(fmt::format("{}: block {} differs", where, i));
  // Labels by name.
  size_t definedX = 0, definedY = 0;
  for (const Label& l : x.labels) definedX += l.defined;
  for (const Label& l : y.labels) definedY += l.defined;
  if (definedX != definedY) return fail(where + ": label count differs");
  for (const Label& l : x.labels) {
    if (!l.defined) continue;
    // the n-th defined label of its name (block-scoped labels repeat names) against y's n-th
    size_t nth = 0;
    for (const Label& k : x.labels) {
      if (&k == &l) break;
      nth += k.defined && k.name == l.name;
    }
    const Label* m = nullptr;
    for (const Label& k : y.labels)
      if (k.defined && sb(k.name) == sa(l.name) && nth-- == 0) {
        m = &k;
        break;
      }
    if (!m || !m->defined || m->target != l.target || m->kind != l.kind || m->listCount != l.listCount)
      return fail(fmt::format("{}: label {} differs", where, sa(l.name)));
    if (l.kind == LabelKind::CallPrototype) {
      const Prototype &p = x.protos[l.listFirst], &q = y.protos[m->listFirst];
      if (!params(p.returns, q.returns, where) || !params(p.params, q.params, where) || p.noreturn != q.noreturn)
        return fail(fmt::format("{}: prototype {} differs", where, sa(l.name)));
    } else if (l.kind == LabelKind::BranchTargets) {
      for (uint32_t i = 0; i < l.listCount; ++i)
        if (sa(x.labels[x.labelRefs[l.listFirst + i]].name) != sb(y.labels[y.labelRefs[m->listFirst + i]].name))
          return fail(fmt::format("{}: branch targets {} differ", where, sa(l.name)));
    } else if (l.kind == LabelKind::CallTargets) {
      for (uint32_t i = 0; i < l.listCount; ++i)
        if (x.labelRefs[l.listFirst + i] != y.labelRefs[m->listFirst + i])
          return fail(fmt::format("{}: call targets {} differ", where, sa(l.name)));
    }
  }
  if (x.bodyPragmas.size() != y.bodyPragmas.size()) return fail(where + ": pragmas differ");
  for (size_t i = 0; i < x.bodyPragmas.size(); ++i)
    if (x.bodyPragmas[i].position != y.bodyPragmas[i].position ||
        sa(x.bodyPragmas[i].text) != sb(y.bodyPragmas[i].text))
      return fail(where + ": pragmas differ");
  if (x.instructions.size() != y.instructions.size()) return fail(where + ": instruction count differs");
  for (size_t i = 0; i < x.instructions.size(); ++i) {
    const Instruction &p = x.instructions[i], &q = y.instructions[i];
    std::string at = fmt::format("{}: instruction {} (line {})", where, i, p.loc.line);
    if (p.opcode != q.opcode || p.numTypes != q.numTypes || !std::equal(p.types, p.types + 4, q.types) ||
        p.rounding != q.rounding || p.cmp != q.cmp || p.boolOp != q.boolOp || p.redOp != q.redOp ||
        p.mulMode != q.mulMode || p.space != q.space || p.space2 != q.space2 || p.vec != q.vec ||
        p.cacheOp != q.cacheOp || p.eviction != q.eviction || p.scope != q.scope || p.sem != q.sem ||
        p.shfl != q.shfl || p.vote != q.vote || p.flags != q.flags || p.guard != q.guard ||
        p.guardNegated != q.guardNegated || p.modCount != q.modCount || p.numOperands != q.numOperands)
      return fail(at + ": opcode or modifiers differ");
    if (!std::equal(x.mods.begin() + p.modFirst, x.mods.begin() + p.modFirst + p.modCount, y.mods.begin() + q.modFirst))
      return fail(at + ": modifiers differ");
    for (uint32_t k = 0; k < p.numOperands; ++k)
      if (!operand(x, y, x.operands[p.firstOperand + k], y.operands[q.firstOperand + k]))
        return fail(fmt::format("{}: operand {} differs", at, k));
    if (!loc(p.debugLoc, q.debugLoc)) return fail(at + ": .loc differs");
  }
  return true;
}

std::string Differ::run() {
  if (a_.versionMajor != b_.versionMajor || a_.versionMinor != b_.versionMinor) return "version differs";
  if (a_.targets.size() != b_.targets.size() || a_.targetOptions.size() != b_.targetOptions.size() ||
      a_.addressSize != b_.addressSize || a_.hasAddressSize != b_.hasAddressSize)
    return "target or address size differs";
  for (size_t i = 0; i < a_.targets.size(); ++i)
    if (sa(a_.targets[i].name) != sb(b_.targets[i].name)) return "target differs";
  if (a_.globals.size() != b_.globals.size()) return "global count differs";
  for (size_t i = 0; i < a_.globals.size(); ++i)
    if (!var(a_.globals[i], b_.globals[i], "module")) return why_;
  if (a_.functions.size() != b_.functions.size()) return "function count differs";
  for (size_t i = 0; i < a_.functions.size(); ++i)
    if (!fn(a_.functions[i], b_.functions[i])) return why_;
  if (a_.files.size() != b_.files.size()) return "file table differs";
  for (size_t i = 0; i < a_.files.size(); ++i)
    if (a_.files[i].number != b_.files[i].number || sa(a_.files[i].path) != sb(b_.files[i].path) ||
        a_.files[i].timestamp != b_.files[i].timestamp || a_.files[i].size != b_.files[i].size)
      return "file table differs";
  if (a_.sections.size() != b_.sections.size()) return "sections differ";
  for (size_t i = 0; i < a_.sections.size(); ++i) {
    const Section &x = a_.sections[i], &y = b_.sections[i];
    if (sa(x.name) != sb(y.name) || x.items.size() != y.items.size()) return "sections differ";
    for (size_t k = 0; k < x.items.size(); ++k) {
      const SectionItem &p = x.items[k], &q = y.items[k];
      if (p.isLabel != q.isLabel || sa(p.label) != sb(q.label) || p.type != q.type ||
          p.values.size() != q.values.size())
        return fmt::format("section {} item {} differs", sa(x.name), k);
      for (size_t v = 0; v < p.values.size(); ++v)
        if (sa(p.values[v].first) != sb(q.values[v].first) || p.values[v].second != q.values[v].second)
          return fmt::format("section {} item {} differs", sa(x.name), k);
    }
  }
  if (a_.order.size() != b_.order.size()) return "module item order differs";
  return "";
}

}  // namespace

std::string printModule(const Module& module) {
  Printer p(module);
  p.out.reserve(1 << 16);
  p.module();
  return std::move(p.out);
}

std::string printOperand(const Module& module, const Function& function, const Operand& operand) {
  Printer p(module);
  p.operand(function, operand);
  return std::move(p.out);
}

std::string printInstruction(const Module& module, const Function& function, const Instruction& instruction) {
  Printer p(module);
  p.instruction(function, instruction);
  return std::move(p.out);
}

std::string diffModules(const Module& a, const Module& b) { return Differ(a, b).run(); }

}  // namespace ptx
