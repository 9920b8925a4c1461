// cuemu-ptxas: a stand-in for NVIDIA's ptxas, for programs that assemble PTX themselves before handing the driver
// a cubin. Triton does (it runs the ptxas named by TRITON_PTXAS_PATH on every kernel it compiles, then loads the
// output with cuModuleLoadData); `cuemu run` points it here. cuemu runs PTX, not SASS: the "cubin" written is the
// PTX text itself, checked by cuemu's front end first, so that errors surface where ptxas reports them, with the
// line, and the driver later compiles the same text.
//
//   cuemu-ptxas [options] FILE.ptx -o OUT     check FILE.ptx, write it (NUL-terminated) to OUT
//   cuemu-ptxas --version                     the CUDA release whose PTX cuemu compiles by default (13.0: ISA 9.0)
//
// Options are ptxas's; those that change code generation have no meaning for PTX text and are accepted and
// ignored, except --gpu-name/-arch (the target the checker allows instructions of). Exit status 0, or 255 after an
// error as NVIDIA's ptxas, or 2 for a command it cannot read.
#include <ptx/check.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

namespace {

// ptxas options whose value is the next argument when not joined with '='.
bool takesValue(std::string_view option) {
  for (std::string_view name :
       {"-o", "--output-file", "-arch", "--gpu-name", "--opt-level", "-O", "-maxrregcount", "--maxrregcount", "-e",
        "--entry", "-m", "--machine", "-def-load-cache", "--def-load-cache", "-def-store-cache", "--def-store-cache",
        "--options-file", "-optf", "-Xptxas"})
    if (option == name) return true;
  return false;
}

// sm_90a -> 90, compute_90 -> 90; 0 when absent or unreadable.
unsigned targetSm(std::string_view arch) {
  for (std::string_view prefix : {"sm_", "compute_", "lto_"})
    if (arch.substr(0, prefix.size()) == prefix)
      return unsigned(std::strtoul(arch.data() + prefix.size(), nullptr, 10));
  return 0;
}

int usage(const char* message) {
  std::fprintf(stderr, "cuemu-ptxas: %s\nusage: cuemu-ptxas [options] FILE.ptx -o OUT | --version\n", message);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string input, output, arch;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (a == "--version" || a == "-V") {
      // Triton reads "release X.Y" to choose the PTX ISA it writes; 13.0 is driver 580's CUDA, whose ISA (9.0)
      // cuemu compiles without CUEMU_PTX_ISA=newest.
      std::printf(
          "ptxas: cuemu's stand-in for NVIDIA's PTX assembler (the cubin it writes is the PTX)\n"
          "Cuda compilation tools, release 13.0, V13.0.0\n");
      return 0;
    }
    if (!a.empty() && a[0] == '-') {
      std::string_view name = a.substr(0, a.find('='));
      std::string_view joined = a.find('=') == std::string_view::npos ? std::string_view() : a.substr(a.find('=') + 1);
      std::string_view value = joined;
      if (joined.empty() && takesValue(name)) {
        if (i + 1 >= argc) return usage(("option " + std::string(name) + " needs a value").c_str());
        value = argv[++i];
      }
      if (name == "-o" || name == "--output-file") output = value;
      if (name == "-arch" || name == "--gpu-name") arch = value;
      continue;
    }
    if (!input.empty()) return usage("more than one input file");
    input = a;
  }
  if (input.empty()) return usage("no input file");
  if (output.empty()) output = "elf.o";  // ptxas's default name
  std::ifstream in(input, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "ptxas fatal   : Input file '%s' could not be opened\n", input.c_str());
    return 255;
  }
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ptx::CheckOptions options;
  options.targetSm = targetSm(arch);
  options.acceptNewerIsa = true;  // the driver decides by CUEMU_PTX_ISA when it loads the result
  ptx::FrontEndResult checked = ptx::parseAndCheck(text, input, options);
  if (!checked.ok) {
    std::fputs(checked.log.c_str(), stderr);
    std::fprintf(stderr, "ptxas fatal   : Ptx assembly aborted due to errors\n");
    return 255;
  }
  std::ofstream out(output, std::ios::binary | std::ios::trunc);
  out.write(text.data(), std::streamsize(text.size()));
  out.put('\0');  // cuModuleLoadData reads PTX up to its NUL
  out.close();
  if (!out) {
    std::fprintf(stderr, "ptxas fatal   : Could not write '%s'\n", output.c_str());
    return 255;
  }
  return 0;
}
