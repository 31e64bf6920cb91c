// The memory store: the project is a sorted map from normalized path to
// node, held in process memory.
//
// Layout. Every entry, directories included, is one map entry keyed by its
// normalized path; the root is the entry "" and always exists. Because the
// map is ordered bytewise, a directory's descendants are exactly the keys
// that start with "dir/", one contiguous range, and they follow the
// directory itself. Invariant: every ancestor of an entry is a directory
// entry (writes create parents, deletes remove whole subtrees).
//
// Concurrency. One shared_mutex guards the live map: reads take it shared,
// writes exclusively, so each call is atomic. File content is an immutable
// shared string, so a reader can take a reference under the lock and copy
// outside it.
//
// Copy-on-write. The map is a PersistentMap (project/persistent_map.h): a
// copy of it is O(1) and freezes the tree for both copies, and a change
// afterwards copies only the O(log n) nodes on its path. A snapshot, a
// Grep() in progress and a materialized view each take such a copy, so
// taking a snapshot and restoring one are O(1), and a change costs O(log
// n) whether or not a snapshot was just taken: snapshots cost what changed,
// not the workspace's size. Content strings are shared, never copied. Diff
// skips the subtrees both versions share: O(changes x log n). (Until
// issue 19 the map was a std::map copied whole on the first change after
// each snapshot; docs/stores.md, "The memory store", has the figures.)
//
// Versions. A file's version is 1 when it is created and +1 for every
// write or append (a materialized view's sync-back included); a rename
// onto an existing file continues the replaced file's count (+1) and keeps
// its created time, since for a reader of that path it is an overwrite; a
// moved file keeps its version. Directories have no version. All of it is
// in the node, so a snapshot and a restore carry it with the content.
//
// Materialize() writes the tree to a fresh private temp dir. Release()
// scans the dir (without following symlinks), diffs it against the tree it
// wrote and applies the differences to a copy of the live tree, which
// replaces it only if every change applied: a sync succeeds or changes
// nothing.
#include "project/memory_store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <tuple>
#include <utility>

#include "core/io.h"
#include "core/text.h"
#include "core/unique_fd.h"
#include "project/grep.h"
#include "project/materialized_copy.h"
#include "project/path.h"
#include "project/persistent_map.h"
#include "project/store_errors.h"

namespace toolvfs {
namespace {

using Content = std::shared_ptr<const std::string>;

struct Node {
  EntryKind kind = EntryKind::kDirectory;  // kFile or kDirectory; memory has no symlinks
  Content content;                         // files only
  int64_t modified_ms = 0;
  int64_t created_ms = 0;
  uint64_t version = 0;  // files: 1 on creation, +1 per change; directories: 0 (they have none)
};

Node NewDirectory(int64_t now) { return Node{EntryKind::kDirectory, nullptr, now, now, 0}; }
Node NewFile(Content content, int64_t now) { return Node{EntryKind::kFile, std::move(content), now, now, 1}; }

// Normalized path -> node, in bytewise order.
using Tree = PersistentMap<Node>;

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

Tree EmptyTree() {
  Tree tree;
  tree.Emplace("", NewDirectory(NowMs()));
  return tree;
}

bool IsDir(const Node& node) { return node.kind == EntryKind::kDirectory; }

// "dir/" for a directory, "" for the root: the common prefix of its descendants.
std::string DescendantPrefix(std::string_view dir) {
  return dir.empty() ? std::string() : std::string(dir) + "/";
}

// The first key after every descendant of the non-root `dir`: '0' is the
// byte after '/'.
std::string PastDescendants(std::string_view dir) { return std::string(dir) + "0"; }

// The descendants of the non-root directory `dir` are the keys in
// ["dir/", "dir0"): every one starts with "dir/", and siblings such as
// "dir.txt" or "dir-x" sort before "dir/".

// The first ancestor of `path` that is a file, if any.
std::optional<std::string_view> FileAncestor(const Tree& tree, std::string_view path) {
  for (size_t slash = path.find('/'); slash != std::string_view::npos;
       slash = path.find('/', slash + 1)) {
    std::string_view ancestor = path.substr(0, slash);
    const Node* node = tree.Find(ancestor);
    if (node == nullptr) return std::nullopt;
    if (!IsDir(*node)) return ancestor;
  }
  return std::nullopt;
}

// The error for a missing `path`: NotDirectory if an ancestor is a file
// ("Cannot <verb> 'a/b': 'a' is a file"), else NotFound ("<noun> 'a/b' does
// not exist").
Status MissingOrParentIsFileError(const Tree& tree, std::string_view path, std::string_view verb,
                                  std::string_view noun) {
  if (auto ancestor = FileAncestor(tree, path)) return ParentIsFileError(CannotDo(verb, path), *ancestor);
  return MissingError(noun, path);
}

// Calls fn(name, node) for each immediate child of the directory `dir`, in
// name order, skipping over the subtrees of child directories.
template <typename Fn>
void ForEachChild(const Tree& tree, std::string_view dir, Fn&& fn) {
  const std::string prefix = DescendantPrefix(dir);
  // "\x01" is the smallest key after the root's "" (no path holds a NUL).
  auto [key, node] = tree.LowerBound(dir.empty() ? std::string_view("\x01") : prefix);
  while (key != nullptr && key->starts_with(prefix)) {
    std::string_view rest = std::string_view(*key).substr(prefix.size());
    size_t slash = rest.find('/');
    // One lookup per child: past a child directory's whole subtree.
    std::string next = slash == std::string_view::npos
                           ? *key + '\0'
                           : PastDescendants(prefix + std::string(rest.substr(0, slash)));
    if (slash == std::string_view::npos) fn(rest, *node);
    std::tie(key, node) = tree.LowerBound(next);
  }
}

bool HasChildren(const Tree& tree, std::string_view dir) {
  const std::string prefix = DescendantPrefix(dir);
  auto [key, node] = tree.LowerBound(dir.empty() ? std::string_view("\x01") : prefix);
  return key != nullptr && key->starts_with(prefix);
}

// Records a change of the entries of directory `dir`.
void Touch(Tree& tree, std::string_view dir, int64_t now) {
  const Node* node = tree.Find(dir);
  if (node == nullptr) return;
  Node touched = *node;
  touched.modified_ms = now;
  tree.Assign(dir, std::move(touched));
}

// Creates the missing ancestors of `path`. The caller has checked that no
// ancestor is a file.
void CreateParents(Tree& tree, std::string_view path, int64_t now) {
  for (size_t slash = path.find('/'); slash != std::string_view::npos;
       slash = path.find('/', slash + 1)) {
    std::string_view ancestor = path.substr(0, slash);
    if (tree.Emplace(ancestor, NewDirectory(now))) {
      Touch(tree, ParentPath(ancestor), now);
    }
  }
}

// Write() on a locked tree. `content` is the new content for overwrite and
// create, the bytes to add for append.
Status WriteLocked(Tree& tree, const std::string& path, Content content, WriteMode mode,
                   int64_t now) {
  if (path.empty()) {
    return ProjectRootError("write");
  }
  if (auto ancestor = FileAncestor(tree, path)) {
    return ParentIsFileError(CannotDo("write", path), *ancestor);
  }
  if (const Node* existing = tree.Find(path)) {
    if (mode == WriteMode::kCreate) {
      return CreateExistsError(path);
    }
    if (IsDir(*existing)) {
      return IsDirectoryActionError("write", path);
    }
    Node written = *existing;
    if (mode == WriteMode::kAppend) {
      auto joined = std::make_shared<std::string>();
      joined->reserve(existing->content->size() + content->size());
      joined->append(*existing->content).append(*content);
      content = std::move(joined);
    }
    written.content = std::move(content);
    written.modified_ms = now;
    ++written.version;
    tree.Assign(path, std::move(written));
    return OkStatus();
  }
  CreateParents(tree, path, now);
  tree.Emplace(path, NewFile(std::move(content), now));
  Touch(tree, ParentPath(path), now);
  return OkStatus();
}

// One snapshot: the map as it was, sharing every node the live tree has
// not changed since.
struct StoredSnapshot {
  std::optional<std::string> label;
  int64_t created_ms = 0;
  Tree tree;
};

// The state a store shares with its materialized views, so a view may
// outlive its store.
struct State {
  std::shared_mutex mutex;
  // The live tree; change it with `mutex` held exclusively.
  Tree tree = EmptyTree();
  // By number: ids are the decimal numbers, so this is oldest first.
  std::map<uint64_t, StoredSnapshot> snapshots;
  uint64_t last_snapshot_number = 0;  // never reused, even once deleted

  // A copy of the live tree (O(1)), for reading outside the lock: it stays
  // as it is whatever the store does next.
  Tree Share() {
    std::shared_lock lock(mutex);
    return tree;
  }
};

// The entries of the directory at `path`, sorted by name (the tree's order).
Result<std::vector<DirEntry>> ListChildren(const Tree& tree, std::string_view path) {
  const Node* directory = tree.Find(path);
  if (directory == nullptr) return MissingOrParentIsFileError(tree, path, "list", "Directory");
  if (!IsDir(*directory)) return ListFileError(path);
  std::vector<DirEntry> entries;
  ForEachChild(tree, path, [&](std::string_view name, const Node& child) {
    entries.push_back(DirEntry{std::string(name), child.kind});
  });
  return entries;
}

// ----- Snapshots ----------------------------------------------------------

// Whether two nodes at one path hold the same thing: the same kind and, for
// files, the same bytes. Times and versions do not count (a file written
// again with the same bytes is unchanged), and nor does a directory's
// content, which is its descendants' business.
bool SameEntry(const Node& a, const Node& b) {
  if (a.kind != b.kind) return false;
  if (IsDir(a)) return true;
  return a.content == b.content || *a.content == *b.content;
}

// The paths that differ from `from` to `to`, each list in the maps' order
// (bytewise); the root is never listed. Shared subtrees are skipped, so
// this costs what changed (PersistentMap::ForEachDifference). Also the
// files SameEntry calls unchanged that were written in between (a write of
// the same bytes gives the node another version and time).
TreeChanges DiffTrees(const Tree& from, const Tree& to) {
  TreeChanges changes;
  TreeDiff& diff = changes.diff;
  Tree::ForEachDifference(from, to, [&](const std::string& path, const Node* before, const Node* after) {
    if (path.empty()) return;
    if (before == nullptr) {
      diff.added.push_back(path);
    } else if (after == nullptr) {
      diff.deleted.push_back(path);
    } else if (!SameEntry(*before, *after)) {
      diff.modified.push_back(path);
    } else if (!IsDir(*after) && (before->version != after->version || before->modified_ms != after->modified_ms ||
                                  before->created_ms != after->created_ms)) {
      changes.rewritten.push_back(path);
    }
  });
  return changes;
}

// ----- Grep ---------------------------------------------------------------

// GrepTree over a snapshot; RunGrep may call it from several threads, which
// is safe because nothing modifies the snapshot.
class SnapshotGrepTree final : public GrepTree {
 public:
  explicit SnapshotGrepTree(Tree tree) : tree_(std::move(tree)) {}

  Result<std::vector<Entry>> List(std::string_view path) override { return ListChildren(tree_, path); }

  Result<EntryKind> Resolve(std::string_view path) override {
    const Node* node = tree_.Find(path);
    if (node == nullptr) {
      return MissingOrParentIsFileError(tree_, path, "search", "Path");
    }
    return node->kind;
  }

  Result<File> OpenFile(std::string_view path, bool /*follow_symlinks*/) override {
    const Node* node = tree_.Find(path);
    if (node == nullptr) {
      return MissingOrParentIsFileError(tree_, path, "read", "File");
    }
    if (IsDir(*node)) {
      return IsDirectoryActionError("read", path);
    }
    // The snapshot holds the content for the whole search: no copy.
    return File{nullptr, *node->content};
  }

 private:
  const Tree tree_;  // a copy: frozen for the whole search
};

// ----- Materialize --------------------------------------------------------

// Writes every entry of `tree` below the directory `root_fd` (`root` names
// it in messages), directory times last.
Status WriteTree(int root_fd, const std::string& root, const Tree& tree) {
  Status status;  // the first error; the walks do nothing after it
  tree.ForEach([&](const std::string& path, const Node& node) {
    if (!status.ok() || path.empty()) return;
    status = IsDir(node) ? WriteCopiedDirectory(root_fd, root, path)
                         : WriteCopiedFile(root_fd, root, path, *node.content, node.modified_ms);
  });
  // Deepest first: creating children changes a directory's time.
  tree.ForEachReverse([&](const std::string& path, const Node& node) {
    if (!status.ok() || path.empty() || !IsDir(node)) return;
    status = SetCopiedDirectoryTime(root_fd, root, path, node.modified_ms);
  });
  return status;
}

// The copy at `root` read back as a tree. Content equal to what `written`
// holds for the path shares its string. (Times do not matter: what changed
// is applied with the time of the sync.) Files are read one at a time and
// an unchanged one's bytes are dropped once compared: the sync holds the
// changed files, which the store keeps anyway, plus one file.
Result<Tree> ScanTree(const std::string& root, const Tree& written) {
  TOOLVFS_ASSIGN_OR_RETURN(CopiedTree copied, ReadCopy(root, CopiedAddresses::kSkip));
  Tree tree;
  tree.Emplace("", NewDirectory(0));
  uint64_t changed_bytes = 0;
  for (auto& [path, entry] : copied) {
    if (entry.kind == EntryKind::kDirectory) {
      tree.Emplace(path, NewDirectory(0));
      continue;
    }
    TOOLVFS_ASSIGN_OR_RETURN(std::string content, ReadCopiedFile(root, path, entry));
    const Node* before = written.Find(path);
    Content shared;
    if (before != nullptr && !IsDir(*before) && *before->content == content) {
      shared = before->content;
    } else {
      changed_bytes += content.size();
      TOOLVFS_RETURN_IF_ERROR(CheckSyncedTotal(changed_bytes));
      shared = std::make_shared<const std::string>(std::move(content));
    }
    tree.Emplace(path, NewFile(std::move(shared), 0));
  }
  return tree;
}

// Applies the changes from `written` (the tree the view was created from)
// to `now_in_view` (what the view holds at release) onto `tree`; a change
// `filter` refuses is skipped and appended to `refused`. On error `tree`
// is partly changed; the caller applies to a copy.
Status ApplyViewChanges(Tree& tree, const Tree& written, const Tree& now_in_view, int64_t now,
                        const CopyChangeFilter* filter, std::vector<RefusedChange>& refused) {
  // Deletions first, deepest first, so a directory is empty when reached
  // and a path can change kind (deleted, then added).
  written.ForEachReverse([&](const std::string& path, const Node& node) {
    if (path.empty()) return;
    const Node* in_view = now_in_view.Find(path);
    if (in_view != nullptr && in_view->kind == node.kind) return;
    const Node* in_store = tree.Find(path);
    if (in_store == nullptr || in_store->kind != node.kind) return;  // gone already
    if (IsDir(node)) {
      // The store gained entries here since the view was made: keep them.
      if (HasChildren(tree, path)) return;
    } else if (in_store->content != node.content && *in_store->content != *node.content) {
      return;  // changed in the store since the view was made: keep that change
    }
    if (!CopyChangeAllowed(filter, path, refused)) return;
    tree.Erase(path);
    Touch(tree, ParentPath(path), now);
  });
  // Additions and modifications, parents first.
  Status status;  // the first error; nothing is applied after it
  now_in_view.ForEach([&](const std::string& path, const Node& node) {
    if (!status.ok()) return;
    const Node* before = written.Find(path);
    bool existed = before != nullptr && before->kind == node.kind;
    if (IsDir(node)) {
      if (existed || !CopyChangeAllowed(filter, path, refused)) return;
      if (auto ancestor = FileAncestor(tree, path)) {
        status = ParentIsFileError(CannotDo("create directory", path), *ancestor);
        return;
      }
      if (const Node* in_store = tree.Find(path)) {
        if (!IsDir(*in_store)) {
          status = NotDirectoryError("Cannot create directory " + DisplayPath(path) + ": it is a file");
        }
        return;
      }
      CreateParents(tree, path, now);
      tree.Emplace(path, NewDirectory(now));
      Touch(tree, ParentPath(path), now);
      return;
    }
    if (existed && before->content == node.content) return;  // unchanged
    if (!CopyChangeAllowed(filter, path, refused)) return;
    status = WriteLocked(tree, path, node.content, WriteMode::kOverwrite, now);
  });
  return status;
}

class MemoryView final : public MaterializedView {
 public:
  MemoryView(std::shared_ptr<State> state, std::string dir, Tree written)
      : state_(std::move(state)), dir_(std::move(dir)), written_(std::move(written)) {}

  ~MemoryView() override {
    if (!released_) ReportFailedRelease(Release());
  }

  const std::string& path() const override { return dir_; }

  Status Release() override {
    if (released_) return OkStatus();
    released_ = true;
    return ReleaseMaterializedCopy(dir_, [this] {
      Status synced = Sync();
      if (synced.ok()) written_ = Tree();
      return synced;
    });
  }

  void FilterChanges(std::shared_ptr<const CopyChangeFilter> filter) override { filter_ = std::move(filter); }

 private:
  Status Sync() {
    TOOLVFS_ASSIGN_OR_RETURN(Tree now_in_view, ScanTree(dir_, written_));

    std::vector<RefusedChange> refused;
    std::unique_lock lock(state_->mutex);
    Tree next = state_->tree;  // O(1): applied to a copy, kept only if all of it applies
    Status applied = ApplyViewChanges(next, written_, now_in_view, NowMs(), filter_.get(), refused);
    if (applied.ok()) state_->tree = std::move(next);
    lock.unlock();
    ReportRefusedChanges(refused);
    return applied;
  }

  std::shared_ptr<State> state_;
  std::string dir_;
  Tree written_;  // the tree written into the directory
  std::shared_ptr<const CopyChangeFilter> filter_;
  bool released_ = false;
};

// ----- The store ----------------------------------------------------------

class MemoryStore final : public ProjectFiles {
 public:
  MemoryStore(std::string name, const StoreOptions& options)
      : state_(std::make_shared<State>()),
        options_(options),
        display_root_("memory:" + std::move(name)) {}

  Result<std::string> Read(std::string_view raw_path) override {
    TOOLVFS_ASSIGN_OR_RETURN(std::string path, NormalizePath(raw_path));
    TOOLVFS_ASSIGN_OR_RETURN(Content content, FileContent(path));
    if (content->size() > options_.max_read_bytes) {
      return ReadLimitError(path, content->size(), options_.max_read_bytes);
    }
    return std::string(*content);
  }

  Result<FileRange> ReadRange(std::string_view raw_path, uint64_t offset,
                              std::optional<uint64_t> length) override {
    TOOLVFS_ASSIGN_OR_RETURN(std::string path, NormalizePath(raw_path));
    TOOLVFS_ASSIGN_OR_RETURN(Content content, FileContent(path));
    uint64_t file_size = content->size();
    uint64_t available = offset < file_size ? file_size - offset : 0;
    uint64_t wanted = std::min(available, length.value_or(available));
    if (wanted > options_.max_read_bytes) {
      return ReadRangeLimitError(path, offset, wanted, options_.max_read_bytes);
    }
    if (wanted == 0) return FileRange{std::string(), file_size};
    return FileRange{content->substr(static_cast<size_t>(offset), static_cast<size_t>(wanted)),
                     file_size};
  }

  Status Write(std::string_view raw_path, std::string_view content, WriteMode mode) override {
    TOOLVFS_ASSIGN_OR_RETURN(std::string path, NormalizePath(raw_path));
    // Copy the bytes before taking the lock.
    Content shared = std::make_shared<const std::string>(content);
    std::unique_lock lock(state_->mutex);
    return WriteLocked(state_->tree, path, std::move(shared), mode, NowMs());
  }

  Result<bool> Exists(std::string_view raw_path) override {
    TOOLVFS_ASSIGN_OR_RETURN(std::string path, NormalizePath(raw_path));
    std::shared_lock lock(state_->mutex);
    return state_->tree.Contains(path);
  }

  Result<std::vector<DirEntry>> ListDir(std::string_view raw_path) override {
    TOOLVFS_ASSIGN_OR_RETURN(std::string path, NormalizePath(raw_path));
    std::shared_lock lock(state_->mutex);
    return ListChildren(state_->tree, path);
  }

  // No symlinks in memory: the normalized path is what it names.
  Result<std::string> ResolvePath(std::string_view raw_path) override { return NormalizePath(raw_path); }

  Result<FileMetadata> Metadata(std::string_view raw_path) override {
    TOOLVFS_ASSIGN_OR_RETURN(std::string path, NormalizePath(raw_path));
    std::shared_lock lock(state_->mutex);
    const Tree& tree = state_->tree;
    const Node* found = tree.Find(path);
    if (found == nullptr) {
      return MissingOrParentIsFileError(tree, path, "get metadata of", "Path");
    }
    const Node& node = *found;
    FileMetadata metadata{node.kind, IsDir(node) ? 0 : node.content->size(), node.modified_ms};
    if (!IsDir(node)) metadata.version = node.version;
    metadata.created_ms = node.created_ms;
    return metadata;
  }

  Status Delete(std::string_view raw_path, bool recursive) override {
    TOOLVFS_ASSIGN_OR_RETURN(std::string path, NormalizePath(raw_path));
    if (path.empty()) return ProjectRootError("delete");
    std::unique_lock lock(state_->mutex);
    Tree& tree = state_->tree;
    const Node* node = tree.Find(path);
    if (node == nullptr) {
      return MissingOrParentIsFileError(tree, path, "delete", "Path");
    }
    if (IsDir(*node)) {
      if (!recursive && HasChildren(tree, path)) {
        return DeleteNotEmptyError(path);
      }
      tree.EraseRange(DescendantPrefix(path), PastDescendants(path));
    }
    tree.Erase(path);
    Touch(tree, ParentPath(path), NowMs());
    return OkStatus();
  }

  Status Rename(std::string_view raw_from, std::string_view raw_to, bool overwrite) override {
    TOOLVFS_ASSIGN_OR_RETURN(std::string from, NormalizePath(raw_from));
    TOOLVFS_ASSIGN_OR_RETURN(std::string to, NormalizePath(raw_to));
    const std::string what = CannotRename(from, to);
    if (from.empty() || to.empty()) {
      return RenameRootError(from, to);
    }
    if (from != to && PathContains(from, to)) {
      return RenameIntoItselfError(from, to);
    }

    std::unique_lock lock(state_->mutex);
    Tree& tree = state_->tree;
    const Node* source = tree.Find(from);
    if (source == nullptr) {
      if (auto ancestor = FileAncestor(tree, from)) {
        return ParentIsFileError(what, *ancestor);
      }
      return RenameSourceMissingError(from, to);
    }
    if (from == to) return OkStatus();
    if (auto ancestor = FileAncestor(tree, to)) {
      return ParentIsFileError(what, *ancestor);
    }
    const bool moving_dir = IsDir(*source);
    // A file moved onto a file continues the replaced file's history: to
    // whoever reads `to`, the rename is an overwrite.
    std::optional<Node> replaced_file;
    if (const Node* target = tree.Find(to)) {
      if (!overwrite) {
        return RenameTargetExistsError(from, to);
      }
      // An ancestor of `from` is a directory that holds `from`: not empty
      // (this is also what rename(2) reports).
      if (PathContains(to, from)) {
        return RenameTargetNotEmptyError(from, to);
      }
      if (!moving_dir && IsDir(*target)) {
        return RenameTargetIsDirectoryError(from, to);
      }
      if (moving_dir && !IsDir(*target)) {
        return RenameTargetIsFileError(from, to);
      }
      if (moving_dir && HasChildren(tree, to)) {
        return RenameTargetNotEmptyError(from, to);
      }
      // `to` is neither `from`, nor inside it, nor an ancestor of it.
      if (!moving_dir) replaced_file = *target;
      tree.Erase(to);
    }

    const int64_t now = NowMs();
    CreateParents(tree, to, now);
    // Re-key the source and its descendants: O(moved x log n); the content
    // strings are shared, not copied.
    std::vector<std::pair<std::string, Node>> moved;
    moved.emplace_back(to, *tree.Find(from));
    if (moving_dir) {
      tree.ForEachInRange(DescendantPrefix(from), PastDescendants(from),
                          [&](const std::string& key, const Node& node) {
                            moved.emplace_back(to + key.substr(from.size()), node);
                          });
      tree.EraseRange(DescendantPrefix(from), PastDescendants(from));
    }
    tree.Erase(from);
    if (replaced_file) {
      moved.front().second.version = replaced_file->version + 1;
      moved.front().second.created_ms = replaced_file->created_ms;
    }
    for (auto& [key, node] : moved) tree.Assign(key, std::move(node));
    Touch(tree, ParentPath(from), now);
    Touch(tree, ParentPath(to), now);
    return OkStatus();
  }

  Result<GrepResult> Grep(std::string_view pattern, const GrepOptions& options) override {
    SnapshotGrepTree tree(state_->Share());
    return RunGrep(tree, pattern, options);
  }

  Result<std::unique_ptr<MaterializedView>> Materialize() override {
    Tree snapshot = state_->Share();
    TOOLVFS_ASSIGN_OR_RETURN(std::string dir, MakeMaterializedDirectory(display_root_));
    UniqueFd root(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    Status status = root ? WriteTree(root.get(), dir, snapshot)
                         : ErrnoToStatus(errno, "Cannot open " + Quote(dir));
    if (!status.ok()) {
      (void)RemoveTree(dir);
      return Status(status.code(),
                    "Cannot materialize " + Quote(display_root_) + ": " + status.message());
    }
    return std::unique_ptr<MaterializedView>(
        std::make_unique<MemoryView>(state_, std::move(dir), std::move(snapshot)));
  }

  const std::string& DisplayRoot() const override { return display_root_; }

  // ----- Snapshots: O(1) copies of the persistent map (top of the file) ---

  Result<std::string> Snapshot(std::optional<std::string_view> label) override {
    if (label) TOOLVFS_RETURN_IF_ERROR(CheckSnapshotLabel(*label));
    std::unique_lock lock(state_->mutex);
    const uint64_t number = ++state_->last_snapshot_number;
    state_->snapshots.emplace(
        number, StoredSnapshot{label ? std::optional<std::string>(*label) : std::nullopt, NowMs(), state_->tree});
    return std::to_string(number);
  }

  Status Restore(std::string_view id) override {
    Tree replaced;  // declared first, so freed after the lock is released
    std::unique_lock lock(state_->mutex);
    TOOLVFS_ASSIGN_OR_RETURN(Tree tree, FindSnapshot(id));
    // The live tree becomes a copy of the snapshot's map, sharing all of
    // it: changes copy their paths, and the snapshot stays as it was.
    // Versions, created and modified times come back with it.
    replaced = std::exchange(state_->tree, std::move(tree));
    return OkStatus();
  }

  Result<std::vector<SnapshotInfo>> ListSnapshots() override {
    std::shared_lock lock(state_->mutex);
    std::vector<SnapshotInfo> list;
    list.reserve(state_->snapshots.size());
    for (const auto& [number, snapshot] : state_->snapshots) {
      list.push_back(SnapshotInfo{std::to_string(number), snapshot.label, snapshot.created_ms});
    }
    return list;
  }

  Result<TreeDiff> Diff(std::string_view from, std::optional<std::string_view> to) override {
    TOOLVFS_ASSIGN_OR_RETURN(TreeChanges changes, DiffWithRewrites(from, to));
    return std::move(changes.diff);
  }

  Result<TreeChanges> DiffWithRewrites(std::string_view from, std::optional<std::string_view> to) override {
    Tree old_tree;
    Tree new_tree;
    {
      std::shared_lock lock(state_->mutex);
      TOOLVFS_ASSIGN_OR_RETURN(old_tree, FindSnapshot(from));
      if (to) {
        TOOLVFS_ASSIGN_OR_RETURN(new_tree, FindSnapshot(*to));
      } else {
        new_tree = state_->tree;
      }
    }
    // Both copies stay as they are: compare outside the lock.
    return DiffTrees(old_tree, new_tree);
  }

  Status DeleteSnapshot(std::string_view id) override {
    std::optional<uint64_t> number = ParseSnapshotId(id);
    Tree released;  // declared first, so freed after the lock is released
    std::unique_lock lock(state_->mutex);
    auto it = number ? state_->snapshots.find(*number) : state_->snapshots.end();
    if (it == state_->snapshots.end()) return SnapshotNotFoundError(id, display_root_);
    released = std::move(it->second.tree);
    state_->snapshots.erase(it);
    return OkStatus();
  }

 private:
  // The map of snapshot `id`; NotFound naming it. Call with the mutex held.
  Result<Tree> FindSnapshot(std::string_view id) const {
    std::optional<uint64_t> number = ParseSnapshotId(id);
    if (!number) return SnapshotNotFoundError(id, display_root_);
    auto it = state_->snapshots.find(*number);
    if (it == state_->snapshots.end()) return SnapshotNotFoundError(id, display_root_);
    return it->second.tree;
  }

  // The content of the file at normalized `path`, shared: the caller copies
  // what it needs outside the lock. NotFound, NotDirectory (a parent is a
  // file) and IsDirectory worded for a read.
  Result<Content> FileContent(const std::string& path) {
    std::shared_lock lock(state_->mutex);
    const Tree& tree = state_->tree;
    const Node* node = tree.Find(path);
    if (node == nullptr) return MissingOrParentIsFileError(tree, path, "read", "File");
    if (IsDir(*node)) return IsDirectoryActionError("read", path);
    return node->content;
  }

  std::shared_ptr<State> state_;
  const StoreOptions options_;
  const std::string display_root_;
};

}  // namespace

std::unique_ptr<ProjectFiles> NewMemoryStore(std::string name, const StoreOptions& options) {
  return std::make_unique<MemoryStore>(std::move(name), options);
}

}  // namespace toolvfs
