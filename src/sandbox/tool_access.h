// What a tool process may touch directly (SPEC.md §5), as Landlock rules.
//
// Everything else a tool does goes through the host's protocol, where the
// policy decides and the audit log records; these rules are the backstop that
// makes the protocol the only way out. The derivation is pure parent-side
// work (it reads shebang lines, resolves symlinks and PATH, stats paths) and
// runs once per tool configuration, before any fork.
//
// Independent of src/policy on purpose: the caller translates its policy into
// plain lists of project-relative prefixes.
//
// Thread safety: every function may be called from any thread.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "sandbox/landlock.h"

namespace toolvfs {

enum class ToolKind {
  kVfs,           // a vfs-runtime tool: nothing of the project, no network
  kStdio,         // a stdio-runtime tool: the project per its policy
  kProcessChild,  // a process.run child: the calling tool's policy + system dirs
  kMcpServer,     // an MCP server: kStdio's rules plus its package tree
};

struct ToolAccessRequest {
  ToolKind kind = ToolKind::kVfs;
  // As in LaunchSpec: an absolute path, a path relative to
  // `working_directory`, or a bare name looked up on `path_env`.
  std::string program;
  // argv[1..]; every argument that names an existing regular file (relative
  // ones against `working_directory`) becomes readable: the script in
  // `python3 tool.py`.
  std::vector<std::string> args;
  // The tool's working directory (absolute); empty: the caller's.
  std::string working_directory;
  // The tool's PATH, for a bare program name and `#!/usr/bin/env NAME`;
  // empty: kFixedPath.
  std::string path_env;
  // The toolvfs SDK directory (readable); empty: none.
  std::string sdk_dir;
  // The tool's private HOME/TMPDIR (readable and writable); empty: none.
  std::string private_temp_dir;
  // `sandbox.system_read` from the config: absolute paths, read-only.
  std::vector<std::string> system_read;
  // The project directory (absolute). Set it for every kind: for vfs tools
  // it is what the install-prefix rules must never reach into.
  std::string project_root;
  // Project-relative prefixes ("" or "." is the whole project) the policy
  // lets the tool read, and write. Writable implies readable. Used for
  // kStdio and kProcessChild; ignored for kVfs. Prefixes that do not exist
  // yet grant nothing (Landlock rules need an existing inode).
  std::vector<std::string> readable_prefixes;
  std::vector<std::string> writable_prefixes;
  // Whether the policy allows any network; ignored for kVfs (never).
  bool network_allowed = false;
};

// The rules for `request`, merged to one rule per path in a stable order.
// For every kind:
//  - read+execute: the program (PATH-resolved if bare, symlinks resolved),
//    every interpreter of its shebang chain (`#!/usr/bin/env NAME` resolved
//    on PATH; `env` itself too), and the install prefix of each of those
//    (see InstallPrefixPaths);
//  - read: existing regular files named in `args`, the SDK dir,
//    `system_read`, /etc/ld.so.cache, /etc/localtime, /dev/urandom;
//  - read+execute: the system library dirs /lib, /lib64, /usr/lib,
//    /usr/lib64, /usr/local/lib;
//  - read+write: /dev/null, the private temp dir;
//  - signal and abstract unix socket scoping on.
// kVfs: nothing else; TCP denied.
// kStdio, kMcpServer and kProcessChild: plus the project prefixes (read,
//   or read+write; a process.run child may also execute there),
//   read+execute of /usr, /bin, /sbin, /lib, /lib32, /lib64 so they can
//   exec real programs; TCP denied unless `network_allowed`.
// kMcpServer: plus read of the package tree of each script on its command
//   line (the program, resolved, and the files named in `args`): the
//   nearest enclosing `node_modules`, `site-packages` or `dist-packages`
//   directory (a package's dependencies lie beside it there), else the
//   nearest enclosing directory with a package.json; never one that is
//   inside or contains the project (the policy decides about the project);
//   and read of /etc/ssl/openssl.cnf, without which node exits at startup.
// Paths that do not exist are kept: BuildLandlockRuleset skips them.
// Fails with one line naming the path and the reason, e.g.
//   "Cannot sandbox 'tool.py': its shebang names '/usr/bin/nope', which does
//   not exist", or for a program not on PATH, or a relative prefix escaping
//   the project with "..".
Result<LandlockRules> ToolAccessRules(const ToolAccessRequest& request);

// How FindProgramOnPath treats relative entries of a search path.
enum class RelativePathEntries {
  kSearch,  // like execvp: an empty entry is the current directory
  kSkip,    // only absolute directories (process.run: a relative entry
            // would find the project's own files, which tools write)
};

// The first executable regular file `name` (no slash) names on the
// colon-separated `search_path`. The one PATH lookup of the code base: the
// launcher, the sandbox's rules and process.run use it. NotFound naming the
// name and the search path otherwise.
Result<std::string> FindProgramOnPath(std::string_view name, std::string_view search_path,
                                      RelativePathEntries relative = RelativePathEntries::kSearch);

// The install prefix of an interpreter at `interpreter_path` is the parent of
// its directory when that directory is named bin or sbin (/usr for
// /usr/bin/python3.11, /opt/venv for /opt/venv/bin/python); other locations
// have none. Interpreters look for their libraries under the prefix, so the
// rules grant read+execute of PREFIX/lib, PREFIX/lib64 and PREFIX/libexec,
// read of PREFIX/share, and read of PREFIX/pyvenv.cfg (how a Python venv
// finds its base). Not the whole prefix: PREFIX/bin holds other programs,
// which a vfs tool must not execute. Returns those paths (existing or not);
// empty when there is no prefix.
std::vector<LandlockPathRule> InstallPrefixPaths(std::string_view interpreter_path);

}  // namespace toolvfs
