#include "project/sql/workspace_uri.h"

#include "core/text.h"

namespace toolvfs {
namespace {

constexpr size_t kMaxNameBytes = 255;

// Whether valid UTF-8 `text` has a control character (C0, DEL, or C1:
// U+0080-U+009F, which some terminals act on) or a line or paragraph
// separator (U+2028, U+2029): a name is shown inside one-line messages.
bool HasControlCharacter(std::string_view text) {
  for (size_t i = 0; i < text.size(); ++i) {
    auto byte = static_cast<unsigned char>(text[i]);
    if (byte < 0x20 || byte == 0x7f) return true;
    auto next = [&](size_t offset) {
      return i + offset < text.size() ? static_cast<unsigned char>(text[i + offset]) : 0;
    };
    if (byte == 0xc2 && next(1) >= 0x80 && next(1) <= 0x9f) return true;
    if (byte == 0xe2 && next(1) == 0x80 && (next(2) == 0xa8 || next(2) == 0xa9)) return true;
  }
  return false;
}

// Why `name` cannot be a workspace or snapshot name ("it is empty", ...),
// or nothing when it can.
std::optional<std::string> NameProblem(std::string_view name) {
  if (name.empty()) return "it is empty";
  if (name.size() > kMaxNameBytes) {
    return "it is " + std::to_string(name.size()) + " bytes long, more than the limit of " +
           std::to_string(kMaxNameBytes);
  }
  if (!IsValidUtf8(name)) return "it is not valid UTF-8";
  if (HasControlCharacter(name)) return "it contains a control character or a line separator";
  if (name.find_first_of("#@") != std::string_view::npos) {
    return "'#' and '@' separate the parts of a store URI and cannot be part of a name";
  }
  return std::nullopt;
}

}  // namespace

Status ValidateWorkspaceName(std::string_view what, std::string_view name) {
  std::optional<std::string> problem = NameProblem(name);
  if (!problem) return OkStatus();
  // A name past the limit is shown by its start only.
  std::string shown = name.size() > kMaxNameBytes ? Quote(name.substr(0, 40)) + "..." : Quote(name);
  return InvalidArgumentError("Invalid " + std::string(what) + " " + shown + ": " + *problem);
}

Result<WorkspaceAddress> ParseWorkspaceAddress(std::string_view uri, std::string_view rest) {
  auto invalid = [&](std::string_view why) {
    return InvalidArgumentError("Invalid project " + Quote(uri) + ": " + std::string(why));
  };
  WorkspaceAddress address;
  size_t hash = rest.find('#');
  std::string_view location = rest.substr(0, hash);
  if (location.empty()) return invalid("no store before '#'");
  address.location = std::string(location);
  address.workspace = std::string(kDefaultWorkspace);
  if (hash == std::string_view::npos) return address;

  std::string_view fragment = rest.substr(hash + 1);
  if (fragment.find('#') != std::string_view::npos) {
    return invalid("more than one '#'; expected LOCATION#WORKSPACE[@SNAPSHOT]");
  }
  size_t at = fragment.find('@');
  std::string_view workspace = fragment.substr(0, at);
  if (workspace.empty()) return invalid("no workspace name after '#'");
  // A bad name is refused naming the URI, like every other refusal here: the
  // name alone may not tell the user which --project (or session) it was.
  if (std::optional<std::string> problem = NameProblem(workspace)) {
    return invalid("invalid workspace name: " + *problem);
  }
  address.workspace = std::string(workspace);
  if (at == std::string_view::npos) return address;
  std::string_view snapshot = fragment.substr(at + 1);
  if (snapshot.empty()) return invalid("no snapshot after '@'");
  if (snapshot.find('@') != std::string_view::npos) {
    return invalid("more than one '@' after '#'; expected LOCATION#WORKSPACE@SNAPSHOT");
  }
  if (std::optional<std::string> problem = NameProblem(snapshot)) return invalid("invalid snapshot: " + *problem);
  address.snapshot = std::string(snapshot);
  return address;
}

}  // namespace toolvfs
