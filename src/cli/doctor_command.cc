// `toolvfs doctor`: what this machine's kernel provides for the sandbox,
// asked of the kernel itself (see sandbox/kernel_features.h).
#include <sys/utsname.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <memory>
#include <string>

#include "cli/command.h"
#include "cli/terminal.h"
#include "core/io.h"
#include "sandbox/kernel_features.h"

namespace toolvfs {
namespace {

class DoctorCommand final : public Command {
 public:
  void AddOptions(CLI::App& app) override {
    app.footer(
        "Each feature is probed with the syscall itself, never inferred from the kernel version.");
  }

  int Run(const CommonOptions&) override {
    Palette palette = MakePalette(ColorEnabled(STDOUT_FILENO));
    std::string out = "toolvfs " TOOLVFS_VERSION;
    struct utsname system;
    if (uname(&system) == 0) {
      out += " on ";
      out += system.sysname;
      out += ' ';
      out += system.release;
      out += " (";
      out += system.machine;
      out += ')';
    }
    out += "\nKernel features:\n";
    std::vector<NamedFeatureProbe> probes = ProbeKernelFeatures();
    size_t width = 0;
    for (const NamedFeatureProbe& probe : probes) width = std::max(width, probe.name.size());
    for (const NamedFeatureProbe& probe : probes) {
      out += "  ";
      out += probe.name;
      out.append(width - probe.name.size() + 2, ' ');
      if (probe.probe.available) {
        out += palette.good;
        out += "yes";
      } else {
        out += palette.bad;
        out += "no ";
      }
      out += palette.reset;
      out += "  ";
      out += probe.probe.detail;
      out += '\n';
    }
    Status written = WriteFull(STDOUT_FILENO, out, "standard output");
    if (!written.ok()) return ReportError("doctor", written.message());
    return kExitOk;
  }
};

}  // namespace

std::unique_ptr<Command> NewDoctorCommand() { return std::make_unique<DoctorCommand>(); }

}  // namespace toolvfs
