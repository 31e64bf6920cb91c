// The escape suite of the fs store (SPEC.md §2.1, §12): every way a path
// could reach outside the project root, for every operation, under both
// resolution routes (openat2 and the O_NOFOLLOW component walk).

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <set>
#include <filesystem>
#include <thread>

#include <gtest/gtest.h>

#include "project/fs_store.h"
#include "project/test_util.h"

namespace toolvfs {
namespace {

class FsEscapeTest : public ::testing::TestWithParam<FsResolution> {
 protected:
  // base/
  //   proj/                  the project root
  //   proj_secrets/secret.txt  a sibling sharing the root's name prefix
  //   outside/file.txt
  void SetUp() override {
    root_ = base_.path() + "/proj";
    outside_ = base_.path() + "/outside";
    WriteRealFile(base_.path() + "/proj_secrets/secret.txt", "TOP SECRET\n");
    WriteRealFile(outside_ + "/file.txt", "OUTSIDE\n");
    WriteRealFile(root_ + "/src/main.c", "int main() { return 0; }\n");
    MakeSymlink("../outside", root_ + "/link_out");
    MakeSymlink(outside_, root_ + "/link_out_abs");
    MakeSymlink("../outside/file.txt", root_ + "/link_file_out");
    MakeSymlink("../proj_secrets", root_ + "/sibling");
    MakeSymlink("src", root_ + "/link_in");
    MakeSymlink(root_ + "/src", root_ + "/link_in_abs");
    MakeSymlink("..", root_ + "/src/up");
    MakeSymlink("chain2", root_ + "/chain1");
    MakeSymlink("link_out", root_ + "/chain2");
    MakeSymlink("chain_in2", root_ + "/chain_in1");
    MakeSymlink("src/main.c", root_ + "/chain_in2");
    MakeSymlink("../outside/new.txt", root_ + "/dangling_out");
    MakeSymlink(outside_ + "/new_abs.txt", root_ + "/dangling_out_abs");
    MakeSymlink("src/created_through_link.c", root_ + "/dangling_in");
    MakeSymlink("loop2", root_ + "/loop1");
    MakeSymlink("loop1", root_ + "/loop2");
    ASSERT_EQ(::mkfifo((root_ + "/fifo").c_str(), 0644), 0);
    Result<std::unique_ptr<ProjectFiles>> opened = OpenFsStore(root_, {}, GetParam());
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    store_ = std::move(*opened);
  }

  // Nothing outside the root changed: no new files, contents intact.
  void ExpectOutsideUntouched() {
    EXPECT_EQ(ReadRealFile(outside_ + "/file.txt"), "OUTSIDE\n");
    EXPECT_EQ(ReadRealFile(base_.path() + "/proj_secrets/secret.txt"), "TOP SECRET\n");
    EXPECT_EQ(ListRealDirectory(outside_), std::vector<std::string>{"file.txt"});
    EXPECT_EQ(ListRealDirectory(base_.path() + "/proj_secrets"), std::vector<std::string>{"secret.txt"});
    EXPECT_EQ(ListRealDirectory(base_.path()), (std::vector<std::string>{"outside", "proj", "proj_secrets"}));
  }

  TempDir base_;
  std::string root_, outside_;
  std::unique_ptr<ProjectFiles> store_;
};

void ExpectDenied(const Status& status, std::string_view what) {
  EXPECT_EQ(status.code(), StatusCode::kPermissionDenied) << what << ": " << status.ToString();
  EXPECT_NE(status.message().find("Access denied"), std::string::npos) << status.message();
}

TEST_P(FsEscapeTest, LexicalEscapesAndBadPathsFailForEveryOperation) {
  struct Case { std::string path; StatusCode code; };
  for (const Case& c : {Case{"../outside/file.txt", StatusCode::kPermissionDenied},
                        Case{"src/../../outside/file.txt", StatusCode::kPermissionDenied},
                        Case{"../proj_secrets/secret.txt", StatusCode::kPermissionDenied},
                        Case{outside_ + "/file.txt", StatusCode::kInvalidArgument},
                        Case{std::string("src/main.c\0/x", 13), StatusCode::kInvalidArgument},
                        Case{"src/\x01" "evil", StatusCode::kInvalidArgument},
                        Case{"src/\xff\xfe", StatusCode::kInvalidArgument}}) {
    EXPECT_EQ(store_->Read(c.path).status().code(), c.code) << c.path;
    EXPECT_EQ(store_->Write(c.path, "x").code(), c.code) << c.path;
    EXPECT_EQ(store_->Exists(c.path).status().code(), c.code) << c.path;
    EXPECT_EQ(store_->ListDir(c.path).status().code(), c.code) << c.path;
    EXPECT_EQ(store_->Metadata(c.path).status().code(), c.code) << c.path;
    EXPECT_EQ(store_->Delete(c.path, true).code(), c.code) << c.path;
    EXPECT_EQ(store_->Rename(c.path, "x").code(), c.code) << c.path;
    EXPECT_EQ(store_->Rename("src/main.c", c.path).code(), c.code) << c.path;
    GrepOptions options;
    options.paths = {c.path};
    EXPECT_EQ(store_->Grep("SECRET|OUTSIDE", options).status().code(), c.code) << c.path;
  }
  ExpectOutsideUntouched();
}

TEST_P(FsEscapeTest, EscapingSymlinksAreDeniedForEveryOperation) {
  for (std::string link : {"link_out", "link_out_abs", "chain1", "sibling"}) {
    std::string file = link == "sibling" ? link + "/secret.txt" : link + "/file.txt";
    ExpectDenied(store_->Read(file).status(), "read " + file);
    ExpectDenied(store_->Write(file, "pwned"), "write " + file);
    ExpectDenied(store_->Write(link + "/new.txt", "pwned"), "write new " + link);
    ExpectDenied(store_->Write(file, "more", WriteMode::kAppend), "append " + file);
    ExpectDenied(store_->Exists(file).status(), "exists " + file);
    ExpectDenied(store_->Metadata(link).status(), "metadata " + link);
    ExpectDenied(store_->Metadata(file).status(), "metadata " + file);
    ExpectDenied(store_->ListDir(link).status(), "list " + link);
    ExpectDenied(store_->Delete(file), "delete " + file);
    ExpectDenied(store_->Delete(link, true), "delete " + link);
    ExpectDenied(store_->Rename(file, "stolen.txt"), "rename from " + file);
    ExpectDenied(store_->Rename(link, "renamed_link"), "rename link " + link);
    ExpectDenied(store_->Rename("src/main.c", link + "/main.c"), "rename into " + link);
    ExpectDenied(store_->Rename("src/main.c", link, /*overwrite=*/true), "rename onto " + link);
    GrepOptions options;
    options.paths = {link};
    ExpectDenied(store_->Grep("SECRET|OUTSIDE", options).status(), "grep " + link);
  }
  // The links are still there, the source file too.
  EXPECT_TRUE(IsSymlink(root_ + "/link_out"));
  EXPECT_TRUE(IsSymlink(root_ + "/sibling"));
  EXPECT_EQ(ReadRealFile(root_ + "/src/main.c"), "int main() { return 0; }\n");
  ExpectOutsideUntouched();
}

TEST_P(FsEscapeTest, SymlinkToAnOutsideFileIsNeitherReadNorWritten) {
  ExpectDenied(store_->Read("link_file_out").status(), "read");
  ExpectDenied(store_->Write("link_file_out", "pwned"), "overwrite");
  ExpectDenied(store_->Write("link_file_out", "pwned", WriteMode::kAppend), "append");
  ExpectDenied(store_->Metadata("link_file_out").status(), "metadata");
  EXPECT_TRUE(IsSymlink(root_ + "/link_file_out"));
  ExpectOutsideUntouched();
}

TEST_P(FsEscapeTest, DanglingSymlinkAtANewFilePathIsNotFollowedOutside) {
  ExpectDenied(store_->Write("dangling_out", "pwned"), "write relative dangling");
  ExpectDenied(store_->Write("dangling_out_abs", "pwned"), "write absolute dangling");
  // create never follows a final symlink: something is at the path.
  EXPECT_EQ(store_->Write("dangling_out", "pwned", WriteMode::kCreate).code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(store_->Write("dangling_in", "x", WriteMode::kCreate).code(), StatusCode::kAlreadyExists);
  EXPECT_FALSE(RealPathExists(root_ + "/src/created_through_link.c"));
  ExpectDenied(store_->Write("dangling_out", "pwned", WriteMode::kAppend), "append dangling");
  EXPECT_FALSE(RealPathExists(outside_ + "/new.txt"));
  EXPECT_FALSE(RealPathExists(outside_ + "/new_abs.txt"));
  ExpectOutsideUntouched();
}

TEST_P(FsEscapeTest, DanglingSymlinkThatStaysInsideCreatesItsTarget) {
  EXPECT_FALSE(*store_->Exists("dangling_in"));
  ASSERT_TRUE(store_->Write("dangling_in", "made\n").ok());
  EXPECT_TRUE(IsSymlink(root_ + "/dangling_in"));
  EXPECT_EQ(ReadRealFile(root_ + "/src/created_through_link.c"), "made\n");
}

TEST_P(FsEscapeTest, SymlinksInsideAreFollowed) {
  EXPECT_EQ(*store_->Read("link_in/main.c"), "int main() { return 0; }\n");
  EXPECT_EQ(*store_->Read("link_in_abs/main.c"), "int main() { return 0; }\n");
  EXPECT_EQ(*store_->Read("chain_in1"), "int main() { return 0; }\n");
  EXPECT_EQ(*store_->Read("src/up/src/main.c"), "int main() { return 0; }\n");  // symlink mid-path
  EXPECT_EQ(store_->Metadata("link_in")->kind, EntryKind::kDirectory);
  EXPECT_EQ(store_->Metadata("link_in_abs")->kind, EntryKind::kDirectory);
  ASSERT_TRUE(store_->Write("link_in_abs/through_abs.c", "x").ok());
  EXPECT_EQ(ReadRealFile(root_ + "/src/through_abs.c"), "x");
  ASSERT_TRUE(store_->Write("chain_in1", "int main() { return 1; }\n").ok());
  EXPECT_TRUE(IsSymlink(root_ + "/chain_in1"));
  EXPECT_EQ(ReadRealFile(root_ + "/src/main.c"), "int main() { return 1; }\n");
}

TEST_P(FsEscapeTest, ListingShowsInsideTargetsAndEscapingLinksAsSymlinks) {
  Result<std::vector<DirEntry>> entries = store_->ListDir("");
  ASSERT_TRUE(entries.ok()) << entries.status().ToString();
  auto kind_of = [&](std::string_view name) {
    for (const DirEntry& entry : *entries) if (entry.name == name) return std::string(EntryKindName(entry.kind));
    return std::string("absent");
  };
  EXPECT_EQ(kind_of("link_in"), "dir");
  EXPECT_EQ(kind_of("link_in_abs"), "dir");
  EXPECT_EQ(kind_of("chain_in1"), "file");
  EXPECT_EQ(kind_of("link_out"), "symlink");
  EXPECT_EQ(kind_of("link_out_abs"), "symlink");
  EXPECT_EQ(kind_of("link_file_out"), "symlink");
  EXPECT_EQ(kind_of("dangling_in"), "symlink");
  EXPECT_EQ(kind_of("fifo"), "absent");  // special files are not part of the project
}

TEST_P(FsEscapeTest, DeletingAndRenamingAnInsideSymlinkActsOnTheLinkItself) {
  ASSERT_TRUE(store_->Delete("link_in", /*recursive=*/true).ok());
  EXPECT_FALSE(RealPathExists(root_ + "/link_in"));
  EXPECT_EQ(ReadRealFile(root_ + "/src/main.c"), "int main() { return 0; }\n");
  ASSERT_TRUE(store_->Rename("chain_in2", "moved_link").ok());
  EXPECT_TRUE(IsSymlink(root_ + "/moved_link"));
}

// a/deep -> ../src stays inside; moved to the root it would read "../src",
// outside: the rename is refused and nothing moves.
TEST_P(FsEscapeTest, RenamingARelativeSymlinkWhereItWouldEscapeIsDenied) {
  MakeDirectory(root_ + "/a");
  MakeSymlink("../src", root_ + "/a/deep");
  EXPECT_EQ(*store_->Read("a/deep/main.c"), "int main() { return 0; }\n");
  Status moved = store_->Rename("a/deep", "deep");
  ExpectDenied(moved, "rename a/deep to deep");
  EXPECT_NE(moved.message().find("would point outside"), std::string::npos) << moved.message();
  EXPECT_TRUE(IsSymlink(root_ + "/a/deep"));
  EXPECT_FALSE(RealPathExists(root_ + "/deep"));
  // Where it keeps meaning something inside, it moves.
  MakeDirectory(root_ + "/b");
  EXPECT_TRUE(store_->Rename("a/deep", "b/deep").ok());
  EXPECT_EQ(*store_->Read("b/deep/main.c"), "int main() { return 0; }\n");
}

TEST_P(FsEscapeTest, FifosAreRefusedWithoutBlocking) {
  ExpectDenied(store_->Read("fifo").status(), "read fifo");
  ExpectDenied(store_->Write("fifo", "x"), "write fifo");
  ExpectDenied(store_->Metadata("fifo").status(), "metadata fifo");
  ExpectDenied(store_->Delete("fifo"), "delete fifo");
  GrepOptions options;
  options.paths = {"fifo"};
  ExpectDenied(store_->Grep("x", options).status(), "grep fifo");
  EXPECT_NE(store_->Read("fifo").status().message().find("FIFO"), std::string::npos);
}

TEST_P(FsEscapeTest, UnixSocketsAreRefused) {
  std::string socket_path = root_ + "/agent.sock";
  int socket_fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(socket_fd, 0);
  struct sockaddr_un address = {};
  address.sun_family = AF_UNIX;
  ASSERT_LT(socket_path.size(), sizeof address.sun_path);
  std::copy(socket_path.begin(), socket_path.end(), address.sun_path);
  ASSERT_EQ(::bind(socket_fd, reinterpret_cast<struct sockaddr*>(&address), sizeof address), 0);
  ExpectDenied(store_->Read("agent.sock").status(), "read socket");
  ExpectDenied(store_->Write("agent.sock", "x"), "write socket");
  ExpectDenied(store_->Metadata("agent.sock").status(), "metadata socket");
  EXPECT_NE(store_->Read("agent.sock").status().message().find("socket"), std::string::npos);
  ::close(socket_fd);
}

TEST_P(FsEscapeTest, ResolvePathFollowsInsideLinksAndDeniesEscapes) {
  struct Case {
    std::string path, resolved;
  };
  for (const Case& c : {Case{"link_in/main.c", "src/main.c"}, Case{"link_in_abs/main.c", "src/main.c"},
                        Case{"src/up/src/main.c", "src/main.c"}, Case{"src/up", ""},
                        Case{"chain_in1", "src/main.c"}, Case{"dangling_in", "src/created_through_link.c"},
                        Case{"link_in/new/deeper.c", "src/new/deeper.c"}, Case{"src/main.c", "src/main.c"},
                        Case{"fifo", "fifo"}}) {
    Result<std::string> resolved = store_->ResolvePath(c.path);
    ASSERT_TRUE(resolved.ok()) << c.path << ": " << resolved.status().ToString();
    EXPECT_EQ(*resolved, c.resolved) << c.path;
  }
  for (std::string_view path : {"link_out", "link_out/file.txt", "link_out/new/x.txt", "link_out_abs/file.txt",
                                "link_file_out", "sibling/secret.txt", "chain1", "dangling_out",
                                "dangling_out_abs", "src/up/link_out/file.txt"}) {
    Status status = store_->ResolvePath(path).status();
    ExpectDenied(status, path);
    EXPECT_NE(status.message().find("'" + std::string(path) + "'"), std::string::npos) << status.message();
  }
  Status loop = store_->ResolvePath("loop1").status();
  EXPECT_FALSE(loop.ok());
  EXPECT_NE(loop.message().find("loop1"), std::string::npos) << loop.message();
  ExpectOutsideUntouched();
}

// The filter judges a file where it is, not by the link it was named through.
TEST_P(FsEscapeTest, GrepFileFilterSeesResolvedPaths) {
  std::mutex mutex;
  std::set<std::string> offered;
  GrepOptions options;
  options.file_filter = [&](std::string_view path) {
    std::lock_guard lock(mutex);
    offered.emplace(path);
    return true;
  };
  options.paths = {"link_in", "chain_in1", "src/up/src"};
  Result<GrepResult> result = store_->Grep("main", options);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  std::vector<std::string> paths;
  for (const GrepFileMatches& file : result->matches) paths.push_back(file.path);
  EXPECT_EQ(paths, (std::vector<std::string>{"chain_in1", "link_in/main.c", "src/up/src/main.c"}));
  EXPECT_EQ(offered, std::set<std::string>{"src/main.c"});

  options.file_filter = [](std::string_view path) { return path != "src/main.c"; };
  result = store_->Grep("main", options);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_TRUE(result->matches.empty());
}

TEST_P(FsEscapeTest, SymlinkLoopsFailCleanly) {
  Status status = store_->Read("loop1").status();
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("loop1"), std::string::npos) << status.message();
}

TEST_P(FsEscapeTest, GrepNeverReportsOutsideContent) {
  Result<GrepResult> result = store_->Grep("SECRET|OUTSIDE|main", GrepOptions{});
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  std::vector<std::string> paths;
  for (const GrepFileMatches& file : result->matches) paths.push_back(file.path);
  EXPECT_EQ(paths, std::vector<std::string>{"src/main.c"});  // symlinks are not descended
  GrepOptions through_link;
  through_link.paths = {"link_in"};
  result = store_->Grep("main", through_link);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  ASSERT_EQ(result->matches.size(), 1u);
  EXPECT_EQ(result->matches[0].path, "link_in/main.c");
}

// Another thread keeps swapping a directory of the project for a symlink to
// outside (one atomic renameat2 exchange each time) while reads and writes
// run through it: no byte outside may be read or written.
TEST_P(FsEscapeTest, SwappingADirectoryForASymlinkNeverLeaksOutside) {
  WriteRealFile(root_ + "/race/f.txt", "INSIDE\n");
  MakeSymlink(outside_, root_ + "/race_alt");
  WriteRealFile(outside_ + "/f.txt", "OUTSIDE\n");
  std::atomic<bool> stop{false};
  std::atomic<int> swaps{0};
  std::thread swapper([&] {
    while (!stop.load()) {
      ASSERT_EQ(::renameat2(AT_FDCWD, (root_ + "/race").c_str(), AT_FDCWD, (root_ + "/race_alt").c_str(),
                            RENAME_EXCHANGE), 0);
      swaps.fetch_add(1);
    }
  });
  int reads_ok = 0, reads_denied = 0;
  std::string first_refusal;
  for (int i = 0; i < 3000; ++i) {
    Result<std::string> content = store_->Read("race/f.txt");
    if (content.ok()) {
      ASSERT_EQ(*content, "INSIDE\n") << "read through the swapped symlink at iteration " << i;
      ++reads_ok;
    } else {
      if (first_refusal.empty()) first_refusal = content.status().ToString();
      ++reads_denied;
    }
    (void)store_->Write("race/w.txt", "written");
    (void)store_->Write("race/f.txt", "INSIDE\n");
    (void)store_->Write("race/sub/deep.txt", "deep", WriteMode::kAppend);
  }
  stop = true;
  swapper.join();
  EXPECT_GT(swaps.load(), 100);
  EXPECT_GT(reads_ok, 0);
  EXPECT_EQ(ReadRealFile(outside_ + "/f.txt"), "OUTSIDE\n");
  EXPECT_FALSE(RealPathExists(outside_ + "/w.txt"));
  EXPECT_FALSE(RealPathExists(outside_ + "/sub"));
  std::cout << "reads ok " << reads_ok << ", refused " << reads_denied << ", swaps " << swaps << "; first refusal: " << first_refusal << "\n";
}

TEST_P(FsEscapeTest, RootIsHeldByDescriptor) {
  EXPECT_EQ(store_->DisplayRoot(), root_);
  ASSERT_EQ(::rename(root_.c_str(), (base_.path() + "/moved").c_str()), 0);
  MakeDirectory(root_);  // a new, empty directory at the old path
  EXPECT_EQ(*store_->Read("src/main.c"), "int main() { return 0; }\n");
}

INSTANTIATE_TEST_SUITE_P(Resolution, FsEscapeTest,
                         ::testing::Values(FsResolution::kAuto, FsResolution::kComponentWalk),
                         [](const ::testing::TestParamInfo<FsResolution>& param_info) {
                           return param_info.param == FsResolution::kAuto ? "Openat2" : "ComponentWalk";
                         });

TEST(FsStoreOpenTest, MissingOrNonDirectoryRootIsAClearError) {
  TempDir base;
  Result<std::unique_ptr<ProjectFiles>> missing = OpenFsStore(base.path() + "/nope");
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(missing.status().message(), "Project directory '" + base.path() + "/nope' does not exist");
  WriteRealFile(base.path() + "/file", "x");
  EXPECT_EQ(OpenFsStore(base.path() + "/file").status().code(), StatusCode::kNotDirectory);
  EXPECT_EQ(OpenFsStore("").status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace toolvfs
