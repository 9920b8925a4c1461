// Compares a cuemu result file with the committed NVIDIA expectation files. It fails when a case that passes on a
// real GPU does not pass on cuemu, unless known-differences.txt lists it (pending with the issue that will fix it,
// or gpu-only with the reason), and when a case marked cuemu-only does not pass on cuemu.
#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "json.h"

namespace {

struct Known {
  std::string pattern, kind, issue, reason;
  int line = 0;
  bool used = false;
};

bool GlobMatch(const char* pat, const char* s) {
  if (*pat == 0) return *s == 0;
  if (*pat == '*') return GlobMatch(pat + 1, s) || (*s && GlobMatch(pat, s + 1));
  if (*s && (*pat == '?' || *pat == *s)) return GlobMatch(pat + 1, s + 1);
  return false;
}

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

bool ReadFile(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  *out = ss.str();
  return true;
}

bool LoadKnown(const std::string& path, std::vector<Known>* known) {
  std::ifstream in(path);
  if (!in) return true;  // no file: nothing known
  std::string line;
  int n = 0;
  bool ok = true;
  while (std::getline(in, line)) {
    ++n;
    std::string t = Trim(line);
    if (t.empty() || t[0] == '#') continue;
    std::vector<std::string> f;
    std::string cur;
    for (char c : t) {
      if (c == '|' && f.size() < 3) {
        f.push_back(Trim(cur));
        cur.clear();
      } else {
        cur += c;
      }
    }
    f.push_back(Trim(cur));
    if (f.size() != 4 || (f[1] != "pending" && f[1] != "gpu-only" && f[1] != "cuemu-only") || f[3].empty()) {
      std::fprintf(stderr, "%s:%d: expected 'case-or-glob | pending|gpu-only|cuemu-only | issue | reason'\n",
                   path.c_str(), n);
      ok = false;
      continue;
    }
    known->push_back({f[0], f[1], f[2], f[3], n, false});
  }
  return ok;
}

Known* FindKnown(std::vector<Known>& known, const std::string& name) {
  for (auto& k : known)
    if (GlobMatch(k.pattern.c_str(), name.c_str())) return &k;
  return nullptr;
}

using Statuses = std::map<std::string, std::string>;

bool LoadResults(const std::string& path, Statuses* out, conf::json::Value* doc) {
  std::string text, err;
  if (!ReadFile(path, &text)) {
    std::fprintf(stderr, "cannot read %s\n", path.c_str());
    return false;
  }
  auto v = conf::json::Parse(text, &err);
  if (!v) {
    std::fprintf(stderr, "%s: %s\n", path.c_str(), err.c_str());
    return false;
  }
  const conf::json::Value* cases = v->Find("cases");
  if (!cases || cases->kind != conf::json::Value::Kind::Object) {
    std::fprintf(stderr, "%s: no \"cases\" object\n", path.c_str());
    return false;
  }
  for (const auto& [name, c] : cases->object) (*out)[name] = c.StringOr("status", "fail");
  *doc = std::move(*v);
  return true;
}

std::string IssueFor(const std::string& name) {
  auto starts = [&](const char* p) { return name.rfind(p, 0) == 0; };
  if (starts("api.init.") || starts("api.misc.")) return "2";
  if (starts("api.device.") || starts("api.context.") || starts("api.primary_context.")) return "4";
  if (starts("api.memory.") || starts("api.pointer.") || starts("api.texture.")) return "5";
  if (starts("api.stream.") || starts("api.event.") || starts("api.graph.")) return "6";
  if (starts("api.")) return "9";
  if (starts("ptx.")) return "8";
  if (starts("runtime.")) return "10";
  return "?";
}

std::vector<std::string> ExpectationFiles(const std::string& path) {
  std::vector<std::string> files;
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return files;
  if (!S_ISDIR(st.st_mode)) return {path};
  if (DIR* d = opendir(path.c_str())) {
    while (dirent* e = readdir(d)) {
      std::string n = e->d_name;
      if (n.rfind("nvidia-", 0) == 0 && n.size() > 5 && n.substr(n.size() - 5) == ".json")
        files.push_back(path + "/" + n);
    }
    closedir(d);
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

// --merge OUT IN...: one result file from several partial runs (e.g. a GPU run split by --cases); later files win.
int Merge(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s --merge OUT.json IN.json...\n", argv[0]);
    return 2;
  }
  std::map<std::string, std::string> cases;  // name -> JSON object text
  conf::json::Value header;
  for (int i = 3; i < argc; ++i) {
    std::string text, err;
    if (!ReadFile(argv[i], &text)) {
      std::fprintf(stderr, "cannot read %s\n", argv[i]);
      return 2;
    }
    auto v = conf::json::Parse(text, &err);
    const conf::json::Value* c = v ? v->Find("cases") : nullptr;
    if (!c) {
      std::fprintf(stderr, "%s: %s\n", argv[i], v ? "no cases" : err.c_str());
      return 2;
    }
    if (i == 3) header = *v;
    for (const auto& [name, r] : c->object) {
      std::string obj = "{\"status\": " + conf::json::Quote(r.StringOr("status", "fail"));
      if (const auto* ms = r.Find("ms"); ms && ms->kind == conf::json::Value::Kind::Number)
        obj += ", \"ms\": " + std::to_string(static_cast<long long>(ms->number));
      std::string msg = r.StringOr("message", "");
      if (!msg.empty()) obj += ", \"message\": " + conf::json::Quote(msg);
      cases[name] = obj + "}";
    }
  }
  int pass = 0, fail = 0, ns = 0;
  for (const auto& [name, obj] : cases) {
    if (obj.find("\"pass\"") != std::string::npos)
      ++pass;
    else if (obj.find("\"not-supported\"") != std::string::npos)
      ++ns;
    else
      ++fail;
  }
  std::ofstream out(argv[2], std::ios::trunc);
  out << "{\n  \"schema\": 1,\n";
  for (const char* key : {"date", "label", "driver_version", "driver_library", "device_count", "device_name",
                          "compute_capability", "init_result"})
    out << "  \"" << key << "\": " << conf::json::Quote(header.StringOr(key, "")) << ",\n";
  out << "  \"summary\": {\"pass\": " << pass << ", \"fail\": " << fail << ", \"not-supported\": " << ns
      << ", \"total\": " << cases.size() << "},\n  \"cases\": {";
  bool first = true;
  for (const auto& [name, obj] : cases) {
    out << (first ? "\n" : ",\n") << "    " << conf::json::Quote(name) << ": " << obj;
    first = false;
  }
  out << "\n  }\n}\n";
  std::printf("[compare] merged %zu cases into %s\n", cases.size(), argv[2]);
  return out ? 0 : 2;
}

int main(int argc, char** argv) {
  if (argc >= 2 && std::string(argv[1]) == "--merge") return Merge(argc, argv);
  std::string actualPath, expectPath, knownPath, pendingOut;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--actual")
      actualPath = value();
    else if (a == "--expectations")
      expectPath = value();
    else if (a == "--known")
      knownPath = value();
    else if (a == "--write-pending")
      pendingOut = value();
    else {
      std::fprintf(stderr,
                   "usage: %s --actual cuemu.json --expectations DIR|FILE [--known known-differences.txt]\n"
                   "          [--write-pending FILE]  (writes known-differences lines for today's regressions)\n",
                   argv[0]);
      return 2;
    }
  }
  if (actualPath.empty() || expectPath.empty()) {
    std::fprintf(stderr, "--actual and --expectations are required\n");
    return 2;
  }
  Statuses actual;
  conf::json::Value actualDoc;
  if (!LoadResults(actualPath, &actual, &actualDoc)) return 2;
  std::vector<Known> known;
  if (!knownPath.empty() && !LoadKnown(knownPath, &known)) return 2;

  int pass = 0;
  for (const auto& [n, s] : actual) pass += s == "pass";
  std::printf("[compare] %s: %d of %zu cases pass (driver %s, %s)\n", actualPath.c_str(), pass, actual.size(),
              actualDoc.StringOr("driver_library", "?").c_str(), actualDoc.StringOr("device_name", "?").c_str());

  bool failed = false;
  for (const auto& [name, status] : actual) {
    Known* k = FindKnown(known, name);
    if (k && k->kind == "cuemu-only") {
      k->used = true;
      if (status != "pass") {
        std::printf("FAIL cuemu-only case does not pass on cuemu: %s (%s)\n", name.c_str(), status.c_str());
        failed = true;
      }
    }
  }

  auto files = ExpectationFiles(expectPath);
  if (files.empty()) {
    std::printf("[compare] no expectation file (nvidia-*.json) in %s yet: nothing to compare, reporting only.\n",
                expectPath.c_str());
    return failed ? 1 : 0;
  }
  std::set<std::string> gpuPass, gpuSeen;
  for (const auto& f : files) {
    Statuses exp;
    conf::json::Value doc;
    if (!LoadResults(f, &exp, &doc)) return 2;
    int p = 0;
    for (const auto& [n, s] : exp) {
      gpuSeen.insert(n);
      if (s == "pass") gpuPass.insert(n), ++p;
    }
    std::printf("[compare] expectation %s: %d of %zu pass on %s (driver %s)\n", f.c_str(), p, exp.size(),
                doc.StringOr("device_name", "?").c_str(), doc.StringOr("driver_version", "?").c_str());
  }

  std::vector<std::string> regressions, knownPending, missing, cuemuOnlyBetter, fixed;
  for (const auto& name : gpuPass) {
    auto it = actual.find(name);
    Known* k = FindKnown(known, name);
    if (k) k->used = true;
    if (it == actual.end()) {
      missing.push_back(name);
      continue;
    }
    if (it->second == "pass") {
      if (k && k->kind == "pending")
        fixed.push_back(name + "   (known-differences.txt:" + std::to_string(k->line) + ")");
      continue;
    }
    if (k && (k->kind == "pending" || k->kind == "gpu-only")) {
      knownPending.push_back(name + " [" + k->kind + ", issue " + k->issue + "]");
      continue;
    }
    regressions.push_back(name);
  }
  for (const auto& [name, status] : actual)
    if (status == "pass" && gpuSeen.count(name) && !gpuPass.count(name)) {
      Known* k = FindKnown(known, name);
      if (!(k && k->kind == "cuemu-only")) cuemuOnlyBetter.push_back(name);
    }

  for (const auto& n : regressions)
    std::printf("FAIL passes on the GPU, not on cuemu (%s): %s\n", actual[n].c_str(), n.c_str());
  std::printf("[compare] %zu regressions, %zu known differences, %zu GPU-passing cases absent from this run\n",
              regressions.size(), knownPending.size(), missing.size());
  for (const auto& n : missing) std::printf("note: not in this run (renamed or filtered?): %s\n", n.c_str());
  for (const auto& n : fixed) std::printf("note: listed as pending but passes now, remove it: %s\n", n.c_str());
  for (const auto& n : cuemuOnlyBetter)
    std::printf("note: passes on cuemu but not on the GPU (check the case or cuemu): %s\n", n.c_str());
  for (const auto& k : known)
    if (!k.used && k.pattern.find('*') == std::string::npos)
      std::printf("note: known-differences.txt:%d matches no compared case: %s\n", k.line, k.pattern.c_str());

  if (!pendingOut.empty()) {
    std::ofstream out(pendingOut, std::ios::app);
    for (const auto& n : regressions)
      out << n << " | pending | " << IssueFor(n) << " | not implemented in cuemu yet (" << actual[n] << ")\n";
    std::printf("[compare] appended %zu pending lines to %s\n", regressions.size(), pendingOut.c_str());
  }
  return (failed || !regressions.empty()) ? 1 : 0;
}
