// cuemu-nvcc: a stand-in for `nvcc` that runs the CUDA toolkit's nvcc and makes what it writes runnable on cuemu,
// which runs PTX, not SASS. `cuemu run` puts it first on the program's PATH as `nvcc` (and names it in NVCC, which
// CuPy reads), unless `--nvcc off`.
//
//   --cubin / -cubin   the "cubin" written is the kernel's PTX (NUL-terminated, which cuModuleLoadData reads), made
//                      by nvcc --ptx for the virtual architecture of the requested one (sm_90 -> compute_90). PyCUDA's
//                      SourceModule and CuPy's nvcc backend compile this way and load the file with
//                      cuModuleLoadData; a GPU would get SASS, which cuemu cannot run.
//                      With --device-link it refuses: device linking gives SASS only.
//   --version / -V     nvcc's text and a line that names this stand-in (clients that cache kernels by the
//                      version, such as PyCUDA, then keep its cubins apart from the toolkit nvcc's).
//   anything else      nvcc runs with the same arguments, except that each compilation target that names only real
//                      architectures (-gencode arch=compute_90,code=sm_90; -arch=sm_90 -code=sm_90) also embeds the
//                      PTX of its virtual one, so that fatbinaries, objects and programs built here run on cuemu.
//                      -arch=sm_90 alone already embeds compute_90 PTX, as nvcc documents.
//
// The toolkit's nvcc: $CUEMU_REAL_NVCC, else the first `nvcc` on PATH that is not this program, else
// $CUDA_HOME/bin/nvcc, $CUDA_PATH/bin/nvcc, /usr/local/cuda/bin/nvcc, else the one cuemu was built with.
// Exit status: nvcc's, or 2 when no nvcc is found or a file cannot be written.
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace {

namespace fs = std::filesystem;

constexpr const char* kSelf = "cuemu-nvcc";

// nvcc's options whose value may be the next argument (`-o out`); from `nvcc --help` of CUDA 13.0, both spellings.
bool takesValue(std::string_view option) {
  static constexpr std::string_view kOptions[] = {"--output-file",
                                                  "-o",
                                                  "--pre-include",
                                                  "-include",
                                                  "--library",
                                                  "-l",
                                                  "--define-macro",
                                                  "-D",
                                                  "--undefine-macro",
                                                  "-U",
                                                  "--include-path",
                                                  "-I",
                                                  "--system-include",
                                                  "-isystem",
                                                  "--library-path",
                                                  "-L",
                                                  "--output-directory",
                                                  "-odir",
                                                  "--compiler-bindir",
                                                  "-ccbin",
                                                  "--archiver-binary",
                                                  "-arbin",
                                                  "--libdevice-directory",
                                                  "-ldir",
                                                  "--target-directory",
                                                  "-target-dir",
                                                  "--optimization-info",
                                                  "-opt-info",
                                                  "--optimize",
                                                  "-O",
                                                  "--Ofast-compile",
                                                  "-Ofc",
                                                  "--dopt",
                                                  "-dopt",
                                                  "--ftemplate-backtrace-limit",
                                                  "-ftemplate-backtrace-limit",
                                                  "--ftemplate-depth",
                                                  "-ftemplate-depth",
                                                  "--compiler-options",
                                                  "-Xcompiler",
                                                  "--linker-options",
                                                  "-Xlinker",
                                                  "--archive-options",
                                                  "-Xarchive",
                                                  "--ptxas-options",
                                                  "-Xptxas",
                                                  "--nvlink-options",
                                                  "-Xnvlink",
                                                  "--threads",
                                                  "-t",
                                                  "--split-compile",
                                                  "-split-compile",
                                                  "--split-compile-extended",
                                                  "-split-compile-extended",
                                                  "--fdevice-time-trace",
                                                  "-fdevice-time-trace",
                                                  "--keep-dir",
                                                  "-keep-dir",
                                                  "--time",
                                                  "-time",
                                                  "--run-args",
                                                  "-run-args",
                                                  "--input-drive-prefix",
                                                  "-idp",
                                                  "--dependency-drive-prefix",
                                                  "-ddp",
                                                  "--drive-prefix",
                                                  "-dp",
                                                  "--dependency-target-name",
                                                  "-MT",
                                                  "--dependency-output",
                                                  "-MF",
                                                  "--gpu-architecture",
                                                  "-arch",
                                                  "--gpu-code",
                                                  "-code",
                                                  "--generate-code",
                                                  "-gencode",
                                                  "--maxrregcount",
                                                  "-maxrregcount",
                                                  "--Werror",
                                                  "-Werror",
                                                  "--diag-error",
                                                  "-diag-error",
                                                  "--diag-suppress",
                                                  "-diag-suppress",
                                                  "--diag-warn",
                                                  "-diag-warn",
                                                  "--jump-table-density",
                                                  "-jtd",
                                                  "--frandom-seed",
                                                  "-frandom-seed",
                                                  "--sanitize",
                                                  "-sanitize",
                                                  "--options-file",
                                                  "-optf",
                                                  "--cudart",
                                                  "-cudart",
                                                  "--cudadevrt",
                                                  "-cudadevrt",
                                                  "--x",
                                                  "-x",
                                                  "--std",
                                                  "-std",
                                                  "--machine",
                                                  "-m",
                                                  "--static-global-template-stub",
                                                  "-static-global-template-stub",
                                                  "--device-entity-has-hidden-visibility",
                                                  "-device-entity-has-hidden-visibility",
                                                  "--relocatable-device-code",
                                                  "-rdc",
                                                  "--ftz",
                                                  "-ftz",
                                                  "--prec-div",
                                                  "-prec-div",
                                                  "--prec-sqrt",
                                                  "-prec-sqrt",
                                                  "--fmad",
                                                  "-fmad",
                                                  "--default-stream",
                                                  "-default-stream",
                                                  "--host-linker-script",
                                                  "-hls",
                                                  "--brief-diagnostics",
                                                  "-brief-diag",
                                                  "--device-stack-protector",
                                                  "-device-stack-protector"};
  for (std::string_view name : kOptions)
    if (option == name) return true;
  return false;
}

// One command-line option as nvcc reads it: its name, and its value (joined with '=' or the next argument).
struct Option {
  std::string name;
  std::string value;
  bool joined = false;  // written as name=value
  bool hasValue = false;
};

// The arguments, split into options and input files.
struct CommandLine {
  std::vector<Option> options;
  std::vector<std::string> inputs;
};

// Empty for a command line that cannot be read (an option's value missing): nvcc then says what is wrong with it.
std::optional<CommandLine> parse(int argc, char** argv) {
  CommandLine line;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.size() < 2 || a[0] != '-') {
      line.inputs.push_back(a);
      continue;
    }
    Option o;
    const size_t eq = a.find('=');
    o.name = a.substr(0, eq);
    if (eq != std::string::npos) {
      o.value = a.substr(eq + 1);
      o.joined = o.hasValue = true;
    } else if (takesValue(o.name)) {
      if (i + 1 >= argc) return std::nullopt;
      o.value = argv[++i];
      o.hasValue = true;
    }  // -Idir, -DNAME, -O3, -lineinfo: one argument, kept as it is
    line.options.push_back(std::move(o));
  }
  return line;
}

std::vector<std::string> render(const CommandLine& line) {
  std::vector<std::string> args;
  for (const Option& o : line.options) {
    if (!o.hasValue) {
      args.push_back(o.name);
    } else if (o.joined) {
      args.push_back(o.name + "=" + o.value);
    } else {
      args.push_back(o.name);
      args.push_back(o.value);
    }
  }
  for (const std::string& input : line.inputs) args.push_back(input);
  return args;
}

bool named(const Option& o, std::string_view shortName, std::string_view longName) {
  return o.name == shortName || o.name == longName;
}

// sm_90a -> compute_90a; compute_90 stays; anything else (native, all, all-major) -> "".
std::string virtualOf(std::string_view arch) {
  if (arch.rfind("compute_", 0) == 0) return std::string(arch);
  if (arch.rfind("sm_", 0) == 0) return "compute_" + std::string(arch.substr(3));
  return {};
}

// "[sm_90,compute_90]", "sm_90,sm_80" or "\"sm_90\"": the list's names.
std::vector<std::string> splitList(std::string text) {
  std::string clean;
  for (char c : text)
    if (c != '[' && c != ']' && c != '"' && c != '\'' && c != ' ') clean += c;
  std::vector<std::string> names;
  size_t start = 0;
  while (start <= clean.size()) {
    size_t comma = clean.find(',', start);
    if (comma == std::string::npos) comma = clean.size();
    if (comma > start) names.push_back(clean.substr(start, comma - start));
    start = comma + 1;
  }
  return names;
}

bool hasVirtual(const std::vector<std::string>& codes) {
  for (const std::string& c : codes)
    if (c.rfind("compute_", 0) == 0) return true;
  return false;
}

// "sm_90,compute_90" (-code's form), or "[sm_90,compute_90]" (a -gencode code= list).
std::string joinList(const std::vector<std::string>& names, bool brackets) {
  std::string text;
  for (size_t i = 0; i < names.size(); ++i) text += (i ? "," : "") + names[i];
  return brackets ? "[" + text + "]" : text;
}

// -gencode arch=compute_90,code=sm_90 (also code=[sm_90,sm_90a]): with the virtual architecture's PTX added when the
// codes name real architectures only.
std::string withPtx(const std::string& gencode) {
  const size_t archAt = gencode.find("arch=");
  const size_t codeAt = gencode.find("code=");
  if (archAt == std::string::npos || codeAt == std::string::npos) return gencode;
  const size_t archEnd = gencode.find(',', archAt);
  if (archEnd == std::string::npos || archEnd > codeAt) return gencode;
  const std::string arch = gencode.substr(archAt + 5, archEnd - archAt - 5);
  std::vector<std::string> codes = splitList(gencode.substr(codeAt + 5));
  const std::string ptx = virtualOf(arch);
  if (ptx.empty() || hasVirtual(codes)) return gencode;
  codes.push_back(ptx);
  return gencode.substr(0, codeAt + 5) + joinList(codes, true);
}

// Every target of the command line that names real architectures only gets its PTX too.
void addPtxTargets(CommandLine& line) {
  Option* arch = nullptr;
  Option* code = nullptr;
  for (Option& o : line.options) {
    if (named(o, "-gencode", "--generate-code") && o.hasValue) o.value = withPtx(o.value);
    if (named(o, "-arch", "--gpu-architecture") && o.hasValue) arch = &o;
    if (named(o, "-code", "--gpu-code") && o.hasValue) code = &o;
  }
  if (arch && code) {  // -arch=X -code=sm_Y...: the codes say what is embedded
    std::vector<std::string> codes = splitList(code->value);
    const std::string ptx = virtualOf(arch->value);
    if (!ptx.empty() && !hasVirtual(codes)) {
      codes.push_back(ptx);
      code->value = joinList(codes, false);
      arch->value = ptx;  // with a virtual code in the list, nvcc wants -arch virtual
    }
  }
}

// The --cubin command as a --ptx one: every real architecture named becomes its virtual one (a cubin is for one
// architecture; nvcc refuses more). Returns the error text when the targets cannot be read.
std::string cubinToPtx(CommandLine& line) {
  std::vector<Option> kept;
  std::string target;
  for (Option& o : line.options) {
    if (named(o, "-cubin", "--cubin")) {
      kept.push_back({"--ptx", "", false, false});
      continue;
    }
    if (named(o, "-code", "--gpu-code")) continue;  // the architecture below decides
    if (named(o, "-o", "--output-file") || named(o, "-odir", "--output-directory")) continue;  // the PTX file is ours
    if (named(o, "-arch", "--gpu-architecture") && o.hasValue) {
      const std::string ptx = virtualOf(o.value);
      if (!ptx.empty()) {
        if (!target.empty() && target != ptx) return "a cubin is for one architecture";
        target = ptx;
        continue;
      }
    }
    if (named(o, "-gencode", "--generate-code") && o.hasValue) {
      const size_t archAt = o.value.find("arch=");
      const size_t archEnd = o.value.find(',', archAt == std::string::npos ? 0 : archAt);
      if (archAt == std::string::npos) return "cannot read -gencode " + o.value;
      const std::string ptx = virtualOf(o.value.substr(archAt + 5, archEnd - archAt - 5));
      if (ptx.empty()) return "cannot read -gencode " + o.value;
      if (!target.empty() && target != ptx) return "a cubin is for one architecture";
      target = ptx;
      continue;
    }
    kept.push_back(o);
  }
  if (!target.empty()) kept.push_back({"-arch", target, true, true});
  line.options = std::move(kept);
  return {};
}

bool has(const CommandLine& line, std::string_view shortName, std::string_view longName) {
  for (const Option& o : line.options)
    if (named(o, shortName, longName)) return true;
  return false;
}

// Commands that compile nothing: passed on as they are.
bool compilesNothing(const CommandLine& line) {
  return has(line, "-h", "--help") || has(line, "-E", "--preprocess") || has(line, "-M", "--generate-dependencies") ||
         has(line, "-MM", "--generate-nonsystem-dependencies") || has(line, "--list-gpu-arch", "-arch-ls") ||
         has(line, "--list-gpu-code", "-code-ls") || has(line, "-ptx", "--ptx");
}

std::string valueOf(const CommandLine& line, std::string_view shortName, std::string_view longName) {
  for (const Option& o : line.options)
    if (named(o, shortName, longName)) return o.value;
  return {};
}

std::optional<fs::path> executable(const fs::path& p) {
  std::error_code ec;
  if (p.empty() || !fs::is_regular_file(p, ec) || access(p.c_str(), X_OK) != 0) return std::nullopt;
  return p;
}

bool isSelf(const fs::path& p) {
  std::error_code a, b;
  const fs::path mine = fs::canonical("/proc/self/exe", a), theirs = fs::canonical(p, b);
  return !a && !b && mine == theirs;
}

std::optional<fs::path> realNvcc() {
  if (const char* set = std::getenv("CUEMU_REAL_NVCC"); set && *set)
    if (auto p = executable(set); p && !isSelf(*p)) return p;
  if (const char* path = std::getenv("PATH")) {
    std::string_view rest = path;
    while (!rest.empty()) {
      const size_t colon = rest.find(':');
      const std::string_view dir = rest.substr(0, colon);
      rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
      if (dir.empty()) continue;
      if (auto p = executable(fs::path(dir) / "nvcc"); p && !isSelf(*p)) return p;
    }
  }
  for (const char* variable : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* root = std::getenv(variable); root && *root)
      if (auto p = executable(fs::path(root) / "bin" / "nvcc"); p && !isSelf(*p)) return p;
  if (auto p = executable("/usr/local/cuda/bin/nvcc"); p && !isSelf(*p)) return p;
#ifdef CUEMU_TOOLKIT_NVCC
  if (auto p = executable(CUEMU_TOOLKIT_NVCC); p && !isSelf(*p)) return p;
#endif
  return std::nullopt;
}

// An exec'able command line: the program, then the arguments (the strings stay owned here).
struct ExecLine {
  std::string program;
  std::vector<std::string> args;
  std::vector<char*> argv;
  ExecLine(const fs::path& nvcc, const std::vector<std::string>& arguments) : program(nvcc.string()), args(arguments) {
    argv.push_back(program.data());
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
  }
  [[noreturn]] void exec(int status) {
    execv(program.c_str(), argv.data());
    std::fprintf(stderr, "%s: cannot run %s: %s\n", kSelf, program.c_str(), std::strerror(errno));
    _exit(status);
  }
};

int run(const fs::path& nvcc, const std::vector<std::string>& args) {
  ExecLine line(nvcc, args);
  const pid_t child = fork();
  if (child < 0) {
    std::fprintf(stderr, "%s: cannot start %s: %s\n", kSelf, line.program.c_str(), std::strerror(errno));
    return 2;
  }
  if (child == 0) line.exec(127);
  int status = 0;
  while (waitpid(child, &status, 0) < 0)
    if (errno != EINTR) return 2;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

[[noreturn]] void replaceWith(const fs::path& nvcc, const std::vector<std::string>& args) {
  std::fflush(nullptr);
  ExecLine(nvcc, args).exec(2);
}

// nvcc's own name for the cubin of an input: its file name with the extension replaced, in the output directory
// (-odir) or the current folder.
std::string defaultCubinName(const std::string& input, const std::string& folder) {
  const fs::path name = fs::path(input).filename().replace_extension(".cubin");
  return folder.empty() ? name.string() : (fs::path(folder) / name).string();
}

// nvcc --cubin, made PTX: each input compiled with --ptx into a private folder, its text written (with the NUL that
// cuModuleLoadData reads up to) where nvcc would have written the cubin.
int compileCubin(const fs::path& nvcc, CommandLine line) {
  if (has(line, "-dlink", "--device-link")) {
    std::fprintf(stderr,
                 "%s: --cubin --device-link: a device-linked cubin is SASS (nvlink links machine code), which cuemu "
                 "cannot run; link relocatable code as PTX through the driver instead (cuLinkCreate, as NVRTC "
                 "clients do: CuPy's default backend)\n",
                 kSelf);
    return 2;
  }
  const std::string output = valueOf(line, "-o", "--output-file");
  const std::string outputFolder = valueOf(line, "-odir", "--output-directory");
  if (std::string error = cubinToPtx(line); !error.empty()) {
    std::fprintf(stderr, "%s: --cubin: %s\n", kSelf, error.c_str());
    return 2;
  }
  if (line.inputs.empty() || (!output.empty() && line.inputs.size() > 1)) return run(nvcc, render(line));
  const char* tmp = std::getenv("TMPDIR");
  std::string folder = std::string(tmp && *tmp ? tmp : "/tmp") + "/cuemu-nvcc.XXXXXX";
  if (!mkdtemp(folder.data())) {
    std::fprintf(stderr, "%s: cannot make a temporary folder in %s: %s\n", kSelf, tmp && *tmp ? tmp : "/tmp",
                 std::strerror(errno));
    return 2;
  }
  int status = 0;
  const std::vector<std::string> inputs = line.inputs;
  for (const std::string& input : inputs) {
    CommandLine one = line;
    one.inputs = {input};
    // PTX given as the input (nvcc would assemble it) is the cubin as it is
    const bool givenPtx = fs::path(input).extension() == ".ptx";
    const std::string ptx =
        givenPtx ? input : folder + "/" + fs::path(input).filename().replace_extension(".ptx").string();
    if (!givenPtx) {
      one.options.push_back({"-o", ptx, false, true});
      status = run(nvcc, render(one));
      if (status != 0) break;
    }
    std::ifstream in(ptx, std::ios::binary);
    if (!in.is_open()) {
      std::fprintf(stderr, "%s: cannot read %s\n", kSelf, ptx.c_str());
      status = 2;
      break;
    }
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::string target = output.empty() ? defaultCubinName(input, outputFolder) : output;
    std::ofstream out(target, std::ios::binary | std::ios::trunc);
    out.write(text.data(), std::streamsize(text.size()));
    out.put('\0');
    out.close();
    if (!out) {
      std::fprintf(stderr, "%s: cannot write %s\n", kSelf, target.c_str());
      status = 2;
      break;
    }
  }
  std::error_code ec;
  fs::remove_all(folder, ec);
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  std::optional<fs::path> nvcc = realNvcc();
  if (!nvcc) {
    std::fprintf(stderr,
                 "%s: no CUDA toolkit nvcc found (set CUEMU_REAL_NVCC, or put the toolkit's bin folder on PATH)\n",
                 kSelf);
    return 2;
  }
  const std::vector<std::string> asGiven(argv + 1, argv + argc);
  std::optional<CommandLine> line = parse(argc, argv);
  if (!line) replaceWith(*nvcc, asGiven);  // nvcc says what is wrong with it
  // The version text says that this nvcc's cubins are PTX: clients that key a cache of compiled kernels on it
  // (PyCUDA's compiler cache hashes `nvcc --version`) then do not take a SASS cubin the toolkit's nvcc wrote.
  if (has(*line, "-V", "--version")) {
    const int status = run(*nvcc, asGiven);
    if (status == 0) std::printf("%s: cuemu's stand-in; its cubins are PTX, which cuemu runs\n", kSelf);
    return status;
  }
  if (compilesNothing(*line)) replaceWith(*nvcc, asGiven);
  if (has(*line, "-cubin", "--cubin")) return compileCubin(*nvcc, *line);
  addPtxTargets(*line);
  replaceWith(*nvcc, render(*line));
}
