#include "ptx/parse.h"

#include <fmt/format.h>

#include <cstring>
#include <limits>

#include "front/lexer.h"
#include "front/tables.h"

namespace ptx {
namespace {

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
    enum Table : uint8_t { RegName, RegRange, LocalSym } table;
    StrId name;
    uint32_t oldValue;
    SymBinding oldSym;
};

struct PendingReloc {
    uint32_t var;
    bool local;   // in the current function's locals
    uint32_t reloc;
    StrId name;
    SourceLoc loc;
};

struct DeferredReloc {
    uint32_t var;     // Module::globals index
    uint32_t reloc;
    StrId name;
    SourceLoc loc;
};

class Parser {
public:
    Parser(const char* begin, const char* end, Diagnostics& diags, const ParseOptions& options, Module& module)
        : lex_(begin, end), diags_(diags), opt_(options), m_(module) {
        next();
    }

    void parseModule();

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
    template <typename... Args>
    void error(const Token& at, fmt::format_string<Args...> f, Args&&... args) {
        diags_.error(at.line, at.col, fmt::format(f, std::forward<Args>(args)...));
    }
    template <typename... Args>
    void errorAt(SourceLoc at, fmt::format_string<Args...> f, Args&&... args) {
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
    uint32_t findRegister(std::string_view name) const;
    bool lookupRegister(std::string_view name, uint32_t& reg);

    // ---- constant expressions
    bool parseConstExpr(int64_t& value, unsigned depth = 0);
    bool parseBinary(int64_t& value, int minPrec, unsigned depth);
    bool parseUnary(int64_t& value, unsigned depth);
    int binaryPrecedence(int& width) const;

    // ---- bindings
    template <typename T>
    static void ensure(std::vector<T>& v, StrId id) {
        if (id >= v.size()) v.resize(std::max<size_t>(id + 1, v.size() * 2 + 64));
    }
    void bindRegName(StrId name, uint32_t reg);
    // Undoes the bindings made since undo_ had `mark` entries (names declared in a closing block).
    void restoreBindings(size_t mark) {
        while (undo_.size() > mark) {
            const Undo& u = undo_.back();
            if (u.table == Undo::RegName) regBind_[u.name] = u.oldValue;
            else if (u.table == Undo::RegRange) rangeBind_[u.name] = u.oldValue;
            else localBind_[u.name] = u.oldSym;
            undo_.pop_back();
        }
    }
    void bindRange(StrId name, uint32_t decl);
    void bindLocal(StrId name, SymBinding b);
    void bindGlobal(StrId name, SymBinding b, SourceLoc loc);
    SymBinding localSym(StrId name) const { return name < localBind_.size() ? localBind_[name] : SymBinding{}; }
    SymBinding globalSym(StrId name) const {
        return name < globalBind_.size() ? globalBind_[name] : SymBinding{};
    }

    StrId intern(std::string_view s) { return m_.strings.intern(s); }

    Lexer lex_;
    Token tok_;
    Token splitRest_;
    bool inCall_ = false;   // '(' starts an argument list only in call instructions
    Diagnostics& diags_;
    const ParseOptions& opt_;
    Module& m_;

    std::vector<SymBinding> globalBind_;
    // Per-function state.
    Function* fn_ = nullptr;
    uint32_t fnIndex_ = 0;
    uint32_t scope_ = 0;
    unsigned blockDepth_ = 0;
    uint32_t debugLoc_ = 0;
    std::vector<uint32_t> regBind_;     // StrId -> register id + 1
    std::vector<uint32_t> rangeBind_;   // StrId -> RegDecl index + 1
    std::vector<uint32_t> labelBind_;   // StrId -> label id + 1
    std::vector<SymBinding> localBind_;
    std::vector<StrId> touched_;        // names bound in this function, cleared at its end
    std::vector<Undo> undo_;
    std::vector<size_t> undoMarks_;     // undo_ size at each open block
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
    uint32_t pendingArrayIndexReg_ = kNoIndex;   // set by parseArrayElement for the operand being parsed   // %__cuemu_aN registers made for register-indexed array elements
};

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
    if (scope_ != 0) undo_.push_back(Undo{Undo::RegName, name, regBind_[name], {}});
    else touched_.push_back(name);
    regBind_[name] = reg + 1;
}

void Parser::bindRange(StrId name, uint32_t decl) {
    ensure(rangeBind_, name);
    if (scope_ != 0) undo_.push_back(Undo{Undo::RegRange, name, rangeBind_[name], {}});
    else touched_.push_back(name);
    rangeBind_[name] = decl + 1;
}

void Parser::bindLocal(StrId name, SymBinding b) {
    ensure(localBind_, name);
    if (scope_ != 0) undo_.push_back(Undo{Undo::LocalSym, name, 0, localBind_[name]});
    else touched_.push_back(name);
    localBind_[name] = b;
}

void Parser::bindGlobal(StrId name, SymBinding b, SourceLoc loc) {
    ensure(globalBind_, name);
    SymBinding& slot = globalBind_[name];
    if (slot.kind != SymKind::None) {
        // A definition may follow a declaration of the same function or an .extern variable.
        bool redeclaredFunction = slot.kind == SymKind::Function && b.kind == SymKind::Function;
        bool externVar = slot.kind == SymKind::Global && b.kind == SymKind::Global &&
                         (m_.globals[slot.index].linkage == Linkage::extern_ ||
                          m_.globals[b.index].linkage == Linkage::extern_);
        if (!redeclaredFunction && !externVar) {
            errorAt(loc, "redefinition of '{}'", m_.str(name));
            return;
        }
        if (redeclaredFunction && !m_.functions[b.index].hasBody) return;   // keep the first declaration
    }
    slot = b;
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

// %r123 is register 123 of a `%r<N>` range when such a range is declared; otherwise a plainly declared name.
bool Parser::lookupRegister(std::string_view name, uint32_t& reg) {
    size_t digits = 0;
    while (digits < name.size() && name[name.size() - 1 - digits] >= '0' && name[name.size() - 1 - digits] <= '9')
        ++digits;
    if (digits > 0 && digits < name.size() && digits <= 9 && (digits == 1 || name[name.size() - digits] != '0')) {
        StrId prefix = m_.strings.find(name.substr(0, name.size() - digits));
        if (prefix != kNoStr && prefix < rangeBind_.size() && rangeBind_[prefix]) {
            const RegDecl& d = fn_->regDecls[rangeBind_[prefix] - 1];
            uint32_t idx = 0;
            for (size_t i = name.size() - digits; i < name.size(); ++i) idx = idx * 10 + uint32_t(name[i] - '0');
            if (idx < d.count) {
                reg = d.firstReg + idx;
                return true;
            }
        }
    }
    StrId id = m_.strings.find(name);
    if (id != kNoStr && id < regBind_.size() && regBind_[id]) {
        reg = regBind_[id] - 1;
        return true;
    }
    return false;
}

// ---------------------------------------------------------------------------------------------------------------
// Constant expressions (C-like integer arithmetic on 64 bits).

int Parser::binaryPrecedence(int& width) const {
    width = 1;
    if (tok_.kind != Tok::Punct) return -1;
    switch (tok_.punct) {
        case '*': case '/': return 10;
        case '+': case '-': return 9;
        case '<': case '>': {
            Token n = peek();
            if (n.kind == Tok::Punct && n.punct == tok_.punct && n.begin == tok_.begin + 1) {
                width = 2;
                return 8;
            }
            return -1;   // comparisons are not supported in operand expressions (ambiguous with %r<N>)
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
            return -1;   // a lone '|' separates %r|%p
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
        if (op == '-') value = static_cast<int64_t>(0 - u);
        else if (op == '~') value = static_cast<int64_t>(~u);
        else if (op == '!') value = value == 0;
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
        if (w == ".version") parseVersion();
        else if (w == ".target") parseTarget();
        else if (w == ".address_size") parseAddressSize();
        else if (w == ".file") parseFile();
        else if (w == ".section") parseSection();
        else if (w == ".alias") parseAlias();
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
            if (t[i] < '0' || t[i] > '9') ok = false;
            else if (i < dot) major = major * 10 + unsigned(t[i] - '0');
            else minor = minor * 10 + unsigned(t[i] - '0');
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
                if (t.substr(i) == "a") tg.archSpecific = true;
                else if (t.substr(i) == "f") tg.familySpecific = true;
                else error(tok_, "unknown target '{}'", t);
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
                    if (!parseBinary(v.second, 9, 0)) return;   // "+ expr" / "- expr" folded onto 0
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

static bool spaceDirective(std::string_view w, Space& s) {
    if (w == ".global") s = Space::global;
    else if (w == ".shared") s = Space::shared;
    else if (w == ".const") s = Space::const_;
    else if (w == ".local") s = Space::local;
    else if (w == ".param") s = Space::param;
    else if (w == ".tex") s = Space::tex;
    else if (w == ".reg") s = Space::reg;
    else return false;
    return true;
}

void Parser::parseDeclaration() {
    SourceLoc loc = here();
    Linkage linkage = Linkage::none;
    for (;;) {
        std::string_view w = tok_.text();
        Linkage l = Linkage::none;
        if (w == ".extern") l = Linkage::extern_;
        else if (w == ".visible") l = Linkage::visible;
        else if (w == ".weak") l = Linkage::weak;
        else if (w == ".common") l = Linkage::common;
        else break;
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
            globalRelocs_.resize(relocMark);   // they refer to the variable that was not added
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
        if (w.size() > 4 && w.substr(0, 4) == ".ptr") {   // `.ptr.global.align 8` written without spaces
            sawPtr = v.ptr = true;
            std::string_view rest = w.substr(4);
            while (!rest.empty()) {
                size_t dot = rest.find('.', 1);
                std::string_view part = rest.substr(0, dot);
                rest = dot == std::string_view::npos ? std::string_view() : rest.substr(dot);
                if (spaceDirective(part, ps)) v.ptrSpace = ps;
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
    next();   // '{'
    size_t levels = v.dims.size() + (v.vec ? 1 : 0);
    uint64_t stride = v.elementSize();
    for (size_t i = level + 1; i < v.dims.size(); ++i) stride *= v.dims[i];
    if (level >= v.dims.size()) stride = typeSize(v.type);   // vector components
    uint64_t limit = level < v.dims.size() ? v.dims[level] : v.vec;
    bool unsizedLevel = level == 0 && !v.dims.empty() && v.dims[0] == 0;
    uint64_t scalarStride = typeSize(v.type);
    uint64_t flat = 0;   // for flat lists of scalars filling a multi-level array
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
            globalRelocs_.push_back(
                DeferredReloc{static_cast<uint32_t>(m_.globals.size()), static_cast<uint32_t>(v.relocs.size()), name,
                              SourceLoc{at.line, at.col}});
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
        next();   // '('
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
            if (size == 4) storeLE(v.init, offset, bits, 4);
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
            if (size == 8) storeLE(v.init, offset, bits, 8);
            else if (size == 4 || v.type == Type::f16 || v.type == Type::bf16) {
                float f = static_cast<float>(d);
                uint32_t fb;
                std::memcpy(&fb, &f, 4);
                if (size == 4) storeLE(v.init, offset, fb, 4);
                else if (v.type == Type::bf16) storeLE(v.init, offset, fb >> 16, 2);
                else storeLE(v.init, offset, floatToHalf(f), 2);
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
    next();   // '('
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
        auto dims = [&](uint32_t (&out)[3], uint8_t& n) {
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
        if (w == ".maxntid") ok = dims(f.maxntid, f.numMaxntid);
        else if (w == ".reqntid") ok = dims(f.reqntid, f.numReqntid);
        else if (w == ".reqnctapercluster") ok = dims(f.reqnctapercluster, f.numReqnctapercluster);
        else if (w == ".minnctapersm") next(), ok = expectUint32(f.minnctapersm, "a CTA count");
        else if (w == ".maxnctapersm") next(), ok = expectUint32(f.maxnctapersm, "a CTA count");
        else if (w == ".maxnreg") next(), ok = expectUint32(f.maxnreg, "a register count");
        else if (w == ".maxclusterrank") next(), ok = expectUint32(f.maxclusterrank, "a cluster rank");
        else if (w == ".explicitcluster") next(), f.explicitcluster = true;
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
    if (previous.kind == SymKind::Function && hasBody) {
        ensure(globalBind_, m_.functions.back().name);
        globalBind_[m_.functions.back().name] = SymBinding{SymKind::Function, index};
    }
    m_.order.push_back(TopItem{TopKind::Function, index});
    if (!hasBody) {
        expect(';', "after the function declaration");
        return;
    }
    fn_ = &m_.functions[index];
    fnIndex_ = index;
    parseBody();
    fn_ = nullptr;
}

// ---------------------------------------------------------------------------------------------------------------
// Function bodies.

void Parser::parseBody() {
    next();   // '{'
    Function& f = *fn_;
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
            next();
            if (scope_ == 0) break;
            BlockScope& s = f.scopes[scope_];
            s.end = static_cast<uint32_t>(f.instructions.size());
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
            auto id = static_cast<uint32_t>(f.scopes.size());
            f.scopes.push_back(BlockScope{scope_, static_cast<uint32_t>(f.instructions.size()), 0});
            scope_ = id;
            continue;
        }
        parseStatement();
    }
    // Close scopes left open by errors.
    while (!undoMarks_.empty()) {
        size_t mark = undoMarks_.back();
        undoMarks_.pop_back();
        restoreBindings(mark);
    }
    scope_ = 0;
    f.scopes[0].end = static_cast<uint32_t>(f.instructions.size());
    finishFunction();
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
        StrId name = intern(word.text());
        uint32_t id = labelFor(name, loc);
        Label& l = f.labels[id];
        if (l.defined) {
            error(word, "redefinition of label '{}'", word.text());
            return;
        }
        l.defined = true;
        l.loc = loc;
        l.scope = scope_;
        l.target = static_cast<uint32_t>(f.instructions.size());
        if (tok_.kind == Tok::Word && (tok_.text() == ".branchtargets" || tok_.text() == ".calltargets" ||
                                       tok_.text() == ".callprototype"))
            parseLabelDirective(id, word);
        return;
    }
    std::string_view w = word.text();
    if (w[0] == '.') {
        Space space;
        if (w == ".reg") parseRegDecl();
        else if (spaceDirective(w, space)) parseLocalVariable(space, loc);
        else if (w == ".loc") parseLoc();
        else if (w == ".pragma") {
            if (tok_.kind != Tok::String) {
                error(tok_, "expected a string after .pragma");
                skipStatement();
                return;
            }
            f.bodyPragmas.push_back(BodyPragma{static_cast<uint32_t>(f.instructions.size()), scope_,
                                               intern(tok_.text()), SourceLoc{word.line, word.col}});
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
        if (w == ".v2" || w == ".v4" || w == ".v8") vec = static_cast<uint8_t>(w[2] - '0');
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
            if (name < rangeBind_.size() && rangeBind_[name] &&
                f.regDecls[rangeBind_[name] - 1].scope == scope_)
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
    if (name < regBind_.size() && regBind_[name]) {
        out.kind = OperandKind::Reg;
        out.index = regBind_[name] - 1;
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
            if (!selText.empty() && (!specialRegHasComponents(sr) || selKind(sel) != SelKind::Comp ||
                                     selDigit(sel, 0) > 3)) {
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
    next();   // '['
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
        if (base.flags & kPendingName)
            base.value = (int64_t(w.line) << 32) | w.col;   // position for the fixup's message
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
        case OperandKind::Label:
            error(open, "label in an address");
            return false;
        default:
            error(open, "unsupported address form");
            return false;
    }
    return true;
}

// `arr[i]`, `arr[%r]`, `arr[%r+i]` (PTX "Arrays as Operands"): the address of element i of arr, scaled by the
// size of arr's scalar element type (ptxas scales a `.v2 .u32` or a two-dimensional `.u32` array by 4 too). A
// constant index becomes a byte offset on the symbol; a register index is recorded in pendingArrayIndexReg_ and
// lowerArrayElements computes the address into a fresh register before the instruction.
bool Parser::parseArrayElement(Operand& sym, const Token& nameTok) {
    Token open = tok_;
    next();   // '['
    const Variable* var = nullptr;
    if (sym.kind == OperandKind::Symbol && !(sym.flags & kPendingName)) {
        if (sym.symKind == SymKind::Global) var = &m_.globals[sym.index];
        else if (sym.symKind == SymKind::Local) var = &fn_->locals[sym.index];
        else if (sym.symKind == SymKind::Param) var = &fn_->params[sym.index];
    }
    if (!var || var->dims.empty()) {
        error(nameTok, "array indexing on '{}', which is not an array variable", nameTok.text());
        return false;
    }
    int64_t index = 0;
    if (tok_.kind == Tok::Word && tok_.text()[0] == '%') {
        Operand reg;
        if (!parseRegisterWord(tok_.text(), tok_, reg)) return false;
        if (reg.kind != OperandKind::Reg || reg.sel || (typeSize(fn_->registers[reg.index].type) != 4 &&
                                                        typeSize(fn_->registers[reg.index].type) != 8)) {
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
        const Variable& var = op.symKind == SymKind::Global ? m_.globals[op.index]
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
                out.kind = OperandKind::Reg;   // `_|%p`: the pair below keeps index == kNoIndex for the sink
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
            } else if (t[0] == '%') {
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
                    if (tok_.kind != Tok::Word || !parseRegisterWord(tok_.text(), tok_, pred) ||
                        pred.kind != OperandKind::Reg) {
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
                    if (tok_.kind != Tok::Word || !parseRegisterWord(tok_.text(), tok_, out) ||
                        out.kind != OperandKind::Reg) {
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
        default:
            error(tok_, "expected an operand, found {}", describe(tok_));
            return false;
    }
}

static bool isSetLike(Opcode op) {
    return op == Opcode::Set || op == Opcode::Setp || op == Opcode::Vset || op == Opcode::Vset2 ||
           op == Opcode::Vset4;
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
                if (isSetLike(inst.opcode) && m != Mod::wide) inst.cmp = m == Mod::lo ? CmpOp::lo : CmpOp::hi;
                else inst.mulMode = static_cast<MulMode>(v);
                break;
            case ModCat::RedOp:
                if ((isSetLike(inst.opcode) || inst.opcode == Opcode::Lop3) &&
                    (m == Mod::and_ || m == Mod::or_ || m == Mod::xor_))
                    inst.boolOp = m == Mod::and_ ? BoolOp::and_ : m == Mod::or_ ? BoolOp::or_ : BoolOp::xor_;
                else inst.redOp = static_cast<RedOp>(v);
                break;
            case ModCat::Space:
                if (inst.space == Space::none) inst.space = static_cast<Space>(v);
                else if (inst.space2 == Space::none) inst.space2 = static_cast<Space>(v);
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
    inst.numOperands = static_cast<uint16_t>(scratch_.size() - start);
    inst.firstOperand = commitOperands(f.operands, start, false);
    f.instructions.push_back(inst);
}

}  // namespace

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
    Parser parser(buffer.data(), buffer.data() + text.size(), diags, options, *module);
    parser.parseModule();
    return module;
}

}  // namespace ptx
