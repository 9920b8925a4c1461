// The `cuemu` command: runs a program on cuemu (`cuemu run [options] -- PROGRAM ARGS`), lists the virtual device
// profiles (`cuemu devices`), says which library and configuration a run would get (`cuemu info`) and which
// profiles can run a binary's device code (`cuemu inspect FILE...`).
#include "cli/inspect.h"
#include "cli/launcher.h"

#include "core/config.h"
#include "core/device.h"
#include "core/driver.h"
#include "ptx/native.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <thread>

namespace cuemu::cli {
namespace {

constexpr const char* kVersion = CUEMU_CLI_VERSION;

std::string sizeText(uint64_t bytes) {
  if (bytes && bytes % (1ull << 30) == 0) return fmt::format("{} GiB", bytes >> 30);
  if (bytes && bytes % (1ull << 20) == 0) return fmt::format("{} MiB", bytes >> 20);
  return fmt::format("{} bytes", bytes);
}

int listDevices() {
  fmt::print("{:<14} {:<50} {:>4} {:>5} {:>8} {:>14}\n", "profile", "device name", "cc", "SMs", "L2", "shared/block");
  for (const auto& name : builtinProfileNames()) {
    auto profile = builtinProfile(name);
    if (!profile) continue;
    fmt::print("{:<14} {:<50} {:>4} {:>5} {:>8} {:>14}\n", name, profile->name,
               fmt::format("{}.{}", profile->ccMajor, profile->ccMinor), profile->smCount,
               sizeText(uint64_t(profile->l2CacheBytes)),
               fmt::format("{}/{} KiB", profile->sharedMemPerBlock / 1024, profile->sharedMemPerBlockOptin / 1024));
  }
  fmt::print("\nChoose with `cuemu run --device-profile NAME` (or CUEMU_DEVICE_PROFILE); the default is h100.\n");
  return 0;
}

// Applies the given settings to this process's environment, so that the configuration `info` shows is the one a
// run with the same options gets.
void applyToEnvironment(const SettingValues& values) {
  for (const auto& [name, value] : values) setenv(name.c_str(), value.c_str(), 1);
}

// Where the library looks for the native tier's compiler (ptx-interp/src/native/tier.cpp: CUEMU_NATIVE_LIBRARY, beside
// the library, the build tree) and whether it loads there: it links LLVM 14, which a machine may lack.
std::string nativeTierText(const std::string& libraryDir) {
  std::vector<std::string> candidates;
  if (const char* path = std::getenv("CUEMU_NATIVE_LIBRARY")) candidates.push_back(path);
  candidates.push_back(libraryDir + "/libcuemu-native.so");
#ifdef CUEMU_NATIVE_BUILD_DIR
  candidates.push_back(CUEMU_NATIVE_BUILD_DIR "/libcuemu-native.so");
#endif
  std::vector<std::string> problems;
  for (const std::string& path : candidates) {
    if (!std::filesystem::exists(path)) continue;
    void* library = dlopen(path.c_str(), RTLD_LAZY | RTLD_LOCAL);
    if (library && dlsym(library, "cuemuNativeApi")) return path + " (loads)";
    problems.push_back(library ? path + ": not cuemu's native tier" : dlerror());
  }
  if (problems.empty()) return "not installed (libcuemu-native.so is built where LLVM 14 is: llvm-14-dev)";
  return fmt::format("does not load: {}", fmt::join(problems, "; "));
}

int showInfo(const SettingValues& values) {
  applyToEnvironment(values);
  fmt::print("cuemu {} (the cuemu command)\n", kVersion);
  fmt::print("emulates the CUDA driver API of driver 580, version {}.{}\n", kDriverVersion / 1000,
             kDriverVersion % 1000 / 10);
  if (int reported = reportedDriverVersion(); reported != kDriverVersion)
    fmt::print("reports version {}.{} (CUEMU_DRIVER_VERSION)\n", reported / 1000, reported % 1000 / 10);
  std::vector<std::string> tried;
  std::string dir = findLibraryDir(tried);
  if (dir.empty()) {
    fmt::print("library: not found (looked in {}); set CUEMU_LIBRARY_DIR\n", fmt::join(tried, ", "));
  } else {
    std::string path = dir + "/libcuda.so.1";
    void* library = dlopen(path.c_str(), RTLD_LAZY | RTLD_LOCAL);
    using GetVersion = int (*)(int*, int*, int*);
    auto getVersion = library ? reinterpret_cast<GetVersion>(dlsym(library, "cuemuGetVersion")) : nullptr;
    int major = 0, minor = 0, patch = 0;
    if (getVersion && getVersion(&major, &minor, &patch) == 0)
      fmt::print("library: {} (cuemu {}.{}.{})\n", path, major, minor, patch);
    else
      fmt::print("library: {} (not cuemu's: {})\n", path, library ? "no cuemuGetVersion" : dlerror());
    fmt::print("nvJitLink: {}/libnvJitLink.so.13\n", dir);
    fmt::print("NVML: {}/libnvidia-ml.so.1 (answers for cuemu's devices)\n", dir);
    fmt::print("NVRTC: {}/libnvrtc.so.13 (forwards to NVIDIA's)\n", dir);
    fmt::print("native tier (CUEMU_NATIVE=on): {}\n", nativeTierText(dir));
    const ptx::exec::NativeCacheInfo cache = ptx::exec::nativeCacheInfo();
    if (cache.dir.empty())
      fmt::print("native cache: off (CUEMU_NATIVE_CACHE_DISABLE, CUEMU_NATIVE_CACHE_MAXSIZE=0, or no HOME)\n");
    else
      fmt::print("native cache: {} ({} compiled kernels, {:.1f} of {:.0f} MiB; CUEMU_NATIVE_CACHE_PATH)\n", cache.dir,
                 cache.kernels, double(cache.bytes) / double(1 << 20), double(cache.maxBytes) / double(1 << 20));
  }
  auto machine = loadMachineConfig();
  if (!machine) {
    fmt::print("configuration: invalid: {}\n", machine.error().message);
    return 1;
  }
  fmt::print("devices: {}\n", machine->devices.size());
  for (size_t i = 0; i < machine->devices.size(); ++i) {
    const auto& d = machine->devices[i];
    fmt::print("  {}: {} (profile {}, compute capability {}.{}, {} SMs, {})\n", i, d.name, d.profileName, d.ccMajor,
               d.ccMinor, d.smCount, sizeText(d.totalMemory));
  }
  fmt::print("settings (option, variable: value):\n");
  for (const auto& s : settings()) {
    const char* value = std::getenv(s.variable);
    std::string shown = value && *value ? value : "(unset)";
    if ((!value || !*value) && std::string_view(s.variable) == "CUEMU_THREADS")
      shown = fmt::format("(unset: {} cores)", std::thread::hardware_concurrency());
    fmt::print("  {:<18} {:<22} {}\n", s.option, s.variable, shown);
  }
  return 0;
}

}  // namespace
}  // namespace cuemu::cli

int main(int argc, char** argv) {
  using namespace cuemu::cli;
  CLI::App app{"cuemu: run CUDA programs on the CPU, with cuemu's libcuda.so.1 in place of NVIDIA's driver"};
  app.set_version_flag("--version", std::string("cuemu ") + CUEMU_CLI_VERSION);
  app.require_subcommand(1);

  // The settings shared by `run` and `info`, one option each, from the table.
  std::vector<std::string> values(settings().size());
  std::vector<bool> flags(settings().size());
  auto addSettings = [&](CLI::App* sub) {
    for (size_t i = 0; i < settings().size(); ++i) {
      const Setting& s = settings()[i];
      std::string help = fmt::format("{} (sets {})", s.help, s.variable);
      if (s.valueName) {
        sub->add_option(s.option, values[i], help)->type_name(s.valueName);
      } else {
        sub->add_flag_callback(
            s.option, [&flags, i] { flags[i] = true; }, help);
      }
    }
  };
  auto given = [&] {
    SettingValues out;
    for (size_t i = 0; i < settings().size(); ++i) {
      if (flags[i])
        out.emplace_back(settings()[i].variable, "1");
      else if (!values[i].empty())
        out.emplace_back(settings()[i].variable, values[i]);
    }
    return out;
  };

  auto* run = app.add_subcommand("run", "run PROGRAM with cuemu as its CUDA driver (children inherit it)");
  addSettings(run);
  unsigned exploreRuns = 0;
  int errorExitCode = 1;
  run->add_option("--explore", exploreRuns,
                  "run N times in deterministic mode (seed 0, then 1..N-1) and report the first schedule whose exit "
                  "status or output differs, with the command that replays it")
      ->type_name("N")
      ->check(CLI::Range(2u, 100000u));
  auto* errorExitOption = run->add_option("--error-exitcode", errorExitCode,
                                          "exit status when --explore finds a difference (default 1), or when --tool "
                                          "reports errors (default: the program's own)")
                              ->type_name("N");
  std::vector<std::string> program;
  run->add_option("program", program, "the program and its arguments (after --)")->required()->expected(-1);
  run->positionals_at_end();

  auto* devices = app.add_subcommand("devices", "list the virtual device profiles");
  auto* info = app.add_subcommand("info", "print versions, the library a run uses, and the configuration");
  addSettings(info);
  auto* inspect = app.add_subcommand(
      "inspect", "list the device code of binaries (PTX and SASS by architecture) and the profiles that can run it");
  std::vector<std::string> inspected;
  inspect->add_option("file", inspected, "executables, shared libraries, objects, archives or fatbinaries")
      ->required()
      ->expected(-1);

  CLI11_PARSE(app, argc, argv);

  if (devices->parsed()) return listDevices();
  if (inspect->parsed()) return inspectFiles(inspected, std::cout);
  SettingValues chosen = given();
  if (auto problems = validateSettings(chosen); !problems.empty()) {
    for (const auto& p : problems) fmt::print(stderr, "cuemu: invalid setting {}\n", p);
    return 2;
  }
  if (info->parsed()) return showInfo(chosen);

  std::vector<std::string> tried;
  std::string dir = findLibraryDir(tried);
  if (dir.empty()) {
    fmt::print(stderr, "cuemu: cuemu's libcuda.so.1 not found (looked in {}); set CUEMU_LIBRARY_DIR\n",
               fmt::join(tried, ", "));
    return 2;
  }
  if (errorExitOption->count()) chosen.emplace_back("CUEMU_ERROR_EXITCODE", std::to_string(errorExitCode));
  auto environment = programEnvironment(chosen, dir);
  if (exploreRuns) return explore(program, environment, exploreRuns, errorExitCode, std::cerr);
  return execProgram(program, environment);
}
