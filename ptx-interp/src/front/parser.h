// The PTX parser's internal interface, shared by its three parts: parser.cpp (symbol bindings, constant
// expressions, module-level directives), parse_declarations.cpp (variables, initializers, parameters, function
// headers) and parse_statements.cpp (function bodies: statements, operands, instructions).
#pragma once

#include "ptx/parse.h"

#include <fmt/format.h>

#include <cstring>
#include <limits>

#include "front/lexer.h"
#include "front/tables.h"

namespace ptx {
namespace parser_detail {

using front::Lexer;
using front::Tok;
using front::Token;

// Operand::flags bit used only while parsing: an identifier that was not yet declared; index = its StrId.
constexpr uint8_t kPendingName = 0x80;
// Parser-internal: a Symbol operand written as an array element `arr[i]` (ld/st/ldu read it as an address).
constexpr uint8_t kArrayElement = 0x40;

// The predefined constant `WARP_SZ` (nvcc writes `warpSize` as `mov.u32 %r1, WARP_SZ;`): an integer wherever
// a constant expression may stand.
constexpr std::string_view kWarpSizeName = "WARP_SZ";
constexpr int64_t kWarpSize = 32;

struct SymBinding {
  SymKind kind = SymKind::None;
  uint32_t index = 0;
};

// A name bound in a nested block, to restore when the block closes.
struct Undo {
  enum Table : uint8_t { RegName, RegRange, LocalSym, LabelName } table;
  StrId name;
  uint32_t oldValue;
  SymBinding oldSym;
};

struct PendingReloc {
  uint32_t var;
  bool local;  // in the current function's locals
  uint32_t reloc;
  StrId name;
  SourceLoc loc;
};

struct DeferredReloc {
  uint32_t var;  // Module::globals index
  uint32_t reloc;
  StrId name;
  SourceLoc loc;
};

class Parser {
 public:
  Parser(const char* begin, const char* end, Diagnostics& diags, const ParseOptions& options, Module& module,
         SourceLoc start = {})
      : lex_(begin, end), diags_(diags), opt_(options), m_(module), textBegin_(begin), names_(options.names) {
    if (start.line) lex_.startAt(start.line, start.col);
    next();
  }

  void parseModule();
  // The body of .entry `function`, dropped after the first parse, parsed again from the text it came from (the
  // parser reads just that body) with the names bound before it.
  bool parseEntryBodyAgain(uint32_t function, const ModuleNames& names, const BodyPlace& place);

 private:
  // ---- tokens
  // Directive words arrive split at dots (".reg.b16" is ".reg" ".b16"); mnemonics keep their modifiers.
  void next() {
    if (splitRest_.kind != Tok::End) {
      tok_ = splitRest_;
      splitRest_.kind = Tok::End;
    } else {
      tok_ = lex_.next();
    }
    if (tok_.kind == Tok::Word && tok_.begin[0] == '.' && tok_.length > 1) {
      std::string_view t = tok_.text();
      size_t dot = t.find('.', 1);
      if (dot != std::string_view::npos) {
        splitRest_ = tok_;
        splitRest_.begin += dot;
        splitRest_.length -= static_cast<uint32_t>(dot);
        splitRest_.col += static_cast<uint32_t>(dot);
        tok_.length = static_cast<uint32_t>(dot);
      }
    }
  }
  Token peek() const {
    if (splitRest_.kind != Tok::End) return splitRest_;
    Lexer copy = lex_;
    return copy.next();
  }
  SourceLoc here() const { return SourceLoc{tok_.line, tok_.col}; }
  template <typename... Args> void error(const Token& at, fmt::format_string<Args...> f, Args&&... args) {
    diags_.error(at.line, at.col, fmt::format(f, std::forward<Args>(args)...));
  }
  template <typename... Args> void errorAt(SourceLoc at, fmt::format_string<Args...> f, Args&&... args) {
    diags_.error(at.line, at.col, fmt::format(f, std::forward<Args>(args)...));
  }
  std::string describe(const Token& t) const {
    switch (t.kind) {
      case Tok::End: return "end of input";
      case Tok::String: return fmt::format("string \"{}\"", t.text().substr(0, 40));
      case Tok::Invalid: return fmt::format("invalid character '\\x{:02x}'", static_cast<unsigned char>(*t.begin));
      default: return fmt::format("'{}'", t.text().substr(0, 60));
    }
  }
  bool accept(char c) {
    if (tok_.is(c)) {
      next();
      return true;
    }
    return false;
  }
  bool expect(char c, const char* context) {
    if (accept(c)) return true;
    error(tok_, "expected '{}' {}, found {}", c, context, describe(tok_));
    return false;
  }
  bool expectUint(uint64_t& v, const char* what) {
    if (tok_.kind != Tok::Int || tok_.malformed || tok_.overflow) {
      error(tok_, "expected {} (an integer), found {}", what, describe(tok_));
      return false;
    }
    v = tok_.intValue;
    next();
    return true;
  }
  bool expectUint32(uint32_t& v, const char* what) {
    uint64_t x = 0;
    Token at = tok_;
    if (!expectUint(x, what)) return false;
    if (x > 0xffffffffu) {
      error(at, "{} {} is too large", what, x);
      return false;
    }
    v = static_cast<uint32_t>(x);
    return true;
  }
  // Skips to the end of the current statement: past ';' or before '}' (at brace depth 0).
  void skipStatement();

  // ---- module level
  void parseVersion();
  void parseTarget();
  void parseAddressSize();
  void parseFile();
  void parseSection();
  void parseAlias();
  void parseDeclaration();
  void parseFunction(Linkage linkage, bool isEntry, SourceLoc loc);
  bool parseParamList(std::vector<Param>& out, bool allowReg);
  bool parseParam(Param& p, bool allowReg);
  bool parseVariable(Variable& v, Space space, Linkage linkage, bool inBody, bool& more);
  bool parseArrayDims(Variable& v);
  bool parseInitializer(Variable& v, bool inBody);
  bool parseInitItems(Variable& v, size_t level, uint64_t base, uint64_t& count, bool inBody, unsigned depth);
  bool parseInitScalar(Variable& v, uint64_t offset, bool inBody);
  bool parseAttribute(Variable& v);

  // ---- bodies
  void parseBody();
  void parseStatement();
  void parseRegDecl();
  void parseLocalVariable(Space space, SourceLoc loc);
  void parseLoc();
  void parseLabelDirective(uint32_t label, const Token& nameTok);
  void parseInstruction(const Token& mnemonic, uint32_t guard, bool guardNegated, SourceLoc loc);
  bool parseOperand(Operand& out, unsigned depth);
  bool parseList(Operand& out, char close, OperandKind kind, unsigned depth);
  bool parseAddress(Operand& out, unsigned depth);
  bool parseArrayElement(Operand& sym, const Token& nameTok);
  bool lowerArrayElements(Instruction& inst, size_t scratchStart);
  uint32_t newTempRegister(Type type);
  void pushSynthetic(Opcode op, std::initializer_list<Mod> mods, std::initializer_list<Operand> operands,
                     SourceLoc loc);
  void decodeMods(Instruction& inst, const Mod* mods, size_t count);
  bool parseRegisterWord(std::string_view text, const Token& at, Operand& out);
  void resolveName(StrId name, Operand& out);
  uint32_t commitOperands(std::vector<Operand>& pool, size_t scratchStart, bool elemsPool);
  void finishFunction();
  uint32_t labelFor(StrId name, SourceLoc loc);
  uint32_t defineLabel(StrId name, SourceLoc loc, const Token& word);
  void resolveBlockLabels(size_t fixupMark);
  uint32_t findRegister(std::string_view name) const;
  bool lookupRegister(std::string_view name, uint32_t& reg);

  // ---- constant expressions
  bool parseConstExpr(int64_t& value, unsigned depth = 0);
  bool parseBinary(int64_t& value, int minPrec, unsigned depth);
  bool parseUnary(int64_t& value, unsigned depth);
  int binaryPrecedence(int& width) const;

  // ---- bindings
  template <typename T> static void ensure(std::vector<T>& v, StrId id) {
    if (id >= v.size()) v.resize(std::max<size_t>(id + 1, v.size() * 2 + 64));
  }
  void bindRegName(StrId name, uint32_t reg);
  // Undoes the bindings made since undo_ had `mark` entries (names declared in a closing block).
  void restoreBindings(size_t mark) {
    while (undo_.size() > mark) {
      const Undo& u = undo_.back();
      if (u.table == Undo::RegName)
        regBind_[u.name] = u.oldValue;
      else if (u.table == Undo::RegRange)
        rangeBind_[u.name] = u.oldValue;
      else if (u.table == Undo::LabelName)
        labelBind_[u.name] = u.oldValue;
      else
        localBind_[u.name] = u.oldSym;
      undo_.pop_back();
    }
  }
  void bindRange(StrId name, uint32_t decl);
  void bindLocal(StrId name, SymBinding b);
  void bindGlobal(StrId name, SymBinding b, SourceLoc loc);
  SymBinding localSym(StrId name) const { return name < localBind_.size() ? localBind_[name] : SymBinding{}; }
  SymBinding globalSym(StrId name) const {
    if (reparseNames_) {
      ModuleNames::Binding b = reparseNames_->lookup(name, reparseVisible_);
      return SymBinding{b.kind, b.index};
    }
    return name < globalBind_.size() ? globalBind_[name] : SymBinding{};
  }
  void setGlobalSlot(StrId name, SymBinding b) {
    ensure(globalBind_, name);
    globalBind_[name] = b;
    if (names_) names_->bind(name, ModuleNames::Binding{b.kind, b.index});
  }
  void dropEntryBody(Function& f);

  StrId intern(std::string_view s) { return m_.strings.intern(s); }

  Lexer lex_;
  Token tok_;
  Token splitRest_;
  bool inCall_ = false;  // '(' starts an argument list only in call instructions
  Diagnostics& diags_;
  const ParseOptions& opt_;
  Module& m_;
  const char* textBegin_;
  ModuleNames* names_;                         // records the module-scope bindings (ParseOptions::names)
  const ModuleNames* reparseNames_ = nullptr;  // parseEntryBodyAgain: the names, as bound before the body
  uint32_t reparseVisible_ = 0;
  // The body being parsed: where it stands (for ParseOptions::entryBodyParsed); bodyEnd_ is set at its '}'.
  BodyPlace body_;
  const char* bodyBegin_ = nullptr;
  const char* bodyEnd_ = nullptr;

  std::vector<SymBinding> globalBind_;
  // Per-function state.
  Function* fn_ = nullptr;
  // A body is parsed into vectors with the capacity the largest body so far needed, then copied out at its exact
  // size: no growth reallocations per function, and no growth slack kept in the tree (kept by lazily lowered
  // modules; it was about a third of the tree).
  struct BodyScratch {
    std::vector<Register> registers;
    std::vector<RegDecl> regDecls;
    std::vector<Label> labels;
    std::vector<Instruction> instructions;
    std::vector<Operand> operands;
    std::vector<Operand> elems;
    std::vector<Mod> mods;
    std::vector<uint32_t> labelRefs;
  } bodyScratch_;
  template <class T> static void intoScratch(std::vector<T>& v, std::vector<T>& scratch) {
    scratch.assign(v.begin(), v.end());
    v.swap(scratch);
  }
  template <class T> static void outOfScratch(std::vector<T>& v, std::vector<T>& scratch) {
    std::vector<T> exact(v.begin(), v.end());
    v.swap(exact);
    scratch.swap(exact);
    scratch.clear();
  }
  template <class F> void eachScratch(Function& f, F&& move) {
    move(f.registers, bodyScratch_.registers);
    move(f.regDecls, bodyScratch_.regDecls);
    move(f.labels, bodyScratch_.labels);
    move(f.instructions, bodyScratch_.instructions);
    move(f.operands, bodyScratch_.operands);
    move(f.elems, bodyScratch_.elems);
    move(f.mods, bodyScratch_.mods);
    move(f.labelRefs, bodyScratch_.labelRefs);
  }
  uint32_t fnIndex_ = 0;
  uint32_t scope_ = 0;
  unsigned blockDepth_ = 0;
  uint32_t debugLoc_ = 0;
  std::vector<uint32_t> regBind_;     // StrId -> register id + 1
  std::vector<uint32_t> rangeBind_;   // StrId -> RegDecl index + 1
  std::vector<uint32_t> rangeOuter_;  // RegDecl index -> the range of the same prefix it hides (index + 1, or 0)
  std::vector<uint32_t> labelBind_;   // StrId -> label id + 1
  std::vector<SymBinding> localBind_;
  std::vector<StrId> touched_;  // names bound in this function, cleared at its end
  std::vector<Undo> undo_;
  std::vector<size_t> undoMarks_;   // undo_ size at each open block
  std::vector<size_t> fixupMarks_;  // fixups_ size at each open block
  struct Fixup {
    bool inElems;
    uint32_t index;
    SourceLoc loc;
  };
  std::vector<Fixup> fixups_;
  std::vector<PendingReloc> localRelocs_;
  std::vector<DeferredReloc> globalRelocs_;
  std::vector<Operand> scratch_;
  std::vector<Mod> modScratch_;
  // Register indices of the array elements among the operands being parsed (`arr[%r]`, `arr[%r+4]`):
  // scratch_ position -> register id.
  std::vector<std::pair<size_t, uint32_t>> arrayIndexRegs_;
  uint32_t tempRegisters_ = 0;
  uint32_t pendingArrayIndexReg_ = kNoIndex;  // set by parseArrayElement for the operand being parsed   // %__cuemu_aN
                                              // registers made for register-indexed array elements
};

// The state space a directive word names (".global", ".shared", ...).
inline bool spaceDirective(std::string_view w, Space& s) {
  if (w == ".global")
    s = Space::global;
  else if (w == ".shared")
    s = Space::shared;
  else if (w == ".const")
    s = Space::const_;
  else if (w == ".local")
    s = Space::local;
  else if (w == ".param")
    s = Space::param;
  else if (w == ".tex")
    s = Space::tex;
  else if (w == ".reg")
    s = Space::reg;
  else
    return false;
  return true;
}

}  // namespace parser_detail
}  // namespace ptx
