// The null store: there are no project files. Paths are still validated,
// so an invalid or escaping path is an error on this store as on any other.
#include "project/null_store.h"

#include "project/grep.h"
#include "project/path.h"

namespace toolvfs {
namespace {

// An empty tree for RunGrep, so the pattern and the paths of a search are
// checked exactly as on other stores: every path is an empty directory.
class EmptyGrepTree final : public GrepTree {
 public:
  Result<std::vector<Entry>> List(std::string_view) override { return std::vector<Entry>(); }
  Result<EntryKind> Resolve(std::string_view) override { return EntryKind::kDirectory; }
  Result<File> OpenFile(std::string_view path, bool) override {
    return NoProjectError("No project: cannot read " + DisplayPath(path));
  }
};

class NullStore final : public ProjectFiles {
 public:
  Result<std::string> Read(std::string_view raw_path) override {
    TOOLVFS_ASSIGN_OR_RETURN(std::string path, NormalizePath(raw_path));
    return NoProjectError("No project: cannot read " + DisplayPath(path));
  }

  Result<FileRange> ReadRange(std::string_view raw_path, uint64_t, std::optional<uint64_t>) override {
    TOOLVFS_ASSIGN_OR_RETURN(std::string path, NormalizePath(raw_path));
    return NoProjectError("No project: cannot read " + DisplayPath(path));
  }

  Status Write(std::string_view raw_path, std::string_view, WriteMode) override {
    TOOLVFS_ASSIGN_OR_RETURN(std::string path, NormalizePath(raw_path));
    return NoProjectError("No project: cannot write " + DisplayPath(path));
  }

  Result<bool> Exists(std::string_view raw_path) override {
    TOOLVFS_RETURN_IF_ERROR(NormalizePath(raw_path).status());
    return false;
  }

  Result<std::vector<DirEntry>> ListDir(std::string_view raw_path) override {
    TOOLVFS_RETURN_IF_ERROR(NormalizePath(raw_path).status());
    return std::vector<DirEntry>();
  }

  // Nothing to follow without a project; the path is judged as written.
  Result<std::string> ResolvePath(std::string_view raw_path) override { return NormalizePath(raw_path); }

  Result<FileMetadata> Metadata(std::string_view raw_path) override {
    TOOLVFS_ASSIGN_OR_RETURN(std::string path, NormalizePath(raw_path));
    return NoProjectError("No project: cannot get metadata of " + DisplayPath(path));
  }

  Status Delete(std::string_view raw_path, bool) override {
    TOOLVFS_ASSIGN_OR_RETURN(std::string path, NormalizePath(raw_path));
    return NoProjectError("No project: cannot delete " + DisplayPath(path));
  }

  Status Rename(std::string_view raw_from, std::string_view raw_to, bool) override {
    TOOLVFS_ASSIGN_OR_RETURN(std::string from, NormalizePath(raw_from));
    TOOLVFS_ASSIGN_OR_RETURN(std::string to, NormalizePath(raw_to));
    return NoProjectError("No project: cannot rename " + DisplayPath(from) + " to " +
                          DisplayPath(to));
  }

  Result<GrepResult> Grep(std::string_view pattern, const GrepOptions& options) override {
    EmptyGrepTree tree;
    return RunGrep(tree, pattern, options);
  }

  Result<std::unique_ptr<MaterializedView>> Materialize() override {
    return NoProjectError("No project: cannot materialize the project files");
  }

  const std::string& DisplayRoot() const override { return display_root_; }

 private:
  const std::string display_root_ = "<no project>";
};

}  // namespace

std::unique_ptr<ProjectFiles> NewNullStore() { return std::make_unique<NullStore>(); }

}  // namespace toolvfs
