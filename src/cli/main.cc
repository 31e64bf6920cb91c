// toolvfs: the command line front end. Parses with CLI11 from the command
// table of commands.cc and runs the selected command. Every failure ends
// as one line "toolvfs: <what failed>: <why>" on stderr; no exception
// leaves main().
#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cli/cli_reference.h"
#include "cli/command.h"
#include "cli/terminal.h"
#include "cli/tool_invocation.h"

namespace toolvfs {
namespace {

std::string CommandNames() {
  std::string names;
  for (const CommandInfo& info : Commands()) {
    if (!names.empty()) names += ", ";
    names += info.name;
  }
  return names;
}

// What the user typed where a command name belongs, from argv[first] on:
// the first argument that is neither an option of `app` nor an option's
// value (and its index), and the first option `app` does not know.
struct ScannedArguments {
  std::string command;
  int command_index = 0;
  std::string unknown_option;
};

ScannedArguments ScanArguments(const CLI::App& app, int first, int argc, char** argv) {
  ScannedArguments found;
  for (int index = first; index < argc; ++index) {
    std::string_view argument = argv[index];
    if (argument == "--") {
      if (index + 1 < argc) {
        found.command = argv[index + 1];
        found.command_index = index + 1;
      }
      break;
    }
    if (!argument.starts_with("-")) {
      found.command = argument;
      found.command_index = index;
      break;
    }
    std::string name(argument.substr(0, argument.find('=')));
    const CLI::Option* option = app.get_option_no_throw(name);
    if (option == nullptr) {
      if (found.unknown_option.empty()) found.unknown_option = name;
      continue;
    }
    bool inline_value = argument.find('=') != std::string_view::npos;
    if (!inline_value && option->get_expected_max() != 0) ++index;  // skip its value (flags have none)
  }
  return found;
}

// Every subcommand of `app`, not only the parsed ones.
std::vector<const CLI::App*> AllSubcommands(const CLI::App& app) {
  return app.get_subcommands(std::function<bool(const CLI::App*)>([](const CLI::App*) { return true; }));
}

// "; did you mean --project?" when `option` is a near miss of a long
// option of `app` (CLI11 2.1 suggests nothing), else "".
std::string DidYouMean(const CLI::App& app, std::string_view option) {
  std::vector<std::string> names;
  for (const CLI::Option* known : app.get_options()) {
    for (const std::string& name : known->get_lnames()) names.push_back("--" + name);
  }
  std::vector<std::string> close = ClosestNames(option, names);
  return close.empty() ? std::string() : "; did you mean " + close.front() + "?";
}

// The first option before argv[end] (from argv[1]) that the root does not
// know, as typed ("--projcet"), or "". Values of known options are skipped.
std::string UnknownRootOption(const CLI::App& root, int end, char** argv) {
  for (int index = 1; index < end; ++index) {
    std::string_view argument = argv[index];
    if (argument == "--") break;
    if (!argument.starts_with("-")) continue;
    std::string name(argument.substr(0, argument.find('=')));
    const CLI::Option* option = root.get_option_no_throw(name);
    if (option == nullptr) return name;
    if (argument.find('=') == std::string_view::npos && option->get_expected_max() != 0) ++index;
  }
  return {};
}

// The index of `command`'s name in argv: where CLI11 found it.
int CommandIndex(const CLI::App& command, int argc, char** argv) {
  for (int index = 1; index < argc; ++index) {
    if (argv[index] == command.get_name()) return index;
  }
  return argc;
}

// A CLI11 parse error as our one-line form, with a pointer to the help of
// the command that was being parsed.
int ReportParseError(const CLI::App& root, const CLI::ParseError& error, int argc, char** argv) {
  std::vector<CLI::App*> selected = root.get_subcommands();
  if (selected.empty()) {
    ScannedArguments arguments = ScanArguments(root, 1, argc, argv);
    // A near miss of an option comes first: the word after it, taken for
    // a command, is more likely its value.
    if (std::string suggestion = DidYouMean(root, arguments.unknown_option); !suggestion.empty()) {
      return ReportError(arguments.unknown_option, "unknown option" + suggestion + " (see toolvfs --help)");
    }
    if (!arguments.command.empty()) {
      return ReportError(arguments.command, "unknown command; expected one of: " + CommandNames() +
                                                " (see toolvfs --help)");
    }
    if (!arguments.unknown_option.empty()) {
      return ReportError(arguments.unknown_option, "unknown option (see toolvfs --help)");
    }
    if (dynamic_cast<const CLI::RequiredError*>(&error) != nullptr) {
      return ReportError("no command given", "expected one of: " + CommandNames() +
                                                 " (see toolvfs --help)");
    }
    return ReportError("command line", std::string(error.what()) + " (see toolvfs --help)");
  }
  // "workspace ls" when the error is in a subcommand of a command.
  const CLI::App* command = selected.front();
  // An unknown option before the command's name is the root's to report,
  // not the command's (CLI11 hands it to the command as an extra).
  if (std::string unknown = UnknownRootOption(root, CommandIndex(*command, argc, argv), argv); !unknown.empty()) {
    return ReportError(unknown, "unknown option" + DidYouMean(root, unknown) + " (see toolvfs --help)");
  }
  std::string name = command->get_name();
  std::vector<CLI::App*> nested = command->get_subcommands();
  if (!nested.empty()) {
    name += " " + nested.front()->get_name();
  } else if (std::vector<const CLI::App*> all = AllSubcommands(*command); !all.empty()) {
    std::string names;
    for (const CLI::App* candidate : all) {
      if (!names.empty()) names += ", ";
      names += candidate->get_name();
    }
    std::string expected = "expected one of: " + names + " (see toolvfs " + name + " --help)";
    ScannedArguments command_arguments = ScanArguments(root, 1, argc, argv);
    ScannedArguments arguments = ScanArguments(*command, command_arguments.command_index + 1, argc, argv);
    if (!arguments.command.empty()) {
      return ReportError(name + " " + arguments.command, "unknown subcommand; " + expected);
    }
    return ReportError(name, "no subcommand given; " + expected);
  }
  std::string suggestion;
  if (dynamic_cast<const CLI::ExtrasError*>(&error) != nullptr) {
    const CLI::App& parsed = nested.empty() ? *command : *nested.front();
    for (const std::string& extra : parsed.remaining()) {
      if (!extra.starts_with("--")) continue;
      suggestion = DidYouMean(parsed, extra.substr(0, extra.find('=')));
      if (!suggestion.empty()) break;
    }
  }
  return ReportError(name, std::string(error.what()) + suggestion + " (see toolvfs " + name + " --help)");
}

int RunMain(int argc, char** argv) {
  CLI::App app{
      "toolvfs runs the tools of LLM agents through a policy-checked, audited project store.",
      "toolvfs"};
  app.set_version_flag("--version", "toolvfs " TOOLVFS_VERSION);
  app.require_subcommand(1);
  CommonOptions common;
  AddCommonOptions(app, common);

  struct Registered {
    CLI::App* app;
    std::unique_ptr<Command> command;
  };
  std::vector<Registered> registered;
  for (const CommandInfo& info : Commands()) {
    CLI::App* sub = app.add_subcommand(info.name, info.summary);
    std::unique_ptr<Command> command = info.create();
    command->AddOptions(*sub);
    const unsigned used = command->UsedCommonOptions();
    AddCommonOptions(*sub, common, used);
    // A command with subcommands of its own (workspace): they take the
    // common options too, after their name as well as before it.
    for (CLI::App* nested : sub->get_subcommands([](CLI::App*) { return true; })) {
      AddCommonOptions(*nested, common, used);
    }
    registered.push_back({sub, std::move(command)});
  }
  // After the commands: a subcommand inherits the footer it is created with.
  app.footer(
      "Run 'toolvfs COMMAND --help' for the options of a command.\n"
      "Example: toolvfs run todo_report --project examples/project\n"
      "Exit codes: 0 success (grep: matches found), 1 no result or the tool reported an "
      "error (grep: no match), 2 usage, config or other error, 3 the tool needs input, "
      "4 the OS sandbox cannot be enforced, 69 the store's server is unavailable (try again), "
      "124 timeout, 130 cancelled.");

  // Hidden (no group): the build runs it to make the man page and the
  // completions from this very tree (cli_reference.h).
  std::string generate_what;
  CLI::App* generate = app.add_subcommand("generate", "Print the man page or a shell completion script");
  generate->group("");
  generate->add_option("what", generate_what, "man, bash or zsh")
      ->required()
      ->check(CLI::IsMember({"man", "bash", "zsh"}));

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    // --help and --version are "errors" with exit code 0: CLI11 prints them.
    if (error.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(error);
    return ReportParseError(app, error, argc, argv);
  }

  SetLogLevel(common.log_level);
  if (generate->parsed()) {
    std::string text = generate_what == "man"    ? ManPage(app)
                       : generate_what == "bash" ? BashCompletion(app)
                                                 : ZshCompletion(app);
    std::fwrite(text.data(), 1, text.size(), stdout);
    return std::fflush(stdout) == 0 ? kExitOk : kExitUsage;
  }
  for (Registered& entry : registered) {
    if (entry.app->parsed()) return entry.command->Run(common);
  }
  return ReportError("no command given", "expected one of: " + CommandNames() + " (see toolvfs --help)");
}

}  // namespace
}  // namespace toolvfs

int main(int argc, char** argv) {
  try {
    return toolvfs::RunMain(argc, argv);
  } catch (const std::exception& error) {
    return toolvfs::ReportError("internal error", error.what());
  } catch (...) {
    return toolvfs::ReportError("internal error", "unknown exception");
  }
}
