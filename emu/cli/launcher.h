// How the `cuemu` command starts a program on cuemu: the environment it gets (cuemu's libcuda.so.1 first on the
// loader path, the command's settings as the CUEMU_* variables the library reads), and running it once, or under
// several deterministic schedules to find one whose result differs.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace cuemu::cli {

// One setting of `cuemu run`: the option, the environment variable the library reads, and what it does. The
// table (settings()) is the only place that ties options to variables; `cuemu info` prints the same list.
struct Setting {
  const char* option;     // "--seed"
  const char* variable;   // "CUEMU_SCHEDULE_SEED"
  const char* valueName;  // "N"; nullptr for a flag (the variable is set to 1)
  const char* help;
};
const std::vector<Setting>& settings();

// The values given on the command line, by variable name (only those given).
using SettingValues = std::vector<std::pair<std::string, std::string>>;

// Checks each value the way the library will read it (a known profile, a byte size, a timeout, a bounds mode),
// so that a typo fails here with a message instead of inside the program. Returns the problems found.
std::vector<std::string> validateSettings(const SettingValues& values);

// The directory holding cuemu's libcuda.so.1: $CUEMU_LIBRARY_DIR, else beside this executable, else ../lib/cuemu
// or ../lib from it (the installed layouts). Empty when none has it; `tried` lists what was looked at.
std::string findLibraryDir(std::vector<std::string>& tried);

// The program's environment: this process's, with `libraryDir` first in LD_LIBRARY_PATH and each value set.
std::vector<std::string> programEnvironment(const SettingValues& values, const std::string& libraryDir);

// Replaces this process with the program (its exit status becomes the command's). Returns only on failure,
// with the exit status a shell would give: 127 when the program is not found, 126 when it cannot be run.
int execProgram(const std::vector<std::string>& argv, const std::vector<std::string>& environment);

// One run with its output captured.
struct RunResult {
  int exitStatus = 0;  // the program's, or 128 + signal number
  std::string out;
  std::string err;
};
std::optional<RunResult> runCaptured(const std::vector<std::string>& argv, const std::vector<std::string>& environment,
                                     std::string& error);

// `cuemu run --explore N`: runs the program N times in deterministic mode, first in the default schedule and then
// with schedule seeds 1..N-1, and reports to `report` the first schedule whose exit status, standard output or
// standard error differs from the first run's, with the command that replays it. The first run's output is passed
// through. Returns the first run's exit status when every schedule agrees, else `differenceExitStatus`.
int explore(const std::vector<std::string>& argv, std::vector<std::string> environment, unsigned runs,
            int differenceExitStatus, std::ostream& report);

}  // namespace cuemu::cli
