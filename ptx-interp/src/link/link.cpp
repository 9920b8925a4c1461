#include "ptx/link.h"

#include "exec/device_runtime.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>
#include <set>
#include <string>

namespace ptx::link {
namespace {

enum class Kind { Header, Entry, Func, Variable, Debug, Other };
enum class Linkage { Internal, Visible, Weak, Extern, Common };

// One top-level statement of a module, with what the linker needs to know about it.
struct Statement {
  std::string text;
  Kind kind = Kind::Other;
  Linkage linkage = Linkage::Internal;
  std::string symbol;
  bool isDefinition = false;  // a function with a body, or a variable that is not .extern
  bool isShared = false;      // a .shared variable: `.extern .shared` is dynamic shared memory, not a reference
  std::string prototype;      // functions with a body: the header followed by ';'
  std::size_t module = 0;
};

bool isIdentStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '%'; }
bool isIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$'; }

// Splits a module into top-level statements: up to a ';' at brace depth 0, or a '}' closing depth 0.
std::vector<std::string> splitStatements(std::string_view text) {
  std::vector<std::string> out;
  std::string current;
  int depth = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '/' && i + 1 < text.size() && text[i + 1] == '/') {
      while (i < text.size() && text[i] != '\n') ++i;
      current += '\n';
      continue;
    }
    if (c == '/' && i + 1 < text.size() && text[i + 1] == '*') {
      auto end = text.find("*/", i + 2);
      i = end == std::string_view::npos ? text.size() : end + 1;
      continue;
    }
    if (c == '"') {  // strings in .file directives
      auto end = text.find('"', i + 1);
      if (end == std::string_view::npos) end = text.size() - 1;
      current.append(text.substr(i, end - i + 1));
      i = end;
      continue;
    }
    current += c;
    if (c == '{') ++depth;
    if (c == '}' && --depth == 0) {
      // A function body ends the statement; an initializer's '}' does not (it is followed by ';').
      auto next = text.find_first_not_of(" \t\r\n", i + 1);
      if (next == std::string_view::npos || text[next] != ';') {
        out.push_back(std::move(current));
        current.clear();
      }
    }
    if (c == ';' && depth == 0) {
      out.push_back(std::move(current));
      current.clear();
    }
    if (depth == 0 && c == '\n') {
      // Header directives end at the line: .version 9.0 / .target sm_75 / .address_size 64 / .file 1 "x"
      auto first = current.find_first_not_of(" \t\r\n");
      if (first != std::string::npos &&
          (current.compare(first, 8, ".version") == 0 || current.compare(first, 7, ".target") == 0 ||
           current.compare(first, 13, ".address_size") == 0 || current.compare(first, 5, ".file") == 0)) {
        out.push_back(std::move(current));
        current.clear();
      }
    }
  }
  if (current.find_first_not_of(" \t\r\n") != std::string::npos) out.push_back(std::move(current));
  return out;
}

std::vector<std::string> words(std::string_view s, std::size_t limit) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < s.size() && out.size() < limit) {
    while (i < s.size() &&
           (std::isspace(static_cast<unsigned char>(s[i])) || s[i] == '(' || s[i] == ')' || s[i] == ','))
      ++i;
    std::size_t start = i;
    while (i < s.size() && !std::isspace(static_cast<unsigned char>(s[i])) && s[i] != '(' && s[i] != ')' &&
           s[i] != ',' && s[i] != '[' && s[i] != ';' && s[i] != '=' && s[i] != '<' && s[i] != '{')
      ++i;
    if (i > start) out.emplace_back(s.substr(start, i - start));
    if (i < s.size() && (s[i] == '[' || s[i] == ';' || s[i] == '=' || s[i] == '<' || s[i] == '{')) {
      out.emplace_back(1, s[i]);
      ++i;
    }
  }
  return out;
}

Statement classify(std::string text, std::size_t module) {
  Statement st;
  st.text = std::move(text);
  st.module = module;
  auto first = st.text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return st;
  std::string_view body(st.text);
  body.remove_prefix(first);
  if (body.starts_with(".version") || body.starts_with(".target") || body.starts_with(".address_size")) {
    st.kind = Kind::Header;
    return st;
  }
  if (body.starts_with(".file") || body.starts_with(".section")) {
    st.kind = Kind::Debug;
    return st;
  }
  auto w = words(body, 64);
  std::size_t i = 0;
  for (; i < w.size(); ++i) {
    if (w[i] == ".extern")
      st.linkage = Linkage::Extern;
    else if (w[i] == ".visible")
      st.linkage = Linkage::Visible;
    else if (w[i] == ".weak")
      st.linkage = Linkage::Weak;
    else if (w[i] == ".common")
      st.linkage = Linkage::Common;
    else
      break;
  }
  if (i >= w.size()) return st;
  if (w[i] == ".entry" || w[i] == ".func") {
    st.kind = w[i] == ".entry" ? Kind::Entry : Kind::Func;
    // .func [(.param ret)] name (params) ...: the name is the first word after the keyword that is not a
    // .param declaration or parameter name inside the return list.
    std::string_view rest = body.substr(body.find(w[i]) + w[i].size());
    auto p = rest.find_first_not_of(" \t\r\n");
    if (p != std::string_view::npos && rest[p] == '(') rest = rest.substr(rest.find(')', p) + 1);
    auto name = words(rest, 1);
    if (!name.empty()) st.symbol = name[0];
    auto brace = st.text.find('{');
    st.isDefinition = brace != std::string::npos;
    if (st.isDefinition) {
      std::string header = st.text.substr(0, brace);
      while (!header.empty() && std::isspace(static_cast<unsigned char>(header.back()))) header.pop_back();
      st.prototype = header + ";\n";
    }
    return st;
  }
  if (w[i] == ".global" || w[i] == ".const" || w[i] == ".shared" || w[i] == ".tex" || w[i] == ".surfref" ||
      w[i] == ".texref" || w[i] == ".samplerref") {
    st.kind = Kind::Variable;
    // The name is the last word before '[', '=', '<' or ';'.
    std::string last;
    for (std::size_t k = i + 1; k < w.size(); ++k) {
      if (w[k] == "[" || w[k] == "=" || w[k] == ";" || w[k] == "<") break;
      last = w[k];
    }
    st.symbol = last;
    st.isShared = w[i] == ".shared";
    st.isDefinition = st.linkage != Linkage::Extern;
    return st;
  }
  return st;
}

// Replaces whole identifiers found in `renames`.
std::string renameIdentifiers(const std::string& text, const std::map<std::string, std::string>& renames) {
  if (renames.empty()) return text;
  std::string out;
  out.reserve(text.size() + 64);
  for (std::size_t i = 0; i < text.size();) {
    if (text[i] == '"') {
      auto end = text.find('"', i + 1);
      end = end == std::string::npos ? text.size() : end + 1;
      out.append(text, i, end - i);
      i = end;
      continue;
    }
    if (isIdentStart(text[i]) && (i == 0 || !isIdentChar(text[i - 1]))) {
      std::size_t j = i + 1;
      while (j < text.size() && isIdentChar(text[j])) ++j;
      std::string ident = text.substr(i, j - i);
      auto it = renames.find(ident);
      out += it != renames.end() ? it->second : ident;
      i = j;
      continue;
    }
    out += text[i++];
  }
  return out;
}

// Debug file numbers of module k move to k*1000+n so .loc lines keep pointing at the right file. The
// DWARF sections are not carried over, so .loc attributes that point into them (function_name, inlined_at)
// are dropped too; file and line stay.
std::string renumberFiles(const std::string& text, std::size_t module) {
  std::string out;
  std::size_t i = 0;
  while (i < text.size()) {
    auto nl = text.find('\n', i);
    std::string line = text.substr(i, nl == std::string::npos ? std::string::npos : nl - i + 1);
    i = nl == std::string::npos ? text.size() : nl + 1;
    auto first = line.find_first_not_of(" \t");
    for (const char* directive : {".loc", ".file"}) {
      std::size_t len = std::char_traits<char>::length(directive);
      if (first != std::string::npos && line.compare(first, len, directive) == 0 && first + len < line.size() &&
          std::isspace(static_cast<unsigned char>(line[first + len]))) {
        auto numStart = line.find_first_not_of(" \t", first + len);
        auto numEnd = line.find_first_not_of("0123456789", numStart);
        if (numStart != std::string::npos && numEnd != numStart) {
          long n = std::strtol(line.c_str() + numStart, nullptr, 10);
          line = line.substr(0, numStart) + std::to_string(module * 1000 + n) + line.substr(numEnd);
          if (line.compare(first, 4, ".loc") == 0) {
            auto comma = line.find(',', first);
            if (comma != std::string::npos) line = line.substr(0, comma) + (line.back() == '\n' ? "\n" : "");
          }
        }
      }
    }
    out += line;
  }
  return out;
}

int versionValue(const std::string& header) {
  int major = 0, minor = 0;
  auto p = header.find(".version");
  if (p != std::string::npos) std::sscanf(header.c_str() + p + 8, "%d.%d", &major, &minor);
  return major * 10 + minor;
}

int targetValue(const std::string& header) {
  auto p = header.find("sm_");
  return p == std::string::npos ? 0 : std::atoi(header.c_str() + p + 3);
}

// An entry's text with `.maxnreg limit` before its body, unless it has a register limit of its own.
std::string withRegisterLimit(const std::string& entry, unsigned limit) {
  if (!limit || entry.find(".maxnreg") != std::string::npos) return entry;
  size_t body = entry.find('{');  // the parameter list holds no brace
  if (body == std::string::npos) return entry;
  return entry.substr(0, body) + ".maxnreg " + std::to_string(limit) + "\n" + entry.substr(body);
}

}  // namespace

bool isBuiltinExternal(std::string_view name) {
  static const std::set<std::string_view> builtins = {"vprintf", "malloc", "free", "__assertfail",
                                                      // CUDA graph conditional nodes (issue 17)
                                                      "cudaGraphSetConditional"};
  // The device runtime of CUDA dynamic parallelism (the interpreter's table: exec/device_runtime.cpp).
  if (ptx::exec::findRuntimeFunction(name)) return true;
  return builtins.count(name) != 0;
}

namespace {

// The grid-scope cooperative-groups functions of NVIDIA's device runtime (libcudadevrt), which numba-cuda calls
// for this_grid().sync() and links from libcudadevrt.a, whose PTX exists only for compute_121. cuemu's own
// implementation, in PTX so that a waiting block is parked like any block spinning on memory. The handle is the
// grid-sync workspace the driver hands a cooperative launch in %envreg1 (high) / %envreg2 (low), {size, barrier};
// a barrier adds 1 per block (block 0 adds 2^31 - (blocks - 1)) to the barrier word, so its bit 31 flips once
// every block has arrived.
constexpr std::string_view kCooperativeGroupsLibrary = R"(
.version 6.0
.target sm_70
.address_size 64
.visible .func (.param .b64 handle) cudaCGGetIntrinsicHandle(.param .b32 scope)
{
  .reg .pred %p<2>;
  .reg .b32 %r<4>;
  .reg .b64 %rd<2>;
  ld.param.u32 %r3, [scope];
  mov.u32 %r1, %envreg1;
  mov.u32 %r2, %envreg2;
  mov.b64 %rd1, {%r2, %r1};
  setp.ne.u32 %p1, %r3, 1;
  @%p1 mov.u64 %rd1, 0;
  st.param.b64 [handle], %rd1;
  ret;
}
.visible .func (.param .b32 status) cudaCGSynchronize(.param .b64 handle, .param .b32 flags)
{
  .reg .pred %p<4>;
  .reg .b32 %r<12>;
  .reg .b64 %rd<3>;
  ld.param.u64 %rd1, [handle];
  setp.eq.u64 %p1, %rd1, 0;
  @%p1 trap;
  add.u64 %rd2, %rd1, 4;
  bar.sync 0;
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %tid.y;
  or.b32 %r1, %r1, %r2;
  mov.u32 %r2, %tid.z;
  or.b32 %r1, %r1, %r2;
  setp.ne.u32 %p2, %r1, 0;
  @%p2 bra $Lwaited;
  mov.u32 %r3, %nctaid.x;
  mov.u32 %r4, %nctaid.y;
  mul.lo.u32 %r3, %r3, %r4;
  mov.u32 %r4, %nctaid.z;
  mul.lo.u32 %r3, %r3, %r4;
  mov.u32 %r5, %ctaid.x;
  mov.u32 %r6, %ctaid.y;
  or.b32 %r5, %r5, %r6;
  mov.u32 %r6, %ctaid.z;
  or.b32 %r5, %r5, %r6;
  setp.eq.u32 %p3, %r5, 0;
  sub.u32 %r7, -2147483647, %r3;
  selp.u32 %r8, %r7, 1, %p3;
  atom.add.release.gpu.u32 %r9, [%rd2], %r8;
$Lspin:
  ld.acquire.gpu.u32 %r10, [%rd2];
  xor.b32 %r10, %r10, %r9;
  and.b32 %r10, %r10, -2147483648;
  setp.eq.u32 %p3, %r10, 0;
  @%p3 bra $Lspin;
$Lwaited:
  bar.sync 0;
  mov.u32 %r11, 0;
  st.param.b32 [status], %r11;
  ret;
}
)";

constexpr std::string_view kCooperativeGroupsFunctions[] = {"cudaCGGetIntrinsicHandle", "cudaCGSynchronize"};

// Whether some input declares one of those functions `.extern` and none defines it.
bool needsCooperativeGroupsLibrary(const std::vector<Input>& inputs) {
  bool used = false;
  for (const Input& input : inputs)
    for (std::string_view name : kCooperativeGroupsFunctions)
      for (size_t at = input.text.find(name); at != std::string::npos; at = input.text.find(name, at + 1)) {
        size_t lineStart = input.text.rfind('\n', at);
        lineStart = lineStart == std::string::npos ? 0 : lineStart + 1;
        std::string_view line(input.text.data() + lineStart, at - lineStart);
        if (line.find(".func") == std::string_view::npos) continue;
        if (line.find(".extern") == std::string_view::npos) return false;  // an input defines it
        used = true;
      }
  return used;
}

Result linkInputs(const std::vector<Input>& inputs, unsigned maxRegisters);

}  // namespace

Result linkModules(const std::vector<Input>& inputs, unsigned maxRegisters) {
  if (!needsCooperativeGroupsLibrary(inputs)) return linkInputs(inputs, maxRegisters);
  std::vector<Input> withLibrary = inputs;
  withLibrary.push_back(Input{"cuemu cooperative groups", std::string(kCooperativeGroupsLibrary)});
  return linkInputs(withLibrary, maxRegisters);
}

namespace {

Result linkInputs(const std::vector<Input>& inputs, unsigned maxRegisters) {
  Result result;
  if (inputs.empty()) {
    result.log = "error   : no input to link\n";
    return result;
  }
  std::vector<std::vector<Statement>> modules(inputs.size());
  std::string versionLine = ".version 6.0\n", targetLine = ".target sm_52\n";
  int bestVersion = -1, bestTarget = -1;
  for (std::size_t m = 0; m < inputs.size(); ++m) {
    for (auto& text : splitStatements(inputs[m].text)) {
      Statement st = classify(std::move(text), m);
      if (st.kind == Kind::Header) {
        auto first = st.text.find_first_not_of(" \t\r\n");
        std::string line = st.text.substr(first);
        if (line.back() != '\n') line += '\n';
        if (line.starts_with(".version") && versionValue(line) > bestVersion) {
          bestVersion = versionValue(line);
          versionLine = line;
        }
        if (line.starts_with(".target") && targetValue(line) > bestTarget) {
          bestTarget = targetValue(line);
          // ", debug" promises DWARF sections, which the linked module does not carry.
          auto debug = line.find(", debug");
          if (debug != std::string::npos) line.erase(debug, 7);
          targetLine = line;
        }
        continue;
      }
      modules[m].push_back(std::move(st));
    }
  }

  // Where each globally visible symbol is defined.
  struct Definition {
    std::size_t module;
    Linkage linkage;
    Kind kind;
  };
  std::map<std::string, Definition> definitions;
  std::set<std::pair<std::size_t, std::size_t>> dropped;  // (module, statement) superseded weak definitions
  bool failed = false;
  for (std::size_t m = 0; m < modules.size(); ++m) {
    for (std::size_t s = 0; s < modules[m].size(); ++s) {
      const Statement& st = modules[m][s];
      if (!st.isDefinition || st.symbol.empty()) continue;
      if (st.linkage == Linkage::Internal && st.kind != Kind::Entry) continue;
      auto [it, inserted] = definitions.emplace(st.symbol, Definition{m, st.linkage, st.kind});
      if (inserted) continue;
      Definition& previous = it->second;
      bool prevWeak = previous.linkage == Linkage::Weak || previous.linkage == Linkage::Common;
      bool thisWeak = st.linkage == Linkage::Weak || st.linkage == Linkage::Common;
      if (thisWeak) {
        dropped.insert({m, s});
      } else if (prevWeak) {
        // A strong definition replaces the weak one seen earlier.
        for (std::size_t k = 0; k < modules[previous.module].size(); ++k)
          if (modules[previous.module][k].symbol == st.symbol && modules[previous.module][k].isDefinition)
            dropped.insert({previous.module, k});
        previous = Definition{m, st.linkage, st.kind};
      } else {
        result.log += "error   : Multiple definition of '" + st.symbol + "' in '" + inputs[m].name +
                      "', first defined in '" + inputs[previous.module].name + "'\n";
        failed = true;
      }
    }
  }

  // File-local symbols that clash with any other module's symbols get a module prefix.
  std::map<std::string, int> uses;
  for (auto& module : modules) {
    std::set<std::string> seen;
    for (auto& st : module)
      if (!st.symbol.empty() && st.isDefinition && seen.insert(st.symbol).second) ++uses[st.symbol];
  }
  std::vector<std::map<std::string, std::string>> renames(modules.size());
  for (std::size_t m = 0; m < modules.size(); ++m)
    for (auto& st : modules[m])
      if (st.isDefinition && st.linkage == Linkage::Internal && st.kind != Kind::Entry && uses[st.symbol] > 1)
        renames[m][st.symbol] = "__cuemu_link" + std::to_string(m) + "_" + st.symbol;

  // Unresolved externals.
  std::set<std::string> builtinDeclarations;
  std::set<std::pair<std::size_t, std::string>> reported;
  std::string externs;
  for (std::size_t m = 0; m < modules.size(); ++m) {
    for (auto& st : modules[m]) {
      if (st.linkage != Linkage::Extern || st.symbol.empty()) continue;
      if (definitions.count(st.symbol)) continue;
      if (st.kind == Kind::Variable && st.isShared) {
        // Dynamic shared memory: every module's declaration names the same per-block buffer; keep one.
        if (builtinDeclarations.insert(st.symbol).second) externs += st.text + "\n";
        continue;
      }
      if (st.kind == Kind::Func && isBuiltinExternal(st.symbol)) {
        if (builtinDeclarations.insert(st.symbol).second) externs += st.text + "\n";
        continue;
      }
      if (reported.insert({m, st.symbol}).second)
        result.log += "error   : Undefined reference to '" + st.symbol + "' in '" + inputs[m].name + "'\n";
      if (st.kind == Kind::Func) {
        if (builtinDeclarations.insert(st.symbol).second) {
          externs += st.text + "\n";
          result.undefinedFunctions.push_back(st.symbol);
        }
        continue;
      }
      failed = true;
    }
  }
  if (failed) return result;

  std::string prototypes, variables, functions, debug;
  for (std::size_t m = 0; m < modules.size(); ++m) {
    for (std::size_t s = 0; s < modules[m].size(); ++s) {
      const Statement& st = modules[m][s];
      if (st.linkage == Linkage::Extern) continue;
      if (dropped.count({m, s})) continue;
      std::string text = renumberFiles(renameIdentifiers(st.text, renames[m]), m);
      switch (st.kind) {
        case Kind::Func:
          if (st.isDefinition) prototypes += renameIdentifiers(st.prototype, renames[m]);
          if (st.isDefinition) functions += text + "\n";
          break;
        case Kind::Entry:
          // A kernel's address can be taken in another module (a device-side launch of a kernel defined in
          // another translation unit: `.extern .entry k(...)` there, `mov.u64 %rd, k`): declared ahead of all code.
          if (st.isDefinition) prototypes += renameIdentifiers(st.prototype, renames[m]);
          if (st.isDefinition) functions += withRegisterLimit(text, maxRegisters) + "\n";
          break;
        case Kind::Variable: variables += text + "\n"; break;
        case Kind::Debug:
          // DWARF sections of separate modules cannot be concatenated meaningfully; file tables can.
          if (text.find(".file") != std::string::npos && text.find(".section") == std::string::npos)
            debug += text + "\n";
          break;
        default:
          if (text.find_first_not_of(" \t\r\n;") != std::string::npos) functions += text + "\n";
          break;
      }
    }
  }
  result.ptx = "// Linked by cuemu from " + std::to_string(inputs.size()) + " module(s)\n" + versionLine + targetLine +
               ".address_size 64\n\n" + debug + externs + prototypes + "\n" + variables + "\n" + functions;
  result.ok = true;
  result.log += "info    : linked " + std::to_string(inputs.size()) + " module(s)\n";
  return result;
}

}  // namespace

}  // namespace ptx::link
