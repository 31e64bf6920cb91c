// ForwardingProjectFiles: a ProjectFiles that hands every call to another
// one, like LevelDB's EnvWrapper, so that a store which changes one thing
// (injects faults, counts calls, adds latency) overrides only that and
// inherits the rest.
//
// The target is not owned: the wrapper is a view of a store that somebody
// else opened, and the same store may be wrapped more than once (a test
// keeps its own reference to look behind the wrapper). The target must
// outlive the wrapper.
//
// WithoutSymlinks() is the one call that cannot simply be forwarded: the
// target's view is another object, and handing it out would let every
// front end that acts through the view (all fs.* handlers do, see
// ProjectFiles::WithoutSymlinks) bypass the wrapper. So the wrapper returns
// a view of its own kind: NewWithoutSymlinksView() builds one over the
// target's view, once, and it lives as long as the wrapper. A target
// without symlinks returns itself from WithoutSymlinks(), and then so does
// the wrapper.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "project/project_files.h"

namespace toolvfs {

class ForwardingProjectFiles : public ProjectFiles {
 public:
  // `target` must outlive this store and its WithoutSymlinks() view.
  explicit ForwardingProjectFiles(ProjectFiles& target) : target_(target) {}

  ProjectFiles& target() const { return target_; }

  Result<std::string> Read(std::string_view path) override { return target_.Read(path); }
  Result<FileRange> ReadRange(std::string_view path, uint64_t offset,
                              std::optional<uint64_t> length) override {
    return target_.ReadRange(path, offset, length);
  }
  // Forwarded as one call, so the target keeps its own one-step read (the
  // fs store's); the target's own resolve and read inside it do not pass
  // through this wrapper.
  Result<FileRange> ReadAuthorized(std::string_view path, std::optional<ByteRange> range,
                                   const ReadAuthorizer& authorize) override {
    return target_.ReadAuthorized(path, range, authorize);
  }
  // This wrapper over the target's WithoutSymlinks() (see above).
  ProjectFiles& WithoutSymlinks() override;
  Status Write(std::string_view path, std::string_view content, WriteMode mode = WriteMode::kOverwrite) override {
    return target_.Write(path, content, mode);
  }
  Result<bool> Exists(std::string_view path) override { return target_.Exists(path); }
  Result<std::vector<DirEntry>> ListDir(std::string_view path) override { return target_.ListDir(path); }
  Result<std::string> ResolvePath(std::string_view path) override { return target_.ResolvePath(path); }
  Result<FileMetadata> Metadata(std::string_view path) override { return target_.Metadata(path); }
  Status Delete(std::string_view path, bool recursive = false) override { return target_.Delete(path, recursive); }
  Status Rename(std::string_view from, std::string_view to, bool overwrite = false) override {
    return target_.Rename(from, to, overwrite);
  }
  Result<GrepResult> Grep(std::string_view pattern, const GrepOptions& options) override {
    return target_.Grep(pattern, options);
  }
  Result<std::unique_ptr<MaterializedView>> Materialize() override { return target_.Materialize(); }
  const std::string& DisplayRoot() const override { return target_.DisplayRoot(); }
  Result<std::string> Snapshot(std::optional<std::string_view> label = std::nullopt) override {
    return target_.Snapshot(label);
  }
  Status Restore(std::string_view id) override { return target_.Restore(id); }
  Result<std::vector<SnapshotInfo>> ListSnapshots() override { return target_.ListSnapshots(); }
  Result<TreeDiff> Diff(std::string_view from, std::optional<std::string_view> to = std::nullopt) override {
    return target_.Diff(from, to);
  }
  Status DeleteSnapshot(std::string_view id) override { return target_.DeleteSnapshot(id); }
  Result<TreeChanges> DiffWithRewrites(std::string_view from, std::optional<std::string_view> to) override {
    return target_.DiffWithRewrites(from, to);
  }
  Result<UniqueFd> OpenForStreaming(std::string_view path) override { return target_.OpenForStreaming(path); }
  Status WriteWithMetadata(std::string_view path, std::string_view content, const FileMetadata& metadata) override {
    return target_.WriteWithMetadata(path, content, metadata);
  }
  Status WriteFromDescriptor(std::string_view path, int source, WriteMode mode) override {
    return target_.WriteFromDescriptor(path, source, mode);
  }

 protected:
  // The store WithoutSymlinks() returns when the target's view is another
  // object: one that does what this wrapper does, but forwards to
  // `target_view` (and shares this wrapper's state, e.g. its faults and
  // counters). Called once, on first use. A subclass that changes any
  // behavior must override it, or its view would be a plain forwarder and
  // the change would not apply to what front ends do through the view;
  // the default is right only for ForwardingProjectFiles itself.
  virtual std::unique_ptr<ProjectFiles> NewWithoutSymlinksView(ProjectFiles& target_view);

 private:
  ProjectFiles& target_;
  std::once_flag view_once_;
  std::unique_ptr<ProjectFiles> view_;  // made by NewWithoutSymlinksView
};

}  // namespace toolvfs
