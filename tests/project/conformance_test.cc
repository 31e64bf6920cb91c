// The one conformance suite of ProjectFiles (SPEC.md §2.2, §2.5): the same
// cases run against every backend, so no backend drifts from the contract of
// project_files.h. Error messages are compared in full where their wording is
// part of the contract (the path named, the reason given); every backend
// produces the same text.
//
// Backend-specific behaviour lives elsewhere (fs escapes and atomicity in
// fs_*_test.cc); the memory store's materialized-view details and the null
// store have their own suites at the end of this file.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <optional>
#include <regex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "core/status.h"
#include "project/fault_injecting_store.h"
#include "project/forwarding_store.h"
#include "project/memory_store.h"
#include "postgres_test_server.h"
#include "project/null_store.h"
#include "project/project_files.h"
#include "project/test_util.h"
#include "project/status_assertions.h"

namespace toolvfs {
namespace {


int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string AllBytes() {
  std::string bytes;
  for (int i = 0; i < 256; ++i) bytes += static_cast<char>(i);
  return bytes + std::string("\0\0tail\r\n", 8);
}

// ----- The parameterized suite ----------------------------------------------

class StoreConformance : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    Result<std::unique_ptr<ProjectFiles>> opened = OpenStore(StoreOptions{});
    ASSERT_TRUE(IsOk(opened)) << "cannot open the " << GetParam() << " store";
    store_ = std::move(*opened);
  }

  // A store of this backend. For fs every store of a test shares the
  // test's directory; for memory each call makes a new, empty store.
  // "forwarding_X" is the X store behind a ForwardingProjectFiles, and
  // "faults_X" behind a FaultInjectingProjectFiles with no fault set: both
  // must pass every test unchanged (the WithoutSymlinks view included).
  Result<std::unique_ptr<ProjectFiles>> OpenStore(const StoreOptions& options) {
    std::string_view backend = GetParam();
    const bool forwarding = backend.starts_with("forwarding_");
    const bool faults = backend.starts_with("faults_");
    if (forwarding || faults) backend.remove_prefix(backend.find('_') + 1);
    Result<std::unique_ptr<ProjectFiles>> opened = OpenBackend(backend, options);
    if (!opened.ok() || (!forwarding && !faults)) return opened;
    ProjectFiles& target = **opened;
    targets_.push_back(std::move(opened).value());
    if (forwarding) return std::unique_ptr<ProjectFiles>(std::make_unique<ForwardingProjectFiles>(target));
    return std::unique_ptr<ProjectFiles>(std::make_unique<FaultInjectingProjectFiles>(target));
  }

  Result<std::unique_ptr<ProjectFiles>> OpenBackend(std::string_view backend, const StoreOptions& options) {
    if (backend == "memory") return OpenProject("memory:test", options);
    if (backend == "sqlite") {
      // Every store of a test opens the same workspace of one file.
      if (!dir_) dir_.emplace();
      return OpenProject(SqliteUri(), options);
    }
    if (backend == "postgres") {
      // Every store of a test opens the same new workspace on the test server.
      if (postgres_workspace_.empty()) postgres_workspace_ = NewTestPostgresWorkspace();
      return OpenProject(PostgresUri(), options);
    }
    if (!dir_) dir_.emplace();
    return OpenProject("fs:" + dir_->path(), options);
  }

  bool IsFs() const { return GetParam().ends_with("fs"); }
  std::string SqliteUri() const { return "sqlite:" + dir_->path() + "/store.db#test"; }
  std::string PostgresUri() const { return TestPostgresUri() + "#" + postgres_workspace_; }

  // Writes each file; a path ending in '/' becomes an (empty) directory,
  // made by writing a file into it and deleting that again.
  void Populate(const std::vector<std::pair<std::string, std::string>>& entries) {
    for (const auto& [path, content] : entries) {
      if (path.ends_with('/')) {
        ASSERT_TRUE(IsOk(store_->Write(path + ".placeholder", "")));
        ASSERT_TRUE(IsOk(store_->Delete(path + ".placeholder")));
      } else {
        ASSERT_TRUE(IsOk(store_->Write(path, content))) << path;
      }
    }
  }

  // The content of `path`, or "<error: ...>".
  std::string Content(std::string_view path) {
    Result<std::string> content = store_->Read(path);
    return content.ok() ? *content : "<error: " + content.status().ToString() + ">";
  }

  bool Exists(std::string_view path) {
    Result<bool> exists = store_->Exists(path);
    EXPECT_TRUE(IsOk(exists)) << path;
    return exists.ok() && *exists;
  }

  // "name:kind" for each entry, or one "<error: ...>" element.
  std::vector<std::string> Listing(std::string_view path) {
    Result<std::vector<DirEntry>> entries = store_->ListDir(path);
    if (!entries.ok()) return {"<error: " + entries.status().ToString() + ">"};
    std::vector<std::string> names;
    for (const DirEntry& entry : *entries) {
      names.push_back(entry.name + ":" + std::string(EntryKindName(entry.kind)));
    }
    return names;
  }

  std::optional<TempDir> dir_;  // declared first: outlives the store
  std::string postgres_workspace_;
  // The stores behind wrappers (forwarding_*, faults_*): outlive them.
  std::vector<std::unique_ptr<ProjectFiles>> targets_;
  std::unique_ptr<ProjectFiles> store_;
};

using Entries = std::vector<std::string>;

// --- read / write -------------------------------------------------------------

TEST_P(StoreConformance, BinaryContentRoundTrips) {
  const std::string bytes = AllBytes();
  ASSERT_TRUE(IsOk(store_->Write("bin/all.bytes", bytes)));
  EXPECT_EQ(Content("bin/all.bytes"), bytes);
  Result<FileMetadata> metadata = store_->Metadata("bin/all.bytes");
  ASSERT_TRUE(IsOk(metadata));
  EXPECT_EQ(metadata->size, bytes.size());
}

TEST_P(StoreConformance, EmptyFileRoundTrips) {
  ASSERT_TRUE(IsOk(store_->Write("empty.txt", "")));
  EXPECT_EQ(Content("empty.txt"), "");
  EXPECT_EQ(store_->Metadata("empty.txt")->size, 0u);
}

TEST_P(StoreConformance, PathsAreNormalized) {
  ASSERT_TRUE(IsOk(store_->Write("./a//b/./c.txt/", "normalized")));
  EXPECT_EQ(Content("a/b/c.txt"), "normalized");
  EXPECT_EQ(Content("a/x/../b/c.txt"), "normalized");
  EXPECT_EQ(Listing("a/b/"), Entries{"c.txt:file"});
}

TEST_P(StoreConformance, OverwriteReplacesTheWholeContent) {
  ASSERT_TRUE(IsOk(store_->Write("a.txt", "a long first content")));
  ASSERT_TRUE(IsOk(store_->Write("a.txt", "short", WriteMode::kOverwrite)));
  EXPECT_EQ(Content("a.txt"), "short");
  ASSERT_TRUE(IsOk(store_->Write("a.txt", "")));  // overwrite is the default mode
  EXPECT_EQ(Content("a.txt"), "");
}

TEST_P(StoreConformance, CreateFailsIfAnythingExists) {
  ASSERT_TRUE(IsOk(store_->Write("a.txt", "original", WriteMode::kCreate)));
  EXPECT_EQ(Content("a.txt"), "original");
  EXPECT_TRUE(IsError(store_->Write("a.txt", "replacement", WriteMode::kCreate),
                      StatusCode::kAlreadyExists, "Cannot create 'a.txt': it already exists"));
  EXPECT_EQ(Content("a.txt"), "original");
  ASSERT_TRUE(IsOk(store_->Write("dir/inner.txt", "x")));
  EXPECT_TRUE(IsError(store_->Write("dir", "x", WriteMode::kCreate), StatusCode::kAlreadyExists,
                      "Cannot create 'dir': it already exists"));
  EXPECT_EQ(Listing("dir"), Entries{"inner.txt:file"});
}

TEST_P(StoreConformance, AppendToAMissingFileCreatesItAndItsParents) {
  ASSERT_TRUE(IsOk(store_->Write("logs/2026/app.log", "first\n", WriteMode::kAppend)));
  EXPECT_EQ(Content("logs/2026/app.log"), "first\n");
  EXPECT_EQ(Listing("logs"), Entries{"2026:dir"});
}

TEST_P(StoreConformance, AppendAddsToTheEnd) {
  ASSERT_TRUE(IsOk(store_->Write("a.bin", std::string("ab\0", 3))));
  ASSERT_TRUE(IsOk(store_->Write("a.bin", std::string("\0cd", 3), WriteMode::kAppend)));
  ASSERT_TRUE(IsOk(store_->Write("a.bin", "", WriteMode::kAppend)));
  ASSERT_TRUE(IsOk(store_->Write("a.bin", "e", WriteMode::kAppend)));
  EXPECT_EQ(Content("a.bin"), std::string("ab\0\0cde", 7));
}

TEST_P(StoreConformance, WriteCreatesParentDirectories) {
  ASSERT_TRUE(IsOk(store_->Write("a/b/c/d.txt", "deep")));
  EXPECT_EQ(Content("a/b/c/d.txt"), "deep");
  EXPECT_EQ(Listing(""), Entries{"a:dir"});
  EXPECT_EQ(Listing("a"), Entries{"b:dir"});
  EXPECT_EQ(Listing("a/b"), Entries{"c:dir"});
  EXPECT_EQ(store_->Metadata("a/b/c")->kind, EntryKind::kDirectory);
}

TEST_P(StoreConformance, WriteCreatesDeeplyNestedParents) {
  std::string path;
  for (int depth = 0; depth < 60; ++depth) path += "d" + std::to_string(depth) + "/";
  path += "leaf.txt";
  ASSERT_TRUE(IsOk(store_->Write(path, "deep")));
  EXPECT_EQ(*store_->Read(path), "deep");
}

TEST_P(StoreConformance, WriteUnderAFileFailsWithNotDirectory) {
  ASSERT_TRUE(IsOk(store_->Write("f.txt", "file")));
  for (WriteMode mode : {WriteMode::kOverwrite, WriteMode::kCreate, WriteMode::kAppend}) {
    EXPECT_TRUE(IsError(store_->Write("f.txt/child", "x", mode), StatusCode::kNotDirectory,
                        "Cannot write 'f.txt/child': 'f.txt' is a file"));
    EXPECT_TRUE(IsError(store_->Write("f.txt/a/b", "x", mode), StatusCode::kNotDirectory,
                        "Cannot write 'f.txt/a/b': 'f.txt' is a file"));
  }
  EXPECT_EQ(Content("f.txt"), "file");
  EXPECT_EQ(Listing(""), Entries{"f.txt:file"});
}

TEST_P(StoreConformance, WriteToADirectoryFailsWithIsDirectory) {
  ASSERT_TRUE(IsOk(store_->Write("dir/inner.txt", "x")));
  for (WriteMode mode : {WriteMode::kOverwrite, WriteMode::kAppend}) {
    EXPECT_TRUE(IsError(store_->Write("dir", "x", mode), StatusCode::kIsDirectory,
                        "Cannot write 'dir': it is a directory"));
    EXPECT_TRUE(IsError(store_->Write("dir/", "x", mode), StatusCode::kIsDirectory,
                        "Cannot write 'dir': it is a directory"));
  }
  EXPECT_EQ(Listing("dir"), Entries{"inner.txt:file"});
}

TEST_P(StoreConformance, WriteToTheRootIsInvalid) {
  for (WriteMode mode : {WriteMode::kOverwrite, WriteMode::kCreate, WriteMode::kAppend}) {
    for (std::string_view root : {"", ".", "a/.."}) {
      EXPECT_TRUE(IsError(store_->Write(root, "x", mode), StatusCode::kInvalidArgument,
                          "Cannot write '.': it is the project root"))
          << "'" << root << "'";
    }
  }
  EXPECT_EQ(Listing(""), Entries{});
}

TEST_P(StoreConformance, ReadOfAMissingFileIsNotFoundAndNamesThePath) {
  EXPECT_TRUE(IsError(store_->Read("missing.txt"), StatusCode::kNotFound,
                      "File 'missing.txt' does not exist"));
  EXPECT_TRUE(IsError(store_->Read("no/such/file.txt"), StatusCode::kNotFound,
                      "File 'no/such/file.txt' does not exist"));
}

TEST_P(StoreConformance, ReadOfADirectoryIsIsDirectory) {
  ASSERT_TRUE(IsOk(store_->Write("dir/inner.txt", "x")));
  EXPECT_TRUE(IsError(store_->Read("dir"), StatusCode::kIsDirectory,
                      "Cannot read 'dir': it is a directory"));
  EXPECT_TRUE(IsError(store_->Read(""), StatusCode::kIsDirectory,
                      "Cannot read '.': it is a directory"));
}

TEST_P(StoreConformance, ReadUnderAFileIsNotDirectory) {
  ASSERT_TRUE(IsOk(store_->Write("f.txt", "file")));
  EXPECT_TRUE(IsError(store_->Read("f.txt/x"), StatusCode::kNotDirectory,
                      "Cannot read 'f.txt/x': 'f.txt' is a file"));
}

TEST_P(StoreConformance, ReadLimitIsEnforcedAndNamed) {
  StoreOptions options;
  options.max_read_bytes = 1024;
  Result<std::unique_ptr<ProjectFiles>> opened = OpenStore(options);
  ASSERT_TRUE(IsOk(opened));
  ProjectFiles& limited = **opened;
  ASSERT_TRUE(IsOk(limited.Write("exact.bin", std::string(1024, 'x'))));
  ASSERT_TRUE(IsOk(limited.Write("big.bin", std::string(1025, 'x'))));
  Result<std::string> exact = limited.Read("exact.bin");
  ASSERT_TRUE(IsOk(exact));
  EXPECT_EQ(exact->size(), 1024u);
  EXPECT_TRUE(IsError(limited.Read("big.bin"), StatusCode::kTooLarge,
                      "Cannot read 'big.bin': 1025 bytes is larger than the read limit of 1 KiB"));
  // The limit is on reads only: the file is intact.
  EXPECT_EQ(limited.Metadata("big.bin")->size, 1025u);
}

TEST_P(StoreConformance, DefaultReadLimitIsTenMiB) {
  ASSERT_TRUE(IsOk(store_->Write("ten.bin", std::string(10 * 1024 * 1024, 'x'))));
  EXPECT_TRUE(IsOk(store_->Read("ten.bin")));
  ASSERT_TRUE(IsOk(store_->Write("ten.bin", "y", WriteMode::kAppend)));
  EXPECT_TRUE(IsError(store_->Read("ten.bin"), StatusCode::kTooLarge,
                      "Cannot read 'ten.bin': 10485761 bytes is larger than the read limit of 10 MiB"));
}

// --- ranged read ----------------------------------------------------------------

// "content|file_size" of a ranged read, or "<error: ...>".
std::string RangeOf(ProjectFiles& store, std::string_view path, uint64_t offset,
                    std::optional<uint64_t> length) {
  Result<FileRange> range = store.ReadRange(path, offset, length);
  if (!range.ok()) return "<error: " + range.status().ToString() + ">";
  return range->content + "|" + std::to_string(range->file_size);
}

TEST_P(StoreConformance, ReadRangeFromTheStartAndTheMiddle) {
  ASSERT_TRUE(IsOk(store_->Write("digits.txt", "0123456789")));
  EXPECT_EQ(RangeOf(*store_, "digits.txt", 0, std::nullopt), "0123456789|10");
  EXPECT_EQ(RangeOf(*store_, "digits.txt", 0, 4), "0123|10");
  EXPECT_EQ(RangeOf(*store_, "digits.txt", 3, 4), "3456|10");
  EXPECT_EQ(RangeOf(*store_, "digits.txt", 3, std::nullopt), "3456789|10");
  EXPECT_EQ(RangeOf(*store_, "./digits.txt", 9, 1), "9|10");
}

TEST_P(StoreConformance, ReadRangePastTheEndIsShortOrEmpty) {
  ASSERT_TRUE(IsOk(store_->Write("digits.txt", "0123456789")));
  EXPECT_EQ(RangeOf(*store_, "digits.txt", 8, 100), "89|10");  // length past the end
  EXPECT_EQ(RangeOf(*store_, "digits.txt", 8, UINT64_MAX), "89|10");
  EXPECT_EQ(RangeOf(*store_, "digits.txt", 10, std::nullopt), "|10");  // offset at the end
  EXPECT_EQ(RangeOf(*store_, "digits.txt", 11, 5), "|10");              // past it
  EXPECT_EQ(RangeOf(*store_, "digits.txt", UINT64_MAX, UINT64_MAX), "|10");
  EXPECT_EQ(RangeOf(*store_, "digits.txt", 4, 0), "|10");  // length 0
  ASSERT_TRUE(IsOk(store_->Write("empty.txt", "")));
  EXPECT_EQ(RangeOf(*store_, "empty.txt", 0, std::nullopt), "|0");
}

TEST_P(StoreConformance, ReadRangeKeepsBinaryBytes) {
  const std::string bytes = AllBytes();
  ASSERT_TRUE(IsOk(store_->Write("all.bin", bytes)));
  Result<FileRange> range = store_->ReadRange("all.bin", 250, 10);
  ASSERT_TRUE(IsOk(range));
  EXPECT_EQ(range->content, bytes.substr(250, 10));
  EXPECT_EQ(range->file_size, bytes.size());
}

TEST_P(StoreConformance, ReadRangeLimitAppliesToTheBytesReturned) {
  StoreOptions options;
  options.max_read_bytes = 1024;
  Result<std::unique_ptr<ProjectFiles>> opened = OpenStore(options);
  ASSERT_TRUE(IsOk(opened));
  ProjectFiles& limited = **opened;
  std::string big;
  for (int i = 0; i < 3000; ++i) big += static_cast<char>('a' + i % 26);
  ASSERT_TRUE(IsOk(limited.Write("big.txt", big)));
  // The whole file is too large, with or without a range that covers it.
  const std::string too_large =
      "Cannot read 'big.txt': 3000 bytes from offset 0 is larger than the read limit of 1 KiB; "
      "read it in parts with offset and length";
  EXPECT_TRUE(IsError(limited.ReadRange("big.txt", 0, std::nullopt), StatusCode::kTooLarge, too_large));
  EXPECT_TRUE(IsError(limited.ReadRange("big.txt", 0, 3000), StatusCode::kTooLarge, too_large));
  EXPECT_TRUE(IsError(limited.ReadRange("big.txt", 1000, 1025), StatusCode::kTooLarge,
                      "Cannot read 'big.txt': 1025 bytes from offset 1000 is larger than the read "
                      "limit of 1 KiB; read it in parts with offset and length"));
  // In parts of at most the limit it reads, and so does a rest that fits.
  std::string reassembled;
  for (uint64_t offset = 0; offset < big.size(); offset += 1024) {
    Result<FileRange> part = limited.ReadRange("big.txt", offset, 1024);
    ASSERT_TRUE(IsOk(part)) << offset;
    EXPECT_EQ(part->file_size, 3000u);
    reassembled += part->content;
  }
  EXPECT_EQ(reassembled, big);
  EXPECT_EQ(RangeOf(limited, "big.txt", 2000, std::nullopt), big.substr(2000) + "|3000");
  // A length past the end counts what is there, not what was asked.
  EXPECT_EQ(RangeOf(limited, "big.txt", 2990, 1 << 20), big.substr(2990) + "|3000");
}

TEST_P(StoreConformance, ReadRangeErrors) {
  ASSERT_TRUE(IsOk(store_->Write("dir/f.txt", "file")));
  EXPECT_TRUE(IsError(store_->ReadRange("dir", 0, 1), StatusCode::kIsDirectory,
                      "Cannot read 'dir': it is a directory"));
  EXPECT_TRUE(IsError(store_->ReadRange("", 0, std::nullopt), StatusCode::kIsDirectory,
                      "Cannot read '.': it is a directory"));
  EXPECT_TRUE(IsError(store_->ReadRange("missing.txt", 0, 1), StatusCode::kNotFound,
                      "File 'missing.txt' does not exist"));
  EXPECT_TRUE(IsError(store_->ReadRange("dir/f.txt/x", 0, 1), StatusCode::kNotDirectory,
                      "Cannot read 'dir/f.txt/x': 'dir/f.txt' is a file"));
  EXPECT_TRUE(IsError(store_->ReadRange("../escape.txt", 0, 1), StatusCode::kPermissionDenied));
  EXPECT_TRUE(IsError(store_->ReadRange("dir/../../escape.txt", 5, std::nullopt),
                      StatusCode::kPermissionDenied));
  EXPECT_TRUE(IsError(store_->ReadRange("/etc/passwd", 0, 1), StatusCode::kInvalidArgument));
  if (IsFs()) {
    // Opened the way Read opens: a symlink inside is followed, one that
    // leaves the root is denied, a FIFO is refused (it could block).
    MakeSymlink("dir/f.txt", dir_->Join("inside"));
    EXPECT_EQ(RangeOf(*store_, "inside", 1, 2), "il|4");
    TempDir outside;
    WriteRealFile(outside.Join("secret.txt"), "secret");
    MakeSymlink(outside.Join("secret.txt"), dir_->Join("escape"));
    EXPECT_TRUE(IsError(store_->ReadRange("escape", 0, 1), StatusCode::kPermissionDenied,
                        "Access denied: path 'escape' leads outside the project root through a symlink"));
    ASSERT_EQ(::mkfifo(dir_->Join("pipe").c_str(), 0600), 0);
    EXPECT_TRUE(IsError(store_->ReadRange("pipe", 0, 1), StatusCode::kPermissionDenied,
                        "Access denied: cannot read 'pipe': it is a FIFO; FIFOs, sockets and "
                        "device files are refused"));
  }
}

// --- exists / list / metadata -------------------------------------------------

TEST_P(StoreConformance, ExistsIsTrueFalseOrAnError) {
  ASSERT_TRUE(IsOk(store_->Write("dir/f.txt", "x")));
  EXPECT_TRUE(Exists(""));
  EXPECT_TRUE(Exists("."));
  EXPECT_TRUE(Exists("dir"));
  EXPECT_TRUE(Exists("dir/"));
  EXPECT_TRUE(Exists("dir/f.txt"));
  EXPECT_FALSE(Exists("missing"));
  EXPECT_FALSE(Exists("dir/missing/deeper"));
  EXPECT_FALSE(Exists("dir/f.txt/under-a-file"));
  EXPECT_TRUE(IsError(store_->Exists("../dir"), StatusCode::kPermissionDenied));
  EXPECT_TRUE(IsError(store_->Exists("dir/../../x"), StatusCode::kPermissionDenied));
  EXPECT_TRUE(IsError(store_->Exists("/dir"), StatusCode::kInvalidArgument));
}

TEST_P(StoreConformance, ListIsSortedBytewiseWithKinds) {
  Populate({{"b0", "x"},
            {"b.txt", "x"},
            {"a", "x"},
            {"B", "x"},
            {"b/inner.txt", "x"},
            {"\xC3\xA9t\xC3\xA9.txt", "x"},  // "été.txt": bytes above 0x7F sort last
            {"empty/", ""}});
  EXPECT_EQ(Listing(""), (Entries{"B:file", "a:file", "b:dir", "b.txt:file", "b0:file",
                                  "empty:dir", "\xC3\xA9t\xC3\xA9.txt:file"}));
  EXPECT_EQ(Listing("b"), Entries{"inner.txt:file"});
  EXPECT_EQ(Listing("empty"), Entries{});
}

TEST_P(StoreConformance, ListShowsImmediateEntriesOnly) {
  Populate({{"src/a/deep/x.c", "x"}, {"src/a.c", "x"}, {"src/a-b.c", "x"}, {"src/b/y.c", "x"}});
  EXPECT_EQ(Listing("src"), (Entries{"a:dir", "a-b.c:file", "a.c:file", "b:dir"}));
  EXPECT_EQ(Listing("src/a"), Entries{"deep:dir"});
}

TEST_P(StoreConformance, ListOfAnEmptyProjectIsEmpty) { EXPECT_EQ(Listing(""), Entries{}); }

TEST_P(StoreConformance, ListErrors) {
  ASSERT_TRUE(IsOk(store_->Write("f.txt", "x")));
  EXPECT_TRUE(IsError(store_->ListDir("f.txt"), StatusCode::kNotDirectory,
                      "Cannot list 'f.txt': it is a file"));
  EXPECT_TRUE(IsError(store_->ListDir("nope"), StatusCode::kNotFound,
                      "Directory 'nope' does not exist"));
  EXPECT_TRUE(IsError(store_->ListDir("f.txt/x"), StatusCode::kNotDirectory,
                      "Cannot list 'f.txt/x': 'f.txt' is a file"));
}

TEST_P(StoreConformance, MetadataOfAFile) {
  const int64_t before = NowMs();
  ASSERT_TRUE(IsOk(store_->Write("dir/a.txt", "hello")));
  Result<FileMetadata> metadata = store_->Metadata("dir/a.txt");
  ASSERT_TRUE(IsOk(metadata));
  EXPECT_EQ(metadata->kind, EntryKind::kFile);
  EXPECT_EQ(metadata->size, 5u);
  EXPECT_GE(metadata->modified_ms, before - 5000);
  EXPECT_LE(metadata->modified_ms, NowMs() + 5000);
  const std::string stamp = FormatTimestamp(metadata->modified_ms);
  EXPECT_TRUE(std::regex_match(stamp, std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)")))
      << stamp;
}

TEST_P(StoreConformance, MetadataOfADirectory) {
  const int64_t before = NowMs();
  ASSERT_TRUE(IsOk(store_->Write("dir/a.txt", "hello")));
  for (std::string_view path : {"dir", "dir/", ""}) {
    Result<FileMetadata> metadata = store_->Metadata(path);
    ASSERT_TRUE(IsOk(metadata)) << path;
    EXPECT_EQ(metadata->kind, EntryKind::kDirectory) << path;
    EXPECT_EQ(metadata->size, 0u) << path;
  }
  Result<FileMetadata> dir = store_->Metadata("dir");
  EXPECT_GE(dir->modified_ms, before - 5000);
  EXPECT_LE(dir->modified_ms, NowMs() + 5000);
}

TEST_P(StoreConformance, MetadataErrors) {
  ASSERT_TRUE(IsOk(store_->Write("f.txt", "x")));
  EXPECT_TRUE(IsError(store_->Metadata("missing"), StatusCode::kNotFound,
                      "Path 'missing' does not exist"));
  EXPECT_TRUE(IsError(store_->Metadata("f.txt/x"), StatusCode::kNotDirectory,
                      "Cannot get metadata of 'f.txt/x': 'f.txt' is a file"));
}

// Version and created time are kept by the stores that keep history
// (memory, sqlite), and left empty by those that cannot (fs: a real
// directory has neither).
TEST_P(StoreConformance, MetadataHasVersionAndCreatedTimeOnlyWhereTheStoreKeepsThem) {
  const int64_t before = NowMs();
  ASSERT_TRUE(IsOk(store_->Write("dir/a.txt", "one")));
  ASSERT_TRUE(IsOk(store_->Write("dir/a.txt", "two", WriteMode::kAppend)));
  Result<FileMetadata> file = store_->Metadata("dir/a.txt");
  Result<FileMetadata> dir = store_->Metadata("dir");
  ASSERT_TRUE(IsOk(file));
  ASSERT_TRUE(IsOk(dir));
  EXPECT_EQ(dir->version, std::nullopt);  // no store gives a directory a version
  if (IsFs()) {
    EXPECT_EQ(file->version, std::nullopt);
    EXPECT_EQ(file->created_ms, std::nullopt);
    EXPECT_EQ(dir->created_ms, std::nullopt);
    return;
  }
  EXPECT_EQ(file->version, 2u);
  ASSERT_TRUE(file->created_ms.has_value());
  EXPECT_GE(*file->created_ms, before);
  EXPECT_LE(*file->created_ms, file->modified_ms);
  ASSERT_TRUE(dir->created_ms.has_value());
  EXPECT_GE(*dir->created_ms, before);
}

// --- delete -------------------------------------------------------------------

TEST_P(StoreConformance, DeleteAFileKeepsItsDirectory) {
  Populate({{"dir/a.txt", "a"}, {"dir/b.txt", "b"}});
  ASSERT_TRUE(IsOk(store_->Delete("dir/a.txt")));
  EXPECT_FALSE(Exists("dir/a.txt"));
  EXPECT_EQ(Listing("dir"), Entries{"b.txt:file"});
  ASSERT_TRUE(IsOk(store_->Delete("dir/b.txt", /*recursive=*/true)));  // recursive on a file is fine
  EXPECT_EQ(Listing("dir"), Entries{});
}

TEST_P(StoreConformance, DeleteOfANonEmptyDirectoryNeedsRecursive) {
  Populate({{"src/a.c", "a"}, {"src/sub/b.c", "b"}});
  EXPECT_TRUE(IsError(store_->Delete("src"), StatusCode::kNotEmpty,
                      "Cannot delete 'src': directory is not empty (pass recursive to delete it "
                      "with its contents)"));
  EXPECT_EQ(Listing("src"), (Entries{"a.c:file", "sub:dir"}));
  EXPECT_EQ(Content("src/a.c"), "a");
  EXPECT_EQ(Content("src/sub/b.c"), "b");
}

TEST_P(StoreConformance, RecursiveDeleteRemovesTheSubtreeOnly) {
  Populate({{"src/a.c", "a"},
            {"src/sub/b.c", "b"},
            {"src/sub/empty/", ""},
            {"src.txt", "sibling"},
            {"src-gen/x.c", "sibling"},
            {"src0/y.c", "sibling"}});
  ASSERT_TRUE(IsOk(store_->Delete("src", /*recursive=*/true)));
  EXPECT_FALSE(Exists("src"));
  EXPECT_FALSE(Exists("src/sub/b.c"));
  EXPECT_EQ(Listing(""), (Entries{"src-gen:dir", "src.txt:file", "src0:dir"}));
  EXPECT_EQ(Content("src.txt"), "sibling");
  EXPECT_EQ(Content("src-gen/x.c"), "sibling");
  EXPECT_EQ(Content("src0/y.c"), "sibling");
}

TEST_P(StoreConformance, DeleteOfAnEmptyDirectoryNeedsNoRecursive) {
  Populate({{"dir/empty/", ""}});
  ASSERT_TRUE(IsOk(store_->Delete("dir/empty")));
  EXPECT_EQ(Listing("dir"), Entries{});
  ASSERT_TRUE(IsOk(store_->Delete("dir/")));
  EXPECT_EQ(Listing(""), Entries{});
}

TEST_P(StoreConformance, DeleteErrors) {
  ASSERT_TRUE(IsOk(store_->Write("f.txt", "x")));
  EXPECT_TRUE(IsError(store_->Delete("missing"), StatusCode::kNotFound,
                      "Path 'missing' does not exist"));
  EXPECT_TRUE(IsError(store_->Delete("missing", true), StatusCode::kNotFound,
                      "Path 'missing' does not exist"));
  EXPECT_TRUE(IsError(store_->Delete("f.txt/x"), StatusCode::kNotDirectory,
                      "Cannot delete 'f.txt/x': 'f.txt' is a file"));
  for (std::string_view root : {"", ".", "f.txt/.."}) {
    for (bool recursive : {false, true}) {
      EXPECT_TRUE(IsError(store_->Delete(root, recursive), StatusCode::kInvalidArgument,
                          "Cannot delete '.': it is the project root"));
    }
  }
  EXPECT_EQ(Content("f.txt"), "x");
}

// --- rename -------------------------------------------------------------------

TEST_P(StoreConformance, RenameAFile) {
  const std::string bytes = AllBytes();
  Populate({{"a.bin", bytes}});
  ASSERT_TRUE(IsOk(store_->Rename("a.bin", "b.bin")));
  EXPECT_FALSE(Exists("a.bin"));
  EXPECT_EQ(Content("b.bin"), bytes);
}

TEST_P(StoreConformance, RenameADirectoryWithItsContents) {
  Populate({{"src/a.c", "a"},
            {"src/sub/b.c", "b"},
            {"src/empty/", ""},
            {"src.txt", "sibling"},
            {"src-gen/x.c", "sibling"}});
  ASSERT_TRUE(IsOk(store_->Rename("src", "lib/moved")));  // creates "lib"
  EXPECT_FALSE(Exists("src"));
  EXPECT_EQ(Listing("lib"), Entries{"moved:dir"});
  EXPECT_EQ(Listing("lib/moved"), (Entries{"a.c:file", "empty:dir", "sub:dir"}));
  EXPECT_EQ(Content("lib/moved/a.c"), "a");
  EXPECT_EQ(Content("lib/moved/sub/b.c"), "b");
  EXPECT_EQ(Listing(""), (Entries{"lib:dir", "src-gen:dir", "src.txt:file"}));
  EXPECT_EQ(Content("src-gen/x.c"), "sibling");
}

TEST_P(StoreConformance, RenameCreatesParentsOfTheDestination) {
  Populate({{"a.txt", "a"}});
  ASSERT_TRUE(IsOk(store_->Rename("a.txt", "x/y/z/a.txt")));
  EXPECT_EQ(Content("x/y/z/a.txt"), "a");
  EXPECT_EQ(Listing("x"), Entries{"y:dir"});
  EXPECT_EQ(Listing(""), Entries{"x:dir"});
}

TEST_P(StoreConformance, RenameOntoAnExistingFileNeedsOverwrite) {
  Populate({{"a.txt", "from a"}, {"b.txt", "from b"}});
  EXPECT_TRUE(IsError(store_->Rename("a.txt", "b.txt"), StatusCode::kAlreadyExists,
                      "Cannot rename 'a.txt' to 'b.txt': 'b.txt' already exists (pass overwrite "
                      "to replace it)"));
  EXPECT_EQ(Content("a.txt"), "from a");
  EXPECT_EQ(Content("b.txt"), "from b");
  ASSERT_TRUE(IsOk(store_->Rename("a.txt", "b.txt", /*overwrite=*/true)));
  EXPECT_FALSE(Exists("a.txt"));
  EXPECT_EQ(Content("b.txt"), "from a");
}

TEST_P(StoreConformance, RenameOverwriteRules) {
  Populate({{"f.txt", "file"},
            {"g.txt", "other"},
            {"dir/inner.txt", "inner"},
            {"empty/", ""},
            {"full/x.txt", "x"}});
  EXPECT_TRUE(IsError(store_->Rename("dir", "empty"), StatusCode::kAlreadyExists,
                      "Cannot rename 'dir' to 'empty': 'empty' already exists (pass overwrite to "
                      "replace it)"));
  EXPECT_TRUE(IsError(store_->Rename("f.txt", "dir", true), StatusCode::kIsDirectory,
                      "Cannot rename 'f.txt' to 'dir': 'dir' is a directory"));
  EXPECT_TRUE(IsError(store_->Rename("f.txt", "empty", true), StatusCode::kIsDirectory,
                      "Cannot rename 'f.txt' to 'empty': 'empty' is a directory"));
  EXPECT_TRUE(IsError(store_->Rename("dir", "g.txt", true), StatusCode::kNotDirectory,
                      "Cannot rename 'dir' to 'g.txt': 'g.txt' is a file"));
  EXPECT_TRUE(IsError(store_->Rename("dir", "full", true), StatusCode::kNotEmpty,
                      "Cannot rename 'dir' to 'full': directory 'full' is not empty"));
  // Nothing moved.
  EXPECT_EQ(Listing(""), (Entries{"dir:dir", "empty:dir", "f.txt:file", "full:dir", "g.txt:file"}));
  EXPECT_EQ(Content("f.txt"), "file");
  EXPECT_EQ(Content("g.txt"), "other");
  EXPECT_EQ(Content("full/x.txt"), "x");
  // A directory replaces an empty directory.
  ASSERT_TRUE(IsOk(store_->Rename("dir", "empty", true)));
  EXPECT_FALSE(Exists("dir"));
  EXPECT_EQ(Content("empty/inner.txt"), "inner");
}

TEST_P(StoreConformance, RenameIntoItselfIsInvalid) {
  Populate({{"dir/sub/a.txt", "a"}});
  EXPECT_TRUE(IsError(store_->Rename("dir", "dir/sub/dir"), StatusCode::kInvalidArgument,
                      "Cannot rename 'dir' to 'dir/sub/dir': the destination is inside the "
                      "source"));
  EXPECT_TRUE(IsError(store_->Rename("dir", "dir/new", true), StatusCode::kInvalidArgument,
                      "Cannot rename 'dir' to 'dir/new': the destination is inside the source"));
  EXPECT_EQ(Content("dir/sub/a.txt"), "a");
  EXPECT_EQ(Listing("dir"), Entries{"sub:dir"});
}

// An ancestor of the source is a directory holding the source: not empty
// (what rename(2) reports too), whatever the source's kind.
TEST_P(StoreConformance, RenameOntoAnAncestorFails) {
  Populate({{"dir/sub/a.txt", "a"}});
  EXPECT_TRUE(IsError(store_->Rename("dir/sub", "dir"), StatusCode::kAlreadyExists));
  EXPECT_TRUE(IsError(store_->Rename("dir/sub", "dir", true), StatusCode::kNotEmpty));
  EXPECT_TRUE(IsError(store_->Rename("dir/sub/a.txt", "dir", true), StatusCode::kNotEmpty));
  EXPECT_EQ(Content("dir/sub/a.txt"), "a");
  EXPECT_EQ(Listing("dir"), Entries{"sub:dir"});
}

TEST_P(StoreConformance, RenameErrors) {
  Populate({{"a.txt", "a"}, {"f.txt", "f"}});
  EXPECT_TRUE(IsError(store_->Rename("nope", "x"), StatusCode::kNotFound,
                      "Cannot rename 'nope' to 'x': 'nope' does not exist"));
  EXPECT_TRUE(IsError(store_->Rename("nope", "x", true), StatusCode::kNotFound));
  EXPECT_TRUE(IsError(store_->Rename("a.txt", "f.txt/x"), StatusCode::kNotDirectory,
                      "Cannot rename 'a.txt' to 'f.txt/x': 'f.txt' is a file"));
  EXPECT_TRUE(IsError(store_->Rename("", "x"), StatusCode::kInvalidArgument,
                      "Cannot rename '.' to 'x': the project root cannot be moved or replaced"));
  EXPECT_TRUE(IsError(store_->Rename("a.txt", "."), StatusCode::kInvalidArgument,
                      "Cannot rename 'a.txt' to '.': the project root cannot be moved or replaced"));
  EXPECT_TRUE(IsError(store_->Rename("a.txt", "", true), StatusCode::kInvalidArgument));
  EXPECT_EQ(Listing(""), (Entries{"a.txt:file", "f.txt:file"}));
}

TEST_P(StoreConformance, RenameOntoItselfChangesNothing) {
  Populate({{"a.txt", "a"}, {"dir/x.txt", "x"}});
  EXPECT_TRUE(IsOk(store_->Rename("a.txt", "a.txt")));
  EXPECT_TRUE(IsOk(store_->Rename("a.txt", "./dir/../a.txt", true)));
  EXPECT_TRUE(IsOk(store_->Rename("dir", "dir/", true)));
  EXPECT_EQ(Content("a.txt"), "a");
  EXPECT_EQ(Content("dir/x.txt"), "x");
  EXPECT_EQ(Listing(""), (Entries{"a.txt:file", "dir:dir"}));
}

// --- invalid paths ------------------------------------------------------------

TEST_P(StoreConformance, InvalidAndEscapingPathsAreRejectedByEveryOperation) {
  ASSERT_TRUE(IsOk(store_->Write("ok.txt", "ok")));
  struct Case {
    std::string path;
    StatusCode code;
  };
  const std::vector<Case> cases = {
      {"/etc/passwd", StatusCode::kInvalidArgument},
      {std::string("a\0b", 3), StatusCode::kInvalidArgument},
      {"a\x01" "b", StatusCode::kInvalidArgument},
      {"dir/\n", StatusCode::kInvalidArgument},
      {"a\x7F", StatusCode::kInvalidArgument},
      {"bad\xFF.txt", StatusCode::kInvalidArgument},
      {"\xC0\xAF", StatusCode::kInvalidArgument},  // overlong '/'
      {"../toolvfs-conformance-escape.txt", StatusCode::kPermissionDenied},
      {"a/../../toolvfs-conformance-escape.txt", StatusCode::kPermissionDenied},
      {"..", StatusCode::kPermissionDenied},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(::testing::Message() << "path " << ::testing::PrintToString(c.path));
    EXPECT_TRUE(IsError(store_->Read(c.path), c.code));
    EXPECT_TRUE(IsError(store_->ReadRange(c.path, 0, std::nullopt), c.code));
    for (WriteMode mode : {WriteMode::kOverwrite, WriteMode::kCreate, WriteMode::kAppend}) {
      EXPECT_TRUE(IsError(store_->Write(c.path, "x", mode), c.code));
    }
    EXPECT_TRUE(IsError(store_->Exists(c.path), c.code));
    EXPECT_TRUE(IsError(store_->ListDir(c.path), c.code));
    EXPECT_TRUE(IsError(store_->Metadata(c.path), c.code));
    EXPECT_TRUE(IsError(store_->Delete(c.path), c.code));
    EXPECT_TRUE(IsError(store_->Delete(c.path, true), c.code));
    EXPECT_TRUE(IsError(store_->Rename(c.path, "new.txt"), c.code));
    EXPECT_TRUE(IsError(store_->Rename("ok.txt", c.path), c.code));
    EXPECT_TRUE(IsError(store_->Rename("ok.txt", c.path, true), c.code));
  }
  EXPECT_EQ(Listing(""), Entries{"ok.txt:file"});
  EXPECT_EQ(Content("ok.txt"), "ok");
  if (IsFs()) {
    EXPECT_FALSE(RealPathExists(dir_->path() + "/../toolvfs-conformance-escape.txt"));
  }
}

TEST_P(StoreConformance, BadPathMessagesNameThePath) {
  Status invalid = store_->Read("/etc/passwd").status();
  EXPECT_NE(invalid.message().find("'/etc/passwd'"), std::string::npos) << invalid.message();
  Status escape = store_->Write("../x.txt", "x");
  EXPECT_NE(escape.message().find("'../x.txt'"), std::string::npos) << escape.message();
  EXPECT_NE(escape.message().find("leaves the project root"), std::string::npos);
}

// --- ResolvePath ----------------------------------------------------------------

TEST_P(StoreConformance, ResolvePathNormalizesAndKeepsMissingTails) {
  Populate({{"dir/f.txt", "f"}});
  struct Case {
    std::string path, resolved;
  };
  for (const Case& c : {Case{"", ""}, Case{".", ""}, Case{"dir/./f.txt", "dir/f.txt"},
                        Case{"dir//f.txt/", "dir/f.txt"}, Case{"dir/../dir/f.txt", "dir/f.txt"},
                        Case{"dir", "dir"}, Case{"dir/new.txt", "dir/new.txt"},
                        Case{"missing/deeper/x.txt", "missing/deeper/x.txt"},
                        // The operation itself says that a parent is a file.
                        Case{"dir/f.txt/below", "dir/f.txt/below"}}) {
    Result<std::string> resolved = store_->ResolvePath(c.path);
    ASSERT_TRUE(IsOk(resolved)) << c.path;
    EXPECT_EQ(*resolved, c.resolved) << c.path;
  }
  EXPECT_TRUE(IsError(store_->ResolvePath("../x"), StatusCode::kPermissionDenied));
  EXPECT_TRUE(IsError(store_->ResolvePath("/etc/passwd"), StatusCode::kInvalidArgument));
  EXPECT_EQ(Listing(""), Entries{"dir:dir"});  // resolving creates nothing
}

// --- ReadAuthorized ---------------------------------------------------------------

TEST_P(StoreConformance, ReadAuthorizedAsksFirstAndReadsOnlyWhenAllowed) {
  Populate({{"dir/f.txt", "hello"}});
  std::vector<std::string> asked;
  auto allow = [&](std::string_view resolved) {
    asked.emplace_back(resolved);
    return OkStatus();
  };
  Result<FileRange> whole = store_->ReadAuthorized("dir/./f.txt", std::nullopt, allow);
  ASSERT_TRUE(IsOk(whole));
  EXPECT_EQ(whole->content, "hello");
  EXPECT_EQ(whole->file_size, 5u);
  Result<FileRange> part = store_->ReadAuthorized("dir/f.txt", ProjectFiles::ByteRange{1, 3}, allow);
  ASSERT_TRUE(IsOk(part));
  EXPECT_EQ(part->content, "ell");
  EXPECT_EQ(part->file_size, 5u);
  EXPECT_EQ(asked, (std::vector<std::string>{"dir/f.txt", "dir/f.txt"}));

  // A refusal is returned as is, nothing read; and it comes before the
  // store says anything about the path (a denied missing file is denied).
  auto deny = [&](std::string_view resolved) {
    asked.emplace_back(resolved);
    return Status(StatusCode::kPermissionDenied, "no");
  };
  asked.clear();
  EXPECT_TRUE(IsError(store_->ReadAuthorized("dir/f.txt", std::nullopt, deny), StatusCode::kPermissionDenied));
  EXPECT_TRUE(IsError(store_->ReadAuthorized("missing.txt", std::nullopt, deny), StatusCode::kPermissionDenied));
  EXPECT_TRUE(IsError(store_->ReadAuthorized("dir", std::nullopt, deny), StatusCode::kPermissionDenied));
  EXPECT_EQ(asked, (std::vector<std::string>{"dir/f.txt", "missing.txt", "dir"}));
  // Allowed, the store's own errors follow.
  EXPECT_TRUE(IsError(store_->ReadAuthorized("missing.txt", std::nullopt, allow), StatusCode::kNotFound));
  EXPECT_TRUE(IsError(store_->ReadAuthorized("dir", std::nullopt, allow), StatusCode::kIsDirectory));
  EXPECT_TRUE(IsError(store_->ReadAuthorized("../x", std::nullopt, allow), StatusCode::kPermissionDenied));
}

// Symlinks inside the root are followed to where an operation lands. Only
// the fs backend has symlinks, so this suite runs on it alone. Escapes:
// fs_escape_test.cc.
class StoreWithSymlinks : public StoreConformance {};

TEST_P(StoreWithSymlinks, ResolvePathFollowsSymlinksInsideTheRoot) {
  Populate({{"real/sub/f.txt", "f"}});
  MakeSymlink("real", dir_->Join("link"));
  MakeSymlink("sub/f.txt", dir_->Join("real/file_link"));
  MakeSymlink(dir_->Join("real/sub"), dir_->Join("absolute"));
  MakeSymlink("sub/new.txt", dir_->Join("real/dangling"));
  struct Case {
    std::string path, resolved;
  };
  for (const Case& c : {Case{"link", "real"}, Case{"link/sub/f.txt", "real/sub/f.txt"},
                        Case{"link/file_link", "real/sub/f.txt"}, Case{"absolute/f.txt", "real/sub/f.txt"},
                        Case{"link/new/deeper.txt", "real/new/deeper.txt"},
                        // An overwrite through a dangling link creates its target.
                        Case{"link/dangling", "real/sub/new.txt"}, Case{"real/file_link/x", "real/sub/f.txt/x"}}) {
    Result<std::string> resolved = store_->ResolvePath(c.path);
    ASSERT_TRUE(IsOk(resolved)) << c.path;
    EXPECT_EQ(*resolved, c.resolved) << c.path;
  }
  ASSERT_TRUE(IsOk(store_->Write("link/dangling", "new")));
  EXPECT_EQ(Content("real/sub/new.txt"), "new");
}

// --- grep ---------------------------------------------------------------------

class StoreGrepConformance : public StoreConformance {
 protected:
  void SetUp() override {
    StoreConformance::SetUp();
    if (HasFatalFailure()) return;
    Populate({{"src/main.cc", "#include <cstdio>\nint main() {\n  // TODO: parse args\n  return 0;\n}\n"},
              {"src/util.h", "// TODO: document\ninline int Twice(int x) { return 2 * x; }\n"},
              {"docs/notes.md", "todo list\n- nothing\n"},
              {"bin/blob.dat", std::string("TODO\0binary\n", 12)},
              {".git/config", "TODO in git\n"},
              {".gitignore", "build/\n"},
              {"build/out.cc", "// TODO generated\n"}});
  }

  Result<GrepResult> Grep(std::string_view pattern, const GrepOptions& options = {}) {
    return store_->Grep(pattern, options);
  }

  static GrepFileMatches File(std::string path, std::vector<GrepLine> lines) {
    return GrepFileMatches{std::move(path), std::move(lines)};
  }
  static GrepLine Match(uint64_t number, std::string content) {
    return GrepLine{number, std::move(content), true};
  }
  static GrepLine Context(uint64_t number, std::string content) {
    return GrepLine{number, std::move(content), false};
  }
};

TEST_P(StoreGrepConformance, FindsMatchesSortedByPathSkippingGitBinaryAndIgnored) {
  Result<GrepResult> result = Grep("TODO");
  ASSERT_TRUE(IsOk(result));
  EXPECT_EQ(result->matches, (std::vector<GrepFileMatches>{
                                 File("src/main.cc", {Match(3, "  // TODO: parse args")}),
                                 File("src/util.h", {Match(1, "// TODO: document")})}));
  EXPECT_FALSE(result->truncated);
}

// Files larger than the binary probe: a NUL within the first 8 KiB makes a
// file binary however late its matches are; a NUL after it does not, and
// matches anywhere in a large file are found (backends may read the probe
// first and the rest after).
TEST_P(StoreGrepConformance, BinaryProbeCoversTheFirstEightKiBOnly) {
  std::string filler(20000, 'x');
  for (size_t i = 100; i < filler.size(); i += 101) filler[i] = '\n';
  std::string early_nul = "head\n" + std::string(1, '\0') + filler + "\nneedle early\n";
  std::string late_nul = filler + std::string(1, '\0') + "\nneedle late\n";
  std::string boundary = std::string(8191, 'y') + "\nneedle at the probe boundary\n" + filler;
  Populate({{"big/early.txt", early_nul}, {"big/late.txt", late_nul}, {"big/boundary.txt", boundary}});
  GrepOptions options;
  options.paths = {"big"};
  Result<GrepResult> result = Grep("needle", options);
  ASSERT_TRUE(IsOk(result));
  ASSERT_EQ(result->matches.size(), 2u);
  EXPECT_EQ(result->matches[0].path, "big/boundary.txt");
  EXPECT_EQ(result->matches[0].lines, (std::vector<GrepLine>{Match(2, "needle at the probe boundary")}));
  EXPECT_EQ(result->matches[1].path, "big/late.txt");
  EXPECT_EQ(result->matches[1].lines.size(), 1u);
}

TEST_P(StoreGrepConformance, CaseInsensitive) {
  GrepOptions options;
  options.case_insensitive = true;
  Result<GrepResult> result = Grep("todo", options);
  ASSERT_TRUE(IsOk(result));
  EXPECT_EQ(result->matches, (std::vector<GrepFileMatches>{
                                 File("docs/notes.md", {Match(1, "todo list")}),
                                 File("src/main.cc", {Match(3, "  // TODO: parse args")}),
                                 File("src/util.h", {Match(1, "// TODO: document")})}));
}

TEST_P(StoreGrepConformance, IncludeIgnored) {
  GrepOptions options;
  options.include_ignored = true;
  Result<GrepResult> result = Grep("TODO", options);
  ASSERT_TRUE(IsOk(result));
  EXPECT_EQ(result->matches, (std::vector<GrepFileMatches>{
                                 File("build/out.cc", {Match(1, "// TODO generated")}),
                                 File("src/main.cc", {Match(3, "  // TODO: parse args")}),
                                 File("src/util.h", {Match(1, "// TODO: document")})}));
}

TEST_P(StoreGrepConformance, PathsRestrictTheSearch) {
  GrepOptions options;
  options.paths = {"src/util.h"};
  Result<GrepResult> result = Grep("TODO", options);
  ASSERT_TRUE(IsOk(result));
  EXPECT_EQ(result->matches,
            (std::vector<GrepFileMatches>{File("src/util.h", {Match(1, "// TODO: document")})}));

  options.paths = {"docs/", "src/util.h"};
  options.case_insensitive = true;
  result = Grep("todo", options);
  ASSERT_TRUE(IsOk(result));
  EXPECT_EQ(result->matches, (std::vector<GrepFileMatches>{
                                 File("docs/notes.md", {Match(1, "todo list")}),
                                 File("src/util.h", {Match(1, "// TODO: document")})}));
}

TEST_P(StoreGrepConformance, FileFilterSkipsRefusedFiles) {
  std::mutex mutex;
  std::vector<std::string> offered;
  GrepOptions options;
  options.file_filter = [&](std::string_view path) {
    std::lock_guard lock(mutex);
    offered.emplace_back(path);
    return path != "src/util.h";
  };
  Result<GrepResult> result = Grep("TODO", options);
  ASSERT_TRUE(IsOk(result));
  EXPECT_EQ(result->matches, (std::vector<GrepFileMatches>{
                                 File("src/main.cc", {Match(3, "  // TODO: parse args")})}));
  // Every file the walk would search, before it is opened: binary files
  // too; neither .git/ nor ignored files.
  std::sort(offered.begin(), offered.end());
  EXPECT_EQ(offered, (std::vector<std::string>{".gitignore", "bin/blob.dat", "docs/notes.md", "src/main.cc",
                                               "src/util.h"}));

  options.paths = {"src/util.h"};
  result = Grep("TODO", options);
  ASSERT_TRUE(IsOk(result));
  EXPECT_TRUE(result->matches.empty());
}

TEST_P(StoreGrepConformance, ExtensionsFilterWalkedFiles) {
  for (std::string extension : {"h", ".h"}) {
    GrepOptions options;
    options.extensions = {extension};
    Result<GrepResult> result = Grep("TODO", options);
    ASSERT_TRUE(IsOk(result)) << extension;
    EXPECT_EQ(result->matches,
              (std::vector<GrepFileMatches>{File("src/util.h", {Match(1, "// TODO: document")})}))
        << extension;
  }
}

TEST_P(StoreGrepConformance, ContextLinesAreMerged) {
  GrepOptions options;
  options.paths = {"src/main.cc"};
  options.context = 1;
  Result<GrepResult> result = Grep("int|return", options);
  ASSERT_TRUE(IsOk(result));
  EXPECT_EQ(result->matches,
            (std::vector<GrepFileMatches>{File(
                "src/main.cc", {Context(1, "#include <cstdio>"), Match(2, "int main() {"),
                                Context(3, "  // TODO: parse args"), Match(4, "  return 0;"),
                                Context(5, "}")})}));
}

TEST_P(StoreGrepConformance, MaxMatchesTruncates) {
  GrepOptions options;
  options.max_matches = 1;
  Result<GrepResult> result = Grep("TODO", options);
  ASSERT_TRUE(IsOk(result));
  EXPECT_TRUE(result->truncated);
  EXPECT_EQ(result->matches,
            (std::vector<GrepFileMatches>{File("src/main.cc", {Match(3, "  // TODO: parse args")})}));

  options.max_matches = 2;  // exactly enough: nothing is cut
  result = Grep("TODO", options);
  ASSERT_TRUE(IsOk(result));
  EXPECT_FALSE(result->truncated);
  EXPECT_EQ(result->matches.size(), 2u);

  options.max_matches = 0;  // no limit
  result = Grep("TODO", options);
  ASSERT_TRUE(IsOk(result));
  EXPECT_FALSE(result->truncated);
  EXPECT_EQ(result->matches.size(), 2u);
}

TEST_P(StoreGrepConformance, SeesTheLatestContent) {
  ASSERT_TRUE(IsOk(store_->Write("src/util.h", "nothing to do\n")));
  ASSERT_TRUE(IsOk(store_->Rename("src/main.cc", "src/moved.cc")));
  Result<GrepResult> result = Grep("TODO");
  ASSERT_TRUE(IsOk(result));
  EXPECT_EQ(result->matches, (std::vector<GrepFileMatches>{
                                 File("src/moved.cc", {Match(3, "  // TODO: parse args")})}));
}

TEST_P(StoreGrepConformance, Errors) {
  EXPECT_TRUE(IsError(Grep("(unclosed"), StatusCode::kInvalidArgument));
  GrepOptions options;
  options.paths = {"no/such/dir"};
  EXPECT_TRUE(IsError(Grep("TODO", options), StatusCode::kNotFound));
  options.paths = {"../outside"};
  EXPECT_TRUE(IsError(Grep("TODO", options), StatusCode::kPermissionDenied));
  options.paths = {"/etc"};
  EXPECT_TRUE(IsError(Grep("TODO", options), StatusCode::kInvalidArgument));
}

// --- materialize / display root -----------------------------------------------

TEST_P(StoreConformance, MaterializeRoundTrip) {
  Populate({{"keep.txt", "keep"},
            {"modify.txt", "before"},
            {"delete.txt", "doomed"},
            {"dir/nested.bin", AllBytes()},
            {"empty_before/", ""}});
  Result<std::unique_ptr<MaterializedView>> view = store_->Materialize();
  ASSERT_TRUE(IsOk(view));
  const std::string root = (*view)->path();
  ASSERT_TRUE(root.starts_with("/")) << root;
  EXPECT_EQ(ReadRealFile(root + "/keep.txt"), "keep");
  EXPECT_EQ(ReadRealFile(root + "/dir/nested.bin"), AllBytes());
  struct stat info;
  ASSERT_EQ(::stat((root + "/empty_before").c_str(), &info), 0);
  EXPECT_TRUE(S_ISDIR(info.st_mode));

  // A tool changes the tree with plain POSIX calls.
  WriteRealFile(root + "/modify.txt", "after");
  WriteRealFile(root + "/added/new.txt", "new");
  ASSERT_EQ(::unlink((root + "/delete.txt").c_str()), 0);
  ASSERT_EQ(::mkdir((root + "/empty_after").c_str(), 0755), 0);

  ASSERT_TRUE(IsOk((*view)->Release()));
  EXPECT_EQ(Content("keep.txt"), "keep");
  EXPECT_EQ(Content("modify.txt"), "after");
  EXPECT_EQ(Content("added/new.txt"), "new");
  EXPECT_FALSE(Exists("delete.txt"));
  EXPECT_EQ(Content("dir/nested.bin"), AllBytes());
  EXPECT_EQ(Listing("empty_after"), Entries{});
  EXPECT_EQ(Listing(""), (Entries{"added:dir", "dir:dir", "empty_after:dir", "empty_before:dir",
                                  "keep.txt:file", "modify.txt:file"}));
  if (IsFs()) {
    EXPECT_EQ(root, store_->DisplayRoot());  // the root itself, kept
    EXPECT_TRUE(RealPathExists(root + "/keep.txt"));
  } else {
    EXPECT_FALSE(RealPathExists(root)) << "the temporary copy was not removed";
  }
  EXPECT_TRUE(IsOk((*view)->Release()));  // later calls do nothing
}

// Refuses every path whose last component starts with "refused".
class RefusedPrefixFilter final : public CopyChangeFilter {
 public:
  std::optional<std::string> Refusal(std::string_view path) const override {
    const size_t slash = path.rfind('/');
    std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
    if (!name.starts_with("refused")) return std::nullopt;
    return "refused by the test";
  }
};

TEST_P(StoreConformance, MaterializeSkipsTheChangesItsFilterRefusesAndSaysSo) {
  Populate({{"refused-kept.txt", "kept"}, {"refused-doomed.txt", "doomed"}, {"dir/a.txt", "a"}});
  Result<std::unique_ptr<MaterializedView>> view = store_->Materialize();
  ASSERT_TRUE(IsOk(view));
  (*view)->FilterChanges(std::make_shared<RefusedPrefixFilter>());
  const std::string root = (*view)->path();
  WriteRealFile(root + "/refused-kept.txt", "changed");
  ASSERT_EQ(::unlink((root + "/refused-doomed.txt").c_str()), 0);
  WriteRealFile(root + "/dir/refused-new.txt", "new");
  ASSERT_EQ(::mkdir((root + "/refused-dir").c_str(), 0755), 0);
  WriteRealFile(root + "/dir/allowed.txt", "allowed");

  ::testing::internal::CaptureStderr();
  Status released = (*view)->Release();
  const std::string err = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(IsOk(released));
  EXPECT_EQ(Content("dir/allowed.txt"), "allowed");
  EXPECT_EQ(Content("dir/a.txt"), "a");
  if (IsFs()) return;  // the tool wrote the project itself: nothing is synced
  EXPECT_EQ(Content("refused-kept.txt"), "kept");
  EXPECT_EQ(Content("refused-doomed.txt"), "doomed");
  EXPECT_FALSE(Exists("dir/refused-new.txt"));
  EXPECT_FALSE(Exists("refused-dir"));
  for (const char* path : {"'refused-kept.txt'", "'refused-doomed.txt'", "'dir/refused-new.txt'", "'refused-dir'"}) {
    const std::string line = std::string("not synced back from the materialized copy: ") + path +
                             " (refused by the test)\n";
    EXPECT_NE(err.find(line), std::string::npos) << err;
  }
}

TEST_P(StoreConformance, DisplayRoot) {
  if (IsFs()) {
    EXPECT_EQ(store_->DisplayRoot(), dir_->path());
  } else if (GetParam().ends_with("sqlite")) {
    EXPECT_EQ(store_->DisplayRoot(), SqliteUri());
  } else if (GetParam().ends_with("postgres")) {
    EXPECT_EQ(store_->DisplayRoot(), PostgresUri());
  } else {
    EXPECT_EQ(store_->DisplayRoot(), "memory:test");
  }
}

// --- concurrency --------------------------------------------------------------

TEST_P(StoreConformance, ConcurrentWritersAndReadersSeeWholeContents) {
  constexpr int kThreads = 4;
  constexpr int kRounds = 30;
  // Round r of thread t writes this to "t<t>/file.txt": readers can tell
  // which round they saw and whether it is whole.
  auto content_of = [](int thread, int round) {
    return "thread " + std::to_string(thread) + " round " + std::to_string(round) + " " +
           std::string(static_cast<size_t>(2000 + 37 * round), static_cast<char>('a' + thread));
  };
  std::atomic<int> failures{0};
  std::mutex first_failure_mutex;
  std::string first_failure;
  auto fail = [&](std::string what) {
    if (failures.fetch_add(1) == 0) {
      std::lock_guard lock(first_failure_mutex);
      first_failure = std::move(what);
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const std::string own = "t" + std::to_string(t) + "/file.txt";
      const int neighbour = (t + 1) % kThreads;
      const std::string other = "t" + std::to_string(neighbour) + "/file.txt";
      for (int r = 0; r < kRounds; ++r) {
        Status written = store_->Write(own, content_of(t, r));
        if (!written.ok()) fail("write " + own + ": " + written.ToString());
        Result<std::string> mine = store_->Read(own);
        if (!mine.ok() || *mine != content_of(t, r)) fail("read back " + own);
        written = store_->Write("shared/t" + std::to_string(t) + "-" + std::to_string(r), "x");
        if (!written.ok()) fail("write shared: " + written.ToString());
        written = store_->Write("log.txt", "t" + std::to_string(t) + "r" + std::to_string(r) + "\n",
                                WriteMode::kAppend);
        if (!written.ok()) fail("append: " + written.ToString());
        Result<std::string> theirs = store_->Read(other);
        if (theirs.ok()) {
          bool whole = false;
          for (int round = 0; round < kRounds && !whole; ++round) {
            whole = *theirs == content_of(neighbour, round);
          }
          if (!whole) fail("torn read of " + other);
        } else if (theirs.status().code() != StatusCode::kNotFound) {
          fail("read " + other + ": " + theirs.status().ToString());
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0) << first_failure;

  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(Content("t" + std::to_string(t) + "/file.txt"), content_of(t, kRounds - 1));
  }
  Result<std::vector<DirEntry>> shared = store_->ListDir("shared");
  ASSERT_TRUE(IsOk(shared));
  EXPECT_EQ(shared->size(), static_cast<size_t>(kThreads * kRounds));
  EXPECT_TRUE(std::is_sorted(shared->begin(), shared->end(),
                             [](const DirEntry& a, const DirEntry& b) { return a.name < b.name; }));
  // Every append landed, each line whole.
  std::string log = Content("log.txt");
  std::vector<std::string> lines;
  for (size_t start = 0; start < log.size();) {
    size_t end = log.find('\n', start);
    if (end == std::string::npos) end = log.size();
    lines.push_back(log.substr(start, end - start));
    start = end + 1;
  }
  std::sort(lines.begin(), lines.end());
  std::vector<std::string> expected;
  for (int t = 0; t < kThreads; ++t) {
    for (int r = 0; r < kRounds; ++r) expected.push_back("t" + std::to_string(t) + "r" + std::to_string(r));
  }
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(lines, expected);
}

std::string BackendName(const ::testing::TestParamInfo<std::string>& info) { return info.param; }

INSTANTIATE_TEST_SUITE_P(Backends, StoreConformance,
                         ::testing::Values("memory", "fs", "sqlite", "postgres", "forwarding_memory",
                                           "forwarding_fs", "faults_fs", "faults_sqlite"),
                         BackendName);
INSTANTIATE_TEST_SUITE_P(Backends, StoreGrepConformance,
                         ::testing::Values("memory", "fs", "sqlite", "postgres", "forwarding_fs"),
                         BackendName);
TEST_P(StoreWithSymlinks, ReadAuthorizedJudgesTheSymlinksTarget) {
  Populate({{"real/f.txt", "through the link"}});
  MakeSymlink("real/f.txt", dir_->Join("link"));
  std::vector<std::string> asked;
  Result<FileRange> read = store_->ReadAuthorized("link", std::nullopt, [&](std::string_view resolved) {
    asked.emplace_back(resolved);
    return OkStatus();
  });
  ASSERT_TRUE(IsOk(read));
  EXPECT_EQ(read->content, "through the link");
  EXPECT_EQ(asked, (std::vector<std::string>{"real/f.txt"}));
}

INSTANTIATE_TEST_SUITE_P(Backends, StoreWithSymlinks, ::testing::Values("fs", "forwarding_fs", "faults_fs"),
                         BackendName);

// ----- The memory store's materialized view ----------------------------------

class MemoryMaterializeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(IsOk(store_->Write("keep.txt", "keep")));
    ASSERT_TRUE(IsOk(store_->Write("dir/a.txt", "a")));
    ASSERT_TRUE(IsOk(store_->Write("dir/sub/b.txt", "b")));
  }

  std::unique_ptr<MaterializedView> Materialize() {
    Result<std::unique_ptr<MaterializedView>> view = store_->Materialize();
    EXPECT_TRUE(IsOk(view));
    return view.ok() ? std::move(*view) : nullptr;
  }

  std::string Content(std::string_view path) {
    Result<std::string> content = store_->Read(path);
    return content.ok() ? *content : "<error: " + content.status().ToString() + ">";
  }

  std::unique_ptr<ProjectFiles> store_ = NewMemoryStore("m");
};

TEST_F(MemoryMaterializeTest, CopyIsPrivateAndCarriesModificationTimes) {
  std::unique_ptr<MaterializedView> view = Materialize();
  ASSERT_NE(view, nullptr);
  struct stat info;
  ASSERT_EQ(::stat(view->path().c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0700u);
  ASSERT_EQ(::stat((view->path() + "/dir/a.txt").c_str(), &info), 0);
  int64_t real_ms = static_cast<int64_t>(info.st_mtim.tv_sec) * 1000 + info.st_mtim.tv_nsec / 1000000;
  EXPECT_EQ(real_ms, store_->Metadata("dir/a.txt")->modified_ms);
  EXPECT_TRUE(IsOk(view->Release()));
}

TEST_F(MemoryMaterializeTest, DeletedDirectoriesAndKindChangesSyncBack) {
  std::unique_ptr<MaterializedView> view = Materialize();
  ASSERT_NE(view, nullptr);
  std::filesystem::remove_all(view->path() + "/dir");
  WriteRealFile(view->path() + "/dir", "now a file");
  ASSERT_EQ(::unlink((view->path() + "/keep.txt").c_str()), 0);
  MakeDirectory(view->path() + "/keep.txt/inside");
  ASSERT_TRUE(IsOk(view->Release()));
  EXPECT_EQ(Content("dir"), "now a file");
  EXPECT_EQ(store_->Metadata("keep.txt")->kind, EntryKind::kDirectory);
  EXPECT_EQ(store_->Metadata("keep.txt/inside")->kind, EntryKind::kDirectory);
  EXPECT_FALSE(*store_->Exists("dir/sub/b.txt"));
}

TEST_F(MemoryMaterializeTest, SymlinksAndSpecialFilesAreIgnored) {
  std::unique_ptr<MaterializedView> view = Materialize();
  ASSERT_NE(view, nullptr);
  MakeSymlink("/etc/passwd", view->path() + "/outside_link");
  MakeSymlink("keep.txt", view->path() + "/inside_link");
  MakeSymlink("/etc", view->path() + "/dir_link");
  ASSERT_EQ(::mkfifo((view->path() + "/pipe").c_str(), 0600), 0);
  WriteRealFile(view->path() + std::string("/bad\x01name.txt"), "unrepresentable");
  ASSERT_TRUE(IsOk(view->Release()));
  Result<std::vector<DirEntry>> entries = store_->ListDir("");
  ASSERT_TRUE(IsOk(entries));
  EXPECT_EQ(*entries, (std::vector<DirEntry>{{"dir", EntryKind::kDirectory},
                                             {"keep.txt", EntryKind::kFile}}));
  EXPECT_FALSE(RealPathExists(view->path()));
}

TEST_F(MemoryMaterializeTest, DestructorReleases) {
  std::string path;
  {
    std::unique_ptr<MaterializedView> view = Materialize();
    ASSERT_NE(view, nullptr);
    path = view->path();
    WriteRealFile(path + "/from_destructor.txt", "synced");
  }
  EXPECT_EQ(Content("from_destructor.txt"), "synced");
  EXPECT_FALSE(RealPathExists(path));
}

TEST_F(MemoryMaterializeTest, ChangesMadeInTheStoreMeanwhileAreKept) {
  std::unique_ptr<MaterializedView> view = Materialize();
  ASSERT_NE(view, nullptr);
  ASSERT_TRUE(IsOk(store_->Write("store_added.txt", "store")));
  ASSERT_TRUE(IsOk(store_->Write("keep.txt", "changed in the store")));
  ASSERT_TRUE(IsOk(store_->Write("dir/sub/c.txt", "store")));
  WriteRealFile(view->path() + "/view_added.txt", "view");
  std::filesystem::remove_all(view->path() + "/dir/sub");  // the store added c.txt there
  ASSERT_EQ(::unlink((view->path() + "/keep.txt").c_str()), 0);  // the store changed it
  ASSERT_TRUE(IsOk(view->Release()));
  EXPECT_EQ(Content("store_added.txt"), "store");
  EXPECT_EQ(Content("view_added.txt"), "view");
  EXPECT_EQ(Content("keep.txt"), "changed in the store");
  EXPECT_EQ(Content("dir/sub/c.txt"), "store");
  EXPECT_FALSE(*store_->Exists("dir/sub/b.txt"));
}

TEST_F(MemoryMaterializeTest, FailedSyncKeepsTheCopyAndChangesNothing) {
  std::unique_ptr<MaterializedView> view = Materialize();
  ASSERT_NE(view, nullptr);
  const std::string path = view->path();
  WriteRealFile(path + "/modified_in_view.txt", "view");
  WriteRealFile(path + "/x/new.txt", "view");
  ASSERT_TRUE(IsOk(store_->Write("x", "a file in the store")));  // conflicts with the view's dir
  Status status = view->Release();
  EXPECT_TRUE(IsError(status, StatusCode::kNotDirectory,
                      "Cannot sync the materialized copy '" + path +
                          "' back (nothing was synced; the copy is kept): Cannot create "
                          "directory 'x': it is a file"));
  EXPECT_EQ(ReadRealFile(path + "/x/new.txt"), "view");
  EXPECT_FALSE(*store_->Exists("modified_in_view.txt"));
  EXPECT_EQ(Content("x"), "a file in the store");
  EXPECT_TRUE(IsOk(view->Release()));  // later calls do nothing
  EXPECT_TRUE(RealPathExists(path));
  TempDir::RemoveAll(path);
}

TEST_F(MemoryMaterializeTest, DestructorReportsAKeptCopy) {
  std::string path;
  ::testing::internal::CaptureStderr();
  {
    std::unique_ptr<MaterializedView> view = Materialize();
    ASSERT_NE(view, nullptr);
    path = view->path();
    WriteRealFile(path + "/x/new.txt", "view");
    ASSERT_TRUE(IsOk(store_->Write("x", "file")));
  }
  std::string printed = ::testing::internal::GetCapturedStderr();
  EXPECT_TRUE(printed.starts_with("toolvfs: Cannot sync the materialized copy '" + path +
                                  "' back (nothing was synced; the copy is kept): "))
      << printed;
  EXPECT_EQ(std::count(printed.begin(), printed.end(), '\n'), 1) << printed;
  EXPECT_TRUE(RealPathExists(path + "/x/new.txt"));
  TempDir::RemoveAll(path);
}

TEST_F(MemoryMaterializeTest, ViewMayOutliveTheStore) {
  std::unique_ptr<MaterializedView> view = Materialize();
  ASSERT_NE(view, nullptr);
  store_.reset();
  WriteRealFile(view->path() + "/late.txt", "late");
  EXPECT_TRUE(IsOk(view->Release()));
  EXPECT_FALSE(RealPathExists(view->path()));
}

// A sparse 2 TiB file in the view must fail the sync cleanly (the store
// holds content in memory), keep the copy, and change nothing in the store.
TEST_F(MemoryMaterializeTest, HugeSparseFileFailsTheSyncWithoutCrashing) {
  std::unique_ptr<MaterializedView> view = Materialize();
  ASSERT_NE(view, nullptr);
  WriteRealFile(view->path() + "/small.txt", "kept out too");
  ASSERT_EQ(::truncate((view->path() + "/small.txt").c_str(), off_t{1} << 41), 0);
  Status released = view->Release();
  EXPECT_EQ(released.code(), StatusCode::kTooLarge) << released.ToString();
  EXPECT_NE(released.message().find("small.txt"), std::string::npos) << released.message();
  EXPECT_TRUE(RealPathExists(view->path()));  // nothing is lost: the copy stays
  EXPECT_FALSE(*store_->Exists("small.txt"));
  TempDir::RemoveAll(view->path());
}

TEST_F(MemoryMaterializeTest, UsesTmpdir) {
  TempDir base;
  const char* saved = std::getenv("TMPDIR");
  std::string saved_value = saved ? saved : "";
  ::setenv("TMPDIR", base.path().c_str(), 1);
  std::unique_ptr<MaterializedView> view = Materialize();
  if (saved) {
    ::setenv("TMPDIR", saved_value.c_str(), 1);
  } else {
    ::unsetenv("TMPDIR");
  }
  ASSERT_NE(view, nullptr);
  EXPECT_TRUE(view->path().starts_with(base.path() + "/")) << view->path();
  EXPECT_TRUE(IsOk(view->Release()));
}

TEST(WriteModeTest, ParsesTheWireNames) {
  EXPECT_EQ(*ParseWriteMode("overwrite"), WriteMode::kOverwrite);
  EXPECT_EQ(*ParseWriteMode("create"), WriteMode::kCreate);
  EXPECT_EQ(*ParseWriteMode("append"), WriteMode::kAppend);
  EXPECT_TRUE(IsError(ParseWriteMode("Append"), StatusCode::kInvalidArgument,
                      "Invalid write mode 'Append': expected 'overwrite', 'create' or 'append'"));
}

TEST(OpenProjectTest, UrisPickTheBackend) {
  TempDir dir;
  WriteRealFile(dir.path() + "/a:b/x.txt", "x");
  for (std::string uri : {dir.path(), "fs:" + dir.path(), dir.path() + "/a:b"}) {
    Result<std::unique_ptr<ProjectFiles>> opened = OpenProject(uri);
    ASSERT_TRUE(IsOk(opened)) << uri;
  }
  EXPECT_EQ((*OpenProject(dir.path() + "/a:b"))->DisplayRoot(), dir.path() + "/a:b");
  EXPECT_EQ((*OpenProject("memory:scratch"))->DisplayRoot(), "memory:scratch");
  EXPECT_EQ((*OpenProject("null:"))->DisplayRoot(), "<no project>");
  for (std::string uri : {"s3:bucket", "sqlite3:x.db#main", "http://example.com/x"}) {
    Result<std::unique_ptr<ProjectFiles>> opened = OpenProject(uri);
    EXPECT_TRUE(IsError(opened, StatusCode::kInvalidArgument,
                        "Invalid project '" + uri + "': unknown store '" + uri.substr(0, uri.find(':')) +
                            ":'; expected fs:DIR, a directory, memory:, sqlite:FILE#WORKSPACE, postgres://...#WORKSPACE or null:"))
        << uri;
  }
  EXPECT_EQ(OpenProject("fs:" + dir.path() + "/missing").status().code(), StatusCode::kNotFound);
}

TEST(MemoryStoreTest, DisplayRootNamesTheStore) {
  Result<std::unique_ptr<ProjectFiles>> unnamed = OpenProject("memory:");
  ASSERT_TRUE(IsOk(unnamed));
  EXPECT_EQ((*unnamed)->DisplayRoot(), "memory:");
  EXPECT_EQ(NewMemoryStore("work")->DisplayRoot(), "memory:work");
}

TEST(MemoryStoreTest, StoresAreIndependent) {
  std::unique_ptr<ProjectFiles> a = NewMemoryStore("same");
  std::unique_ptr<ProjectFiles> b = NewMemoryStore("same");
  ASSERT_TRUE(IsOk(a->Write("x.txt", "a")));
  EXPECT_FALSE(*b->Exists("x.txt"));
}

// ----- The null store ---------------------------------------------------------

class NullStoreConformance : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<std::unique_ptr<ProjectFiles>> opened = OpenProject("null:");
    ASSERT_TRUE(IsOk(opened));
    store_ = std::move(*opened);
  }
  std::unique_ptr<ProjectFiles> store_;
};

TEST_F(NullStoreConformance, ReadsAndWritesFailWithNoProject) {
  EXPECT_TRUE(IsError(store_->Read("a.txt"), StatusCode::kNoProject,
                      "No project: cannot read 'a.txt'"));
  for (WriteMode mode : {WriteMode::kOverwrite, WriteMode::kCreate, WriteMode::kAppend}) {
    EXPECT_TRUE(IsError(store_->Write("./a//b.txt", "x", mode), StatusCode::kNoProject,
                        "No project: cannot write 'a/b.txt'"));
  }
  EXPECT_TRUE(IsError(store_->ReadRange("a.txt", 0, 1), StatusCode::kNoProject,
                      "No project: cannot read 'a.txt'"));
  EXPECT_TRUE(IsError(store_->ReadRange("a.txt", 5, std::nullopt), StatusCode::kNoProject,
                      "No project: cannot read 'a.txt'"));
  EXPECT_TRUE(IsError(store_->Metadata("a.txt"), StatusCode::kNoProject,
                      "No project: cannot get metadata of 'a.txt'"));
  EXPECT_TRUE(IsError(store_->Metadata(""), StatusCode::kNoProject,
                      "No project: cannot get metadata of '.'"));
  EXPECT_TRUE(IsError(store_->Delete("a.txt", true), StatusCode::kNoProject,
                      "No project: cannot delete 'a.txt'"));
  EXPECT_TRUE(IsError(store_->Rename("a", "b", true), StatusCode::kNoProject,
                      "No project: cannot rename 'a' to 'b'"));
  EXPECT_TRUE(IsError(store_->Materialize(), StatusCode::kNoProject,
                      "No project: cannot materialize the project files"));
}

TEST_F(NullStoreConformance, NothingExistsAndListingsAreEmpty) {
  for (std::string_view path : {"", ".", "a.txt", "src/"}) {
    Result<bool> exists = store_->Exists(path);
    ASSERT_TRUE(IsOk(exists)) << path;
    EXPECT_FALSE(*exists) << path;
    Result<std::vector<DirEntry>> entries = store_->ListDir(path);
    ASSERT_TRUE(IsOk(entries)) << path;
    EXPECT_TRUE(entries->empty()) << path;
  }
}

TEST_F(NullStoreConformance, PathsAreStillValidated) {
  struct Case {
    std::string path;
    StatusCode code;
  };
  for (const Case& c : {Case{"/etc/passwd", StatusCode::kInvalidArgument},
                        Case{std::string("a\0b", 3), StatusCode::kInvalidArgument},
                        Case{"bad\xFF", StatusCode::kInvalidArgument},
                        Case{"../x", StatusCode::kPermissionDenied}}) {
    SCOPED_TRACE(::testing::PrintToString(c.path));
    EXPECT_TRUE(IsError(store_->Read(c.path), c.code));
    EXPECT_TRUE(IsError(store_->ReadRange(c.path, 0, 1), c.code));
    EXPECT_TRUE(IsError(store_->Write(c.path, "x"), c.code));
    EXPECT_TRUE(IsError(store_->Exists(c.path), c.code));
    EXPECT_TRUE(IsError(store_->ListDir(c.path), c.code));
    EXPECT_TRUE(IsError(store_->Metadata(c.path), c.code));
    EXPECT_TRUE(IsError(store_->Delete(c.path), c.code));
    EXPECT_TRUE(IsError(store_->Rename(c.path, "x"), c.code));
    EXPECT_TRUE(IsError(store_->Rename("x", c.path), c.code));
  }
}

TEST_F(NullStoreConformance, GrepFindsNothingButChecksItsArguments) {
  Result<GrepResult> result = store_->Grep("anything", GrepOptions{});
  ASSERT_TRUE(IsOk(result));
  EXPECT_EQ(*result, GrepResult{});
  GrepOptions options;
  options.paths = {"src"};
  result = store_->Grep("anything", options);
  ASSERT_TRUE(IsOk(result));
  EXPECT_EQ(*result, GrepResult{});
  EXPECT_TRUE(IsError(store_->Grep("(unclosed", GrepOptions{}), StatusCode::kInvalidArgument));
  options.paths = {"../x"};
  EXPECT_TRUE(IsError(store_->Grep("x", options), StatusCode::kPermissionDenied));
}

TEST_F(NullStoreConformance, DisplayRoot) {
  EXPECT_EQ(store_->DisplayRoot(), "<no project>");
  EXPECT_EQ(NewNullStore()->DisplayRoot(), "<no project>");
}

}  // namespace
}  // namespace toolvfs
