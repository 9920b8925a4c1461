// CUDA source lines of PTX lines (.loc/.file), kept at lowering for the reports of faults and checkers.
#include "exec/engine.h"
#include "exec/lower.h"

#include <algorithm>

namespace ptx::exec {
namespace {

uint32_t fileIndex(Program& program, const ptx::Module& module, uint32_t fileNumber) {
  std::string name;
  for (const ptx::FileEntry& f : module.files)
    if (f.number == fileNumber) name = std::string(module.str(f.path));
  // compute-sanitizer names the file without its directory
  if (size_t slash = name.rfind('/'); slash != std::string::npos) name.erase(0, slash + 1);
  auto& files = program.sourceFiles;
  auto it = std::find(files.begin(), files.end(), name);
  if (it != files.end()) return uint32_t(it - files.begin());
  files.push_back(std::move(name));
  return uint32_t(files.size() - 1);
}

}  // namespace

void recordSourceLine(Program& program, const ptx::Module& module, uint32_t ptxLine, uint32_t debugLoc) {
  if (debugLoc >= module.debugLocs.size() || program.sourceLines.count(ptxLine)) return;
  const ptx::DebugLoc& loc = module.debugLocs[debugLoc];
  if (loc.line == 0) return;
  Program::SourceLine out;
  out.file = fileIndex(program, module, loc.file);
  out.line = loc.line;
  // the outermost call site of inlined code (a bounded walk: the chain is acyclic in valid PTX)
  uint32_t caller = loc.inlinedAt;
  for (int depth = 0; caller && caller < module.debugLocs.size() && depth < 64; ++depth) {
    const ptx::DebugLoc& site = module.debugLocs[caller];
    out.callerFile = fileIndex(program, module, site.file);
    out.callerLine = site.line;
    caller = site.inlinedAt;
  }
  program.sourceLines.emplace(ptxLine, out);
}

SourceLocation sourceLocation(const Program& launched, uint32_t ptxLine) {
  SourceLocation out;
  const Program& program = programOfLine(launched, ptxLine);
  auto it = program.sourceLines.find(ptxLine);
  if (it == program.sourceLines.end()) return out;
  const Program::SourceLine& s = it->second;
  out.file = program.sourceFiles[s.file];
  out.line = s.line;
  if (s.callerLine) {
    out.callerFile = program.sourceFiles[s.callerFile];
    out.callerLine = s.callerLine;
  }
  return out;
}

}  // namespace ptx::exec
