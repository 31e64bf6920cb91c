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
// Concurrency. One shared_mutex guards the map: reads take it shared,
// writes exclusively, so each call is atomic. File content is an immutable
// shared string, so a reader can take a reference under the lock and copy
// outside it.
//
// Copy-on-write. The live map is held by a shared_ptr, and a map with more
// than one owner is frozen: a snapshot, a Grep() in progress and a
// materialized view each take a reference to it, for O(1), and the next
// change copies the map first (MutableTree). The copy is of map nodes
// only: content strings are shared, never copied. So taking a snapshot and
// restoring one are O(1); the first change after either copies the map,
// O(entries), once; later changes are in place again until the next
// snapshot. Diff walks both maps, O(entries), skipping content compares
// where both sides share the string.
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
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <utility>

#include "core/io.h"
#include "core/text.h"
#include "core/unique_fd.h"
#include "project/grep.h"
#include "project/materialized_copy.h"
#include "project/path.h"
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

// Normalized path -> node. std::less<> allows lookups by string_view.
using Tree = std::map<std::string, Node, std::less<>>;

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

Tree EmptyTree() {
  Tree tree;
  tree.emplace("", NewDirectory(NowMs()));
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

// The descendants of the non-root directory `dir`: every key in
// ["dir/", "dir0") starts with "dir/", and siblings such as "dir.txt" or
// "dir-x" sort before "dir/".
std::pair<Tree::iterator, Tree::iterator> Descendants(Tree& tree, std::string_view dir) {
  return {tree.lower_bound(DescendantPrefix(dir)), tree.lower_bound(PastDescendants(dir))};
}

// The first ancestor of `path` that is a file, if any.
std::optional<std::string_view> FileAncestor(const Tree& tree, std::string_view path) {
  for (size_t slash = path.find('/'); slash != std::string_view::npos;
       slash = path.find('/', slash + 1)) {
    std::string_view ancestor = path.substr(0, slash);
    auto it = tree.find(ancestor);
    if (it == tree.end()) return std::nullopt;
    if (!IsDir(it->second)) return ancestor;
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
  auto it = tree.lower_bound(prefix);
  if (dir.empty() && it != tree.end() && it->first.empty()) ++it;  // the root itself
  while (it != tree.end() && it->first.starts_with(prefix)) {
    std::string_view rest = std::string_view(it->first).substr(prefix.size());
    size_t slash = rest.find('/');
    if (slash == std::string_view::npos) {
      fn(rest, it->second);
      ++it;
    } else {
      it = tree.lower_bound(PastDescendants(prefix + std::string(rest.substr(0, slash))));
    }
  }
}

bool HasChildren(const Tree& tree, std::string_view dir) {
  const std::string prefix = DescendantPrefix(dir);
  auto it = tree.lower_bound(prefix);
  if (dir.empty() && it != tree.end() && it->first.empty()) ++it;
  return it != tree.end() && it->first.starts_with(prefix);
}

// Records a change of the entries of directory `dir`.
void Touch(Tree& tree, std::string_view dir, int64_t now) {
  auto it = tree.find(dir);
  if (it != tree.end()) it->second.modified_ms = now;
}

// Creates the missing ancestors of `path`. The caller has checked that no
// ancestor is a file.
void CreateParents(Tree& tree, std::string_view path, int64_t now) {
  for (size_t slash = path.find('/'); slash != std::string_view::npos;
       slash = path.find('/', slash + 1)) {
    std::string_view ancestor = path.substr(0, slash);
    if (tree.emplace(std::string(ancestor), NewDirectory(now)).second) {
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
  auto it = tree.find(path);
  if (it != tree.end()) {
    if (mode == WriteMode::kCreate) {
      return CreateExistsError(path);
    }
    if (IsDir(it->second)) {
      return IsDirectoryActionError("write", path);
    }
    if (mode == WriteMode::kAppend) {
      auto joined = std::make_shared<std::string>();
      joined->reserve(it->second.content->size() + content->size());
      joined->append(*it->second.content).append(*content);
      content = std::move(joined);
    }
    it->second.content = std::move(content);
    it->second.modified_ms = now;
    ++it->second.version;
    return OkStatus();
  }
  CreateParents(tree, path, now);
  tree.emplace(path, NewFile(std::move(content), now));
  Touch(tree, ParentPath(path), now);
  return OkStatus();
}

using SharedTree = std::shared_ptr<const Tree>;

// One snapshot: the map as it was, shared with the live tree and other
// snapshots until a change copies the live one.
struct StoredSnapshot {
  std::optional<std::string> label;
  int64_t created_ms = 0;
  SharedTree tree;
};

// The state a store shares with its materialized views, so a view may
// outlive its store.
struct State {
  std::shared_mutex mutex;
  // The live tree. Frozen while anything else owns it (see the top of the
  // file): change it only through MutableTree().
  std::shared_ptr<Tree> tree = std::make_shared<Tree>(EmptyTree());
  // By number: ids are the decimal numbers, so this is oldest first.
  std::map<uint64_t, StoredSnapshot> snapshots;
  uint64_t last_snapshot_number = 0;  // never reused, even once deleted

  // The live tree, for reading outside the lock: it stays as it is.
  SharedTree Share() {
    std::shared_lock lock(mutex);
    return tree;
  }

  // The live tree, to change. Call with `mutex` held exclusively. If a
  // snapshot, a search or a view shares the map, it is copied first (map
  // nodes only; content strings stay shared).
  Tree& MutableTree() {
    // Nobody can take a new reference without the lock we hold, so the
    // count can only fall while we look: 1 means the map is ours. The
    // acquire fence pairs with the release of the last other owner's
    // reference, so its reads of the map happen before our changes.
    if (tree.use_count() > 1) {
      tree = std::make_shared<Tree>(*tree);
    } else {
      std::atomic_thread_fence(std::memory_order_acquire);
    }
    return *tree;
  }
};

// The entries of the directory at `path`, sorted by name (the tree's order).
Result<std::vector<DirEntry>> ListChildren(const Tree& tree, std::string_view path) {
  auto it = tree.find(path);
  if (it == tree.end()) return MissingOrParentIsFileError(tree, path, "list", "Directory");
  if (!IsDir(it->second)) return ListFileError(path);
  std::vector<DirEntry> entries;
  ForEachChild(tree, path, [&](std::string_view name, const Node& node) {
    entries.push_back(DirEntry{std::string(name), node.kind});
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
// (bytewise). One merge walk over both maps; the root is never listed.
TreeDiff DiffTrees(const Tree& from, const Tree& to) {
  TreeDiff diff;
  if (&from == &to) return diff;  // one shared map: nothing changed
  auto old_entry = from.begin();
  auto new_entry = to.begin();
  while (old_entry != from.end() || new_entry != to.end()) {
    if (new_entry == to.end() || (old_entry != from.end() && old_entry->first < new_entry->first)) {
      if (!old_entry->first.empty()) diff.deleted.push_back(old_entry->first);
      ++old_entry;
    } else if (old_entry == from.end() || new_entry->first < old_entry->first) {
      if (!new_entry->first.empty()) diff.added.push_back(new_entry->first);
      ++new_entry;
    } else {
      if (!SameEntry(old_entry->second, new_entry->second)) diff.modified.push_back(new_entry->first);
      ++old_entry;
      ++new_entry;
    }
  }
  return diff;
}

// ----- Grep ---------------------------------------------------------------

// GrepTree over a snapshot; RunGrep may call it from several threads, which
// is safe because nothing modifies the snapshot.
class SnapshotGrepTree final : public GrepTree {
 public:
  explicit SnapshotGrepTree(SharedTree tree) : shared_(std::move(tree)), tree_(*shared_) {}

  Result<std::vector<Entry>> List(std::string_view path) override { return ListChildren(tree_, path); }

  Result<EntryKind> Resolve(std::string_view path) override {
    auto it = tree_.find(path);
    if (it == tree_.end()) {
      return MissingOrParentIsFileError(tree_, path, "search", "Path");
    }
    return it->second.kind;
  }

  Result<File> OpenFile(std::string_view path, bool /*follow_symlinks*/) override {
    auto it = tree_.find(path);
    if (it == tree_.end()) {
      return MissingOrParentIsFileError(tree_, path, "read", "File");
    }
    if (IsDir(it->second)) {
      return IsDirectoryActionError("read", path);
    }
    // The snapshot holds the content for the whole search: no copy.
    return File{nullptr, *it->second.content};
  }

 private:
  const SharedTree shared_;  // keeps the map frozen for the whole search
  const Tree& tree_;
};

// ----- Materialize --------------------------------------------------------

// Writes every entry of `tree` below the directory `root_fd` (`root` names
// it in messages), directory times last.
Status WriteTree(int root_fd, const std::string& root, const Tree& tree) {
  for (const auto& [path, node] : tree) {
    if (path.empty()) continue;
    if (IsDir(node)) {
      TOOLVFS_RETURN_IF_ERROR(WriteCopiedDirectory(root_fd, root, path));
    } else {
      TOOLVFS_RETURN_IF_ERROR(WriteCopiedFile(root_fd, root, path, *node.content, node.modified_ms));
    }
  }
  // Deepest first: creating children changes a directory's time.
  for (auto it = tree.rbegin(); it != tree.rend(); ++it) {
    if (it->first.empty() || !IsDir(it->second)) continue;
    TOOLVFS_RETURN_IF_ERROR(SetCopiedDirectoryTime(root_fd, root, it->first, it->second.modified_ms));
  }
  return OkStatus();
}

// The copy at `root` read back as a tree. Content equal to what `written`
// holds for the path shares its string. (Times do not matter: what changed
// is applied with the time of the sync.)
Result<Tree> ScanTree(const std::string& root, const Tree& written) {
  TOOLVFS_ASSIGN_OR_RETURN(CopiedTree copied, ReadCopy(root));
  Tree tree;
  tree.emplace("", NewDirectory(0));
  for (auto& [path, entry] : copied) {
    if (entry.kind == EntryKind::kDirectory) {
      tree.emplace(path, NewDirectory(0));
      continue;
    }
    auto before = written.find(path);
    Content shared;
    if (before != written.end() && !IsDir(before->second) && *before->second.content == entry.content) {
      shared = before->second.content;
    } else {
      shared = std::make_shared<const std::string>(std::move(entry.content));
    }
    tree.emplace(path, NewFile(std::move(shared), 0));
  }
  return tree;
}

// Applies the changes from `written` (the tree the view was created from)
// to `now_in_view` (what the view holds at release) onto `tree`. On error
// `tree` is partly changed; the caller applies to a copy.
Status ApplyViewChanges(Tree& tree, const Tree& written, const Tree& now_in_view, int64_t now) {
  // Deletions first, deepest first, so a directory is empty when reached
  // and a path can change kind (deleted, then added).
  for (auto it = written.rbegin(); it != written.rend(); ++it) {
    const auto& [path, node] = *it;
    if (path.empty()) continue;
    auto in_view = now_in_view.find(path);
    if (in_view != now_in_view.end() && in_view->second.kind == node.kind) continue;
    auto in_store = tree.find(path);
    if (in_store == tree.end() || in_store->second.kind != node.kind) continue;  // gone already
    if (IsDir(node)) {
      // The store gained entries here since the view was made: keep them.
      if (HasChildren(tree, path)) continue;
    } else if (in_store->second.content != node.content &&
               *in_store->second.content != *node.content) {
      continue;  // changed in the store since the view was made: keep that change
    }
    tree.erase(in_store);
    Touch(tree, ParentPath(path), now);
  }
  // Additions and modifications, parents first.
  for (const auto& [path, node] : now_in_view) {
    auto before = written.find(path);
    bool existed = before != written.end() && before->second.kind == node.kind;
    if (IsDir(node)) {
      if (existed) continue;
      if (auto ancestor = FileAncestor(tree, path)) {
        return ParentIsFileError(CannotDo("create directory", path), *ancestor);
      }
      auto in_store = tree.find(path);
      if (in_store != tree.end()) {
        if (IsDir(in_store->second)) continue;
        return NotDirectoryError("Cannot create directory " + DisplayPath(path) +
                                 ": it is a file");
      }
      CreateParents(tree, path, now);
      tree.emplace(path, NewDirectory(now));
      Touch(tree, ParentPath(path), now);
      continue;
    }
    if (existed && before->second.content == node.content) continue;  // unchanged
    TOOLVFS_RETURN_IF_ERROR(WriteLocked(tree, path, node.content, WriteMode::kOverwrite, now));
  }
  return OkStatus();
}

class MemoryView final : public MaterializedView {
 public:
  MemoryView(std::shared_ptr<State> state, std::string dir, SharedTree written)
      : state_(std::move(state)), dir_(std::move(dir)), written_(std::move(written)) {}

  ~MemoryView() override {
    if (released_) return;
    Status status = Release();
    if (!status.ok()) {
      // The message names the kept directory.
      std::fprintf(stderr, "toolvfs: %s\n", EscapeForDisplay(status.message()).c_str());
    }
  }

  const std::string& path() const override { return dir_; }

  Status Release() override {
    if (released_) return OkStatus();
    released_ = true;
    Status status = Sync();
    if (!status.ok()) {
      return Status(status.code(), "Cannot sync the materialized copy " + Quote(dir_) +
                                       " back (nothing was synced; the copy is kept): " +
                                       status.message());
    }
    written_.reset();
    Status removed = RemoveTree(dir_);
    if (!removed.ok()) {
      return Status(removed.code(),
                    "Synced the materialized copy back, but it is kept: " + removed.message());
    }
    return OkStatus();
  }

 private:
  Status Sync() {
    TOOLVFS_ASSIGN_OR_RETURN(Tree now_in_view, ScanTree(dir_, *written_));

    std::unique_lock lock(state_->mutex);
    auto next = std::make_shared<Tree>(*state_->tree);
    TOOLVFS_RETURN_IF_ERROR(ApplyViewChanges(*next, *written_, now_in_view, NowMs()));
    state_->tree = std::move(next);
    return OkStatus();
  }

  std::shared_ptr<State> state_;
  std::string dir_;
  SharedTree written_;  // the tree written into the directory
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
    return WriteLocked(state_->MutableTree(), path, std::move(shared), mode, NowMs());
  }

  Result<bool> Exists(std::string_view raw_path) override {
    TOOLVFS_ASSIGN_OR_RETURN(std::string path, NormalizePath(raw_path));
    std::shared_lock lock(state_->mutex);
    return state_->tree->contains(path);
  }

  Result<std::vector<DirEntry>> ListDir(std::string_view raw_path) override {
    TOOLVFS_ASSIGN_OR_RETURN(std::string path, NormalizePath(raw_path));
    std::shared_lock lock(state_->mutex);
    return ListChildren(*state_->tree, path);
  }

  // No symlinks in memory: the normalized path is what it names.
  Result<std::string> ResolvePath(std::string_view raw_path) override { return NormalizePath(raw_path); }

  Result<FileMetadata> Metadata(std::string_view raw_path) override {
    TOOLVFS_ASSIGN_OR_RETURN(std::string path, NormalizePath(raw_path));
    std::shared_lock lock(state_->mutex);
    const Tree& tree = *state_->tree;
    auto it = tree.find(path);
    if (it == tree.end()) {
      return MissingOrParentIsFileError(tree, path, "get metadata of", "Path");
    }
    const Node& node = it->second;
    FileMetadata metadata{node.kind, IsDir(node) ? 0 : node.content->size(), node.modified_ms};
    if (!IsDir(node)) metadata.version = node.version;
    metadata.created_ms = node.created_ms;
    return metadata;
  }

  Status Delete(std::string_view raw_path, bool recursive) override {
    TOOLVFS_ASSIGN_OR_RETURN(std::string path, NormalizePath(raw_path));
    if (path.empty()) return ProjectRootError("delete");
    std::unique_lock lock(state_->mutex);
    Tree& tree = state_->MutableTree();
    auto it = tree.find(path);
    if (it == tree.end()) {
      return MissingOrParentIsFileError(tree, path, "delete", "Path");
    }
    if (IsDir(it->second)) {
      auto [first, last] = Descendants(tree, path);
      if (first != last && !recursive) {
        return DeleteNotEmptyError(path);
      }
      tree.erase(first, last);
    }
    tree.erase(it);
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
    Tree& tree = state_->MutableTree();
    auto source = tree.find(from);
    if (source == tree.end()) {
      if (auto ancestor = FileAncestor(tree, from)) {
        return ParentIsFileError(what, *ancestor);
      }
      return RenameSourceMissingError(from, to);
    }
    if (from == to) return OkStatus();
    if (auto ancestor = FileAncestor(tree, to)) {
      return ParentIsFileError(what, *ancestor);
    }
    const bool moving_dir = IsDir(source->second);
    // A file moved onto a file continues the replaced file's history: to
    // whoever reads `to`, the rename is an overwrite.
    std::optional<Node> replaced_file;
    auto target = tree.find(to);
    if (target != tree.end()) {
      if (!overwrite) {
        return RenameTargetExistsError(from, to);
      }
      // An ancestor of `from` is a directory that holds `from`: not empty
      // (this is also what rename(2) reports).
      if (PathContains(to, from)) {
        return RenameTargetNotEmptyError(from, to);
      }
      if (!moving_dir && IsDir(target->second)) {
        return RenameTargetIsDirectoryError(from, to);
      }
      if (moving_dir && !IsDir(target->second)) {
        return RenameTargetIsFileError(from, to);
      }
      if (moving_dir && HasChildren(tree, to)) {
        return RenameTargetNotEmptyError(from, to);
      }
      // `to` is neither `from`, nor inside it, nor an ancestor of it, so
      // `source` stays valid.
      if (!moving_dir) replaced_file = std::move(target->second);
      tree.erase(target);
    }

    const int64_t now = NowMs();
    CreateParents(tree, to, now);
    // Re-key the source and its descendants; node handles move without copying.
    std::vector<Tree::node_type> moved;
    if (moving_dir) {
      auto [first, last] = Descendants(tree, from);
      while (first != last) moved.push_back(tree.extract(first++));
    }
    moved.push_back(tree.extract(source));
    for (Tree::node_type& node : moved) {
      node.key() = to + node.key().substr(from.size());
      tree.insert(std::move(node));
    }
    if (replaced_file) {
      Node& file = tree.find(to)->second;
      file.version = replaced_file->version + 1;
      file.created_ms = replaced_file->created_ms;
    }
    Touch(tree, ParentPath(from), now);
    Touch(tree, ParentPath(to), now);
    return OkStatus();
  }

  Result<GrepResult> Grep(std::string_view pattern, const GrepOptions& options) override {
    SnapshotGrepTree tree(state_->Share());
    return RunGrep(tree, pattern, options);
  }

  Result<std::unique_ptr<MaterializedView>> Materialize() override {
    SharedTree snapshot = state_->Share();
    TOOLVFS_ASSIGN_OR_RETURN(std::string dir, MakeMaterializedDirectory(display_root_));
    UniqueFd root(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    Status status = root ? WriteTree(root.get(), dir, *snapshot)
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

  // ----- Snapshots: O(1) references to the frozen map (top of the file) ---

  Result<std::string> Snapshot(std::optional<std::string_view> label) override {
    if (label) TOOLVFS_RETURN_IF_ERROR(CheckSnapshotLabel(*label));
    std::unique_lock lock(state_->mutex);
    const uint64_t number = ++state_->last_snapshot_number;
    state_->snapshots.emplace(
        number, StoredSnapshot{label ? std::optional<std::string>(*label) : std::nullopt, NowMs(), state_->tree});
    return std::to_string(number);
  }

  Status Restore(std::string_view id) override {
    std::shared_ptr<Tree> replaced;  // declared first, so freed after the lock is released
    std::unique_lock lock(state_->mutex);
    TOOLVFS_ASSIGN_OR_RETURN(SharedTree tree, FindSnapshot(id));
    // The live tree becomes the snapshot's map, shared and so frozen: the
    // next change copies it, and the snapshot stays as it was. Versions,
    // created and modified times come back with it. (The map was made
    // non-const; only MutableTree changes it, and only once it is ours.)
    replaced = std::exchange(state_->tree, std::const_pointer_cast<Tree>(std::move(tree)));
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
    SharedTree old_tree;
    SharedTree new_tree;
    {
      std::shared_lock lock(state_->mutex);
      TOOLVFS_ASSIGN_OR_RETURN(old_tree, FindSnapshot(from));
      if (to) {
        TOOLVFS_ASSIGN_OR_RETURN(new_tree, FindSnapshot(*to));
      } else {
        new_tree = state_->tree;
      }
    }
    // Both maps are frozen while we hold them: compare outside the lock.
    return DiffTrees(*old_tree, *new_tree);
  }

  Status DeleteSnapshot(std::string_view id) override {
    std::optional<uint64_t> number = ParseSnapshotId(id);
    SharedTree released;  // declared first, so freed after the lock is released
    std::unique_lock lock(state_->mutex);
    auto it = number ? state_->snapshots.find(*number) : state_->snapshots.end();
    if (it == state_->snapshots.end()) return SnapshotNotFoundError(id);
    released = std::move(it->second.tree);
    state_->snapshots.erase(it);
    return OkStatus();
  }

 private:
  // The map of snapshot `id`; NotFound naming it. Call with the mutex held.
  Result<SharedTree> FindSnapshot(std::string_view id) const {
    std::optional<uint64_t> number = ParseSnapshotId(id);
    if (!number) return SnapshotNotFoundError(id);
    auto it = state_->snapshots.find(*number);
    if (it == state_->snapshots.end()) return SnapshotNotFoundError(id);
    return it->second.tree;
  }

  // The content of the file at normalized `path`, shared: the caller copies
  // what it needs outside the lock. NotFound, NotDirectory (a parent is a
  // file) and IsDirectory worded for a read.
  Result<Content> FileContent(const std::string& path) {
    std::shared_lock lock(state_->mutex);
    const Tree& tree = *state_->tree;
    auto it = tree.find(path);
    if (it == tree.end()) return MissingOrParentIsFileError(tree, path, "read", "File");
    if (IsDir(it->second)) return IsDirectoryActionError("read", path);
    return it->second.content;
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
