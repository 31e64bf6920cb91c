#include "cli/rule_writer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <system_error>

#include "config/config.h"
#include "config/config_edit.h"
#include "core/io.h"
#include "core/text.h"
#include "core/unique_fd.h"
#include "runtime/sdk_location.h"

namespace toolvfs {
namespace {

class ConfigRuleWriter final : public RuleWriter {
 public:
  explicit ConfigRuleWriter(std::string config_path) : config_path_(std::move(config_path)) {}

  Result<Proposal> Propose(const Inquiry& inquiry) override {
    std::string key;
    std::string value = inquiry.target;
    std::string pattern;
    if (inquiry.operation == "read" || inquiry.operation == "write") {
      key = inquiry.operation == "read" ? "filesystem.allow" : "filesystem.writable";
      // The rule covers the path and everything below it.
      pattern = value == "." ? std::string("**") : value + "/**";
    } else if (inquiry.operation == "GET" || inquiry.operation == "POST") {
      key = "network.allow";
      value = value.substr(0, value.find_first_of("?#"));
    } else {
      return UnsupportedError("a " + inquiry.operation + " request has no rule key to save it in");
    }
    std::error_code error;
    std::filesystem::path file = std::filesystem::canonical(config_path_, error);
    if (error) return ErrnoToStatus(error.value(), "Cannot find the config file " + Quote(config_path_));
    TOOLVFS_ASSIGN_OR_RETURN(std::string before, ReadConfigText(file.string()));
    TOOLVFS_ASSIGN_OR_RETURN(std::string after, AddSandboxRule(before, inquiry.tool, key, value));
    ConfigCheck checked = CheckConfigText(after, config_path_, InstallationVariables());
    if (!checked.errors.empty()) {
      return InternalError("the edited config would not be valid (" + checked.errors.front() +
                           "); add the rule by hand");
    }
    file_ = file.string();
    before_ = std::move(before);
    after_ = std::move(after);
    return Proposal{UnifiedDiff(before_, after_, config_path_), pattern};
  }

  Status Apply() override {
    if (file_.empty()) return InternalError("No rule was proposed");
    TOOLVFS_ASSIGN_OR_RETURN(std::string current, ReadConfigText(file_));
    if (current != before_) return ChangedError(Quote(config_path_) + " changed since the rule was shown");
    struct stat status;
    if (::stat(file_.c_str(), &status) != 0) return ErrnoToStatus(errno, "Cannot stat " + Quote(file_));
    std::string temporary = file_ + ".toolvfs-XXXXXX";
    UniqueFd fd(::mkstemp(temporary.data()));
    if (!fd.valid()) return ErrnoToStatus(errno, "Cannot create a file next to " + Quote(file_));
    Status written = WriteFull(fd.get(), after_, "the new config file");
    if (written.ok() && ::fchmod(fd.get(), status.st_mode & 07777) != 0) {
      written = ErrnoToStatus(errno, "Cannot set the mode of the new config file");
    }
    if (written.ok() && ::fsync(fd.get()) != 0) written = ErrnoToStatus(errno, "Cannot sync the new config file");
    if (written.ok() && ::rename(temporary.c_str(), file_.c_str()) != 0) {
      written = ErrnoToStatus(errno, "Cannot replace " + Quote(file_));
    }
    if (!written.ok()) ::unlink(temporary.c_str());
    return written;
  }

 private:
  std::string config_path_;
  std::string file_;  // the file the path leads to, as Propose read it
  std::string before_;
  std::string after_;
};

}  // namespace

std::unique_ptr<RuleWriter> NewConfigRuleWriter(std::string config_path) {
  return std::make_unique<ConfigRuleWriter>(std::move(config_path));
}

}  // namespace toolvfs
