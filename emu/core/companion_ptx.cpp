#include "core/companion_ptx.h"

#include "core/user_cache.h"

#include <fmt/format.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

namespace cuemu {
namespace {

namespace fs = std::filesystem;

constexpr uintmax_t kMaxPtxBytes = uintmax_t(512) << 20;
constexpr size_t kMaxCandidates = 256;  // newest files looked at per load
// /proc/stat's boot time has whole seconds: a file written in the process's first second may look a little older.
constexpr double kStartSlackSeconds = 2;

uint64_t fnv1a(std::string_view bytes) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : bytes) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

std::optional<std::string> readFile(const fs::path& path) {
  std::error_code ec;
  const uintmax_t size = fs::file_size(path, ec);
  if (ec || size > kMaxPtxBytes) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  std::string text(size, '\0');
  if (!in.read(text.data(), std::streamsize(size))) return std::nullopt;
  return text;
}

// When this process started, in seconds since the epoch (/proc/self/stat's start time after /proc/stat's boot
// time); 0 when unknown.
double processStartTime() {
  static const double start = [] {
    std::ifstream stat("/proc/self/stat");
    std::string line;
    std::getline(stat, line);
    const size_t command = line.rfind(')');  // the command may hold spaces and parentheses
    if (command == std::string::npos || command + 2 > line.size()) return 0.0;
    std::istringstream fields(line.substr(command + 2));
    std::string skipped;
    for (int field = 3; field < 22 && fields >> skipped; ++field) {}
    unsigned long long ticks = 0;
    if (!(fields >> ticks)) return 0.0;
    std::ifstream machine("/proc/stat");
    std::string key;
    unsigned long long boot = 0;
    while (machine >> key) {
      if (key == "btime") {
        machine >> boot;
        break;
      }
      machine.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
    }
    const long hz = sysconf(_SC_CLK_TCK);
    return boot && hz > 0 ? double(boot) + double(ticks) / double(hz) : 0.0;
  }();
  return start;
}

double modificationTime(const fs::path& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return 0;
  return double(st.st_mtim.tv_sec) + double(st.st_mtim.tv_nsec) * 1e-9;
}

fs::path cacheFolder() {
  const fs::path user = userCacheFolder();
  return user.empty() ? user : user / "cuemu" / "companion-ptx";
}

bool definesAll(std::string_view ptx, const std::vector<std::string>& kernels) {
  const std::vector<std::string> declared = declaredFunctionNames(ptx);
  return std::all_of(kernels.begin(), kernels.end(), [&](const std::string& k) {
    return std::find(declared.begin(), declared.end(), k) != declared.end();
  });
}

// Keeps the PTX under the SASS's hash (written to a temporary name, then renamed: readers never see half a file).
void remember(const fs::path& folder, const std::string& key, const std::string& text) {
  std::error_code ec;
  fs::create_directories(folder, ec);
  if (ec) return;
  const fs::path temporary = folder / fmt::format(".{}.{}", key, getpid());
  {
    std::ofstream out(temporary, std::ios::binary);
    if (!out.write(text.data(), std::streamsize(text.size()))) return;
  }
  fs::rename(temporary, folder / (key + ".ptx"), ec);
  if (ec) fs::remove(temporary, ec);
}

}  // namespace

std::vector<std::string> declaredFunctionNames(std::string_view ptx) {
  std::vector<std::string> names;
  auto isName = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '.'; };
  auto skipSpace = [&](size_t i) {
    while (i < ptx.size() && std::isspace(static_cast<unsigned char>(ptx[i]))) ++i;
    return i;
  };
  for (std::string_view directive : {std::string_view(".entry"), std::string_view(".func")}) {
    for (size_t at = ptx.find(directive); at != std::string_view::npos; at = ptx.find(directive, at + 1)) {
      const size_t after = at + directive.size();
      if ((at > 0 && isName(ptx[at - 1])) || (after < ptx.size() && isName(ptx[after]))) continue;
      size_t i = skipSpace(after);
      if (i < ptx.size() && ptx[i] == '(') {  // a .func's return parameters
        const size_t close = ptx.find(')', i);
        if (close == std::string_view::npos) break;
        i = skipSpace(close + 1);
      }
      size_t end = i;
      while (end < ptx.size() && isName(ptx[end])) ++end;
      if (end > i) names.emplace_back(ptx.substr(i, end - i));
    }
  }
  return names;
}

std::optional<CompanionPtx> findCompanionPtx(std::string_view sass, const std::vector<std::string>& kernels) {
  if (kernels.empty()) return std::nullopt;
  const std::string key = fmt::format("{:016x}-{}", fnv1a(sass), sass.size());
  const fs::path cache = cacheFolder();
  std::error_code ec;
  if (!cache.empty()) {
    const fs::path kept = cache / (key + ".ptx");
    if (fs::exists(kept, ec))
      if (auto text = readFile(kept); text && definesAll(*text, kernels)) return CompanionPtx{std::move(*text), kept};
  }
  const char* folders = std::getenv("CUEMU_COMPANION_PTX_DIR");
  if (!folders || !*folders) return std::nullopt;
  const double start = processStartTime();
  std::vector<std::pair<double, fs::path>> candidates;
  std::string_view list(folders);
  while (!list.empty()) {
    const size_t colon = list.find(':');
    const fs::path folder(std::string(list.substr(0, colon)));
    list = colon == std::string_view::npos ? std::string_view() : list.substr(colon + 1);
    if (folder.empty()) continue;
    auto addFilesOf = [&](const fs::path& where) {
      std::error_code walk;
      for (fs::directory_iterator it(where, walk), end; !walk && it != end; it.increment(walk)) {
        if (it->path().extension() != ".ptx" || !it->is_regular_file(walk)) continue;
        const double written = modificationTime(it->path());
        if (start > 0 && written < start - kStartSlackSeconds) continue;  // another process's
        candidates.emplace_back(written, it->path());
      }
    };
    if (folder.filename() != "*") {
      addFilesOf(folder);
      continue;
    }
    // FOLDER/*: the folders in FOLDER written since the process started (the DSL compiles some kernels into a
    // temporary folder of its own: cutlass.utils.HardwareInfo)
    for (fs::directory_iterator it(folder.parent_path(), ec), end; !ec && it != end; it.increment(ec)) {
      std::error_code kind;
      if (!it->is_directory(kind) || (start > 0 && modificationTime(it->path()) < start - kStartSlackSeconds)) continue;
      addFilesOf(it->path());
    }
    ec.clear();
  }
  std::sort(candidates.begin(), candidates.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  if (candidates.size() > kMaxCandidates) candidates.resize(kMaxCandidates);
  for (const auto& [written, path] : candidates) {
    auto text = readFile(path);
    if (!text || !definesAll(*text, kernels)) continue;
    if (!cache.empty()) remember(cache, key, *text);
    return CompanionPtx{std::move(*text), path.string()};
  }
  return std::nullopt;
}

}  // namespace cuemu
