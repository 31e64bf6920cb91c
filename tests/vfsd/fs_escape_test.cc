// The fs store's escape cases (tests/project/fs_escape_test.cc) through
// vfsd's path ops, with the whole project allowed: the store's rules hold
// behind the daemon, under both resolution routes. And what only the fs
// store does: read handles are open descriptors.

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "vfsd/vfsd_test_util.h"

namespace toolvfs {
namespace {

class VfsdFsEscapeTest : public ::testing::TestWithParam<FsResolution> {
 protected:
  // base/proj (the root), base/proj_secrets/secret.txt, base/outside/file.txt
  void SetUp() override {
    root_ = base_.Join("proj");
    outside_ = base_.Join("outside");
    WriteRealFile(base_.Join("proj_secrets/secret.txt"), "TOP SECRET\n");
    WriteRealFile(outside_ + "/file.txt", "OUTSIDE\n");
    WriteRealFile(root_ + "/src/main.c", "int main() { return 0; }\n");
    WriteRealFile(root_ + "/logs/today.txt", "log\n");
    MakeDirectory(base_.Join("temp"));
    MakeSymlink("../outside", root_ + "/link_out");
    MakeSymlink(outside_, root_ + "/link_out_abs");
    MakeSymlink("../outside/file.txt", root_ + "/link_file_out");
    MakeSymlink("../proj_secrets", root_ + "/sibling");
    MakeSymlink("chain2", root_ + "/chain1");
    MakeSymlink("link_out", root_ + "/chain2");
    MakeSymlink("../outside/new.txt", root_ + "/dangling_out");
    MakeSymlink("src", root_ + "/link_in");
    MakeSymlink("../src/main.c", root_ + "/logs/main_link");
    MakeSymlink("loop2", root_ + "/loop1");
    MakeSymlink("loop1", root_ + "/loop2");
    ASSERT_EQ(::mkfifo((root_ + "/fifo").c_str(), 0644), 0);
    store_ = std::move(*OpenFsStore(root_, {}, GetParam()));
    options_.allow = {"."};
    options_.temp_directory = base_.Join("temp");
  }

  void ExpectOutsideUntouched() {
    EXPECT_EQ(ReadRealFile(outside_ + "/file.txt"), "OUTSIDE\n");
    EXPECT_EQ(ReadRealFile(base_.Join("proj_secrets/secret.txt")), "TOP SECRET\n");
    EXPECT_EQ(ListRealDirectory(outside_), std::vector<std::string>{"file.txt"});
  }

  TempDir base_;
  std::string root_, outside_;
  std::unique_ptr<ProjectFiles> store_;
  VfsdOptions options_;
};

// Opens `path` for writing and closes it after a write: the commit is where
// a staged write would land.
Answer WriteThrough(Harness& harness, const std::string& path) {
  Answer opened = harness.Call("open_write", PathParams(path));
  if (!opened.ok()) return opened;
  uint64_t handle = opened.Uint("handle");
  harness.Write(handle, "pwned");
  return harness.Close(handle);
}

TEST_P(VfsdFsEscapeTest, LexicalEscapesAndBadPathsFailForEveryPathOp) {
  Harness harness(*store_, options_);
  struct Case {
    std::string path;
    std::string code;
  };
  for (const Case& c : {Case{"../outside/file.txt", "E_PERM"}, Case{"src/../../outside/file.txt", "E_PERM"},
                        Case{"../proj_secrets/secret.txt", "E_PERM"}, Case{outside_ + "/file.txt", "E_ARG"},
                        Case{"src/\x01" "evil", "E_ARG"}}) {
    for (const char* op : {"open_read", "open_write", "stat", "list"}) {
      Answer answer = harness.Call(op, PathParams(c.path));
      EXPECT_EQ(answer.code(), c.code) << op << " " << c.path << ": " << answer;
    }
  }
  // Bytes JSON cannot carry as a path: a NUL and invalid UTF-8 in the frame.
  Answer nul = ParseAnswer(harness.session().Answer(std::string("{\"id\":\"n\",\"op\":\"stat\",\"params\":{\"path\":\"src/main.c\\u0000/x\"}}")));
  EXPECT_EQ(nul.code(), "E_ARG") << nul;
  Answer invalid = ParseAnswer(harness.session().Answer("{\"id\":\"u\",\"op\":\"stat\",\"params\":{\"path\":\"src/\xff\xfe\"}}"));
  EXPECT_EQ(invalid.code(), "E_ARG") << invalid;
  ExpectOutsideUntouched();
}

TEST_P(VfsdFsEscapeTest, EscapingSymlinksAreDeniedForEveryPathOp) {
  Harness harness(*store_, options_);
  for (std::string link : {"link_out", "link_out_abs", "chain1", "sibling"}) {
    std::string file = link == "sibling" ? link + "/secret.txt" : link + "/file.txt";
    EXPECT_EQ(harness.Call("open_read", PathParams(file)).code(), "E_PERM") << file;
    EXPECT_EQ(WriteThrough(harness, file).code(), "E_PERM") << file;
    EXPECT_EQ(WriteThrough(harness, link + "/new.txt").code(), "E_PERM") << link;
    EXPECT_EQ(harness.Call("open_write", "{\"path\":" + JsonString(file) + ",\"append\":true}").code(), "E_PERM");
    EXPECT_EQ(harness.Call("stat", PathParams(link)).code(), "E_PERM") << link;
    EXPECT_EQ(harness.Call("stat", PathParams(file)).code(), "E_PERM") << file;
    EXPECT_EQ(harness.Call("list", PathParams(link)).code(), "E_PERM") << link;
  }
  for (std::string path : {"link_file_out", "dangling_out"}) {
    EXPECT_EQ(harness.Call("open_read", PathParams(path)).code(), "E_PERM") << path;
    EXPECT_EQ(WriteThrough(harness, path).code(), "E_PERM") << path;
  }
  EXPECT_FALSE(RealPathExists(outside_ + "/new.txt"));
  EXPECT_EQ(harness.session().OpenHandles(), 0u);
  ExpectOutsideUntouched();
}

TEST_P(VfsdFsEscapeTest, FifosAreRefusedWithoutBlockingAndLoopsFailCleanly) {
  Harness harness(*store_, options_);
  Answer fifo = harness.Call("open_read", PathParams("fifo"));
  EXPECT_EQ(fifo.code(), "E_PERM") << fifo;
  EXPECT_NE(fifo.message().find("FIFO"), std::string::npos) << fifo;
  EXPECT_EQ(harness.Call("open_write", PathParams("fifo")).code(), "E_PERM");
  EXPECT_EQ(harness.Call("stat", PathParams("fifo")).code(), "E_PERM");
  EXPECT_NE(harness.Call("open_read", PathParams("loop1")).code(), "");
}

TEST_P(VfsdFsEscapeTest, SymlinksInsideAreJudgedWhereTheyLead) {
  options_.allow = {"logs"};
  Harness harness(*store_, options_);
  // logs/main_link leads to src/main.c, which is not allowed.
  Answer through = harness.Call("open_read", PathParams("logs/main_link"));
  EXPECT_EQ(through.code(), "E_PERM") << through;
  EXPECT_NE(through.message().find("src/main.c"), std::string::npos) << through;
  // And a link outside the allowed prefix that leads into it is allowed.
  MakeSymlink("logs/today.txt", root_ + "/today_link");
  EXPECT_TRUE(harness.Call("open_read", PathParams("today_link")).ok());
  options_.allow = {"."};
  Harness everything(*store_, options_);
  uint64_t handle = everything.Open("open_read", PathParams("link_in/main.c"));
  EXPECT_EQ(everything.ReadAll(handle), "int main() { return 0; }\n");
}

TEST_P(VfsdFsEscapeTest, AReadHandleIsTheOpenFileItself) {
  Harness harness(*store_, options_);
  uint64_t handle = harness.Open("open_read", PathParams("logs/today.txt"));
  // Replaced by a rename after the open (as every store write does): the
  // handle keeps reading the file it opened.
  WriteRealFile(root_ + "/logs/replacement", "new\n");
  ASSERT_EQ(std::rename((root_ + "/logs/replacement").c_str(), (root_ + "/logs/today.txt").c_str()), 0);
  EXPECT_EQ(harness.ReadAll(handle), "log\n");
}

TEST_P(VfsdFsEscapeTest, AStagedWriteKeepsTheFilesPermissionBits) {
  ASSERT_EQ(::chmod((root_ + "/src/main.c").c_str(), 0751), 0);
  Harness harness(*store_, options_);
  uint64_t handle = harness.Open("open_write", PathParams("src/main.c"));
  harness.Write(handle, "int main() { return 1; }\n");
  ASSERT_TRUE(harness.Close(handle).ok());
  EXPECT_EQ(ReadRealFile(root_ + "/src/main.c"), "int main() { return 1; }\n");
  struct stat status;
  ASSERT_EQ(::stat((root_ + "/src/main.c").c_str(), &status), 0);
  EXPECT_EQ(status.st_mode & 07777, 0751u);
  // No staging file was left in the project.
  EXPECT_EQ(ListRealDirectory(root_ + "/src"), std::vector<std::string>{"main.c"});
}

INSTANTIATE_TEST_SUITE_P(Resolution, VfsdFsEscapeTest,
                         ::testing::Values(FsResolution::kAuto, FsResolution::kComponentWalk),
                         [](const ::testing::TestParamInfo<FsResolution>& resolution) {
                           return resolution.param == FsResolution::kAuto ? std::string("Openat2") : std::string("Walk");
                         });

}  // namespace
}  // namespace toolvfs
