// `toolvfs doctor`: what this machine's kernel provides for the sandbox,
// asked of the kernel itself (see sandbox/kernel_features.h), and what the
// launcher therefore enforces here, per kind of tool process: the table is
// read off real profiles built the way a run builds them, so it cannot
// drift from what a run does.
#include <sys/utsname.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <iterator>
#include <memory>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/command.h"
#include "cli/terminal.h"
#include "cli/tool_invocation.h"
#include "core/io.h"
#include "config/config.h"
#include "protocol/json_writer.h"
#include "sandbox/kernel_features.h"
#include "sandbox/landlock.h"
#include "sandbox/sandbox_profile.h"

namespace toolvfs {
namespace {

// One row of the enforcement table: a mechanism and, per kind of tool
// process, whether it applies ("yes"), not ("no: why") or is not meant to.
struct EnforcementRow {
  std::string mechanism;
  std::vector<std::string> cells;  // vfs tool, stdio tool, process.run child
};

// TOOLVFS_TEST_HIDE_SANDBOX, as the runs read it (docs/sandbox.md).
std::vector<std::string> HiddenForTesting() { return HiddenSandboxMechanismsForTesting(); }

// The profile a run would build for a process of `kind` (best-effort, so a
// missing mechanism shows instead of failing), for a trivial program.
Result<SandboxProfile> ProbeProfile(ToolKind kind, const std::vector<std::string>& hidden) {
  SandboxRequest request;
  request.access.kind = kind;
  request.access.program = "/bin/true";
  request.seccomp.allow_process_creation = kind != ToolKind::kVfs;
  request.seccomp.deny_network_sockets = true;
  request.limits = FromLimitsConfig(LimitsConfig{});
  request.hidden_for_testing = hidden;
  return SandboxProfile::Build(request, SandboxMode::kBestEffort);
}

std::vector<EnforcementRow> EnforcementTable() {
  const std::vector<std::string> hidden = HiddenForTesting();
  constexpr ToolKind kKinds[] = {ToolKind::kVfs, ToolKind::kStdio, ToolKind::kProcessChild};
  std::vector<std::optional<SandboxProfile>> profiles;
  std::vector<std::string> failures;
  for (ToolKind kind : kKinds) {
    Result<SandboxProfile> profile = ProbeProfile(kind, hidden);
    failures.push_back(profile.ok() ? "" : profile.status().message());
    if (profile.ok()) {
      profiles.emplace_back(std::move(profile).value());
    } else {
      profiles.emplace_back();
    }
  }
  const bool landlock_hidden = std::find(hidden.begin(), hidden.end(), "landlock") != hidden.end();
  const LandlockCoverage coverage = LandlockCoverageForAbi(landlock_hidden ? 0 : ProbeLandlock().version);

  std::vector<EnforcementRow> rows;
  // `cell(kind index, profile)` -> text; a profile that failed to build
  // shows its error in every row.
  auto add = [&](std::string mechanism, auto cell) {
    EnforcementRow row{std::move(mechanism), {}};
    for (size_t index = 0; index < profiles.size(); ++index) {
      row.cells.push_back(profiles[index] ? cell(index, *profiles[index]) : "no (" + failures[index] + ")");
    }
    rows.push_back(std::move(row));
  };
  auto yes_no = [](bool enforced, const std::string& why_not) {
    return enforced ? std::string("yes") : "no (" + why_not + ")";
  };
  add("session, pdeathsig, fds closed", [](size_t, const SandboxProfile&) { return std::string("yes"); });
  add("rlimits: memory, CPU, file size, fds", [](size_t, const SandboxProfile&) { return std::string("yes"); });
  // max_processes: which mechanism holds it. The kernel exempts root from
  // RLIMIT_NPROC; a pids cgroup per start holds it for everyone.
  add("process limit (max_processes)", [&](size_t index, const SandboxProfile& profile) {
    if (!profile.process_cgroup_parent().empty()) return std::string("yes: pids cgroup");
    const bool rlimit = profile.limits().processes != ResourceLimits::kInherit;
    if (getuid() == 0) {
      // A vfs tool has threads only (seccomp), which RLIMIT_NPROC would count.
      if (kKinds[index] == ToolKind::kVfs) return std::string("n/a: no children");
      return std::string("no (root, no pids cgroup)");
    }
    return rlimit ? std::string("yes: RLIMIT_NPROC") : std::string("no (needs user ns)");
  });
  add("user namespace", [&](size_t, const SandboxProfile& profile) {
    return yes_no(profile.namespaces().has_value(), "no user ns");
  });
  add("IPC, mount namespaces", [&](size_t index, const SandboxProfile& profile) {
    // seccomp denies a vfs tool every SysV IPC, message-queue and mount call.
    if (kKinds[index] == ToolKind::kVfs) return std::string("n/a: no IPC calls");
    return yes_no(profile.namespaces() && profile.namespaces()->isolate_ipc_and_mounts, "no user ns");
  });
  add("network namespace", [&](size_t index, const SandboxProfile& profile) {
    // A vfs tool cannot open a network socket at all (seccomp), so it
    // skips the namespace's start cost.
    if (kKinds[index] == ToolKind::kVfs) return std::string("n/a: no sockets");
    return yes_no(profile.namespaces() && profile.namespaces()->isolate_network, "no user ns");
  });
  add("PID namespace", [&](size_t index, const SandboxProfile& profile) {
    if (kKinds[index] == ToolKind::kVfs) return std::string("n/a: no children");
    return yes_no(profile.namespaces() && profile.namespaces()->own_process_tree, "no user ns");
  });
  add("no_new_privs", [](size_t, const SandboxProfile&) { return std::string("yes"); });
  add("Landlock filesystem", [&](size_t, const SandboxProfile& profile) {
    return yes_no(profile.landlock_ruleset_fd() >= 0 && coverage.filesystem, "no Landlock");
  });
  add("Landlock TCP bind/connect", [&](size_t, const SandboxProfile& profile) {
    return yes_no(profile.landlock_ruleset_fd() >= 0 && coverage.tcp, "needs ABI 4");
  });
  add("Landlock signal/socket scoping", [&](size_t, const SandboxProfile& profile) {
    return yes_no(profile.landlock_ruleset_fd() >= 0 && coverage.scoping, "needs ABI 6");
  });
  add("seccomp filter", [&](size_t, const SandboxProfile& profile) {
    return yes_no(profile.seccomp_program().has_value(), "no seccomp");
  });
  return rows;
}

class DoctorCommand final : public Command {
 public:
  void AddOptions(CLI::App& app) override {
    app.add_flag("--json", json_,
                 "Print one JSON object: {\"version\",\"kernel\",\"features\",\"enforced\"}");
    app.footer(
        "Each feature is probed with the syscall itself, never inferred from the kernel version.\n"
        "The second table is read off the sandbox profiles a run would build here.\n"
        "Example: toolvfs doctor --json\n"
        "Exit codes: 0 printed (whatever the kernel offers), 2 the output could not be written.");
  }

  unsigned UsedCommonOptions() const override { return 0; }

  int Run(const CommonOptions&) override {
    if (json_) return PrintJson();
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
    out += "\nEnforced here (uid " + std::to_string(geteuid()) + "; --sandbox=require fails where Landlock or seccomp show no):\n";
    const char* kHeadings[] = {"vfs tool", "stdio tool", "process.run child"};
    std::vector<EnforcementRow> rows = EnforcementTable();
    size_t mechanism_width = 0;
    std::vector<size_t> widths;
    for (const char* heading : kHeadings) widths.push_back(std::string_view(heading).size());
    for (const EnforcementRow& row : rows) {
      mechanism_width = std::max(mechanism_width, row.mechanism.size());
      for (size_t index = 0; index + 1 < row.cells.size(); ++index) {
        widths[index] = std::max(widths[index], row.cells[index].size());
      }
    }
    out += "  ";
    out.append(mechanism_width + 2, ' ');
    for (size_t index = 0; index < 3; ++index) {
      out += kHeadings[index];
      if (index + 1 < 3) out.append(widths[index] - std::string_view(kHeadings[index]).size() + 2, ' ');
    }
    out += '\n';
    for (const EnforcementRow& row : rows) {
      out += "  ";
      out += row.mechanism;
      out.append(mechanism_width - row.mechanism.size() + 2, ' ');
      for (size_t index = 0; index < row.cells.size(); ++index) {
        const std::string& cell = row.cells[index];
        const bool enforced = cell == "yes" || cell.starts_with("yes:");
        const bool missing = cell.starts_with("no ");
        out += enforced ? palette.good : missing ? palette.bad : "";
        out += cell;
        out += enforced || missing ? palette.reset : "";
        if (index + 1 < row.cells.size()) out.append(widths[index] - cell.size() + 2, ' ');
      }
      out += '\n';
    }
    Status written = WriteFull(STDOUT_FILENO, out, "standard output");
    if (!written.ok()) return ReportError("doctor", written.message());
    return kExitOk;
  }

 private:
  // --json: the two tables as data, one object on one line. An enforced
  // cell is "yes" or "yes: HOW", a missing one "no (WHY)", one that does
  // not apply to that kind of process "n/a: WHY", exactly as the text.
  int PrintJson() {
    rapidjson::StringBuffer buffer;
    JsonWriter writer(buffer);
    writer.StartObject();
    WriteJsonKey(writer, "version");
    writer.String(TOOLVFS_VERSION);
    struct utsname system;
    if (uname(&system) == 0) {
      WriteJsonKey(writer, "kernel");
      writer.StartObject();
      WriteJsonKey(writer, "sysname");
      writer.String(system.sysname);
      WriteJsonKey(writer, "release");
      writer.String(system.release);
      WriteJsonKey(writer, "machine");
      writer.String(system.machine);
      writer.EndObject();
    }
    WriteJsonKey(writer, "uid");
    writer.Uint(geteuid());
    WriteJsonKey(writer, "features");
    writer.StartArray();
    for (const NamedFeatureProbe& probe : ProbeKernelFeatures()) {
      writer.StartObject();
      WriteJsonKey(writer, "name");
      writer.String(probe.name);
      WriteJsonKey(writer, "available");
      writer.Bool(probe.probe.available);
      WriteJsonKey(writer, "detail");
      writer.String(probe.probe.detail);
      writer.EndObject();
    }
    writer.EndArray();
    WriteJsonKey(writer, "enforced");
    writer.StartArray();
    constexpr std::string_view kKinds[] = {"vfs_tool", "stdio_tool", "process_run_child"};
    for (const EnforcementRow& row : EnforcementTable()) {
      writer.StartObject();
      WriteJsonKey(writer, "mechanism");
      writer.String(row.mechanism);
      for (size_t index = 0; index < row.cells.size() && index < std::size(kKinds); ++index) {
        WriteJsonKey(writer, kKinds[index]);
        writer.String(row.cells[index]);
      }
      writer.EndObject();
    }
    writer.EndArray();
    writer.EndObject();
    std::string out = JsonText(buffer);
    out += '\n';
    Status written = WriteFull(STDOUT_FILENO, out, "standard output");
    if (!written.ok()) return ReportError("doctor", written.message());
    return kExitOk;
  }

  bool json_ = false;
};

}  // namespace

std::unique_ptr<Command> NewDoctorCommand() { return std::make_unique<DoctorCommand>(); }

}  // namespace toolvfs
