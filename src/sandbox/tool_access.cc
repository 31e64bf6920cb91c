#include "sandbox/tool_access.h"

#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/unique_fd.h"
#include "sandbox/private_temp_dir.h"

namespace toolvfs {
namespace {

// How many interpreters deep a shebang chain may go (a script whose
// interpreter is a script ...); Linux itself stops after a handful.
constexpr int kMaximumInterpreterDepth = 4;

// The kernel reads at most this much of a "#!" line (BINPRM_BUF_SIZE).
constexpr size_t kShebangLineLimit = 256;

// Directories where the dynamic loader and shared libraries live.
constexpr std::string_view kSystemLibraryDirectories[] = {
    "/lib", "/lib64", "/usr/lib", "/usr/lib64", "/usr/local/lib"};

// What a process.run child also gets so it can exec ordinary programs.
constexpr std::string_view kSystemProgramDirectories[] = {"/usr",   "/bin",  "/sbin",
                                                          "/lib",   "/lib32", "/lib64"};

// What an MCP server also reads: node (the runtime of the reference
// servers) loads OpenSSL's config at startup and exits (status 13) when it
// cannot read it; the file holds no secrets.
constexpr std::string_view kMcpServerReadFiles[] = {"/etc/ssl/openssl.cnf"};

// Single files every tool needs: the loader cache, the time zone, entropy.
constexpr std::string_view kSystemReadFiles[] = {"/etc/ld.so.cache", "/etc/localtime",
                                                 "/dev/urandom"};

LandlockPathRule Rule(std::string path, bool read, bool write, bool execute) {
  return LandlockPathRule{.path = std::move(path), .read = read, .write = write, .execute = execute};
}

// The rules being collected: one per path, in first-seen order, with the
// rights of later duplicates merged in.
class RuleList {
 public:
  void Add(const LandlockPathRule& rule) {
    for (LandlockPathRule& existing : rules_) {
      if (existing.path != rule.path) continue;
      existing.read |= rule.read;
      existing.write |= rule.write;
      existing.execute |= rule.execute;
      existing.follow_symlinks &= rule.follow_symlinks;
      return;
    }
    rules_.push_back(rule);
  }
  std::vector<LandlockPathRule> Take() { return std::move(rules_); }

 private:
  std::vector<LandlockPathRule> rules_;
};

std::string_view DirectoryOf(std::string_view path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string_view::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string_view BaseNameOf(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

std::string JoinPath(std::string_view directory, std::string_view name) {
  if (directory.empty() || name.starts_with('/')) return std::string(name);
  std::string joined(directory);
  if (!joined.ends_with('/')) joined += '/';
  joined += name;
  return joined;
}

// `path` against `working_directory` (the caller's own when empty).
std::string AbsolutePath(std::string_view path, std::string_view working_directory) {
  if (path.starts_with('/')) return std::string(path);
  if (!working_directory.empty()) return JoinPath(working_directory, path);
  char current[PATH_MAX];
  if (getcwd(current, sizeof current) == nullptr) return std::string(path);
  return JoinPath(current, path);
}

// realpath(3); an empty string, with errno set, when it fails.
std::string CanonicalPath(const std::string& path) {
  std::unique_ptr<char, decltype(&std::free)> resolved(realpath(path.c_str(), nullptr), &std::free);
  return resolved ? std::string(resolved.get()) : std::string();
}

bool IsRegularFile(const std::string& path) {
  struct stat info;
  return stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode);
}

// Whether `inner` is `outer` or beneath it (both absolute, no trailing '/'
// except for "/").
bool IsWithin(std::string_view inner, std::string_view outer) {
  if (outer == "/") return true;
  return inner == outer || (inner.starts_with(outer) && inner.size() > outer.size() &&
                            inner[outer.size()] == '/');
}

struct Shebang {
  std::string interpreter;
  std::string argument;  // the rest of the line, trimmed; may be empty
};

// The "#!" line of `path`, or an empty interpreter when it has none.
Result<Shebang> ReadShebang(const std::string& path, std::string_view what) {
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY));
  if (!fd) return ErrnoToStatus(errno, std::string(what) + ": cannot read '" + path + "'");
  char buffer[kShebangLineLimit];
  size_t length = 0;
  while (length < sizeof buffer) {
    const ssize_t received = read(fd.get(), buffer + length, sizeof buffer - length);
    if (received < 0 && errno == EINTR) continue;
    if (received < 0) return ErrnoToStatus(errno, std::string(what) + ": cannot read '" + path + "'");
    if (received == 0) break;
    length += static_cast<size_t>(received);
  }
  std::string_view line(buffer, length);
  if (!line.starts_with("#!")) return Shebang{};
  line.remove_prefix(2);
  if (const size_t end = line.find('\n'); end != std::string_view::npos) line = line.substr(0, end);
  constexpr std::string_view kBlank = " \t\r";
  const auto trim = [&](std::string_view text) {
    const size_t first = text.find_first_not_of(kBlank);
    if (first == std::string_view::npos) return std::string_view();
    return text.substr(first, text.find_last_not_of(kBlank) - first + 1);
  };
  line = trim(line);
  const size_t interpreter_end = line.find_first_of(kBlank);
  Shebang shebang;
  shebang.interpreter = std::string(line.substr(0, interpreter_end));
  if (interpreter_end != std::string_view::npos) {
    shebang.argument = std::string(trim(line.substr(interpreter_end)));
  }
  return shebang;
}

// The program `#!/usr/bin/env ARGUMENT` runs: the first word that is not an
// option (-S, -i, ...) nor a NAME=VALUE assignment; empty if there is none.
std::string EnvProgramName(std::string_view argument) {
  size_t position = 0;
  while (position < argument.size()) {
    const size_t start = argument.find_first_not_of(" \t", position);
    if (start == std::string_view::npos) break;
    size_t end = argument.find_first_of(" \t", start);
    if (end == std::string_view::npos) end = argument.size();
    const std::string_view word = argument.substr(start, end - start);
    position = end;
    if (word.starts_with('-') || word.find('=') != std::string_view::npos) continue;
    return std::string(word);
  }
  return {};
}

struct DerivationContext {
  const ToolAccessRequest& request;
  std::string search_path;
  std::string project_root;  // canonical when it exists; "" when not given
  std::string what;          // "Cannot sandbox 'PROGRAM'"
  RuleList rules;
};

// The install-prefix rules of `path`, except any that would reach into (or
// contain) the project: "nothing else in the project" wins over convenience.
void AddInstallPrefix(DerivationContext& context, std::string_view path) {
  for (const LandlockPathRule& rule : InstallPrefixPaths(path)) {
    if (!context.project_root.empty() &&
        (IsWithin(rule.path, context.project_root) || IsWithin(context.project_root, rule.path))) {
      continue;
    }
    context.rules.Add(rule);
  }
}

// Adds `named_path` (an executable as named, absolute) and its shebang chain.
Status AddExecutable(DerivationContext& context, const std::string& named_path, int depth) {
  if (depth > kMaximumInterpreterDepth) {
    return InvalidArgumentError(context.what + ": more than " +
                                std::to_string(kMaximumInterpreterDepth) +
                                " interpreters in the shebang chain at '" + named_path + "'");
  }
  const std::string resolved = CanonicalPath(named_path);
  if (resolved.empty()) {
    return ErrnoToStatus(errno, context.what + ": cannot resolve '" + named_path + "'");
  }
  context.rules.Add(Rule(resolved, /*read=*/true, /*write=*/false, /*execute=*/true));
  // Both: /opt/venv/bin/python -> /usr/bin/python3.11 needs the venv's
  // lib/ and pyvenv.cfg as well as /usr's.
  AddInstallPrefix(context, named_path);
  if (resolved != named_path) AddInstallPrefix(context, resolved);

  TOOLVFS_ASSIGN_OR_RETURN(const Shebang shebang, ReadShebang(resolved, context.what));
  if (shebang.interpreter.empty()) return OkStatus();
  const std::string interpreter =
      AbsolutePath(shebang.interpreter, context.request.working_directory);
  if (!IsRegularFile(interpreter)) {
    return NotFoundError(context.what + ": the shebang of '" + resolved + "' names '" +
                         shebang.interpreter + "', which does not exist");
  }
  if (BaseNameOf(interpreter) != "env") return AddExecutable(context, interpreter, depth + 1);

  // env execs the named program: both need executing.
  TOOLVFS_RETURN_IF_ERROR(AddExecutable(context, interpreter, depth + 1));
  const std::string name = EnvProgramName(shebang.argument);
  if (name.empty()) {
    return InvalidArgumentError(context.what + ": the shebang of '" + resolved +
                                "' runs env without a program name");
  }
  if (name.find('/') != std::string::npos) {
    const std::string program = AbsolutePath(name, context.request.working_directory);
    if (!IsRegularFile(program)) {
      return NotFoundError(context.what + ": the shebang of '" + resolved + "' names '" + name +
                           "', which does not exist");
    }
    return AddExecutable(context, program, depth + 1);
  }
  Result<std::string> program = FindProgramOnPath(name, context.search_path);
  if (!program.ok()) {
    return NotFoundError(context.what + ": the shebang of '" + resolved + "' names '" + name +
                         "', which is not on PATH '" + context.search_path + "'");
  }
  return AddExecutable(context, AbsolutePath(*program, context.request.working_directory),
                       depth + 1);
}

// `prefix` (project-relative) as an absolute path under the project root.
Result<std::string> ProjectPath(const DerivationContext& context, std::string_view prefix) {
  if (prefix.starts_with('/')) {
    return InvalidArgumentError(context.what + ": project prefix '" + std::string(prefix) +
                                "' must be relative to the project");
  }
  std::string path = context.project_root;
  size_t position = 0;
  while (position <= prefix.size()) {
    size_t end = prefix.find('/', position);
    if (end == std::string_view::npos) end = prefix.size();
    const std::string_view component = prefix.substr(position, end - position);
    position = end + 1;
    if (component.empty() || component == ".") continue;
    if (component == "..") {
      return InvalidArgumentError(context.what + ": project prefix '" + std::string(prefix) +
                                  "' leaves the project with '..'");
    }
    path = JoinPath(path, component);
  }
  return path;
}

Status AddProjectPrefixes(DerivationContext& context) {
  const ToolAccessRequest& request = context.request;
  if (request.readable_prefixes.empty() && request.writable_prefixes.empty()) return OkStatus();
  if (context.project_root.empty()) {
    return InvalidArgumentError(context.what +
                                ": project prefixes were given without a project root");
  }
  // A process.run child may run the project's own scripts (./configure,
  // gradlew) where it may read; a stdio tool is a server, not a shell.
  const bool execute = request.kind == ToolKind::kProcessChild;
  // The project root is canonical, so a symlink anywhere in these paths is
  // one inside the project, which the tree walk (AllowedSubtrees) never
  // grants; one that appears after the walk grants nothing either.
  for (const auto& [prefixes, write] : {std::pair{&request.readable_prefixes, false},
                                        std::pair{&request.writable_prefixes, true}}) {
    for (const std::string& prefix : *prefixes) {
      TOOLVFS_ASSIGN_OR_RETURN(std::string path, ProjectPath(context, prefix));
      LandlockPathRule rule = Rule(std::move(path), /*read=*/true, write, execute);
      rule.follow_symlinks = false;
      context.rules.Add(rule);
    }
  }
  return OkStatus();
}

// Where `path` (absolute) leads when it reaches into the project: its
// symlinks are followed while outside the project (an ancestor such as
// /home -> /data/home), and the canonical path is returned once the walk is
// in the project, provided no symlink lies inside it on the way. nullopt
// when the path does not lead into the project (granted where its symlinks
// lead: system files, interpreters), or cannot be walked; "" when a symlink
// in the project is on the way (nothing may be granted).
std::optional<std::string> PathInProject(const DerivationContext& context, const std::string& path) {
  if (context.project_root.empty()) return std::nullopt;
  std::vector<std::string> pending;  // components still to walk, last first
  const auto push_components = [&pending](std::string_view text) {
    std::vector<std::string> components;
    for (size_t position = 0; position <= text.size();) {
      size_t slash = text.find('/', position);
      if (slash == std::string_view::npos) slash = text.size();
      if (slash > position) components.emplace_back(text.substr(position, slash - position));
      position = slash + 1;
    }
    pending.insert(pending.end(), components.rbegin(), components.rend());
  };
  push_components(path);
  std::string current = "/";
  int symlinks_followed = 0;
  while (!pending.empty()) {
    const std::string component = std::move(pending.back());
    pending.pop_back();
    if (component == ".") continue;
    if (component == "..") {
      current = std::filesystem::path(current).parent_path().string();
      continue;
    }
    const std::string next = JoinPath(current, component);
    struct stat info;
    if (lstat(next.c_str(), &info) != 0) return std::nullopt;
    if (!S_ISLNK(info.st_mode)) {
      current = next;
      continue;
    }
    if (IsWithin(next, context.project_root)) return std::string();
    if (++symlinks_followed > 40) return std::nullopt;  // as the kernel's ELOOP
    char target[PATH_MAX];
    const ssize_t length = readlink(next.c_str(), target, sizeof target - 1);
    if (length <= 0) return std::nullopt;
    if (target[0] == '/') current = "/";
    push_components(std::string_view(target, static_cast<size_t>(length)));
  }
  if (!IsWithin(current, context.project_root)) return std::nullopt;
  return current;
}

// Whether `directory` is a home directory or holds one (then a package.json
// in it says nothing about a package: `npm install` run at home leaves
// one, and granting it would open ~/.ssh and the rest).
bool HoldsAHomeDirectory(std::string_view directory) {
  std::vector<std::string> homes;
  if (const char* home = getenv("HOME"); home != nullptr && home[0] == '/') homes.emplace_back(home);
  passwd entry;
  passwd* user = nullptr;
  char buffer[4096];
  // getpwuid_r: this may run on several threads at once.
  if (getpwuid_r(geteuid(), &entry, buffer, sizeof buffer, &user) == 0 && user != nullptr &&
      user->pw_dir != nullptr && user->pw_dir[0] == '/') {
    homes.emplace_back(user->pw_dir);
  }
  return std::any_of(homes.begin(), homes.end(),
                     [&](const std::string& home) { return IsWithin(home, std::string(directory)); });
}

// The package tree of the script at `script` (canonical) for an MCP server
// (kMcpServer): the nearest enclosing package root directory, else the
// nearest directory holding a package.json that is not a home directory or
// above one; nothing when neither exists or the candidate overlaps the
// project.
void AddPackageTree(DerivationContext& context, const std::string& script) {
  constexpr std::string_view kPackageRoots[] = {"node_modules", "site-packages", "dist-packages"};
  std::string tree;
  std::string nearest_package;
  for (std::string_view directory = DirectoryOf(script); directory != "/" && directory != ".";
       directory = DirectoryOf(directory)) {
    const std::string_view name = BaseNameOf(directory);
    if (std::find(std::begin(kPackageRoots), std::end(kPackageRoots), name) != std::end(kPackageRoots)) {
      tree = std::string(directory);
      break;
    }
    if (nearest_package.empty() && IsRegularFile(JoinPath(directory, "package.json")) &&
        !HoldsAHomeDirectory(directory)) {
      nearest_package = std::string(directory);
    }
  }
  if (tree.empty()) tree = nearest_package;
  if (tree.empty()) return;
  if (!context.project_root.empty() &&
      (IsWithin(tree, context.project_root) || IsWithin(context.project_root, tree))) {
    return;
  }
  context.rules.Add(Rule(std::move(tree), /*read=*/true, /*write=*/false, /*execute=*/false));
}

}  // namespace

Result<std::string> FindProgramOnPath(std::string_view name, std::string_view search_path,
                                      RelativePathEntries relative) {
  size_t start = 0;
  while (start <= search_path.size()) {
    size_t end = search_path.find(':', start);
    if (end == std::string_view::npos) end = search_path.size();
    std::string_view directory = search_path.substr(start, end - start);
    start = end + 1;
    if (!directory.starts_with('/') && relative == RelativePathEntries::kSkip) continue;
    if (directory.empty()) directory = ".";
    const std::string candidate = JoinPath(directory, name);
    if (IsRegularFile(candidate) && access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return NotFoundError("'" + std::string(name) + "' is not on PATH '" + std::string(search_path) +
                       "'");
}

std::vector<LandlockPathRule> InstallPrefixPaths(std::string_view interpreter_path) {
  const std::string_view directory = DirectoryOf(interpreter_path);
  const std::string_view directory_name = BaseNameOf(directory);
  if (directory == "/" || (directory_name != "bin" && directory_name != "sbin")) return {};
  const std::string_view prefix = DirectoryOf(directory);
  return {
      Rule(JoinPath(prefix, "lib"), /*read=*/true, /*write=*/false, /*execute=*/true),
      Rule(JoinPath(prefix, "lib64"), /*read=*/true, /*write=*/false, /*execute=*/true),
      Rule(JoinPath(prefix, "libexec"), /*read=*/true, /*write=*/false, /*execute=*/true),
      Rule(JoinPath(prefix, "share"), /*read=*/true, /*write=*/false, /*execute=*/false),
      Rule(JoinPath(prefix, "pyvenv.cfg"), /*read=*/true, /*write=*/false, /*execute=*/false),
  };
}

Result<LandlockRules> ToolAccessRules(const ToolAccessRequest& request) {
  DerivationContext context{
      .request = request,
      .search_path = request.path_env.empty() ? std::string(kFixedPath) : request.path_env,
      .project_root = {},
      .what = "Cannot sandbox '" + request.program + "'",
      .rules = {},
  };
  if (!request.project_root.empty()) {
    if (!request.project_root.starts_with('/')) {
      return InvalidArgumentError(context.what + ": the project root '" + request.project_root +
                                  "' is not absolute");
    }
    const std::string canonical = CanonicalPath(request.project_root);
    context.project_root = canonical.empty() ? request.project_root : canonical;
  }

  if (request.program.empty()) return InvalidArgumentError("Cannot sandbox a tool: no program given");
  std::string program;
  if (request.program.find('/') != std::string::npos) {
    program = AbsolutePath(request.program, request.working_directory);
    if (!IsRegularFile(program)) {
      return NotFoundError(context.what + ": '" + program + "' does not exist or is not a file");
    }
  } else {
    Result<std::string> found = FindProgramOnPath(request.program, context.search_path);
    if (!found.ok()) return NotFoundError(context.what + ": " + found.status().message());
    program = AbsolutePath(*found, request.working_directory);
  }
  TOOLVFS_RETURN_IF_ERROR(AddExecutable(context, program, /*depth=*/0));
  if (request.kind == ToolKind::kMcpServer) {
    const std::string resolved = CanonicalPath(program);
    if (!resolved.empty()) AddPackageTree(context, resolved);
  }

  for (const std::string& argument : request.args) {
    if (argument.empty() || argument.starts_with('-')) continue;
    const std::string path = AbsolutePath(argument, request.working_directory);
    if (!IsRegularFile(path)) continue;
    // A file in the project is granted as written, through no symlink: the
    // project is writable by tools (a process.run child, a stdio tool), and
    // a script or data file swapped for a symlink to ~/.ssh/id_rsa must not
    // carry the grant to its target at the next start.
    if (std::optional<std::string> in_project = PathInProject(context, path)) {
      if (in_project->empty()) continue;
      LandlockPathRule rule = Rule(std::move(*in_project), /*read=*/true, false, false);
      rule.follow_symlinks = false;
      if (request.kind == ToolKind::kMcpServer) AddPackageTree(context, rule.path);
      context.rules.Add(rule);
      continue;
    }
    const std::string resolved = CanonicalPath(path);
    context.rules.Add(Rule(resolved.empty() ? path : resolved, /*read=*/true, false, false));
    if (request.kind == ToolKind::kMcpServer && !resolved.empty()) AddPackageTree(context, resolved);
  }

  if (!request.sdk_dir.empty()) context.rules.Add(Rule(request.sdk_dir, true, false, false));
  for (std::string_view directory : kSystemLibraryDirectories) {
    context.rules.Add(Rule(std::string(directory), /*read=*/true, /*write=*/false, /*execute=*/true));
  }
  // stdio tools are shell commands written for jp's contract (`git diff`,
  // `sh -c '... | jq'`): like process.run children they run system
  // programs. vfs tools do not.
  if (request.kind != ToolKind::kVfs) {
    for (std::string_view directory : kSystemProgramDirectories) {
      context.rules.Add(Rule(std::string(directory), /*read=*/true, false, /*execute=*/true));
    }
  }
  for (std::string_view file : kSystemReadFiles) {
    context.rules.Add(Rule(std::string(file), /*read=*/true, false, false));
  }
  if (request.kind == ToolKind::kMcpServer) {
    for (std::string_view file : kMcpServerReadFiles) {
      context.rules.Add(Rule(std::string(file), /*read=*/true, false, false));
    }
  }
  context.rules.Add(Rule("/dev/null", /*read=*/true, /*write=*/true, /*execute=*/false));
  for (const std::string& path : request.system_read) {
    if (!path.starts_with('/')) {
      return InvalidArgumentError(context.what + ": sandbox.system_read entry '" + path +
                                  "' is not an absolute path");
    }
    context.rules.Add(Rule(path, /*read=*/true, false, false));
  }
  if (!request.private_temp_dir.empty()) {
    context.rules.Add(Rule(request.private_temp_dir, /*read=*/true, /*write=*/true, false));
  }
  if (request.kind != ToolKind::kVfs) TOOLVFS_RETURN_IF_ERROR(AddProjectPrefixes(context));

  return LandlockRules{
      .paths = context.rules.Take(),
      .deny_tcp_bind_connect = request.kind == ToolKind::kVfs || !request.network_allowed,
      .scope_signals_and_abstract_unix_sockets = true,
  };
}

}  // namespace toolvfs
