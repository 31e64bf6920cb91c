#include <CLI/CLI.hpp>

#include "cli/command.h"

namespace toolvfs {

void AddCommonOptions(CLI::App& app, CommonOptions& options, unsigned shown) {
  // CLI11 hides the options of the empty group from --help.
  auto group = [shown](unsigned option) { return (shown & option) != 0 ? "Common options" : ""; };
  app.add_option("--project", options.project,
                 "Project store: a directory, fs:DIR, memory:, sqlite:FILE#WORKSPACE[@SNAPSHOT], "
                 "postgres://...#WORKSPACE[@SNAPSHOT] or null: (default: the current directory)")
      ->type_name("DIR|URI")
      ->group(group(kOptionProject));
  app.add_option("--config", options.config,
                 "Tool configuration file (default: toolvfs.toml in the project directory)")
      ->type_name("FILE")
      ->group(group(kOptionConfig));
  app.add_flag("--no-interaction", options.no_interaction,
               "Never ask; deny at once what the tool's policy does not cover (docs/policy.md)")
      ->group(group(kOptionInteraction));
  app.add_option("--sandbox", options.sandbox,
                 "require (default): fail if the OS sandbox cannot be enforced; best-effort: "
                 "warn and run without what is missing")
      ->type_name("MODE")
      ->check(CLI::IsMember({"require", "best-effort"}))
      ->group(group(kOptionSandbox));
  CLI::Option* audit = app.add_option("--audit", options.audit_path,
                                      "Append the audit log to PATH (default: .toolvfs/audit.jsonl in the project)")
                           ->type_name("PATH")
                           ->group(group(kOptionAudit));
  app.add_flag("--no-audit", options.no_audit, "Write no audit log for this run")
      ->excludes(audit)
      ->group(group(kOptionAudit));
  app.add_option("--log-level", options.log_level, "error, warn, info or debug (default: warn)")
      ->type_name("LEVEL")
      ->check(CLI::IsMember({"error", "warn", "info", "debug"}))
      ->group(group(kOptionLogLevel));
}

}  // namespace toolvfs
