#include "cli/launcher.h"

#include "core/checkers.h"
#include "core/config.h"
#include "core/device.h"
#include "core/driver.h"
#include "core/user_cache.h"

#include <ptx/exec.h>

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>

extern char** environ;

namespace cuemu::cli {

const std::vector<Setting>& settings() {
  static const std::vector<Setting> table = {
      {"--deterministic", "CUEMU_DETERMINISTIC", nullptr,
       "run all work in program order with CTAs and warps in a fixed order: identical results every run"},
      {"--seed", "CUEMU_SCHEDULE_SEED", "N", "with --deterministic: another reproducible CTA/warp order"},
      {"--threads", "CUEMU_THREADS", "N", "host threads that run one grid's CTAs (default: all cores)"},
      {"--device-profile", "CUEMU_DEVICE_PROFILE", "NAME", "profile of every virtual device (see `cuemu devices`)"},
      {"--device-count", "CUEMU_DEVICE_COUNT", "N", "number of virtual devices (0..64)"},
      {"--device-memory", "CUEMU_DEVICE_MEMORY", "SIZE", "memory each device reports (bytes, or with K/M/G/T)"},
      {"--config", "CUEMU_CONFIG", "FILE", "a configuration file of key = value lines (docs/devices.md)"},
      {"--kernel-timeout", "CUEMU_KERNEL_TIMEOUT", "SECONDS",
       "stop a grid still running after this long: its launch fails with CUDA_ERROR_LAUNCH_TIMEOUT"},
      {"--bounds", "CUEMU_BOUNDS", "MODE",
       "where an access past an allocation faults: granule (as on a GPU, default) or exact (one byte past)"},
      {"--ipc", "CUEMU_IPC", "MODE",
       "on (default): device memory can be exported to other processes; off: private memory, faster to touch "
       "first on hosts without shared-memory huge pages, and cuIpcGetMemHandle answers CUDA_ERROR_NOT_SUPPORTED"},
      {"--rewrites", "CUEMU_REWRITES", "LIST",
       "interpreter fast paths: all, none, or a list such as -setp-branch or -runtime"},
      {"--timeline", "CUEMU_TIMELINE", "FILE",
       "write a Chrome/Perfetto trace (driver calls per thread, stream items, dependencies) to FILE at exit"},
      {"--trace", "CUEMU_TRACE", "FILE", "log every driver call with its arguments and result to FILE (or stderr)"},
      {"--log", "CUEMU_LOG", "FILE", "verbose diagnostics to FILE (or stderr)"},
      {"--dump-ptx", "CUEMU_DUMP_PTX", "DIR",
       "write every PTX module the program loads (from its fatbinaries and libraries, as cuemu compiles it) to DIR"},
      {"--ptx-isa", "CUEMU_PTX_ISA", "MODE",
       "newest (the default here): PTX of any ISA 9.x, which toolkits newer than the driver write (NVRTC, NVVM "
       "13.1+ from PyPI); driver: up to 9.0, as driver 580 (newer is CUDA_ERROR_UNSUPPORTED_PTX_VERSION)"},
      {"--driver-version", "CUEMU_DRIVER_VERSION", "VERSION",
       "the CUDA version the driver reports and accepts, 13.0 (driver 580, the default) to 13.9: PTX ISA up to 9.Y "
       "and cuGetProcAddress requests up to 13.Y, as a newer driver would (the entry points stay driver 580's); for "
       "clients that give an older driver SASS instead of PTX (NVIDIA Warp: 13.4)"},
      {"--tool", "CUEMU_TOOL", "TOOL",
       "check the program as compute-sanitizer's tool of that name does: memcheck, racecheck, initcheck, synccheck"},
      {"--leak-check", "CUEMU_LEAK_CHECK", "MODE",
       "with --tool memcheck: full reports device memory and device-heap blocks never freed (default: no)"},
      {"--racecheck-global", "CUEMU_RACECHECK_GLOBAL", "MODE",
       "with --tool racecheck: yes also reports races in global memory between threads of a grid (default: no; "
       "costs a shadow entry per global word a grid accesses)"},
      {"--synccheck-strict", "CUEMU_SYNCCHECK_STRICT", "MODE",
       "with --tool synccheck: yes also reports what compute-sanitizer does not: warp-collective masks naming "
       "exited, non-converged or differently-masked lanes or leaving out the thread, and named barriers reached by "
       "more threads than their count (default: no)"},
      {"--progress", "CUEMU_PROGRESS", nullptr, "a live line on stderr for long grids: CTAs done / total"},
      {"--native", "CUEMU_NATIVE", "MODE",
       "on: kernels launched often are compiled to host code in the background and later launches run it (the "
       "native tier, docs/native-tier.md; needs libcuemu-native.so and LLVM 14, see `cuemu info`); off (default): "
       "every kernel is interpreted"},
      {"--nvcc", "CUEMU_NVCC_SHIM", "MODE",
       "on (default): `nvcc` on the program's PATH (and CuPy's NVCC) is cuemu-nvcc, which runs the toolkit's nvcc "
       "and makes what it writes run here: a --cubin (PyCUDA, CuPy's nvcc backend) becomes the kernel's PTX, and "
       "targets of real architectures only (-gencode arch=compute_90,code=sm_90) embed their PTX too; off: the "
       "machine's nvcc"},
      {"--dev-files", "CUEMU_DEV_FILES", "MODE",
       "on (default): the program sees NVIDIA's device files /dev/nvidiactl and /dev/nvidia0.. (one per device; "
       "clients such as JAX look for them before they load the driver); off: it sees the machine's own /dev"},
  };
  return table;
}

std::vector<std::string> validateSettings(const SettingValues& values) {
  std::vector<std::string> problems;
  auto unsignedValue = [&](const std::string& name, const std::string& text, unsigned long long max) {
    char* end = nullptr;
    errno = 0;
    unsigned long long v = std::strtoull(text.c_str(), &end, 0);
    if (text.empty() || *end || errno || v > max || text[0] == '-')
      problems.push_back(fmt::format("{}={}: not a number in 0..{}", name, text, max));
  };
  for (const auto& [name, value] : values) {
    if (name == "CUEMU_SCHEDULE_SEED") {
      unsignedValue(name, value, UINT64_MAX);
    } else if (name == "CUEMU_THREADS") {
      unsignedValue(name, value, 4096);
    } else if (name == "CUEMU_DEVICE_COUNT") {
      unsignedValue(name, value, 64);
    } else if (name == "CUEMU_DEVICE_PROFILE") {
      if (auto profile = builtinProfile(value); !profile)
        problems.push_back(fmt::format("{}={}: {}", name, value, profile.error().message));
    } else if (name == "CUEMU_DEVICE_MEMORY") {
      if (auto bytes = parseByteSize(value); !bytes)
        problems.push_back(fmt::format("{}={}: {}", name, value, bytes.error().message));
    } else if (name == "CUEMU_KERNEL_TIMEOUT") {
      if (auto ms = parseKernelTimeout(value); !ms)
        problems.push_back(fmt::format("{}={}: {}", name, value, ms.error().message));
    } else if (name == "CUEMU_BOUNDS") {
      if (value != "granule" && value != "exact")
        problems.push_back(fmt::format("{}={}: neither 'granule' nor 'exact'", name, value));
    } else if (name == "CUEMU_IPC" || name == "CUEMU_DEV_FILES" || name == "CUEMU_NATIVE" ||
               name == "CUEMU_NVCC_SHIM") {
      if (value != "on" && value != "off" && value != "1" && value != "0")
        problems.push_back(fmt::format("{}={}: neither 'on' nor 'off'", name, value));
    } else if (name == "CUEMU_PTX_ISA") {
      if (value != "driver" && value != "newest")
        problems.push_back(fmt::format("{}={}: neither 'driver' nor 'newest'", name, value));
    } else if (name == "CUEMU_DRIVER_VERSION") {
      if (auto version = parseDriverVersion(value); !version)
        problems.push_back(fmt::format("{}={}: {}", name, value, version.error().message));
    } else if (name == "CUEMU_REWRITES") {
      uint32_t mask = 0;
      std::string error;
      if (!ptx::exec::parseRewrites(value, mask, error))
        problems.push_back(fmt::format("{}={}: {}", name, value, error));
    } else if (name == "CUEMU_TOOL") {
      if (checkers::Tool tool; !checkers::parseTool(value, tool))
        problems.push_back(fmt::format("{}={}: not one of memcheck, racecheck, initcheck, synccheck", name, value));
    } else if (name == "CUEMU_LEAK_CHECK") {
      if (value != "full" && value != "no")
        problems.push_back(fmt::format("{}={}: neither 'full' nor 'no'", name, value));
    } else if (name == "CUEMU_RACECHECK_GLOBAL" || name == "CUEMU_SYNCCHECK_STRICT") {
      if (value != "yes" && value != "no")
        problems.push_back(fmt::format("{}={}: neither 'yes' nor 'no'", name, value));
    } else if (name == "CUEMU_CONFIG") {
      if (!std::filesystem::is_regular_file(value)) problems.push_back(fmt::format("{}={}: no such file", name, value));
    }
  }
  return problems;
}

namespace {

std::filesystem::path selfDirectory() {
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::filesystem::path() : self.parent_path();
}

}  // namespace

std::string findLibraryDir(std::vector<std::string>& tried) {
  std::vector<std::filesystem::path> candidates;
  if (const char* dir = std::getenv("CUEMU_LIBRARY_DIR"); dir && *dir) {
    candidates.emplace_back(dir);
  } else {
    auto self = selfDirectory();
    // CUEMU_BIN_TO_LIB: where packaging/install.cmake puts the library, seen from the installed command.
    candidates = {self, self / CUEMU_BIN_TO_LIB, self / ".." / "lib" / "cuemu", self / ".." / "lib"};
  }
  for (const auto& dir : candidates) {
    std::error_code ec;
    auto canonical = std::filesystem::weakly_canonical(dir, ec);
    const auto& shown = ec ? dir : canonical;
    if (std::find(tried.begin(), tried.end(), shown.string()) != tried.end()) continue;
    tried.push_back(shown.string());
    if (std::filesystem::exists(shown / "libcuda.so.1", ec)) return shown.string();
  }
  return {};
}

namespace {

// Makes `link` a symbolic link to `target` (replaced atomically when it points elsewhere: launches may race).
bool linkTo(const std::filesystem::path& target, const std::filesystem::path& link) {
  std::error_code ec;
  if (std::filesystem::read_symlink(link, ec) == target) return true;
  auto temporary = link;
  temporary += ".new" + std::to_string(getpid());
  std::filesystem::remove(temporary, ec);
  std::filesystem::create_symlink(target, temporary, ec);
  if (ec) return false;
  std::filesystem::rename(temporary, link, ec);
  return !ec;
}

// A CUDA root made of links, for a stand-in tool of cuemu's as one of the root's bin/ programs: the installed one
// beside the library (`folder`, whose bin/`program` exists; emu/`folder` in the build tree), else, where the
// installation has none (a wheel cannot hold links), one in the user's cache folder whose bin/`program` links to
// `tool` beside the library and whose `toolkitParts` link to those of the first toolkit (CUDA_HOME, CUDA_PATH,
// /usr/local/cuda) that has `needs`. Empty when there is no `tool` either.
std::string linkedCudaRoot(const std::string& libraryDir, const char* folder, const char* program, const char* tool,
                           const char* needs, std::initializer_list<const char*> toolkitParts) {
  std::error_code ec;
  const std::filesystem::path installed = std::filesystem::path(libraryDir) / folder;
  if (std::filesystem::exists(installed / "bin" / program, ec)) return installed.string();
  const std::filesystem::path target = std::filesystem::path(libraryDir) / tool;
  if (!std::filesystem::exists(target, ec)) return {};
  const std::filesystem::path cache = userCacheFolder();
  if (cache.empty()) return {};
  const auto root = cache / "cuemu" / fmt::format("{}-{:016x}", folder, std::hash<std::string>{}(libraryDir));
  std::filesystem::create_directories(root / "bin", ec);
  if (ec || !linkTo(target, root / "bin" / program)) return {};
  std::vector<std::filesystem::path> toolkits;
  for (const char* variable : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* toolkit = std::getenv(variable); toolkit && *toolkit) toolkits.emplace_back(toolkit);
  toolkits.emplace_back("/usr/local/cuda");
  for (const std::filesystem::path& toolkit : toolkits)
    if (std::filesystem::exists(toolkit / needs, ec)) {
      for (const char* part : toolkitParts) linkTo(toolkit / part, root / part);
      break;
    }
  return root.string();
}

// The CUDA root whose ptxas is cuemu-ptxas (JAX's CUDA_ROOT, XLA's CUDA data folder), with the toolkit's nvvm/
// (libdevice).
std::string ptxToolkitRoot(const std::string& libraryDir) {
  return linkedCudaRoot(libraryDir, "ptx-toolkit", "ptxas", "cuemu-ptxas", "nvvm/libdevice", {"nvvm"});
}

// The folder whose `nvcc` is cuemu-nvcc: the bin/ of a CUDA root with the toolkit's lib64/ and include/ (clients
// find the toolkit from nvcc's folder: PyCUDA links bin/../lib64/libcudadevrt.a).
std::string nvccShimFolder(const std::string& libraryDir) {
  const std::string root =
      linkedCudaRoot(libraryDir, "nvcc-shim", "nvcc", "cuemu-nvcc", "bin/nvcc", {"lib64", "include"});
  return root.empty() ? root : root + "/bin";
}

// How many devices the program will see: the configuration as the chosen settings make it.
unsigned deviceCountFor(const std::map<std::string, std::string>& set) {
  for (const char* name : {"CUEMU_DEVICE_COUNT", "CUEMU_CONFIG"})
    if (auto it = set.find(name); it != set.end()) setenv(name, it->second.c_str(), 1);
  auto machine = loadMachineConfig();
  return machine ? static_cast<unsigned>(machine->devices.size()) : 1;
}

// A setting's value as the program will see it: chosen on the command line, else inherited.
std::string settingValue(const std::map<std::string, std::string>& set, const char* name) {
  if (auto it = set.find(name); it != set.end()) return it->second;
  const char* value = std::getenv(name);
  return value ? value : "";
}

void prependPreload(std::map<std::string, std::string>& set, const std::string& library) {
  std::string current = set.count("LD_PRELOAD") ? set["LD_PRELOAD"] : settingValue(set, "LD_PRELOAD");
  set["LD_PRELOAD"] = current.empty() ? library : library + ":" + current;
}

// Where CUTLASS's CuTe DSL leaves the PTX it compiles, for the driver to run in place of the SASS it loads
// (core/companion_ptx.h). The DSL writes it when its compile option dump-ptx-path is on, which CUTE_DSL_COMPILER_OPT
// turns on (CUTE_DSL_KEEP=ptx would too, and turn the DSL's cache of compiled functions off: every call would
// compile again), into CUTE_DSL_DUMP_DIR: the user's, else cuemu/cute-dsl in the user's cache folder, whose PTX older
// than a day is removed (the driver keeps what it ran under the SASS's hash, for the DSL's cached functions). The
// DSL's own cache of compiled functions moves into cuemu's cache folder too (CUTE_DSL_CACHE_DIR, unless the user set
// it): a function it takes from there writes no PTX, and clearing one cache then clears both.
std::string cuteDslPtxFolder(std::map<std::string, std::string>& set) {
  const std::string options = settingValue(set, "CUTE_DSL_COMPILER_OPT");
  if (options.find("dump-ptx-path") == std::string::npos)
    set["CUTE_DSL_COMPILER_OPT"] = options.empty() ? "dump-ptx-path" : options + " dump-ptx-path";
  const std::filesystem::path cache = userCacheFolder();
  if (!cache.empty() && settingValue(set, "CUTE_DSL_CACHE_DIR").empty())
    set["CUTE_DSL_CACHE_DIR"] = (cache / "cuemu" / "cute-dsl-cache").string();
  if (std::string dump = settingValue(set, "CUTE_DSL_DUMP_DIR"); !dump.empty()) return dump;
  if (cache.empty()) return {};
  const std::filesystem::path folder = cache / "cuemu" / "cute-dsl";
  std::error_code ec;
  std::filesystem::create_directories(folder, ec);
  if (ec) return {};
  const auto dayAgo = std::filesystem::file_time_type::clock::now() - std::chrono::hours(24);
  for (std::filesystem::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code old;
    if (it->path().extension() == ".ptx" && it->last_write_time(old) < dayAgo && !old)
      std::filesystem::remove(it->path(), old);
  }
  set["CUTE_DSL_DUMP_DIR"] = folder.string();
  return folder.string();
}

}  // namespace

std::vector<std::string> programEnvironment(const SettingValues& values, const std::string& libraryDir) {
  std::map<std::string, std::string> set;
  for (const auto& [name, value] : values) set[name] = value;
  const char* path = std::getenv("LD_LIBRARY_PATH");
  set["LD_LIBRARY_PATH"] = path && *path ? libraryDir + ":" + path : libraryDir;
  // Triton assembles its PTX with the ptxas these name and loads the result: cuemu's stand-in writes the PTX.
  const std::string ptxas = libraryDir + "/cuemu-ptxas";
  if (std::filesystem::exists(ptxas))
    for (const char* name : {"TRITON_PTXAS_PATH", "TRITON_PTXAS_BLACKWELL_PATH"})
      if (!std::getenv(name)) set[name] = ptxas;
  // And it links its launcher against the libcuda.so.1 of the first folder ldconfig lists, which may be another one.
  if (!std::getenv("TRITON_LIBCUDA_PATH")) set["TRITON_LIBCUDA_PATH"] = libraryDir;
  // cuemu's nvJitLink is loaded first, also for clients that load NVIDIA's by its path: cuda-pathfinder (cuda.core,
  // cuda.compute, numba) takes a library already in the process, and a library that needs libnvJitLink.so.13
  // (cuda.compute's libcccl.c.parallel.so) binds to the first one loaded. NVIDIA's would turn their links into SASS.
  const std::string nvJitLink = libraryDir + "/libnvJitLink.so.13";
  if (std::filesystem::exists(nvJitLink)) prependPreload(set, nvJitLink);
  // NVIDIA's device files, which some clients look for before they load the driver (emu/preload/dev_files.cpp).
  const std::string devFiles = libraryDir + "/libcuemu-dev-files.so";
  std::string devFilesMode = settingValue(set, "CUEMU_DEV_FILES");
  if (devFilesMode != "off" && devFilesMode != "0" && std::filesystem::exists(devFiles)) {
    prependPreload(set, devFiles);
    set["CUEMU_DEV_FILE_COUNT"] = std::to_string(deviceCountFor(set));
  }
  // Programs that compile CUDA C++ while they run (PyCUDA's SourceModule, CuPy's nvcc backend: nvcc --cubin, then
  // cuModuleLoadData) or that the user builds under `cuemu run` get cuemu-nvcc first on PATH (emu/nvcc/nvcc.cpp),
  // and CuPy, which takes NVCC before the toolkit's bin/nvcc, gets it there. A value of NVCC the user set stays.
  if (std::string mode = settingValue(set, "CUEMU_NVCC_SHIM"); mode != "off" && mode != "0")
    if (const std::string shim = nvccShimFolder(libraryDir); !shim.empty()) {
      const std::string pathNow = settingValue(set, "PATH");
      set["PATH"] = pathNow.empty() ? shim : shim + ":" + pathNow;
      if (settingValue(set, "NVCC").empty()) set["NVCC"] = shim + "/nvcc";
    }
  // XLA (JAX) assembles its PTX with the ptxas of the CUDA root it is given (JAX passes CUDA_ROOT, else the one in
  // its nvidia-cuda-nvcc wheel): cuemu's root has cuemu-ptxas as its ptxas, so XLA's "cubins" are PTX cuemu runs.
  const std::string ptxRoot = ptxToolkitRoot(libraryDir);
  if (!std::getenv("CUDA_ROOT") && !ptxRoot.empty()) set["CUDA_ROOT"] = ptxRoot;
  // TensorFlow's XLA and its run-time kernel generator look for ptxas in XLA's CUDA data folder instead (then in
  // /usr/local/cuda): added to XLA_FLAGS unless the flags name one already.
  std::string xlaFlags = settingValue(set, "XLA_FLAGS");
  auto addXlaFlag = [&](const std::string& name, const std::string& value) {
    if (xlaFlags.find("--" + name) == std::string::npos)
      xlaFlags += (xlaFlags.empty() ? "--" : " --") + name + "=" + value;
  };
  if (!ptxRoot.empty()) addXlaFlag("xla_gpu_cuda_data_dir", ptxRoot);
  // XLA's autotuner times candidate kernels and keeps the fastest: on cuemu that times the interpreter, which says
  // nothing about a GPU, makes the choice (and so the rounding of reductions and products) vary from run to run,
  // and took 85% of JAX's test time (tests/clients/test_jax.py: 54 s, 7 s without). Off, XLA takes its default
  // choices every time.
  addXlaFlag("xla_gpu_autotune_level", "0");
  if (!xlaFlags.empty()) set["XLA_FLAGS"] = xlaFlags;
  // JAX's CUDA plugin checks CUPTI's version at start, and CUPTI asks the driver for a private export table that
  // cuemu does not have; without this JAX refuses CUDA ("Unable to load cuPTI"). The other versions it checks are
  // the libraries' own. A value the user set stays.
  if (!std::getenv("JAX_SKIP_CUDA_CONSTRAINTS_CHECK")) set["JAX_SKIP_CUDA_CONSTRAINTS_CHECK"] = "1";
  // cuemu runs PTX only. NVIDIA's cuBLAS/cuBLASLt read this variable of NVIDIA's driver themselves and then choose
  // kernels that have PTX instead of SASS-only ones (README, "NVIDIA's math libraries"); a value the user set stays.
  if (!std::getenv("CUDA_FORCE_PTX_JIT")) set["CUDA_FORCE_PTX_JIT"] = "1";
  // The same for CuPy, which compiles its kernels with NVRTC to cubins unless told to make PTX.
  if (!std::getenv("CUPY_COMPILE_WITH_PTX")) set["CUPY_COMPILE_WITH_PTX"] = "1";
  // PTX from toolkits newer than driver 580 (PyPI's NVRTC 13.5 writes ISA 9.5) is what such clients give cuemu where
  // a GPU would get a cubin (core/module.cpp).
  if (!set.count("CUEMU_PTX_ISA") && !std::getenv("CUEMU_PTX_ISA")) set["CUEMU_PTX_ISA"] = "newest";
  // CUTLASS's CuTe DSL assembles its PTX inside its own process and loads SASS only; it keeps the PTX where the
  // driver finds it (core/companion_ptx.h). Its PTX is of toolkits newer than driver 580 as well.
  if (settingValue(set, "CUEMU_COMPANION_PTX_DIR").empty())
    if (std::string folder = cuteDslPtxFolder(set); !folder.empty()) {
      // and the temporary folders it makes for a compile of its own (cutlass.utils.HardwareInfo: --dump-dir)
      const std::string temporary = settingValue(set, "TMPDIR");
      set["CUEMU_COMPANION_PTX_DIR"] = folder + ":" + (temporary.empty() ? "/tmp" : temporary) + "/*";
    }
  std::vector<std::string> environment;
  for (char** e = environ; *e; ++e) {
    std::string_view entry(*e);
    auto name = std::string(entry.substr(0, entry.find('=')));
    if (!set.count(name)) environment.emplace_back(entry);
  }
  for (const auto& [name, value] : set) environment.push_back(name + "=" + value);
  return environment;
}

namespace {

std::vector<char*> pointers(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (const auto& s : strings) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

int statusOf(int waitStatus) {
  if (WIFEXITED(waitStatus)) return WEXITSTATUS(waitStatus);
  if (WIFSIGNALED(waitStatus)) return 128 + WTERMSIG(waitStatus);
  return 1;
}

}  // namespace

int execProgram(const std::vector<std::string>& argv, const std::vector<std::string>& environment) {
  auto args = pointers(argv);
  auto env = pointers(environment);
  // execvpe looks the program up in this process's PATH: the program's own (cuemu run -- nvcc finds cuemu-nvcc)
  for (const std::string& entry : environment)
    if (entry.rfind("PATH=", 0) == 0) setenv("PATH", entry.c_str() + 5, 1);
  execvpe(args[0], args.data(), env.data());
  int error = errno;
  fmt::print(stderr, "cuemu: cannot run '{}': {}\n", argv[0], std::strerror(error));
  return error == ENOENT ? 127 : 126;
}

std::optional<RunResult> runCaptured(const std::vector<std::string>& argv, const std::vector<std::string>& environment,
                                     std::string& error) {
  int outPipe[2], errPipe[2];
  if (pipe2(outPipe, O_CLOEXEC) != 0) {
    error = std::strerror(errno);
    return std::nullopt;
  }
  if (pipe2(errPipe, O_CLOEXEC) != 0) {
    error = std::strerror(errno);
    close(outPipe[0]);
    close(outPipe[1]);
    return std::nullopt;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, outPipe[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, errPipe[1], STDERR_FILENO);
  auto args = pointers(argv);
  auto env = pointers(environment);
  pid_t pid = 0;
  int spawned = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), env.data());
  posix_spawn_file_actions_destroy(&actions);
  close(outPipe[1]);
  close(errPipe[1]);
  if (spawned != 0) {
    error = fmt::format("cannot run '{}': {}", argv[0], std::strerror(spawned));
    close(outPipe[0]);
    close(errPipe[0]);
    return std::nullopt;
  }
  RunResult result;
  pollfd fds[2] = {{outPipe[0], POLLIN, 0}, {errPipe[0], POLLIN, 0}};
  std::string* sinks[2] = {&result.out, &result.err};
  int open = 2;
  char buffer[65536];
  while (open > 0) {
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t n = read(fds[i].fd, buffer, sizeof(buffer));
      if (n > 0) {
        sinks[i]->append(buffer, size_t(n));
      } else if (n == 0 || errno != EINTR) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open;
      }
    }
  }
  for (auto& fd : fds)
    if (fd.fd >= 0) close(fd.fd);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  result.exitStatus = statusOf(status);
  return result;
}

namespace {

void setVariable(std::vector<std::string>& environment, const std::string& name, const std::string& value) {
  std::string prefix = name + "=";
  std::erase_if(environment, [&](const std::string& e) { return e.rfind(prefix, 0) == 0; });
  environment.push_back(prefix + value);
}

// The first line where two outputs differ, for the report.
std::string firstDifference(const std::string& a, const std::string& b) {
  size_t line = 1, start = 0;
  size_t n = std::min(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    if (a[i] != b[i]) break;
    if (a[i] == '\n') {
      ++line;
      start = i + 1;
    }
  }
  auto lineOf = [&](const std::string& s) {
    if (start >= s.size()) return std::string("<end of output>");
    return s.substr(start, s.find('\n', start) - start);
  };
  return fmt::format("line {}: '{}' instead of '{}'", line, lineOf(b), lineOf(a));
}

std::string quoted(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) {
    if (!out.empty()) out += ' ';
    bool plain = !a.empty() && a.find_first_of(" \t\n'\"\\$`*?;&|<>()[]{}") == std::string::npos;
    out += plain ? a : "'" + a + "'";
  }
  return out;
}

}  // namespace

int explore(const std::vector<std::string>& argv, std::vector<std::string> environment, unsigned runs,
            int differenceExitStatus, std::ostream& report) {
  setVariable(environment, "CUEMU_DETERMINISTIC", "1");
  std::optional<RunResult> reference;
  for (unsigned seed = 0; seed < runs; ++seed) {
    setVariable(environment, "CUEMU_SCHEDULE_SEED", std::to_string(seed));
    std::string error;
    auto run = runCaptured(argv, environment, error);
    if (!run) {
      report << "cuemu: " << error << "\n";
      return 127;
    }
    if (!reference) {
      reference = std::move(run);
      std::fwrite(reference->out.data(), 1, reference->out.size(), stdout);
      std::fwrite(reference->err.data(), 1, reference->err.size(), stderr);
      std::fflush(stdout);
      std::fflush(stderr);
      continue;
    }
    std::string what;
    if (run->exitStatus != reference->exitStatus)
      what = fmt::format("exit status {} instead of {}", run->exitStatus, reference->exitStatus);
    else if (run->out != reference->out)
      what = "standard output differs, " + firstDifference(reference->out, run->out);
    else if (run->err != reference->err)
      what = "standard error differs, " + firstDifference(reference->err, run->err);
    if (what.empty()) continue;
    report << fmt::format("cuemu: explore: schedule seed {} differs from the default schedule (seed 0): {}\n", seed,
                          what)
           << fmt::format("cuemu: explore: replay with: cuemu run --deterministic --seed {} -- {}\n", seed,
                          quoted(argv));
    return differenceExitStatus;
  }
  report << fmt::format("cuemu: explore: {} schedule(s) agree (exit status {})\n", runs, reference->exitStatus);
  return reference->exitStatus;
}

}  // namespace cuemu::cli
