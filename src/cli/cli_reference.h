// The man page and shell completions, generated from the command line's own
// description (the CLI11 tree main.cc builds), so that they never disagree
// with --help. `toolvfs generate man|bash|zsh` prints them; the build runs
// it and installs the results (cmake/install.cmake).
#pragma once

#include <string>

namespace CLI {
class App;
}

namespace toolvfs {

// toolvfs(1) in roff: every command with its summary, options and
// subcommands, the common options once, the exit codes.
std::string ManPage(const CLI::App& root);

// A bash completion script: commands, their subcommands and options; file
// names for option values and positionals.
std::string BashCompletion(const CLI::App& root);

// A zsh completion function (#compdef toolvfs) with the same content and
// the descriptions shown beside each choice.
std::string ZshCompletion(const CLI::App& root);

}  // namespace toolvfs
