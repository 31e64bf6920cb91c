#include "cli/cli_reference.h"

#include <CLI/CLI.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace toolvfs {
namespace {

// The subcommands a user can name (hidden ones, like `generate`, have an
// empty group).
std::vector<const CLI::App*> VisibleSubcommands(const CLI::App& app) {
  std::vector<const CLI::App*> visible;
  for (const CLI::App* sub : app.get_subcommands(std::function<bool(const CLI::App*)>([](const CLI::App*) { return true; }))) {
    if (!sub->get_group().empty()) visible.push_back(sub);
  }
  return visible;
}

struct OptionInfo {
  std::vector<std::string> names;  // "--json", "-l"
  std::string value_name;          // "" for a flag
  std::string description;
};

// Named options of `app` (positionals and --help excluded), in order.
std::vector<OptionInfo> NamedOptions(const CLI::App& app) {
  std::vector<OptionInfo> options;
  for (const CLI::Option* option : app.get_options()) {
    if (option->get_positional() && option->get_lnames().empty() && option->get_snames().empty()) continue;
    if (option->get_lnames().size() == 1 && option->get_lnames().front() == "help") continue;
    OptionInfo info;
    for (const std::string& name : option->get_snames()) info.names.push_back("-" + name);
    for (const std::string& name : option->get_lnames()) info.names.push_back("--" + name);
    if (info.names.empty()) continue;
    if (option->get_expected_max() != 0) {  // flags expect no value
      info.value_name = option->get_type_name();
      if (info.value_name.empty()) info.value_name = "VALUE";
    }
    info.description = option->get_description();
    options.push_back(std::move(info));
  }
  return options;
}

// The common options are declared on the root and on every command; the
// reference lists them once, under the root.
bool IsCommon(const OptionInfo& option, const std::vector<OptionInfo>& common) {
  for (const OptionInfo& candidate : common) {
    if (candidate.names == option.names) return true;
  }
  return false;
}

// --- roff --------------------------------------------------------------------

std::string RoffEscape(std::string_view text) {
  std::string escaped;
  bool line_start = true;
  for (char c : text) {
    if (c == '\\') {
      escaped += "\\e";
    } else if (c == '-') {
      escaped += "\\-";
    } else if ((c == '.' || c == '\'') && line_start) {
      escaped += "\\&";
      escaped += c;
    } else {
      escaped += c;
    }
    line_start = c == '\n';
  }
  return escaped;
}

void AppendRoffOptions(std::string& page, const std::vector<OptionInfo>& options,
                       const std::vector<OptionInfo>& common) {
  for (const OptionInfo& option : options) {
    if (IsCommon(option, common)) continue;
    page += ".TP\n\\fB";
    for (size_t index = 0; index < option.names.size(); ++index) {
      if (index > 0) page += "\\fR, \\fB";
      page += RoffEscape(option.names[index]);
    }
    page += "\\fR";
    if (!option.value_name.empty()) page += " \\fI" + RoffEscape(option.value_name) + "\\fR";
    page += "\n" + RoffEscape(option.description) + "\n";
  }
}

// --- shells ------------------------------------------------------------------

std::string OptionWords(const CLI::App& app, const std::vector<OptionInfo>& common, bool include_common) {
  std::string words;
  for (const OptionInfo& option : NamedOptions(app)) {
    if (!include_common && IsCommon(option, common)) continue;
    for (const std::string& name : option.names) {
      if (!words.empty()) words += ' ';
      words += name;
    }
  }
  return words;
}

std::string SubcommandWords(const CLI::App& app) {
  std::string words;
  for (const CLI::App* sub : VisibleSubcommands(app)) {
    if (!words.empty()) words += ' ';
    words += sub->get_name();
  }
  return words;
}

// A zsh _arguments / _describe item: brackets, colons and quotes escaped.
std::string ZshEscape(std::string_view text) {
  std::string escaped;
  for (char c : text) {
    if (c == '\'') {
      escaped += "'\\''";
    } else if (c == '[' || c == ']' || c == ':' || c == '\\') {
      escaped += '\\';
      escaped += c;
    } else if (c == '\n') {
      escaped += ' ';
    } else {
      escaped += c;
    }
  }
  return escaped;
}

std::string ZshOptionSpecs(const CLI::App& app) {
  std::string specs;
  for (const OptionInfo& option : NamedOptions(app)) {
    for (const std::string& name : option.names) {
      specs += "      '" + name + "[" + ZshEscape(option.description) + "]";
      if (!option.value_name.empty()) specs += ":" + ZshEscape(option.value_name) + ":_files";
      specs += "' \\\n";
    }
  }
  return specs;
}

std::string ZshDescribeList(const CLI::App& app) {
  std::string list;
  for (const CLI::App* sub : VisibleSubcommands(app)) {
    list += "    '" + ZshEscape(sub->get_name()) + ":" + ZshEscape(sub->get_description()) + "'\n";
  }
  return list;
}

}  // namespace

std::string ManPage(const CLI::App& root) {
  const std::vector<OptionInfo> common = NamedOptions(root);
  std::string page;
  page += ".TH TOOLVFS 1 \"\" \"toolvfs " TOOLVFS_VERSION "\" \"User Commands\"\n";
  page += ".SH NAME\ntoolvfs \\- " + RoffEscape(root.get_description()) + "\n";
  page += ".SH SYNOPSIS\n\\fBtoolvfs\\fR [\\fICOMMON OPTIONS\\fR] \\fICOMMAND\\fR [\\fIOPTIONS\\fR] [\\fIARGUMENTS\\fR]\n";
  page += ".SH DESCRIPTION\nA tool never opens a file, a socket or a process itself: it asks the toolvfs host, "
          "which checks each request against the tool's policy, records it in the audit log, asks the user "
          "when the policy is silent, and serves it from the project store. "
          "\\fBtoolvfs COMMAND \\-\\-help\\fR shows a command's options with an example.\n";
  page += ".SH COMMANDS\n";
  for (const CLI::App* command : VisibleSubcommands(root)) {
    page += ".SS \"toolvfs " + RoffEscape(command->get_name()) + "\"\n";
    page += RoffEscape(command->get_description()) + "\n";
    AppendRoffOptions(page, NamedOptions(*command), common);
    for (const CLI::App* nested : VisibleSubcommands(*command)) {
      page += ".TP\n\\fBtoolvfs " + RoffEscape(command->get_name()) + " " + RoffEscape(nested->get_name()) +
              "\\fR\n" + RoffEscape(nested->get_description()) + "\n";
      for (const OptionInfo& option : NamedOptions(*nested)) {
        if (IsCommon(option, common)) continue;
        page += ".br\n\\fB" + RoffEscape(option.names.back()) + "\\fR";
        if (!option.value_name.empty()) page += " \\fI" + RoffEscape(option.value_name) + "\\fR";
        page += ": " + RoffEscape(option.description) + "\n";
      }
    }
  }
  page += ".SH COMMON OPTIONS\nAccepted by every command, before or after its name.\n";
  AppendRoffOptions(page, common, {});
  page += ".SH EXIT STATUS\n" + RoffEscape(root.get_footer()) + "\n";
  page += ".SH FILES\n.TP\n\\fBtoolvfs.toml\\fR\nThe tools of a project and their policies.\n"
          ".TP\n\\fB.toolvfs/audit.jsonl\\fR\nThe audit log of the project (default).\n";
  return page;
}

std::string BashCompletion(const CLI::App& root) {
  const std::vector<OptionInfo> common = NamedOptions(root);
  // Per position: `names` are the (sub)command names that may come next,
  // `options` the options of the command so far; anything else is a file.
  std::string script;
  script += "# bash completion for toolvfs (generated by `toolvfs generate bash`)\n";
  script += "_toolvfs() {\n";
  script += "  local current=\"${COMP_WORDS[COMP_CWORD]}\" command=\"\" nested=\"\" word index\n";
  script += "  for ((index = 1; index < COMP_CWORD; index++)); do\n";
  script += "    word=\"${COMP_WORDS[index]}\"\n";
  script += "    [[ \"$word\" == -* ]] && continue\n";
  script += "    if [[ -z \"$command\" ]]; then command=\"$word\"; elif [[ -z \"$nested\" ]]; then nested=\"$word\"; fi\n";
  script += "  done\n";
  script += "  local options=\"" + OptionWords(root, common, true) + "\" names=\"\"\n";
  script += "  case \"$command\" in\n";
  script += "    \"\") names=\"" + SubcommandWords(root) + "\" ;;\n";
  for (const CLI::App* command : VisibleSubcommands(root)) {
    std::vector<const CLI::App*> nested = VisibleSubcommands(*command);
    script += "    " + command->get_name() + ")\n";
    if (nested.empty()) {
      script += "      options+=\" " + OptionWords(*command, common, false) + "\" ;;\n";
      continue;
    }
    script += "      case \"$nested\" in\n";
    script += "        \"\") names=\"" + SubcommandWords(*command) + "\" ;;\n";
    for (const CLI::App* sub : nested) {
      script += "        " + sub->get_name() + ") options+=\" " + OptionWords(*sub, common, false) + "\" ;;\n";
    }
    script += "      esac ;;\n";
  }
  script += "  esac\n";
  script += "  if [[ \"$current\" == -* ]]; then\n";
  script += "    COMPREPLY=($(compgen -W \"$options\" -- \"$current\"))\n";
  script += "  elif [[ -n \"$names\" ]]; then\n";
  script += "    COMPREPLY=($(compgen -W \"$names\" -- \"$current\"))\n";
  script += "  else\n";
  script += "    COMPREPLY=($(compgen -f -- \"$current\"))\n";
  script += "  fi\n";
  script += "  return 0\n";
  script += "}\n";
  script += "complete -o filenames -F _toolvfs toolvfs\n";
  return script;
}

std::string ZshCompletion(const CLI::App& root) {
  std::string script;
  script += "#compdef toolvfs\n# zsh completion for toolvfs (generated by `toolvfs generate zsh`)\n\n";
  script += "_toolvfs() {\n";
  script += "  local -a commands\n  commands=(\n" + ZshDescribeList(root) + "  )\n";
  script += "  if (( CURRENT == 2 )); then\n    _describe 'command' commands\n    return\n  fi\n";
  script += "  case ${words[2]} in\n";
  for (const CLI::App* command : VisibleSubcommands(root)) {
    std::vector<const CLI::App*> nested = VisibleSubcommands(*command);
    script += "    " + command->get_name() + ")\n";
    if (!nested.empty()) {
      script += "      local -a subcommands\n      subcommands=(\n" + ZshDescribeList(*command) + "      )\n";
      script += "      if (( CURRENT == 3 )); then\n        _describe 'subcommand' subcommands\n        return\n      fi\n";
      script += "      case ${words[3]} in\n";
      for (const CLI::App* sub : nested) {
        script += "        " + sub->get_name() + ")\n          _arguments \\\n" + ZshOptionSpecs(*sub) +
                  "      '*:file:_files' ;;\n";
      }
      script += "      esac ;;\n";
      continue;
    }
    script += "      _arguments \\\n" + ZshOptionSpecs(*command) + "      '*:file:_files' ;;\n";
  }
  script += "  esac\n}\n\n_toolvfs \"$@\"\n";
  return script;
}

}  // namespace toolvfs
