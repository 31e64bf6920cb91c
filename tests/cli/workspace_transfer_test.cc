// CopyTreeInto (src/cli/workspace_transfer.h) with a side changed between
// the copy's check of the target and its writes, deterministically: the
// source runs a hook when the copy reads or lists it. What the reviewer's
// race scripts did with timing (a symbolic link planted in an export
// target, a file of an imported directory swapped for a link to a secret).
#include "cli/workspace_transfer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fcntl.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "core/unique_fd.h"
#include "project/forwarding_store.h"
#include "project/fs_store.h"
#include "project/memory_store.h"
#include "project/test_util.h"

namespace toolvfs {
namespace {

using ::testing::HasSubstr;

namespace fs = std::filesystem;

// A store that runs `hook` once, after the copy read the file `read_path`
// or listed the directory `listed_path` (through its WithoutSymlinks()
// view too, which is what the copy acts through).
class HookedStore final : public ForwardingProjectFiles {
 public:
  struct Hook {
    std::string read_path;    // run after this file is read ("": never)
    std::string listed_path;  // run after this directory is listed ("-": never)
    std::function<void()> run;
  };

  HookedStore(ProjectFiles& target, Hook& hook) : ForwardingProjectFiles(target), hook_(hook) {}

  Result<std::string> Read(std::string_view path) override {
    Result<std::string> content = ForwardingProjectFiles::Read(path);
    if (path == hook_.read_path) RunOnce();
    return content;
  }

  Result<std::vector<DirEntry>> ListDir(std::string_view path) override {
    Result<std::vector<DirEntry>> entries = ForwardingProjectFiles::ListDir(path);
    if (path == hook_.listed_path) RunOnce();
    return entries;
  }

 protected:
  std::unique_ptr<ProjectFiles> NewWithoutSymlinksView(ProjectFiles& target_view) override {
    return std::make_unique<HookedStore>(target_view, hook_);
  }

 private:
  void RunOnce() {
    if (!hook_.run) return;
    std::function<void()> run = std::move(hook_.run);
    hook_.run = nullptr;
    run();
  }

  Hook& hook_;
};

UniqueFd OpenDirectory(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  EXPECT_TRUE(fd) << path;
  return fd;
}

class ExportRaceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(workspace_->Write("a.txt", "first\n").ok());
    ASSERT_TRUE(workspace_->Write("zz/evil.txt", "escaped\n").ok());
    MakeDirectory(target_);
    MakeDirectory(outside_);
  }

  // Copies the workspace into target_, running `run` after the copy read `read_path`.
  Result<TransferReport> CopyWithHook(std::string read_path, std::function<void()> run) {
    HookedStore::Hook hook{std::move(read_path), "-", std::move(run)};
    HookedStore source(*workspace_, hook);
    UniqueFd target_fd = OpenDirectory(target_);
    return CopyTreeInto(source, target_fd.get(), target_, TransferOptions{});
  }

  TempDir dir_;
  std::unique_ptr<ProjectFiles> workspace_ = NewMemoryStore();
  const std::string target_ = dir_.Join("target");
  const std::string outside_ = dir_.Join("outside");
};

// zz/ passed the check (missing), then became a link to a directory
// outside before the copy created it: mkdir's EEXIST must not take it.
TEST_F(ExportRaceTest, ALinkPlantedWhereADirectoryGoesIsNotWrittenThrough) {
  Result<TransferReport> copied =
      CopyWithHook("a.txt", [&] { fs::create_directory_symlink(outside_, target_ + "/zz"); });
  ASSERT_FALSE(copied.ok());
  EXPECT_THAT(copied.status().message(), HasSubstr("symbolic link"));
  EXPECT_FALSE(fs::exists(outside_ + "/evil.txt"));
}

// zz/ was created by the copy, then replaced by a link to a directory
// outside before the copy wrote zz/evil.txt: the open of the file must not
// follow a link on its way (O_NOFOLLOW alone guards only the last name).
TEST_F(ExportRaceTest, ADirectorySwappedForALinkBeforeItsFileIsWrittenIsNotWrittenThrough) {
  Result<TransferReport> copied = CopyWithHook("zz/evil.txt", [&] {
    fs::remove(target_ + "/zz");
    fs::create_directory_symlink(outside_, target_ + "/zz");
  });
  ASSERT_FALSE(copied.ok());
  EXPECT_THAT(copied.status().message(), HasSubstr("symbolic link"));
  EXPECT_FALSE(fs::exists(outside_ + "/evil.txt"));
  EXPECT_EQ(ReadRealFile(target_ + "/a.txt"), "first\n");
}

// An agent's directory imported (ignoring .env), with zz.txt swapped for a
// link to .env after the copy listed it: the secret is never read under
// the harmless name; the entry is left out like any symbolic link.
TEST(ImportRaceTest, AFileSwappedForALinkToASecretAfterListingIsLeftOut) {
  TempDir dir;
  const std::string agent = dir.Join("agent");
  WriteRealFile(agent + "/.gitignore", ".env\n");
  WriteRealFile(agent + "/.env", "SECRET=hunter2\n");
  WriteRealFile(agent + "/zz.txt", "harmless\n");
  const std::string copy = dir.Join("copy");
  MakeDirectory(copy);

  Result<std::unique_ptr<ProjectFiles>> opened = OpenFsStore(agent);
  ASSERT_TRUE(opened.ok()) << opened.status().message();
  HookedStore::Hook hook{"", "", [&] {
                           fs::remove(agent + "/zz.txt");
                           fs::create_symlink(".env", agent + "/zz.txt");
                         }};
  HookedStore source(**opened, hook);
  TransferOptions options;
  options.skip_ignored = true;
  UniqueFd copy_fd = OpenDirectory(copy);
  Result<TransferReport> copied = CopyTreeInto(source, copy_fd.get(), copy, options);
  ASSERT_TRUE(copied.ok()) << copied.status().message();
  EXPECT_EQ(copied->files, 1u);  // .gitignore
  EXPECT_EQ(copied->ignored, 1u);
  EXPECT_EQ(copied->skipped, 1u);
  EXPECT_FALSE(fs::exists(copy + "/zz.txt"));
  EXPECT_FALSE(fs::exists(copy + "/.env"));
}

}  // namespace
}  // namespace toolvfs
