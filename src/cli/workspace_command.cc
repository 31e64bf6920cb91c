// `toolvfs workspace`: durable workspaces on the command line (SPEC.md
// §2.4, §7, §10). Each subcommand is a thin front end over ProjectFiles
// (files and snapshots of the --project store) or, for what concerns a
// whole store (init's existence check, rm, gc), over SqlStoreFile.
//
// Workspaces other than the one being created must exist: OpenProject
// creates a sqlite workspace on first use, which is right for tools but
// would turn a typo in `workspace ls --project sqlite:w.db#mian` into a
// new, empty workspace. So every subcommand but init looks the workspace
// up first and names what is missing.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cli/command.h"
#include "cli/progress_line.h"
#include "cli/terminal.h"
#include "cli/tool_invocation.h"
#include "cli/workspace_transfer.h"
#include "core/io.h"
#include "core/text.h"
#include "core/unique_fd.h"
#include "project/path.h"
#include "project/project_files.h"
#include "project/store_errors.h"
#include "project/workspace_copy.h"
#include "project/sql/postgres_uri.h"
#include "project/sql/postgres_store.h"
#include "project/sql/sql_store.h"
#include "project/sql/sqlite_store.h"
#include "project/sql/workspace_uri.h"
#include "protocol/base64.h"
#include "protocol/json_writer.h"
#include "runtime/sdk_location.h"
#include "session/session_config.h"
#include "session/session_tools.h"
#include "session/session_workspace.h"

#include <spawn.h>
#include <sys/wait.h>

extern char** environ;

namespace toolvfs {
namespace {

constexpr std::string_view kSqliteScheme = "sqlite:";

// cat, export and import hold one file in memory at a time; the store's
// default read limit (10 MiB, meant for tools) would refuse larger files
// that the user asked for by name. The materialized copy syncs at most
// this much per file back, so import and export agree on one limit.
constexpr uint64_t kMaxFileBytes = uint64_t{1} << 30;

// A project of a SQL store, sqlite: or postgres://: one with workspaces.
bool IsSqlProject(std::string_view project) { return project.starts_with(kSqliteScheme) || IsPostgresUri(project); }

Result<WorkspaceAddress> ParseSqlProject(std::string_view project) {
  if (IsPostgresUri(project)) return ParseWorkspaceAddress(RedactPostgresUri(project), project);
  return ParseWorkspaceAddress(project, project.substr(kSqliteScheme.size()));
}

// A project URI as messages show it: a postgres URI without its password.
std::string ShownProject(std::string_view project) {
  return IsPostgresUri(project) ? RedactPostgresUri(project) : std::string(project);
}

bool IsPostgresAddress(const WorkspaceAddress& address) { return IsPostgresUri(address.location); }

// The store's location as messages show it: a postgres URI without its password.
std::string Shown(const WorkspaceAddress& address) {
  return IsPostgresAddress(address) ? RedactPostgresUri(address.location) : address.location;
}

bool FileExists(const std::string& path) {
  struct stat status;
  return ::stat(path.c_str(), &status) == 0;
}

// Whether the store of `address` is there: a sqlite file exists (a server
// database is asked when opened).
bool StoreExists(const WorkspaceAddress& address) { return IsPostgresAddress(address) || FileExists(address.location); }

// Deletes the workspace `created` (opened with create_new_workspace) after
// filling it failed, so running the command again after fixing the cause
// just works; by the row the open inserted, never by name, which another
// command may have taken since. `why` is the failure, with what went wrong
// in the removal added.
std::string RemoveCreatedWorkspace(std::unique_ptr<ProjectFiles> created, std::string why) {
  Status removed = DeleteCreatedWorkspace(std::move(created));
  // NotFound: someone deleted it meanwhile, so nothing is left behind.
  if (!removed.ok() && removed.code() != StatusCode::kNotFound) {
    why += "; the workspace was created and could not be removed: " + removed.message();
  }
  return why;
}

// The sqlite file a command's target names, looked at before the open that
// creates it on first use: a command that created the file and then failed
// removes it again, so that it leaves no empty store behind. Only a file
// that was not there before, and only while it holds no workspace and no
// one else has it open (DeleteSqliteFileIfUnused): another command may
// have created a workspace in it meanwhile.
class TargetStoreFile {
 public:
  // `project` is the target's URI; anything but a sqlite: one is left alone.
  explicit TargetStoreFile(std::string_view project) {
    if (!project.starts_with(kSqliteScheme)) return;
    Result<WorkspaceAddress> address = ParseSqlProject(project);
    struct stat status;
    // lstat: a dangling symbolic link is there, and what it would create is not ours to judge.
    if (address.ok() && ::lstat(address->location.c_str(), &status) != 0 && errno == ENOENT) {
      new_file_ = address->location;
    }
  }

  // After the command failed and closed the target: deletes the file if
  // this command created it and it holds nothing. `why` is the failure,
  // with what went wrong in the removal added.
  std::string RemoveIfCreated(std::string why) const {
    if (!new_file_) return why;
    Result<bool> deleted = DeleteSqliteFileIfUnused(*new_file_);
    if (!deleted.ok()) {
      why += "; the store file " + Quote(*new_file_) + " was created and could not be removed: " +
             deleted.status().message();
    }
    return why;
  }

 private:
  std::optional<std::string> new_file_;  // the sqlite file, when it did not exist before the command
};

// The whole store of `address` (never creates a sqlite file).
Result<std::unique_ptr<SqlStoreFile>> OpenStoreFile(const WorkspaceAddress& address) {
  if (IsPostgresAddress(address)) return OpenPostgresStoreFile(address.location);
  TOOLVFS_ASSIGN_OR_RETURN(std::unique_ptr<SqliteStoreFile> file, SqliteStoreFile::Open(address.location));
  return std::unique_ptr<SqlStoreFile>(std::move(file));
}

std::string JsonOf(const std::function<void(JsonWriter&)>& write) {
  rapidjson::StringBuffer buffer;
  JsonWriter writer(buffer);
  write(writer);
  std::string json = JsonText(buffer);
  json += '\n';
  return json;
}

void WriteOptionalString(JsonWriter& writer, const std::optional<std::string>& value) {
  if (value) {
    writer.String(*value);
  } else {
    writer.Null();
  }
}

std::string TimestampOrDash(std::optional<int64_t> unix_milliseconds) {
  return unix_milliseconds ? FormatTimestamp(*unix_milliseconds) : "-";
}

// Left-aligned columns separated by two spaces; the last column unpadded.
std::string FormatTable(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> widths;
  for (const auto& row : rows) {
    if (widths.size() < row.size()) widths.resize(row.size(), 0);
    for (size_t column = 0; column < row.size(); ++column) {
      widths[column] = std::max(widths[column], row[column].size());
    }
  }
  std::string out;
  for (const auto& row : rows) {
    for (size_t column = 0; column < row.size(); ++column) {
      out += row[column];
      if (column + 1 < row.size()) out.append(widths[column] - row[column].size() + 2, ' ');
    }
    out += '\n';
  }
  return out;
}

std::string Plural(uint64_t count, std::string_view one, std::string_view many) {
  return std::to_string(count) + " " + std::string(count == 1 ? one : many);
}

// "12 files (3.4 KiB) and 2 directories PLACE", plus what was left out.
std::string DescribeTransfer(const TransferReport& report, std::string_view place) {
  std::string text = Plural(report.files, "file", "files") + " (" + FormatBytes(report.bytes) + ") and " +
                     Plural(report.directories, "directory", "directories") + " " + std::string(place);
  std::vector<std::string> left_out;
  if (report.ignored > 0) left_out.push_back(std::to_string(report.ignored) + " ignored");
  if (report.skipped > 0) {
    left_out.push_back(std::to_string(report.skipped) + " skipped (symbolic links or names a workspace cannot hold)");
  }
  if (!left_out.empty()) {
    text += "; left out: " + left_out.front();
    if (left_out.size() > 1) text += ", " + left_out.back();
  }
  return text;
}

// "key": count for each pair, in order.
void WriteCounts(JsonWriter& writer, std::initializer_list<std::pair<const char*, uint64_t>> counts) {
  for (const auto& [key, count] : counts) {
    WriteJsonKey(writer, key);
    writer.Uint64(count);
  }
}

void WriteTransferFields(JsonWriter& writer, const TransferReport& report) {
  WriteJsonKey(writer, "files");
  writer.Uint64(report.files);
  WriteJsonKey(writer, "directories");
  writer.Uint64(report.directories);
  WriteJsonKey(writer, "bytes");
  writer.Uint64(report.bytes);
  WriteJsonKey(writer, "ignored");
  writer.Uint64(report.ignored);
  WriteJsonKey(writer, "skipped");
  writer.Uint64(report.skipped);
}

void WritePaths(JsonWriter& writer, std::string_view key, const std::vector<std::string>& paths) {
  WriteJsonKey(writer, key);
  writer.StartArray();
  for (const std::string& path : paths) writer.String(ToValidUtf8(path));
  writer.EndArray();
}

// "'a', 'b', 'c'", the first ten only ("... and 5 more"): for a one-line note.
std::string ListPaths(const std::vector<std::string>& paths) {
  constexpr size_t kMostShown = 10;
  std::string text;
  for (size_t index = 0; index < paths.size() && index < kMostShown; ++index) {
    if (index > 0) text += ", ";
    text += Quote(paths[index]);
  }
  if (paths.size() > kMostShown) text += " and " + std::to_string(paths.size() - kMostShown) + " more";
  return text;
}

// The files of the --project store that a copy between the workspace and a
// host directory must neither read nor write: a sqlite store's file and
// its companions. None for the other stores: a server database has no file
// here, and memory: none at all.
Result<StoreFiles> StoreFilesOfProject(std::string_view project) {
  if (!project.starts_with(kSqliteScheme)) return StoreFiles{};
  TOOLVFS_ASSIGN_OR_RETURN(WorkspaceAddress address, ParseSqlProject(project));
  return SqliteStoreFiles(address.location);
}

// Shows a copy's files and bytes so far on `line` ("importing: 312 of 2,000
// files, 4.1 MiB, 3.2 s").
std::function<void(const TransferReport&, uint64_t)> TransferProgress(ProgressLine& line, std::string verb) {
  if (!line.enabled()) return {};
  return [&line, verb = std::move(verb), started = ProgressLine::Clock::now()](const TransferReport& done,
                                                                                uint64_t files_total) {
    line.Update([&] {
      return verb + ": " + FormatCount(done.files) + " of " + FormatCount(files_total) + " files, " +
             FormatApproximateBytes(done.bytes) + ", " + FormatElapsed(ProgressLine::Clock::now() - started);
    });
  };
}

// Copies the directory `directory` (its .gitignore'd files left out unless
// `include_ignored`, git's and toolvfs's own state unless
// `include_tool_state`, as export does) into `store` through a materialized
// copy, so the whole import reaches a sqlite workspace in one transaction,
// empty directories included. The files of `store_files` (the store's own,
// when `directory` holds them) are left out.
Result<TransferReport> ImportDirectory(ProjectFiles& store, const std::string& directory, bool include_ignored,
                                       bool include_tool_state, const StoreFiles& store_files,
                                       ProgressLine& progress) {
  StoreOptions source_options;
  source_options.max_read_bytes = kMaxFileBytes;
  TOOLVFS_ASSIGN_OR_RETURN(std::unique_ptr<ProjectFiles> source, OpenProject("fs:" + directory, source_options));
  TOOLVFS_ASSIGN_OR_RETURN(std::unique_ptr<MaterializedView> view, store.Materialize());
  UniqueFd copy_fd(::open(view->path().c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!copy_fd) {
    Status opened = ErrnoToStatus(errno, "Cannot open the directory " + Quote(view->path()));
    static_cast<void>(view->Release());  // nothing was copied: nothing to sync
    return opened;
  }
  TransferOptions options;
  options.skip_ignored = true;
  options.include_ignored = include_ignored;
  options.skip_tool_state = !include_tool_state;
  options.store_files = store_files;
  options.max_file_bytes = kMaxFileBytes;
  options.progress = TransferProgress(progress, "importing");
  Result<TransferReport> report = CopyTreeInto(*source, copy_fd.get(), view->path(), options);
  // The copy goes into the workspace store as one transaction now, which
  // for a large import takes as long as the copy or longer.
  if (report.ok()) {
    progress.ShowNow("importing: " + FormatCount(report->files) + " files copied, writing them into " +
                     store.DisplayRoot());
  }
  // Released either way: a copy that failed half-way has still written only
  // whole files from the source, and nothing of the workspace was removed.
  Status released = view->Release();
  if (!report.ok()) return report.status();
  if (!released.ok()) return released;
  return report;
}

class WorkspaceCommand final : public Command {
 public:
  void AddOptions(CLI::App& app) override {
    app.require_subcommand(1, 1);
    app.footer(
        "--project names the workspace: sqlite:FILE#WORKSPACE (a snapshot read-only as "
        "sqlite:FILE#WORKSPACE@SNAPSHOT). Every subcommand but init needs an existing workspace.\n"
        "Example: toolvfs workspace init --from . --project sqlite:agents.db#demo\n"
        "Exit codes: 0 done, 2 usage or any other error, 69 the store's server is unavailable (try again).");

    CLI::App* init = Add(app, "init", "Create a workspace, optionally importing a directory", &WorkspaceCommand::Init);
    init_app_ = init;
    init->add_option("name", init_name_,
                     "The workspace (and session id) to create in the store of --project: sqlite:FILE, or "
                     "memory: for a throw-away session (default: the #NAME of --project)")
        ->type_name("NAME");
    init->add_option("--from", directory_, "Import this directory (honouring its .gitignore/.ignore)")
        ->type_name("DIR");
    init->add_flag("--include-ignored", include_ignored_, "With --from: also import ignored files");
    init->add_flag("--include-tool-state", include_tool_state_,
                   "With --from: also import .git, .toolvfs and toolvfs.toml (left out by default, as export does)");
    init->add_flag("--session", session_,
                                   "Make it a session workspace (docs/sessions.md): the session tools, limits "
                                   "and mounts of the [session] table apply; its id is the workspace name");
    allow_root_option_ = init->add_option("--allow-root", allowed_roots_, "With --session: a host folder mounts may come from (repeatable)")
                             ->type_name("DIR");
    mount_option_ = init->add_option("--mount", mount_specs_,
                                     "With --session: load HOST_PATH (at MOUNT_PATH, default the root); the "
                                     "--include/--exclude/--max-bytes/--follow-symlinks after it belong to it")
                        ->type_name("HOST_PATH[:MOUNT_PATH]");
    include_option_ = init->add_option("--include", mount_includes_, "Glob of files the last --mount loads")->type_name("GLOB");
    exclude_option_ = init->add_option("--exclude", mount_excludes_, "Glob of files the last --mount leaves out")->type_name("GLOB");
    max_bytes_option_ = init->add_option("--max-bytes", mount_max_bytes_, "Byte budget of the last --mount")->type_name("N");
    follow_option_ = init->add_flag("--follow-symlinks", mount_follow_count_,
                                    "The last --mount follows symlinks that stay inside its allowed root");
    for (CLI::Option* option : {include_option_, exclude_option_, max_bytes_option_, allow_root_option_}) {
      option->allow_extra_args(false);
    }
    mount_option_->allow_extra_args(false);

    CLI::App* list = Add(app, "ls", "List files and directories with kind, version, size and times", &WorkspaceCommand::List);
    list->add_option("PATH", path_, "A directory (its entries) or a file (default: the root)");
    list->add_flag("-r,--recursive", recursive_, "List everything below PATH");

    Add(app, "reset", "Empty a session workspace; its mounts load again on the next use", &WorkspaceCommand::Reset);
    Add(app, "prompt", "Print the session tools' instructions for the model, with the mounts",
        &WorkspaceCommand::Prompt);
    CLI::App* materialize = Add(app, "materialize",
                                "Run COMMAND in a real directory holding the session's files (also in "
                                "TOOLVFS_WORKSPACE_DIR), and sync its changes back when it exits",
                                &WorkspaceCommand::Materialize);
    materialize->add_option("COMMAND", command_, "The command and its arguments, after --")->required();

    CLI::App* cat = Add(app, "cat", "Print a file's content", &WorkspaceCommand::Cat);
    cat->add_option("PATH", path_, "The file")->required();

    CLI::App* snapshot = Add(app, "snapshot", "Take a snapshot and print its id", &WorkspaceCommand::TakeSnapshot);
    snapshot->add_option("--label", label_, "A label kept with the snapshot")->type_name("LABEL");

    Add(app, "snapshots", "List the snapshots, oldest first", &WorkspaceCommand::ListSnapshots);

    CLI::App* restore = Add(app, "restore", "Make the workspace equal to a snapshot", &WorkspaceCommand::Restore);
    restore->add_option("ID", first_id_, "The snapshot's id or label")->required();

    CLI::App* remove_snapshot = Add(app, "snapshot-rm", "Delete a snapshot", &WorkspaceCommand::DeleteSnapshot);
    remove_snapshot->add_option("ID", first_id_, "The snapshot's id or label")->required();

    CLI::App* diff = Add(app, "diff", "Paths added, modified and deleted from snapshot A to B (or the live state)",
                         &WorkspaceCommand::Diff);
    diff->add_option("A", first_id_, "The earlier snapshot")->required();
    diff->add_option("B", second_id_, "The later snapshot (default: the live state)");

    CLI::App* exported = Add(app, "export", "Write the workspace's tree into a directory", &WorkspaceCommand::Export);
    exported->add_option("DIR", directory_, "A new or empty directory (created if missing)")->required();
    exported->add_flag("--force", force_, "Write into a non-empty directory, replacing files at the same paths");
    exported->add_flag("--include-tool-state", include_tool_state_,
                       "Also write .git, .toolvfs and toolvfs.toml (left out by default: git and toolvfs would act "
                       "on them)");

    CLI::App* imported = Add(app, "import", "Copy a directory into the workspace (honouring its .gitignore/.ignore)",
                             &WorkspaceCommand::Import);
    imported->add_option("DIR", directory_, "The directory to import")->required();
    imported->add_flag("--include-ignored", include_ignored_, "Also import ignored files");
    imported->add_flag("--include-tool-state", include_tool_state_,
                       "Also import .git, .toolvfs and toolvfs.toml (left out by default, as export does)");

    CLI::App* copy = Add(app, "copy",
                         "Copy workspace FROM_URI with its snapshots into a new workspace TO_URI of any store "
                         "(docs/stores.md#workspace-copy)",
                         &WorkspaceCommand::Copy);
    copy->add_option("FROM_URI", from_uri_, "The workspace to copy (sqlite:FILE#WS, a directory, ...)")->required();
    copy->add_option("TO_URI", to_uri_, "A new workspace (sqlite:FILE#WS, ...) or an empty directory")->required();

    Add(app, "rm", "Delete the workspace with its snapshots", &WorkspaceCommand::Remove);
    Add(app, "gc", "Free the content nothing refers to any more, in the whole store file", &WorkspaceCommand::CollectGarbage);
  }

  int Run(const CommonOptions& common) override {
    for (const Subcommand& subcommand : subcommands_) {
      if (!subcommand.app->parsed()) continue;
      what_ = "workspace " + subcommand.app->get_name();
      return (this->*subcommand.run)(common);
    }
    return ReportError("workspace", "no subcommand given (see toolvfs workspace --help)");
  }

 private:
  using Handler = int (WorkspaceCommand::*)(const CommonOptions&);
  struct Subcommand {
    CLI::App* app;
    Handler run;
  };

  CLI::App* Add(CLI::App& app, const char* name, const char* summary, Handler run) {
    CLI::App* sub = app.add_subcommand(name, summary);
    sub->add_flag("--json", json_, "Print JSON instead of text");
    subcommands_.push_back(Subcommand{sub, run});
    return sub;
  }

  int Fail(const Status& status) const { return ReportStatus(what_, status); }

  // A progress line only for people: not with --json, not when asked for
  // quiet (--log-level error); ProgressLine checks for a terminal.
  bool ProgressWanted(const CommonOptions& common) const { return !json_ && common.log_level != "error"; }

  int Print(std::string_view text) const {
    Status written = WriteFull(STDOUT_FILENO, text, "standard output");
    if (!written.ok()) return Fail(written);
    return kExitOk;
  }

  // The workspace of --project, which must exist when it is a sqlite one.
  // nullptr after reporting why it cannot be opened.
  std::unique_ptr<ProjectFiles> OpenExisting(const CommonOptions& common) {
    if (IsSqlProject(common.project)) {
      Result<WorkspaceAddress> address = ParseSqlProject(common.project);
      if (!address.ok()) {
        open_exit_code_ = ReportError("--project", address.status().message());
        return nullptr;
      }
      if (!StoreExists(*address)) {
        open_exit_code_ = ReportError(what_, "the store file " + Quote(Shown(*address)) +
                               " does not exist; create a workspace in it with toolvfs workspace init");
        return nullptr;
      }
      Result<std::unique_ptr<SqlStoreFile>> file = OpenStoreFile(*address);
      if (!file.ok()) {
        open_exit_code_ = ReportStatus("--project", file.status());
        return nullptr;
      }
      Result<std::vector<WorkspaceSummary>> workspaces = (*file)->ListWorkspaces();
      if (!workspaces.ok()) {
        open_exit_code_ = ReportStatus("--project", workspaces.status());
        return nullptr;
      }
      bool found = std::any_of(workspaces->begin(), workspaces->end(),
                               [&](const WorkspaceSummary& summary) { return summary.name == address->workspace; });
      if (!found) {
        open_exit_code_ = ReportError(what_, "workspace " + Quote(address->workspace) + " does not exist in " +
                               Quote(Shown(*address)) + "; create it with toolvfs workspace init");
        return nullptr;
      }
    }
    StoreOptions options;
    options.max_read_bytes = kMaxFileBytes;
    Result<std::unique_ptr<ProjectFiles>> store = OpenProject(common.project, options);
    if (!store.ok()) {
      open_exit_code_ = ReportStatus("--project", store.status());
      return nullptr;
    }
    return std::move(store).value();
  }

  // The address of a sqlite --project, for the subcommands that act on the
  // store file itself; nullopt after reporting why there is none.
  std::optional<WorkspaceAddress> SqliteAddress(const CommonOptions& common, bool allow_snapshot) const {
    if (!IsSqlProject(common.project)) {
      ReportError(what_, "needs a sqlite: or postgres:// project (--project sqlite:FILE#WORKSPACE or "
                         "postgres://...#WORKSPACE), got " + Quote(ShownProject(common.project)));
      return std::nullopt;
    }
    Result<WorkspaceAddress> address = ParseSqlProject(common.project);
    if (!address.ok()) {
      ReportError("--project", address.status().message());
      return std::nullopt;
    }
    if (address->snapshot && !allow_snapshot) {
      ReportError(what_, "--project " + Quote(ShownProject(common.project)) +
                             " names a snapshot; name the workspace only (sqlite:FILE#WORKSPACE)");
      return std::nullopt;
    }
    return std::move(address).value();
  }

  // ----- init -----

  // --project as init acts on it: NAME added to a sqlite:FILE (the
  // issue's syntax, `init NAME --project sqlite:FILE`), or checked against
  // the #NAME already there; without --project, the [session] table's
  // store for a session. InvalidArgument for a clash.
  Result<std::string> InitProject(const CommonOptions& common) const {
    if (init_name_.empty()) return common.project;
    std::string project = common.project;
    if (project == ".") {
      std::string config_path = ConfigPath(common);
      std::optional<std::string> store;
      if (session_ && FileExists(config_path)) {
        TOOLVFS_ASSIGN_OR_RETURN(Config config, LoadConfig(config_path, InstallationVariables()));
        if (config.session) store = config.session->store;
      }
      if (!store) {
        return InvalidArgumentError("workspace init " + Quote(init_name_) +
                                    " needs the store to create it in: --project sqlite:FILE (or memory:), or "
                                    "store in the [session] table");
      }
      project = *store;
    }
    if (project.starts_with("memory:")) {
      const std::string_view named = std::string_view(project).substr(std::string_view("memory:").size());
      if (!named.empty() && named != init_name_) {
        return InvalidArgumentError("NAME " + Quote(init_name_) + " and --project " + Quote(RedactPostgresUri(project)) +
                                    " name different workspaces; give the name once");
      }
      return "memory:" + init_name_;
    }
    if (!IsSqlProject(project)) {
      return InvalidArgumentError("workspace init " + Quote(init_name_) + " creates it in a sqlite:FILE, "
                                  "postgres://… or memory: store, got --project " + Quote(project));
    }
    const size_t hash = project.find('#');
    if (hash == std::string::npos) return project + "#" + init_name_;
    const std::string_view named = std::string_view(project).substr(hash + 1);
    if (named != init_name_) {
      return InvalidArgumentError("NAME " + Quote(init_name_) + " and --project " + Quote(RedactPostgresUri(project)) +
                                  " name different workspaces; give the name once (NAME with --project "
                                  "sqlite:FILE, or --project sqlite:FILE#NAME alone)");
    }
    return project;
  }

  // `init --session` on a memory: store: the session lives as long as this
  // command, so this checks the [session] table and the mounts (loading
  // them) and says so; `run --project memory: --session NAME` makes such a
  // session for each run.
  int InitMemorySession(const CommonOptions& common) {
    if (!session_) {
      return ReportError(what_, "a memory: workspace ends with the command; init creates one only with "
                                "--session, to check its settings and mounts");
    }
    Result<std::unique_ptr<ProjectFiles>> store = OpenProject(common.project);
    if (!store.ok()) return ReportError("--project", store.status().message());
    const std::string name = init_name_.empty() ? "memory" : init_name_;
    Result<SessionSettings> settings = SessionSettingsOfInit(common, name);
    if (!settings.ok()) return Fail(settings.status());
    Result<std::unique_ptr<SessionWorkspace>> session = SessionWorkspace::Create(**store, std::move(*settings));
    if (!session.ok()) return Fail(session.status());
    Result<std::vector<SessionFileInfo>> files = (*session)->ListAllFiles();
    if (!files.ok()) return Fail(files.status());
    if (json_) {
      return Print(JsonOf([&](JsonWriter& writer) {
        writer.StartObject();
        WriteJsonKey(writer, "workspace");
        writer.String(name);
        WriteJsonKey(writer, "file");
        writer.Null();
        WriteJsonKey(writer, "session");
        writer.Bool(true);
        WriteJsonKey(writer, "mounted_files");
        writer.Uint64(files->size());
        writer.EndObject();
      }));
    }
    return Print("Created session workspace " + Quote(name) + " in memory with " +
                 Plural(files->size(), "mounted file", "mounted files") +
                 "; it ends with this command (toolvfs run --project memory: --session " + name +
                 " makes one per run)\n");
  }

  int Init(const CommonOptions& given) {
    Result<std::string> project = InitProject(given);
    if (!project.ok()) return Fail(project.status());
    CommonOptions common = given;
    common.project = *project;
    if (common.project.starts_with("memory:")) return InitMemorySession(common);
    std::optional<WorkspaceAddress> address = SqliteAddress(common, /*allow_snapshot=*/false);
    if (!address) return kExitUsage;
    if (StoreExists(*address)) {
      Result<std::unique_ptr<SqlStoreFile>> file = OpenStoreFile(*address);
      if (!file.ok()) return ReportStatus("--project", file.status());
      Result<std::vector<WorkspaceSummary>> workspaces = (*file)->ListWorkspaces();
      if (!workspaces.ok()) return ReportStatus("--project", workspaces.status());
      for (const WorkspaceSummary& summary : *workspaces) {
        if (summary.name != address->workspace) continue;
        return ReportError(what_, "workspace " + Quote(summary.name) + " already exists in " +
                                      Quote(Shown(*address)) + " (" + Plural(summary.files, "file", "files") +
                                      "); add files with toolvfs workspace import, or delete it first with "
                                      "toolvfs workspace rm");
      }
    }
    // The session's settings before anything is created: a bad [session]
    // table or --mount leaves no workspace behind.
    std::optional<SessionSettings> session_settings;
    if (session_) {
      Result<SessionSettings> settings = SessionSettingsOfInit(common, address->workspace);
      if (!settings.ok()) return Fail(settings.status());
      session_settings = std::move(settings).value();
    } else if (!init_app_->get_option("--mount")->empty() || !init_app_->get_option("--allow-root")->empty() ||
               !init_app_->get_option("--include")->empty() || !init_app_->get_option("--exclude")->empty() ||
               !init_app_->get_option("--max-bytes")->empty() || mount_follow_count_ > 0) {
      return ReportError(what_, "--allow-root, --mount and the options of a mount need --session");
    }
    if (!directory_.empty()) {
      // Before anything is created: a mistyped --from leaves no workspace.
      struct stat status;
      if (::stat(directory_.c_str(), &status) != 0) {
        return Fail(ErrnoToStatus(errno, "Cannot import " + Quote(directory_)));
      }
      if (!S_ISDIR(status.st_mode)) return ReportError(what_, "Cannot import " + Quote(directory_) + ": not a directory");
    }
    // Exclusive: of two inits racing past the check above, one creates the
    // workspace and the other is refused here, with nothing touched.
    StoreOptions create;
    create.create_new_workspace = true;
    const TargetStoreFile store_file(common.project);
    Result<std::unique_ptr<ProjectFiles>> store = OpenProject(common.project, create);
    if (!store.ok()) {
      if (store.status().code() != StatusCode::kAlreadyExists) {
        return ReportStatus("--project", Status(store.status().code(),
                                                store_file.RemoveIfCreated(store.status().message())));
      }
      return ReportStatus(what_, Status(StatusCode::kAlreadyExists,
                                        store.status().message() + " (another command created it just now)"));
    }

    TransferReport report;
    if (!directory_.empty()) {
      Result<TransferReport> imported = [&]() -> Result<TransferReport> {
        // Now that the store file exists: --from may be its directory.
        TOOLVFS_ASSIGN_OR_RETURN(StoreFiles store_files, StoreFilesOfProject(common.project));
        ProgressLine progress(ProgressLine::ForStderr(ProgressWanted(common)));
        return ImportDirectory(**store, directory_, include_ignored_, include_tool_state_, store_files, progress);
      }();
      if (!imported.ok()) {
        // A failed init leaves no half-filled workspace behind.
        return ReportError(what_, store_file.RemoveIfCreated(
                                      RemoveCreatedWorkspace(std::move(*store), imported.status().message())));
      }
      report = *imported;
      NoteLeftOut(report, Direction::kImport, directory_);
    }
    if (session_settings) {
      Result<std::unique_ptr<SessionWorkspace>> session = SessionWorkspace::Create(**store, std::move(*session_settings));
      if (!session.ok()) {
        return ReportError(what_, store_file.RemoveIfCreated(
                                      RemoveCreatedWorkspace(std::move(*store), session.status().message())));
      }
    }
    if (json_) {
      return Print(JsonOf([&](JsonWriter& writer) {
        writer.StartObject();
        WriteJsonKey(writer, "workspace");
        writer.String(address->workspace);
        WriteJsonKey(writer, "file");
        writer.String(ToValidUtf8(Shown(*address)));
        WriteTransferFields(writer, report);
        WritePaths(writer, "store_files", report.store_files);
        WritePaths(writer, "tool_state", report.tool_state);
        WriteJsonKey(writer, "session");
        writer.Bool(session_);
        writer.EndObject();
      }));
    }
    std::string text = std::string(session_ ? "Created session workspace " : "Created workspace ") + Quote(address->workspace) + " in " + Quote(Shown(*address));
    if (!directory_.empty()) text += "; imported " + DescribeTransfer(report, "from " + Quote(directory_));
    return Print(text + "\n");
  }

  // ----- ls -----

  struct Listed {
    std::string path;
    FileMetadata metadata;
    // False for a symbolic link that leaves the project or dangles (fs
    // projects): it is listed, but has no metadata to show.
    bool has_metadata = true;
  };

  Status Collect(ProjectFiles& store, const std::string& directory, std::vector<Listed>& out) const {
    TOOLVFS_ASSIGN_OR_RETURN(std::vector<DirEntry> entries, store.ListDir(directory));
    for (const DirEntry& entry : entries) {
      std::string path = JoinPath(directory, entry.name);
      if (entry.kind == EntryKind::kSymlink) {
        out.push_back(Listed{path, FileMetadata{.kind = EntryKind::kSymlink}, /*has_metadata=*/false});
        continue;
      }
      TOOLVFS_ASSIGN_OR_RETURN(FileMetadata metadata, store.Metadata(path));
      const bool descend = recursive_ && metadata.kind == EntryKind::kDirectory && !entry.is_symlink();
      out.push_back(Listed{path, metadata});
      if (descend) TOOLVFS_RETURN_IF_ERROR(Collect(store, path, out));
    }
    return OkStatus();
  }

  int List(const CommonOptions& common) {
    std::unique_ptr<ProjectFiles> store = OpenExisting(common);
    if (!store) return open_exit_code_;
    if (recursive_ && path_.empty()) {
      // A session's own view: every file with its session metadata.
      Result<bool> is_session = SessionWorkspace::IsSession(*store);
      if (!is_session.ok()) return Fail(is_session.status());
      if (*is_session) return ListSession(*store);
    }
    Result<std::string> path = NormalizePath(path_);
    if (!path.ok()) return Fail(path.status());
    Result<FileMetadata> metadata = store->Metadata(*path);
    if (!metadata.ok()) return Fail(metadata.status());
    std::vector<Listed> listed;
    if (metadata->kind == EntryKind::kDirectory) {
      if (Status collected = Collect(*store, *path, listed); !collected.ok()) return Fail(collected);
    } else {
      listed.push_back(Listed{*path, *metadata});
    }
    // A session's own records are not its files (docs/sessions.md).
    Result<bool> is_session = SessionWorkspace::IsSession(*store);
    if (!is_session.ok()) return Fail(is_session.status());
    if (*is_session) {
      std::erase_if(listed, [](const Listed& entry) {
        return entry.path == kSessionHiddenRoot || entry.path.starts_with(std::string(kSessionHiddenRoot) + "/");
      });
    }
    // Bytewise by path, like every listing of toolvfs ("a.txt" before "a/b").
    std::sort(listed.begin(), listed.end(), [](const Listed& a, const Listed& b) { return a.path < b.path; });

    if (json_) {
      return Print(JsonOf([&](JsonWriter& writer) {
        writer.StartArray();
        for (const Listed& entry : listed) {
          writer.StartObject();
          WriteJsonKey(writer, "path");
          writer.String(entry.path);
          WriteJsonKey(writer, "kind");
          writer.String(EntryKindName(entry.metadata.kind));
          WriteJsonKey(writer, "version");
          if (entry.metadata.version) {
            writer.Uint64(*entry.metadata.version);
          } else {
            writer.Null();
          }
          WriteJsonKey(writer, "size_bytes");
          writer.Uint64(entry.metadata.size);
          WriteJsonKey(writer, "created_at");
          WriteOptionalString(writer, entry.metadata.created_ms
                                          ? std::optional<std::string>(FormatTimestamp(*entry.metadata.created_ms))
                                          : std::nullopt);
          WriteJsonKey(writer, "updated_at");
          WriteOptionalString(writer, entry.has_metadata
                                          ? std::optional<std::string>(FormatTimestamp(entry.metadata.modified_ms))
                                          : std::nullopt);
          writer.EndObject();
        }
        writer.EndArray();
      }));
    }
    std::vector<std::vector<std::string>> rows;
    rows.push_back({"KIND", "VERSION", "SIZE", "CREATED", "UPDATED", "PATH"});
    for (const Listed& entry : listed) {
      const bool is_file = entry.metadata.kind == EntryKind::kFile;
      rows.push_back({std::string(EntryKindName(entry.metadata.kind)),
                      entry.metadata.version ? std::to_string(*entry.metadata.version) : "-",
                      is_file ? std::to_string(entry.metadata.size) : "-", TimestampOrDash(entry.metadata.created_ms),
                      entry.has_metadata ? FormatTimestamp(entry.metadata.modified_ms) : "-",
                      EscapeForDisplay(entry.path)});
    }
    return Print(FormatTable(rows));
  }

  int ListSession(ProjectFiles& store) {
    Result<std::unique_ptr<SessionWorkspace>> session = SessionWorkspace::Open(store);
    if (!session.ok()) return Fail(session.status());
    Result<std::vector<SessionFileInfo>> files = (*session)->ListAllFiles();
    if (!files.ok()) return Fail(files.status());
    if (json_) return Print(SessionFilesJson(*files) + "\n");
    std::vector<std::vector<std::string>> rows;
    rows.push_back({"VERSION", "SIZE", "ENCODING", "CREATED", "UPDATED", "PATH"});
    for (const SessionFileInfo& info : *files) {
      rows.push_back({std::to_string(info.version), std::to_string(info.size_bytes),
                      std::string(SessionEncodingName(info.encoding)), FormatTimestamp(info.created_ms),
                      FormatTimestamp(info.updated_ms), EscapeForDisplay(info.path)});
    }
    return Print(FormatTable(rows));
  }

  // ----- sessions: init's settings, reset, prompt, materialize -----

  // The settings of `init --session`: the [session] table of the config in
  // use (when there is one), then --allow-root and --mount.
  Result<SessionSettings> SessionSettingsOfInit(const CommonOptions& common, const std::string& name) {
    std::optional<SessionConfig> table;
    std::string config_path = ConfigPath(common);
    if (FileExists(config_path)) {
      TOOLVFS_ASSIGN_OR_RETURN(Config config, LoadConfig(config_path, InstallationVariables()));
      table = config.session;
    }
    SessionSettings settings = SessionSettingsFrom(table, name);
    for (const std::string& root : allowed_roots_) settings.allowed_roots.push_back(root);
    TOOLVFS_ASSIGN_OR_RETURN(std::vector<SessionMount> mounts, MountsFromFlags());
    for (SessionMount& mount : mounts) settings.mounts.push_back(std::move(mount));
    return settings;
  }

  // --mount and the options after it, in command-line order: each
  // --include/--exclude/--max-bytes/--follow-symlinks belongs to the last
  // --mount before it.
  Result<std::vector<SessionMount>> MountsFromFlags() const {
    std::vector<SessionMount> mounts;
    size_t mount_index = 0, include_index = 0, exclude_index = 0, max_bytes_index = 0;
    for (CLI::Option* option : init_app_->parse_order()) {
      if (option == mount_option_) {
        const std::string& spec = mount_specs_[mount_index++];
        SessionMount mount;
        // HOST_PATH[:MOUNT_PATH]: the last colon splits, so a host path
        // with a colon needs its mount path spelled out.
        size_t colon = spec.rfind(':');
        mount.host_path = colon == std::string::npos ? spec : spec.substr(0, colon);
        if (colon != std::string::npos) mount.mount_path = spec.substr(colon + 1);
        if (mount.host_path.empty()) return InvalidArgumentError("--mount " + Quote(spec) + ": the host path is empty");
        mounts.push_back(std::move(mount));
        continue;
      }
      std::string flag = option == include_option_     ? "--include"
                         : option == exclude_option_   ? "--exclude"
                         : option == max_bytes_option_ ? "--max-bytes"
                         : option == follow_option_    ? "--follow-symlinks"
                                                       : "";
      if (flag.empty()) continue;
      if (mounts.empty()) return InvalidArgumentError(flag + " must follow the --mount it belongs to");
      SessionMount& mount = mounts.back();
      if (option == include_option_) mount.include_glob.push_back(mount_includes_[include_index++]);
      if (option == exclude_option_) mount.exclude_glob.push_back(mount_excludes_[exclude_index++]);
      if (option == max_bytes_option_) mount.max_bytes = mount_max_bytes_[max_bytes_index++];
      if (option == follow_option_) mount.follow_symlinks = true;
    }
    return mounts;
  }

  // The session of --project; null after reporting why there is none.
  std::unique_ptr<SessionWorkspace> OpenSession(ProjectFiles& store) {
    Result<std::unique_ptr<SessionWorkspace>> session = SessionWorkspace::Open(store);
    if (!session.ok()) {
      Fail(session.status());
      return nullptr;
    }
    return std::move(session).value();
  }

  int Reset(const CommonOptions& common) {
    std::unique_ptr<ProjectFiles> store = OpenExisting(common);
    if (!store) return open_exit_code_;
    std::unique_ptr<SessionWorkspace> session = OpenSession(*store);
    if (!session) return kExitUsage;
    if (Status reset = session->Reset(); !reset.ok()) return Fail(reset);
    if (json_) {
      return Print(JsonOf([&](JsonWriter& writer) {
        writer.StartObject();
        WriteJsonKey(writer, "reset");
        writer.String(session->id());
        writer.EndObject();
      }));
    }
    return Print("Reset session " + Quote(session->id()) + ": it is empty" +
                 (session->settings().mounts.empty() ? "" : "; its mounts load again on the next use") + "\n");
  }

  int Prompt(const CommonOptions& common) {
    std::unique_ptr<ProjectFiles> store = OpenExisting(common);
    if (!store) return open_exit_code_;
    std::unique_ptr<SessionWorkspace> session = OpenSession(*store);
    if (!session) return kExitUsage;
    Result<std::string> guidance = SessionGuidance(*session);
    if (!guidance.ok()) return Fail(guidance.status());
    if (!json_) return Print(*guidance);
    return Print(JsonOf([&](JsonWriter& writer) {
      writer.StartObject();
      WriteJsonKey(writer, "instructions");
      writer.String(*guidance);
      writer.EndObject();
    }));
  }

  int Materialize(const CommonOptions& common) {
    std::unique_ptr<ProjectFiles> store = OpenExisting(common);
    if (!store) return open_exit_code_;
    std::unique_ptr<SessionWorkspace> session = OpenSession(*store);
    if (!session) return kExitUsage;
    Result<std::unique_ptr<SessionDirectory>> directory = session->Materialize();
    if (!directory.ok()) return Fail(directory.status());
    Result<int> exit_code = RunIn((*directory)->path(), command_);
    // Synced back whatever COMMAND did or however it ended.
    Status released = (*directory)->Release();
    if (!exit_code.ok()) return Fail(exit_code.status());
    if (!released.ok()) return Fail(released);
    return *exit_code;
  }

  // Runs `command` with `directory` as its working directory and in
  // TOOLVFS_WORKSPACE_DIR; its exit code, or 128 + the signal that ended it.
  static Result<int> RunIn(const std::string& directory, const std::vector<std::string>& command) {
    std::vector<std::string> environment;
    for (char** variable = environ; *variable != nullptr; ++variable) {
      if (std::string_view(*variable).starts_with("TOOLVFS_WORKSPACE_DIR=")) continue;
      environment.emplace_back(*variable);
    }
    environment.push_back("TOOLVFS_WORKSPACE_DIR=" + directory);
    std::vector<char*> argv, envp;
    for (const std::string& word : command) argv.push_back(const_cast<char*>(word.c_str()));
    argv.push_back(nullptr);
    for (std::string& variable : environment) envp.push_back(variable.data());
    envp.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addchdir_np(&actions, directory.c_str());
    pid_t child = 0;
    int spawned = ::posix_spawnp(&child, argv[0], &actions, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    if (spawned != 0) return ErrnoToStatus(spawned, "Cannot run " + Quote(command.front()));
    int status = 0;
    while (::waitpid(child, &status, 0) < 0) {
      if (errno != EINTR) return ErrnoToStatus(errno, "Cannot wait for " + Quote(command.front()));
    }
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    return 128 + WTERMSIG(status);
  }

  // ----- cat -----

  int Cat(const CommonOptions& common) {
    std::unique_ptr<ProjectFiles> store = OpenExisting(common);
    if (!store) return open_exit_code_;
    if (!json_) {
      Result<std::string> content = store->Read(path_);
      if (!content.ok()) return Fail(content.status());
      return Print(*content);
    }
    Result<std::string> path = NormalizePath(path_);
    if (!path.ok()) return Fail(path.status());
    Result<FileMetadata> metadata = store->Metadata(*path);
    if (!metadata.ok()) return Fail(metadata.status());
    Result<std::string> content = store->Read(*path);
    if (!content.ok()) return Fail(content.status());
    const bool text = IsValidUtf8(*content);
    return Print(JsonOf([&](JsonWriter& writer) {
      writer.StartObject();
      WriteJsonKey(writer, "path");
      writer.String(*path);
      WriteJsonKey(writer, "version");
      if (metadata->version) {
        writer.Uint64(*metadata->version);
      } else {
        writer.Null();
      }
      WriteJsonKey(writer, "size_bytes");
      writer.Uint64(content->size());
      WriteJsonKey(writer, "encoding");
      writer.String(text ? "utf-8" : "base64");
      WriteJsonKey(writer, "content");
      writer.String(text ? *content : Base64Encode(*content));
      writer.EndObject();
    }));
  }

  // ----- snapshots -----

  int TakeSnapshot(const CommonOptions& common) {
    std::unique_ptr<ProjectFiles> store = OpenExisting(common);
    if (!store) return open_exit_code_;
    std::optional<std::string_view> label;
    if (label_) label = *label_;
    Result<std::string> id = store->Snapshot(label);
    if (!id.ok()) return Fail(id.status());
    if (!json_) return Print(*id + "\n");
    return Print(JsonOf([&](JsonWriter& writer) {
      writer.StartObject();
      WriteJsonKey(writer, "id");
      writer.String(*id);
      WriteJsonKey(writer, "label");
      WriteOptionalString(writer, label_);
      writer.EndObject();
    }));
  }

  int ListSnapshots(const CommonOptions& common) {
    std::unique_ptr<ProjectFiles> store = OpenExisting(common);
    if (!store) return open_exit_code_;
    Result<std::vector<SnapshotInfo>> snapshots = store->ListSnapshots();
    if (!snapshots.ok()) return Fail(snapshots.status());
    if (json_) {
      return Print(JsonOf([&](JsonWriter& writer) {
        writer.StartArray();
        for (const SnapshotInfo& snapshot : *snapshots) {
          writer.StartObject();
          WriteJsonKey(writer, "id");
          writer.String(snapshot.id);
          WriteJsonKey(writer, "label");
          WriteOptionalString(writer, snapshot.label);
          WriteJsonKey(writer, "created_at");
          writer.String(FormatTimestamp(snapshot.created_ms));
          writer.EndObject();
        }
        writer.EndArray();
      }));
    }
    if (snapshots->empty()) return Print("No snapshots of " + store->DisplayRoot() + ".\n");
    std::vector<std::vector<std::string>> rows;
    rows.push_back({"ID", "CREATED", "LABEL"});
    for (const SnapshotInfo& snapshot : *snapshots) {
      rows.push_back({snapshot.id, FormatTimestamp(snapshot.created_ms),
                      snapshot.label ? EscapeForDisplay(*snapshot.label) : ""});
    }
    return Print(FormatTable(rows));
  }

  // What restore and snapshot-rm print: one word of what was done.
  int PrintDone(std::string_view key, std::string_view sentence) {
    if (!json_) return Print(std::string(sentence) + "\n");
    return Print(JsonOf([&](JsonWriter& writer) {
      writer.StartObject();
      WriteJsonKey(writer, key);
      writer.String(first_id_);
      writer.EndObject();
    }));
  }

  // The store names snapshots by id; on the command line a label that no
  // other snapshot has names one too (as in a URI's @SNAPSHOT).
  static std::string SnapshotIdOf(ProjectFiles& store, const std::string& reference) {
    if (ParseSnapshotId(reference)) return reference;
    Result<std::vector<SnapshotInfo>> snapshots = store.ListSnapshots();
    if (!snapshots.ok()) return reference;
    std::optional<std::string> found;
    for (const SnapshotInfo& snapshot : *snapshots) {
      if (snapshot.label != reference) continue;
      if (found) return reference;  // ambiguous: the store's NotFound names it
      found = snapshot.id;
    }
    return found.value_or(reference);
  }

  int Restore(const CommonOptions& common) {
    std::unique_ptr<ProjectFiles> store = OpenExisting(common);
    if (!store) return open_exit_code_;
    // A session restores through its own rules (it keeps the materialized
    // directory's path, which describes the disk now, not the snapshot).
    Result<bool> is_session = SessionWorkspace::IsSession(*store);
    if (!is_session.ok()) return Fail(is_session.status());
    std::unique_ptr<SessionWorkspace> session = *is_session ? OpenSession(*store) : nullptr;
    if (*is_session && !session) return kExitUsage;
    const std::string id = SnapshotIdOf(*store, first_id_);
    Status restored = session ? session->Restore(id) : store->Restore(id);
    if (!restored.ok()) return Fail(restored);
    return PrintDone("restored", "Restored " + store->DisplayRoot() + " to snapshot " + Quote(first_id_));
  }

  int DeleteSnapshot(const CommonOptions& common) {
    std::unique_ptr<ProjectFiles> store = OpenExisting(common);
    if (!store) return open_exit_code_;
    if (Status deleted = store->DeleteSnapshot(SnapshotIdOf(*store, first_id_)); !deleted.ok()) return Fail(deleted);
    return PrintDone("deleted", "Deleted snapshot " + Quote(first_id_) + " of " + store->DisplayRoot());
  }

  int Diff(const CommonOptions& common) {
    std::unique_ptr<ProjectFiles> store = OpenExisting(common);
    if (!store) return open_exit_code_;
    std::optional<std::string> to;
    if (second_id_) to = SnapshotIdOf(*store, *second_id_);
    Result<bool> is_session = SessionWorkspace::IsSession(*store);
    if (!is_session.ok()) return Fail(is_session.status());
    std::unique_ptr<SessionWorkspace> session = *is_session ? OpenSession(*store) : nullptr;
    if (*is_session && !session) return kExitUsage;
    const std::optional<std::string_view> to_view = to ? std::optional<std::string_view>(*to) : std::nullopt;
    // A session's diff leaves its own records out.
    Result<TreeDiff> diff = session ? session->Diff(SnapshotIdOf(*store, first_id_), to_view)
                                    : store->Diff(SnapshotIdOf(*store, first_id_), to_view);
    if (!diff.ok()) return Fail(diff.status());
    if (json_) {
      return Print(JsonOf([&](JsonWriter& writer) {
        writer.StartObject();
        for (auto [key, paths] : {std::pair{"added", &diff->added}, std::pair{"modified", &diff->modified},
                                  std::pair{"deleted", &diff->deleted}}) {
          WriteJsonKey(writer, std::string_view(key));
          writer.StartArray();
          for (const std::string& path : *paths) writer.String(path);
          writer.EndArray();
        }
        writer.EndObject();
      }));
    }
    // git's --name-status letters, all changes in one list by path.
    std::vector<std::pair<std::string, char>> changes;
    for (const std::string& path : diff->added) changes.emplace_back(path, 'A');
    for (const std::string& path : diff->modified) changes.emplace_back(path, 'M');
    for (const std::string& path : diff->deleted) changes.emplace_back(path, 'D');
    std::sort(changes.begin(), changes.end());
    std::string out;
    for (const auto& [path, letter] : changes) {
      out += letter;
      out += "  ";
      out += EscapeForDisplay(path);
      out += '\n';
    }
    return Print(out);
  }

  // ----- export, import -----

  int Export(const CommonOptions& common) {
    std::unique_ptr<ProjectFiles> store = OpenExisting(common);
    if (!store) return open_exit_code_;
    ExportRequest request{common.project, directory_, "export", force_, include_tool_state_};
    Result<TransferReport> report = ExportTree(*store, request, common);
    if (!report.ok()) return Fail(report.status());
    NoteLeftOut(*report, Direction::kExport, directory_);
    if (!json_) return Print("Exported " + DescribeTransfer(*report, "to " + Quote(directory_)) + "\n");
    return Print(JsonOf([&](JsonWriter& writer) {
      writer.StartObject();
      WriteJsonKey(writer, "directory");
      writer.String(ToValidUtf8(directory_));
      WriteTransferFields(writer, *report);
      WritePaths(writer, "tool_state", report->tool_state);
      writer.EndObject();
    }));
  }

  // What ExportTree writes where: export's arguments, or copy's into a directory.
  struct ExportRequest {
    std::string project;    // the URI `store` was opened from
    std::string directory;  // DIR
    std::string_view verb;  // "export", "copy": for messages
    bool force = false;
    bool include_tool_state = false;
  };

  // Writes the tree of `store` into `request.directory` the way export does
  // (created if missing, opened once, nothing followed through a symbolic
  // link, git's and toolvfs's own state left out unless asked, the store's
  // files never written); `workspace copy` into a directory goes this way
  // too. A DIR this call created is removed again if the export fails
  // before writing into it, so a refused export leaves nothing behind.
  Result<TransferReport> ExportTree(ProjectFiles& store, const ExportRequest& request, const CommonOptions& common) {
    TOOLVFS_ASSIGN_OR_RETURN(ExportTarget target, OpenExportTarget(request));
    Result<TransferReport> report = ExportInto(store, request, target.fd.get(), common);
    if (!report.ok() && target.created) target.RemoveIfEmpty();
    return report;
  }

  Result<TransferReport> ExportInto(ProjectFiles& store, const ExportRequest& request, int target_fd,
                                    const CommonOptions& common) {
    TOOLVFS_ASSIGN_OR_RETURN(StoreFiles store_files, StoreFilesOfProject(request.project));
    if (std::optional<std::string> project_directory = ProjectDirectory(request.project)) {
      // Into itself, or into one of its directories, a directory project
      // would copy itself into itself (and once more on each --force).
      struct stat root;
      if (::stat(project_directory->c_str(), &root) != 0) {
        return ErrnoToStatus(errno, "Cannot open the project " + Quote(*project_directory));
      }
      TOOLVFS_ASSIGN_OR_RETURN(bool inside, IsAtOrBelow(target_fd, IdOf(root)));
      if (inside) {
        return InvalidArgumentError("Cannot " + std::string(request.verb) + " to " + Quote(request.directory) +
                                    ": it is inside the project " + Quote(*project_directory) +
                                    ", which would be copied into itself; " + std::string(request.verb) +
                                    " to a directory outside it");
      }
    }
    // Erased when the copy ends, before anything is printed.
    ProgressLine progress(ProgressLine::ForStderr(ProgressWanted(common)));
    TransferOptions options;
    options.skip_tool_state = !request.include_tool_state;
    options.store_files = std::move(store_files);
    options.max_file_bytes = kMaxFileBytes;
    options.progress = TransferProgress(progress, request.verb == "export" ? "exporting" : "copying");
    return CopyTreeInto(store, target_fd, request.directory, options);
  }

  // The directory an export writes into, and whether the export created it.
  struct ExportTarget {
    UniqueFd fd;
    std::string path;  // as created (no trailing slash)
    bool created = false;

    // Removes the directory this export created, if it is still the one
    // `fd` holds and nothing was written into it.
    void RemoveIfEmpty() const {
      struct stat held;
      struct stat there;
      if (::fstat(fd.get(), &held) != 0 || ::lstat(path.c_str(), &there) != 0) return;
      if (IdOf(held) != IdOf(there)) return;
      static_cast<void>(::rmdir(path.c_str()));  // ENOTEMPTY: what was written stays
    }
  };

  // The directory of export, created if missing and opened once: the copy
  // goes from this descriptor, so a DIR replaced after the checks (by a
  // symbolic link to somewhere else) is never written through. DIR itself
  // must not be a symbolic link.
  static Result<ExportTarget> OpenExportTarget(const ExportRequest& request) {
    const std::string& shown = request.directory;
    ExportTarget target;
    target.path = shown;
    // "out/" would follow a symbolic link "out" whatever O_NOFOLLOW says.
    while (target.path.size() > 1 && target.path.back() == '/') target.path.pop_back();
    const std::string& path = target.path;
    if (::mkdir(path.c_str(), 0755) == 0) {
      target.created = true;
    } else if (errno != EEXIST) {
      return ErrnoToStatus(errno, "Cannot create the directory " + Quote(shown));
    }
    target.fd = UniqueFd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!target.fd && (errno == ENOTDIR || errno == ELOOP)) {
      // O_NOFOLLOW | O_DIRECTORY on a symbolic link says ENOTDIR.
      struct stat status;
      if (::lstat(path.c_str(), &status) == 0 && S_ISLNK(status.st_mode)) {
        return InvalidArgumentError("Cannot " + std::string(request.verb) + " to " + Quote(shown) + ": it is a " +
                                    "symbolic link, which " + std::string(request.verb) +
                                    " never follows; name the directory it points to");
      }
      return NotDirectoryError("Cannot " + std::string(request.verb) + " to " + Quote(shown) + ": not a directory");
    }
    if (!target.fd) return ErrnoToStatus(errno, "Cannot " + std::string(request.verb) + " to " + Quote(shown));
    if (request.force) return target;
    TOOLVFS_ASSIGN_OR_RETURN(bool empty, IsEmptyDirectory(target.fd.get(), shown));
    if (empty) return target;
    if (request.verb != "export") {
      return AlreadyExistsError(Quote(shown) + " is not empty; " + std::string(request.verb) +
                                " writes into a new or empty directory");
    }
    return AlreadyExistsError(Quote(shown) +
                              " is not empty; export writes into a new or empty directory (--force "
                              "replaces files at the same paths and leaves the others)");
  }

  static Result<bool> IsEmptyDirectory(int directory_fd, const std::string& shown) {
    UniqueFd listed(::openat(directory_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!listed) return ErrnoToStatus(errno, "Cannot list " + Quote(shown));
    struct CloseDirectory {
      void operator()(DIR* stream) const { ::closedir(stream); }
    };
    std::unique_ptr<DIR, CloseDirectory> stream(::fdopendir(listed.get()));
    if (!stream) return ErrnoToStatus(errno, "Cannot list " + Quote(shown));
    static_cast<void>(listed.release());  // the stream closes it
    errno = 0;
    while (const dirent* entry = ::readdir(stream.get())) {
      const std::string_view name = entry->d_name;
      if (name != "." && name != "..") return false;
    }
    if (errno != 0) return ErrnoToStatus(errno, "Cannot list " + Quote(shown));
    return true;
  }

  enum class Direction { kImport, kExport };

  // Says on stderr what a copy left out that the user may have expected
  // in it: the store's own files (an import of the store's directory), git's
  // and toolvfs's state.
  void NoteLeftOut(const TransferReport& report, Direction direction, const std::string& directory) const {
    if (!report.store_files.empty()) {
      ReportNote(what_, "left out " + Plural(report.store_files.size(), "file", "files") +
                            " of the store of --project (taking them would copy every workspace of the store): " +
                            ListPaths(report.store_files));
    }
    if (report.tool_state.empty()) return;
    const std::string left_out = "left out " + Plural(report.tool_state.size(), "entry", "entries") +
                                 " of git's and toolvfs's own state";
    if (direction == Direction::kExport) {
      ReportNote(what_, left_out + ", which git and toolvfs would act on in " + Quote(directory) +
                            " (--include-tool-state writes them): " + ListPaths(report.tool_state));
    } else {
      ReportNote(what_, left_out + " found in " + Quote(directory) +
                            " (--include-tool-state imports them): " + ListPaths(report.tool_state));
    }
  }

  int Import(const CommonOptions& common) {
    if (IsSqlProject(common.project)) {
      // Refused up front: the store would refuse only the sync at the end,
      // after copying everything, and keep the copy on disk.
      Result<WorkspaceAddress> address = ParseSqlProject(common.project);
      if (address.ok() && address->snapshot) {
        return ReportError(what_, "--project " + Quote(ShownProject(common.project)) +
                                      " names a snapshot, which is read-only; import into the workspace "
                                      "(sqlite:FILE#WORKSPACE)");
      }
    }
    std::unique_ptr<ProjectFiles> store = OpenExisting(common);
    if (!store) return open_exit_code_;
    Result<TransferReport> report = [&]() -> Result<TransferReport> {
      TOOLVFS_ASSIGN_OR_RETURN(StoreFiles store_files, StoreFilesOfProject(common.project));
      ProgressLine progress(ProgressLine::ForStderr(ProgressWanted(common)));
      return ImportDirectory(*store, directory_, include_ignored_, include_tool_state_, store_files, progress);
    }();
    if (!report.ok()) return Fail(report.status());
    NoteLeftOut(*report, Direction::kImport, directory_);
    if (!json_) {
      return Print("Imported " + DescribeTransfer(*report, "from " + Quote(directory_) + " into " + store->DisplayRoot()) +
                   "\n");
    }
    return Print(JsonOf([&](JsonWriter& writer) {
      writer.StartObject();
      WriteTransferFields(writer, *report);
      WritePaths(writer, "store_files", report->store_files);
      WritePaths(writer, "tool_state", report->tool_state);
      writer.EndObject();
    }));
  }

  // ----- copy -----

  int Copy(const CommonOptions& common) {
    CommonOptions source_common = common;
    source_common.project = from_uri_;
    std::unique_ptr<ProjectFiles> source = OpenExisting(source_common);
    if (source == nullptr) return open_exit_code_;

    WorkspaceCopyOptions options;
    StoreOptions store_options;
    store_options.max_read_bytes = kMaxFileBytes;
    if (IsSqlProject(from_uri_)) {
      Result<WorkspaceAddress> address = ParseSqlProject(from_uri_);
      if (!address.ok()) return ReportError("FROM_URI", address.status().message());
      // A snapshot project is one state: copied as the live state alone.
      options.snapshots = !address->snapshot.has_value();
      options.open_snapshot = SnapshotOpenerForUri(from_uri_, store_options);
    }
    if (std::optional<std::string> directory = ProjectDirectory(to_uri_)) {
      return CopyIntoDirectory(*source, *directory, options.snapshots, common);
    }

    // A sqlite or postgres target is a new workspace, created by the open,
    // exclusively: of two copies into the same new workspace one gets it and
    // the other is refused with nothing touched. An existing one is refused
    // even when empty: another copy may have just created it and be about
    // to fill it. The copy that created it removes it again if the copy
    // fails (and the sqlite file, if the copy created that too), so running
    // it again after fixing the cause just works.
    bool creates = false;
    if (IsSqlProject(to_uri_)) {
      Result<WorkspaceAddress> address = ParseSqlProject(to_uri_);
      if (!address.ok()) return ReportError("TO_URI", address.status().message());
      if (address->snapshot) {
        return ReportError(what_, "TO_URI " + Quote(ShownProject(to_uri_)) +
                                      " names a snapshot, which is read-only; name a workspace");
      }
      creates = true;
    }
    StoreOptions target_options = store_options;
    target_options.create_new_workspace = creates;
    const TargetStoreFile target_file(to_uri_);
    Result<std::unique_ptr<ProjectFiles>> target = OpenProject(to_uri_, target_options);
    if (!target.ok()) {
      if (target.status().code() != StatusCode::kAlreadyExists) {
        return ReportStatus("TO_URI", Status(target.status().code(),
                                             target_file.RemoveIfCreated(target.status().message())));
      }
      return ReportStatus(what_, Status(StatusCode::kAlreadyExists, "Cannot copy into " + Quote(ShownProject(to_uri_)) +
                                                                        ": " + target.status().message() +
                                                                        "; copy into a new workspace"));
    }

    Result<WorkspaceCopyReport> report = [&] {
      ProgressLine progress(ProgressLine::ForStderr(ProgressWanted(common)));
      if (progress.enabled()) {
        // The total is not known before: a copy reads each state as it goes.
        options.progress = [&progress, started = ProgressLine::Clock::now()](const WorkspaceCopyReport& done) {
          progress.Update([&] {
            return "copying: " + FormatCount(done.files_written) + " files, " +
                   FormatApproximateBytes(done.bytes_written) + ", " +
                   FormatElapsed(ProgressLine::Clock::now() - started);
          });
        };
      }
      return CopyWorkspace(*source, **target, options);
    }();
    if (!report.ok()) {
      std::string why = report.status().message();
      if (creates) why = RemoveCreatedWorkspace(std::move(*target), std::move(why));
      // A sqlite target always creates its workspace, so RemoveCreatedWorkspace has closed it by now.
      why = target_file.RemoveIfCreated(std::move(why));
      return ReportStatus(what_, Status(report.status().code(), why));
    }
    return PrintCopied(*report);
  }

  // `workspace copy` into a directory (TO_URI a path or fs:DIR). A
  // directory keeps no snapshots, versions or times, so what it gets is
  // the live tree, which export writes: it goes export's one way into a
  // host directory (opened once, no symbolic link followed, each file a
  // temporary file renamed over its place, git's and toolvfs's own state
  // and the store's files left out), never through the fs store's writes.
  int CopyIntoDirectory(ProjectFiles& source, const std::string& directory, bool with_snapshots,
                        const CommonOptions& common) {
    if (with_snapshots) {
      Result<std::vector<SnapshotInfo>> history = source.ListSnapshots();
      if (!history.ok() && history.status().code() != StatusCode::kUnsupported) return Fail(history.status());
      if (history.ok() && !history->empty()) {
        return ReportError(what_, "Cannot copy the " + Plural(history->size(), "snapshot", "snapshots") + " of " +
                                      Quote(ShownProject(from_uri_)) + " into the directory " + Quote(directory) +
                                      ": a directory keeps no snapshots; copy into a sqlite: or postgres:// "
                                      "workspace, or copy one state (FROM_URI@SNAPSHOT), or export the live tree "
                                      "with toolvfs workspace export");
      }
    }
    const ExportRequest request{from_uri_, directory, "copy", /*force=*/false, /*include_tool_state=*/false};
    Result<TransferReport> written = ExportTree(source, request, common);
    if (!written.ok()) return Fail(written.status());
    NoteLeftOut(*written, Direction::kExport, directory);
    WorkspaceCopyReport report;
    report.files_written = written->files;
    report.bytes_written = written->bytes;
    report.directories_created = written->directories;
    report.symlinks_skipped = written->skipped;
    return PrintCopied(report);
  }

  // Prints what a copy did: the text, or the --json object.
  int PrintCopied(const WorkspaceCopyReport& copied) const {
    if (json_) {
      return Print(JsonOf([&](JsonWriter& writer) {
        writer.StartObject();
        WriteJsonKey(writer, "from");
        writer.String(ToValidUtf8(ShownProject(from_uri_)));
        WriteJsonKey(writer, "to");
        writer.String(ToValidUtf8(ShownProject(to_uri_)));
        WriteJsonKey(writer, "snapshots");
        writer.StartArray();
        for (const CopiedSnapshot& snapshot : copied.snapshots) {
          writer.StartObject();
          WriteJsonKey(writer, "from");
          writer.String(snapshot.source_id);
          WriteJsonKey(writer, "to");
          writer.String(snapshot.target_id);
          WriteJsonKey(writer, "label");
          WriteOptionalString(writer, snapshot.label);
          writer.EndObject();
        }
        writer.EndArray();
        WriteCounts(writer, {{"files_written", copied.files_written},
                             {"bytes_written", copied.bytes_written},
                             {"directories_created", copied.directories_created},
                             {"paths_deleted", copied.paths_deleted},
                             {"symlinks_skipped", copied.symlinks_skipped}});
        writer.EndObject();
      }));
    }
    std::string text = "Copied " + Quote(ShownProject(from_uri_)) + " to " + Quote(ShownProject(to_uri_)) + ": " +
                       Plural(copied.snapshots.size(), "snapshot", "snapshots") + ", " +
                       Plural(copied.files_written, "file write", "file writes") + " (" +
                       FormatBytes(copied.bytes_written) + ")";
    if (copied.symlinks_skipped > 0) {
      text += "; left out: " + Plural(copied.symlinks_skipped, "symbolic link", "symbolic links");
    }
    text += "\n";
    for (const CopiedSnapshot& snapshot : copied.snapshots) {
      text += "  snapshot " + snapshot.source_id + " -> " + snapshot.target_id;
      if (snapshot.label) text += "  " + *snapshot.label;
      text += "\n";
    }
    return Print(text);
  }

  // ----- rm, gc -----

  int Remove(const CommonOptions& common) {
    std::optional<WorkspaceAddress> address = SqliteAddress(common, /*allow_snapshot=*/false);
    if (!address) return kExitUsage;
    if (!StoreExists(*address)) {
      return ReportError(what_, "the store file " + Quote(Shown(*address)) + " does not exist");
    }
    Result<std::unique_ptr<SqlStoreFile>> file = OpenStoreFile(*address);
    if (!file.ok()) return ReportStatus("--project", file.status());
    if (Status deleted = (*file)->DeleteWorkspace(address->workspace); !deleted.ok()) return Fail(deleted);
    if (!json_) {
      return Print("Deleted workspace " + Quote(address->workspace) + " from " + Quote(Shown(*address)) + "\n");
    }
    return Print(JsonOf([&](JsonWriter& writer) {
      writer.StartObject();
      WriteJsonKey(writer, "deleted");
      writer.String(address->workspace);
      WriteJsonKey(writer, "file");
      writer.String(ToValidUtf8(Shown(*address)));
      writer.EndObject();
    }));
  }

  int CollectGarbage(const CommonOptions& common) {
    // The whole file is collected; a workspace or snapshot in the URI is
    // only part of the address and does not narrow it.
    std::optional<WorkspaceAddress> address = SqliteAddress(common, /*allow_snapshot=*/true);
    if (!address) return kExitUsage;
    if (!StoreExists(*address)) {
      return ReportError(what_, "the store file " + Quote(Shown(*address)) + " does not exist");
    }
    Result<std::unique_ptr<SqlStoreFile>> file = OpenStoreFile(*address);
    if (!file.ok()) return ReportStatus("--project", file.status());
    Result<GarbageReport> report = (*file)->CollectGarbage();
    if (!report.ok()) return Fail(report.status());
    if (json_) {
      return Print(JsonOf([&](JsonWriter& writer) {
        writer.StartObject();
        WriteCounts(writer, {{"entries", report->entries},
                             {"contents", report->contents},
                             {"bytes", report->bytes},
                             {"file_bytes_before", report->file_bytes_before},
                             {"file_bytes_after", report->file_bytes_after}});
        writer.EndObject();
      }));
    }
    // A PostgreSQL server has no file of the store's own to measure: its
    // autovacuum gives dead rows' space to new rows.
    const std::string space = IsPostgresAddress(*address)
                                  ? "the server reuses the space (autovacuum)"
                                  : "the file went from " + FormatBytes(report->file_bytes_before) + " to " +
                                        FormatBytes(report->file_bytes_after);
    return Print("Freed " + Plural(report->entries, "old entry version", "old entry versions") + " and " +
                 Plural(report->contents, "content", "contents") + " (" + FormatBytes(report->bytes) + ") in " +
                 Quote(Shown(*address)) + "; " + space + "\n");
  }

  std::vector<Subcommand> subcommands_;
  std::string what_ = "workspace";
  bool json_ = false;
  std::string path_;
  bool recursive_ = false;
  std::optional<std::string> label_;
  std::string first_id_;
  int open_exit_code_ = kExitUsage;  // what OpenExisting reported, for its callers to return
  std::string from_uri_;  // copy
  std::string to_uri_;
  std::optional<std::string> second_id_;
  std::string directory_;
  bool force_ = false;
  bool include_tool_state_ = false;
  bool include_ignored_ = false;
  // init --session and its mounts (MountsFromFlags)
  CLI::App* init_app_ = nullptr;
  std::string init_name_;  // init's NAME
  CLI::Option* allow_root_option_ = nullptr;
  CLI::Option* mount_option_ = nullptr;
  CLI::Option* include_option_ = nullptr;
  CLI::Option* exclude_option_ = nullptr;
  CLI::Option* max_bytes_option_ = nullptr;
  CLI::Option* follow_option_ = nullptr;
  bool session_ = false;
  std::vector<std::string> allowed_roots_;
  std::vector<std::string> mount_specs_;
  std::vector<std::string> mount_includes_;
  std::vector<std::string> mount_excludes_;
  std::vector<uint64_t> mount_max_bytes_;
  int64_t mount_follow_count_ = 0;
  std::vector<std::string> command_;
};

}  // namespace

std::unique_ptr<Command> NewWorkspaceCommand() { return std::make_unique<WorkspaceCommand>(); }

}  // namespace toolvfs
