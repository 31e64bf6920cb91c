// Every op and error of a vfsd session, on every store (Backends()).

#include <dirent.h>

#include <memory>
#include <string>

#include "policy/audit.h"
#include "vfsd/vfsd_test_util.h"

namespace toolvfs {
namespace {

// Open descriptors of this process: temp files and pipes must not leak.
int OpenDescriptorCount() {
  int count = 0;
  DIR* directory = ::opendir("/proc/self/fd");
  if (directory == nullptr) return -1;
  while (struct dirent* entry = ::readdir(directory)) count += entry->d_name[0] != '.';
  ::closedir(directory);
  return count;
}

class VfsdSessionTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    MakeDirectory(dir_.Join("project"));
    MakeDirectory(dir_.Join("temp"));
    store_ = GetParam().open(dir_.Join("project"));
    ASSERT_TRUE(store_->Write("logs/a.txt", "hello\n").ok());
    ASSERT_TRUE(store_->Write("logs2/b.txt", "sibling\n").ok());
    ASSERT_TRUE(store_->Write("logs/sub/c.txt", "deep\n").ok());
    ASSERT_TRUE(store_->Write("data/big.bin", BigContent()).ok());
    ASSERT_TRUE(store_->Write(".env", "SECRET=1\n").ok());
    options_.allow = {"logs", "data"};
    options_.temp_directory = dir_.Join("temp");
  }

  static std::string BigContent() {
    std::string content;
    for (int index = 0; content.size() < 10000; ++index) content += "line " + std::to_string(index) + "\n";
    content.resize(10000);
    return content;
  }

  Harness Start() { return Harness(*store_, options_); }

  TempDir dir_;
  std::unique_ptr<ProjectFiles> store_;
  VfsdOptions options_;
};

TEST_P(VfsdSessionTest, PingAnswersPongUnderTheRequestId) {
  Harness harness = Start();
  Answer answer = harness.Call("ping");
  ASSERT_TRUE(answer.ok()) << answer;
  EXPECT_TRUE(answer.Bool("pong"));
  EXPECT_EQ(answer.code(), "");
}

TEST_P(VfsdSessionTest, OpenReadStreamsAFileInChunksUntilEof) {
  Harness harness = Start();
  uint64_t handle = harness.Open("open_read", PathParams("data/big.bin"));
  Answer first = harness.Read(handle, 4096);
  ASSERT_TRUE(first.ok()) << first;
  EXPECT_EQ(first.Data().size(), 4096u);
  EXPECT_FALSE(first.Bool("eof"));
  EXPECT_EQ(first.Data() + harness.ReadAll(handle), BigContent());
  // At the end: nothing more, eof again.
  Answer after = harness.Read(handle, 4096);
  EXPECT_EQ(after.Data(), "");
  EXPECT_TRUE(after.Bool("eof"));
  EXPECT_TRUE(harness.Close(handle).ok());
}

TEST_P(VfsdSessionTest, ReadMaxIsClampedToReadMaxWithoutError) {
  options_.read_max = 16;
  Harness harness = Start();
  uint64_t handle = harness.Open("open_read", PathParams("data/big.bin"));
  Answer clamped = harness.Read(handle, 1 << 20);
  ASSERT_TRUE(clamped.ok()) << clamped;
  EXPECT_EQ(clamped.Data(), BigContent().substr(0, 16));
  Answer defaulted = harness.Call("read", "{\"h\":" + std::to_string(handle) + "}");
  ASSERT_TRUE(defaulted.ok()) << defaulted;
  EXPECT_EQ(defaulted.Data(), BigContent().substr(16, 16));
  Answer zero = harness.Read(handle, 0);
  EXPECT_EQ(zero.code(), "E_ARG") << zero;
  EXPECT_NE(zero.message().find("'max'"), std::string::npos) << zero;
}

TEST_P(VfsdSessionTest, HandlesAreSequentialFromOneAndNeverReused) {
  Harness harness = Start();
  EXPECT_EQ(harness.Open("open_read", PathParams("logs/a.txt")), 1u);
  Answer pipe = harness.Call("make_pipe");
  ASSERT_TRUE(pipe.ok()) << pipe;
  EXPECT_EQ(pipe.Uint("r"), 2u);
  EXPECT_EQ(pipe.Uint("w"), 3u);
  EXPECT_EQ(harness.Open("temp"), 4u);
  EXPECT_TRUE(harness.Close(1).ok());
  EXPECT_EQ(harness.Open("open_write", PathParams("logs/new.txt")), 5u);
  EXPECT_EQ(harness.session().OpenHandles(), 4u);
}

TEST_P(VfsdSessionTest, EveryOpOnAClosedOrUnknownHandleIsEClosed) {
  Harness harness = Start();
  uint64_t handle = harness.Open("open_read", PathParams("logs/a.txt"));
  ASSERT_TRUE(harness.Close(handle).ok());
  for (uint64_t number : {handle, uint64_t{0}, uint64_t{99}, uint64_t{1} << 40}) {
    std::string h = std::to_string(number);
    std::vector<Answer> answers;
    answers.push_back(harness.Read(number, 10));
    answers.push_back(harness.Write(number, "x"));
    answers.push_back(harness.Close(number));
    answers.push_back(harness.Call("stat", "{\"h\":" + h + "}"));
    answers.push_back(harness.Call("seek", "{\"h\":" + h + ",\"offset\":0}"));
    for (const Answer& answer : answers) {
      EXPECT_EQ(answer.code(), "E_CLOSED") << answer;
      EXPECT_NE(answer.message().find("Handle " + h), std::string::npos) << answer;
    }
  }
  EXPECT_NE(harness.Close(handle).message().find("it is closed"), std::string::npos);
  EXPECT_NE(harness.Close(99).message().find("no such handle"), std::string::npos);
}

TEST_P(VfsdSessionTest, WrongDirectionIsEPerm) {
  Harness harness = Start();
  uint64_t reader = harness.Open("open_read", PathParams("logs/a.txt"));
  uint64_t writer = harness.Open("open_write", PathParams("logs/out.txt"));
  Answer pipe = harness.Call("make_pipe");
  EXPECT_EQ(harness.Write(reader, "x").code(), "E_PERM");
  EXPECT_EQ(harness.Read(writer, 10).code(), "E_PERM");
  EXPECT_EQ(harness.Read(pipe.Uint("w"), 10).code(), "E_PERM");
  Answer into_reader = harness.Write(pipe.Uint("r"), "x");
  EXPECT_EQ(into_reader.code(), "E_PERM");
  EXPECT_NE(into_reader.message().find("the read end of a pipe"), std::string::npos) << into_reader;
}

TEST_P(VfsdSessionTest, OpenWriteReplacesAtCloseAndAnUnclosedHandleLeavesTheOldContent) {
  {
    Harness harness = Start();
    uint64_t handle = harness.Open("open_write", PathParams("logs/a.txt"));
    EXPECT_EQ(harness.Write(handle, "new ").Uint("written"), 4u);
    EXPECT_EQ(harness.Write(handle, "content").Uint("written"), 7u);
    EXPECT_EQ(*store_->Read("logs/a.txt"), "hello\n");  // staged, not yet in place
    Answer stat = harness.Call("stat", "{\"h\":" + std::to_string(handle) + "}");
    EXPECT_EQ(stat.Uint("size"), 11u) << stat;
    EXPECT_EQ(stat.String("mode"), "w");
    // The session ends without close: the write is discarded.
  }
  EXPECT_EQ(*store_->Read("logs/a.txt"), "hello\n");
  Harness harness = Start();
  uint64_t handle = harness.Open("open_write", PathParams("logs/a.txt"));
  harness.Write(handle, "new content");
  ASSERT_TRUE(harness.Close(handle).ok());
  EXPECT_EQ(*store_->Read("logs/a.txt"), "new content");
}

TEST_P(VfsdSessionTest, AppendAddsToTheEndAtClose) {
  Harness harness = Start();
  uint64_t handle = harness.Open("open_write", "{\"path\":\"logs/a.txt\",\"append\":true}");
  harness.Write(handle, "more\n");
  EXPECT_EQ(*store_->Read("logs/a.txt"), "hello\n");
  ASSERT_TRUE(harness.Close(handle).ok());
  EXPECT_EQ(*store_->Read("logs/a.txt"), "hello\nmore\n");
}

TEST_P(VfsdSessionTest, OpenWriteCreatesNewFilesAndTheirDirectoriesAtClose) {
  Harness harness = Start();
  uint64_t handle = harness.Open("open_write", PathParams("logs/new/dir/file.txt"));
  EXPECT_FALSE(*store_->Exists("logs/new/dir/file.txt"));
  harness.Write(handle, "created");
  ASSERT_TRUE(harness.Close(handle).ok());
  EXPECT_EQ(*store_->Read("logs/new/dir/file.txt"), "created");
}

TEST_P(VfsdSessionTest, OpenErrorsNameThePath) {
  Harness harness = Start();
  Answer missing = harness.Call("open_read", PathParams("logs/missing.txt"));
  EXPECT_EQ(missing.code(), "E_NOENT") << missing;
  EXPECT_NE(missing.message().find("logs/missing.txt"), std::string::npos) << missing;
  EXPECT_EQ(harness.Call("open_read", PathParams("logs/sub")).code(), "E_ARG");
  EXPECT_EQ(harness.Call("open_write", PathParams("logs/sub")).code(), "E_ARG");
  EXPECT_EQ(harness.Call("open_write", PathParams("logs/a.txt/below")).code(), "E_ARG");
  EXPECT_EQ(harness.session().OpenHandles(), 0u);
}

TEST_P(VfsdSessionTest, StatByPathAndByHandle) {
  Harness harness = Start();
  Answer file = harness.Call("stat", PathParams("logs/a.txt"));
  ASSERT_TRUE(file.ok()) << file;
  EXPECT_EQ(file.String("kind"), "file");
  EXPECT_EQ(file.Uint("size"), 6u);
  EXPECT_EQ(file.String("mode"), "rw");
  std::string modified = file.String("modified");
  EXPECT_EQ(modified.size(), 24u) << modified;  // 2026-11-26T17:08:51.967Z
  EXPECT_EQ(modified.back(), 'Z');
  Answer directory = harness.Call("stat", PathParams("logs/sub"));
  EXPECT_EQ(directory.String("kind"), "dir") << directory;
  uint64_t handle = harness.Open("open_read", PathParams("data/big.bin"));
  Answer by_handle = harness.Call("stat", "{\"h\":" + std::to_string(handle) + "}");
  ASSERT_TRUE(by_handle.ok()) << by_handle;
  EXPECT_EQ(by_handle.Uint("size"), 10000u);
  EXPECT_EQ(by_handle.String("path"), "data/big.bin");
  EXPECT_EQ(by_handle.String("mode"), "r");
  EXPECT_EQ(harness.Call("stat", "{}").code(), "E_ARG");
  EXPECT_EQ(harness.Call("stat", "{\"path\":\"logs\",\"h\":1}").code(), "E_ARG");
  EXPECT_EQ(harness.Call("stat", PathParams("logs/nothing")).code(), "E_NOENT");
  options_.read_only = true;
  Harness read_only = Start();
  EXPECT_EQ(read_only.Call("stat", PathParams("logs/a.txt")).String("mode"), "r");
}

TEST_P(VfsdSessionTest, ListIsSortedWithKinds) {
  ASSERT_TRUE(store_->Write("logs/B.txt", "").ok());
  Harness harness = Start();
  Answer listed = harness.Call("list", PathParams("logs"));
  ASSERT_TRUE(listed.ok()) << listed;
  const rapidjson::Value& entries = listed.result()["entries"];
  ASSERT_EQ(entries.Size(), 3u) << listed;
  EXPECT_STREQ(entries[0]["name"].GetString(), "B.txt");
  EXPECT_STREQ(entries[1]["name"].GetString(), "a.txt");
  EXPECT_STREQ(entries[1]["kind"].GetString(), "file");
  EXPECT_STREQ(entries[2]["name"].GetString(), "sub");
  EXPECT_STREQ(entries[2]["kind"].GetString(), "dir");
  EXPECT_EQ(harness.Call("list", PathParams("logs/none")).code(), "E_NOENT");
  EXPECT_EQ(harness.Call("list", PathParams("logs/a.txt")).code(), "E_ARG");
}

TEST_P(VfsdSessionTest, SeekSetsCurrentAndEndPositions) {
  Harness harness = Start();
  uint64_t handle = harness.Open("open_read", PathParams("data/big.bin"));
  std::string h = std::to_string(handle);
  EXPECT_EQ(harness.Call("seek", "{\"h\":" + h + ",\"offset\":100}").Uint("offset"), 100u);
  EXPECT_EQ(harness.Read(handle, 5).Data(), BigContent().substr(100, 5));
  EXPECT_EQ(harness.Call("seek", "{\"h\":" + h + ",\"offset\":-5,\"whence\":\"cur\"}").Uint("offset"), 100u);
  EXPECT_EQ(harness.Call("seek", "{\"h\":" + h + ",\"offset\":-10,\"whence\":\"end\"}").Uint("offset"), 9990u);
  Answer tail = harness.Read(handle, 4096);
  EXPECT_EQ(tail.Data(), BigContent().substr(9990));
  EXPECT_TRUE(tail.Bool("eof"));
  Answer negative = harness.Call("seek", "{\"h\":" + h + ",\"offset\":-1}");
  EXPECT_EQ(negative.code(), "E_ARG") << negative;
  Answer whence = harness.Call("seek", "{\"h\":" + h + ",\"offset\":0,\"whence\":\"middle\"}");
  EXPECT_EQ(whence.code(), "E_ARG");
  EXPECT_NE(whence.message().find("'middle'"), std::string::npos) << whence;
  Answer pipe = harness.Call("make_pipe");
  EXPECT_EQ(harness.Call("seek", "{\"h\":" + std::to_string(pipe.Uint("r")) + ",\"offset\":0}").code(), "E_ARG");
}

TEST_P(VfsdSessionTest, TempFilesAreReadWriteInvisibleAndGoneAtCloseAndAtTheEnd) {
  int before = OpenDescriptorCount();
  std::vector<DirEntry> project_before = *store_->ListDir("");
  {
    Harness harness = Start();
    uint64_t temp = harness.Open("temp");
    EXPECT_EQ(harness.Write(temp, "scratch data").Uint("written"), 12u);
    EXPECT_EQ(harness.Call("seek", "{\"h\":" + std::to_string(temp) + ",\"offset\":0}").Uint("offset"), 0u);
    EXPECT_EQ(harness.ReadAll(temp), "scratch data");
    Answer stat = harness.Call("stat", "{\"h\":" + std::to_string(temp) + "}");
    EXPECT_EQ(stat.String("kind"), "temp") << stat;
    EXPECT_EQ(stat.Uint("size"), 12u);
    // Nobody else can see it: no name in the temp directory.
    EXPECT_EQ(ListRealDirectory(dir_.Join("temp")), std::vector<std::string>{});
    EXPECT_EQ(OpenDescriptorCount(), before + 1);
    ASSERT_TRUE(harness.Close(temp).ok());
    EXPECT_EQ(OpenDescriptorCount(), before);
    harness.Open("temp");
    harness.Open("temp");
    harness.Call("make_pipe");
    EXPECT_EQ(OpenDescriptorCount(), before + 4);
  }
  EXPECT_EQ(OpenDescriptorCount(), before);  // the session's end closed them all
  // Temp files do not belong to the project.
  EXPECT_EQ(*store_->ListDir(""), project_before);
}

TEST_P(VfsdSessionTest, AnUnusableTempDirectoryIsEIo) {
  options_.temp_directory = dir_.Join("missing");
  Harness harness = Start();
  Answer temp = harness.Call("temp");
  EXPECT_EQ(temp.code(), "E_IO") << temp;
  EXPECT_NE(temp.message().find("missing"), std::string::npos) << temp;
  EXPECT_EQ(harness.Call("open_write", PathParams("logs/a.txt")).code(), "E_IO");
  EXPECT_EQ(harness.session().OpenHandles(), 0u);
}

TEST_P(VfsdSessionTest, PipesNeverBlockAndEndAfterTheWriterClosesAndTheyAreDrained) {
  Harness harness = Start();
  Answer pipe = harness.Call("make_pipe");
  uint64_t r = pipe.Uint("r"), w = pipe.Uint("w");
  Answer empty = harness.Read(r, 100);
  EXPECT_EQ(empty.Data(), "");
  EXPECT_FALSE(empty.Bool("eof"));
  EXPECT_EQ(harness.Write(w, "abc").Uint("written"), 3u);
  EXPECT_EQ(harness.Call("stat", "{\"h\":" + std::to_string(r) + "}").Uint("size"), 3u);
  ASSERT_TRUE(harness.Close(w).ok());
  Answer data = harness.Read(r, 2);
  EXPECT_EQ(data.Data(), "ab");
  EXPECT_FALSE(data.Bool("eof"));  // not drained yet
  EXPECT_EQ(harness.Read(r, 100).Data(), "c");
  Answer end = harness.Read(r, 100);
  EXPECT_EQ(end.Data(), "");
  EXPECT_TRUE(end.Bool("eof"));
}

TEST_P(VfsdSessionTest, AFullPipeTakesWhatFitsThenNothing) {
  Harness harness = Start();
  Answer pipe = harness.Call("make_pipe");
  uint64_t r = pipe.Uint("r"), w = pipe.Uint("w");
  std::string chunk(4096, 'x');
  uint64_t total = 0;
  Answer last;
  for (int round = 0; round < 1000; ++round) {
    last = harness.Write(w, chunk);
    ASSERT_TRUE(last.ok()) << last;
    total += last.Uint("written");
    if (last.Uint("written") == 0) break;
  }
  EXPECT_EQ(last.Uint("written"), 0u);  // full: nothing, at once
  EXPECT_GE(total, 4096u);
  // Drain it and everything written comes out.
  uint64_t drained = 0;
  for (int round = 0; round < 1000; ++round) {
    Answer read = harness.Read(r, 4096);
    if (read.Data().empty()) break;
    drained += read.Data().size();
  }
  EXPECT_EQ(drained, total);
}

TEST_P(VfsdSessionTest, WritingToAPipeWhoseReaderClosedIsEIoAndTheSessionGoesOn) {
  Harness harness = Start();
  Answer pipe = harness.Call("make_pipe");
  ASSERT_TRUE(harness.Close(pipe.Uint("r")).ok());
  Answer broken = harness.Write(pipe.Uint("w"), "lost");
  EXPECT_EQ(broken.code(), "E_IO") << broken;
  EXPECT_NE(broken.message().find("read end of the pipe is closed"), std::string::npos) << broken;
  EXPECT_TRUE(harness.Call("ping").ok());
}

TEST_P(VfsdSessionTest, ThePipeCarriesAFileFromOneHandleToAnother) {
  Harness harness = Start();
  uint64_t source = harness.Open("open_read", PathParams("data/big.bin"));
  uint64_t target = harness.Open("open_write", PathParams("data/copy.bin"));
  Answer pipe = harness.Call("make_pipe");
  uint64_t r = pipe.Uint("r"), w = pipe.Uint("w");
  bool source_done = false;
  for (int round = 0; round < 10000; ++round) {
    if (!source_done) {
      Answer chunk = harness.Read(source, 1000);
      ASSERT_TRUE(harness.Write(w, chunk.Data()).Uint("written") == chunk.Data().size());
      if (chunk.Bool("eof")) {
        source_done = true;
        harness.Close(w);
      }
    }
    Answer out = harness.Read(r, 4096);
    harness.Write(target, out.Data());
    if (out.Bool("eof")) break;
  }
  ASSERT_TRUE(harness.Close(target).ok());
  EXPECT_EQ(*store_->Read("data/copy.bin"), BigContent());
}

TEST_P(VfsdSessionTest, TheAllowlistMatchesByComponent) {
  Harness harness = Start();
  EXPECT_TRUE(harness.Call("open_read", PathParams("logs/a.txt")).ok());
  EXPECT_TRUE(harness.Call("open_read", PathParams("./logs/../logs/sub/c.txt")).ok());
  Answer sibling = harness.Call("open_read", PathParams("logs2/b.txt"));
  EXPECT_EQ(sibling.code(), "E_PERM") << sibling;
  EXPECT_NE(sibling.message().find("'logs2/b.txt'"), std::string::npos) << sibling;
  EXPECT_NE(sibling.message().find("not at or below an allowed prefix"), std::string::npos) << sibling;
  EXPECT_EQ(harness.Call("open_write", PathParams("logs2/x")).code(), "E_PERM");
  EXPECT_EQ(harness.Call("stat", PathParams("logs2/b.txt")).code(), "E_PERM");
  EXPECT_EQ(harness.Call("list", PathParams("logs2")).code(), "E_PERM");
}

TEST_P(VfsdSessionTest, NoPrefixAllowsNothing) {
  options_.allow.clear();
  Harness harness = Start();
  EXPECT_EQ(harness.Call("open_read", PathParams("logs/a.txt")).code(), "E_PERM");
  EXPECT_EQ(harness.Call("list", PathParams(".")).code(), "E_PERM");
  EXPECT_TRUE(harness.Call("temp").ok());  // not a project file
}

TEST_P(VfsdSessionTest, DirectoriesAboveAllowedPrefixesListOnlyWhatLeadsThere) {
  options_.allow = {"logs/sub"};
  Harness harness = Start();
  Answer root = harness.Call("list", PathParams("."));
  ASSERT_TRUE(root.ok()) << root;
  ASSERT_EQ(root.result()["entries"].Size(), 1u) << root;
  EXPECT_STREQ(root.result()["entries"][0]["name"].GetString(), "logs");
  Answer logs = harness.Call("list", PathParams("logs"));
  ASSERT_EQ(logs.result()["entries"].Size(), 1u) << logs;
  EXPECT_STREQ(logs.result()["entries"][0]["name"].GetString(), "sub");
  EXPECT_TRUE(harness.Call("stat", PathParams("logs")).ok());
  EXPECT_EQ(harness.Call("open_read", PathParams("logs/a.txt")).code(), "E_PERM");
}

TEST_P(VfsdSessionTest, SensitivePathsStayDeniedInsideAnAllowedPrefix) {
  options_.allow = {"."};
  Harness harness = Start();
  Answer env = harness.Call("open_read", PathParams(".env"));
  EXPECT_EQ(env.code(), "E_PERM") << env;
  EXPECT_NE(env.message().find("sensitive path"), std::string::npos) << env;
  EXPECT_EQ(harness.Call("open_write", PathParams(".toolvfs/audit.jsonl")).code(), "E_PERM");
  EXPECT_EQ(harness.Call("open_write", PathParams(".git/config")).code(), "E_PERM");
  Answer root = harness.Call("list", PathParams("."));
  for (const rapidjson::Value& entry : root.result()["entries"].GetArray()) {
    EXPECT_STRNE(entry["name"].GetString(), ".env");  // not shown either
  }
}

TEST_P(VfsdSessionTest, InitNarrowsAndNeverWidens) {
  Harness harness = Start();
  Answer narrowed = harness.Call("init", "{\"allow\":[\"logs/sub\"],\"read_only\":false}");
  ASSERT_TRUE(narrowed.ok()) << narrowed;
  EXPECT_EQ(narrowed.String("status"), "ready");
  EXPECT_EQ(harness.Call("open_read", PathParams("logs/a.txt")).code(), "E_PERM");
  EXPECT_TRUE(harness.Call("open_read", PathParams("logs/sub/c.txt")).ok());
  Answer widen = harness.Call("init", "{\"allow\":[\"logs\"]}");
  EXPECT_EQ(widen.code(), "E_PERM") << widen;
  EXPECT_NE(widen.message().find("'logs'"), std::string::npos) << widen;
  Answer everything = Start().Call("init", "{\"allow\":[\".\"]}");
  EXPECT_EQ(everything.code(), "E_PERM");
  EXPECT_NE(everything.message().find("'.'"), std::string::npos) << everything;
  EXPECT_EQ(Start().Call("init", "{\"allow\":[\"logs2\"]}").code(), "E_PERM");  // a sibling, not below
  EXPECT_EQ(Start().Call("init", "{\"allow\":[\"../x\"]}").code(), "E_PERM");
  EXPECT_EQ(Start().Call("init", "{\"allow\":[\"/etc\"]}").code(), "E_ARG");
  EXPECT_EQ(Start().Call("init", "{\"allow\":\"logs\"}").code(), "E_ARG");
}

TEST_P(VfsdSessionTest, InitCanMakeTheSessionReadOnlyButNotWritableAgain) {
  Harness harness = Start();
  ASSERT_TRUE(harness.Call("init", "{\"read_only\":true}").ok());
  Answer write = harness.Call("open_write", PathParams("logs/x.txt"));
  EXPECT_EQ(write.code(), "E_PERM") << write;
  EXPECT_NE(write.message().find("read-only"), std::string::npos) << write;
  ASSERT_TRUE(harness.Call("init", "{\"read_only\":false}").ok());
  EXPECT_EQ(harness.Call("open_write", PathParams("logs/x.txt")).code(), "E_PERM");
  EXPECT_TRUE(harness.Call("open_read", PathParams("logs/a.txt")).ok());
}

TEST_P(VfsdSessionTest, ReadOnlyFromTheCommandLineRefusesWritesButNotTempsAndPipes) {
  options_.read_only = true;
  Harness harness = Start();
  EXPECT_EQ(harness.Call("open_write", PathParams("logs/a.txt")).code(), "E_PERM");
  EXPECT_EQ(harness.Call("open_write", "{\"path\":\"logs/a.txt\",\"append\":true}").code(), "E_PERM");
  EXPECT_TRUE(harness.Call("temp").ok());
  EXPECT_TRUE(harness.Call("make_pipe").ok());
  EXPECT_EQ(*store_->Read("logs/a.txt"), "hello\n");
}

TEST_P(VfsdSessionTest, UnknownOpsAndBadParamsAreNamed) {
  Harness harness = Start();
  Answer unknown = harness.Call("frobnicate");
  EXPECT_EQ(unknown.code(), "E_UNSUPPORTED");
  EXPECT_NE(unknown.message().find("'frobnicate'"), std::string::npos) << unknown;
  Answer typo = harness.Call("read", "{\"hanlde\":1}");
  EXPECT_EQ(typo.code(), "E_ARG");
  EXPECT_NE(typo.message().find("'hanlde'"), std::string::npos) << typo;
  Answer missing = harness.Call("open_read", "{}");
  EXPECT_EQ(missing.code(), "E_ARG");
  EXPECT_NE(missing.message().find("'path' is missing"), std::string::npos) << missing;
  EXPECT_EQ(harness.Call("open_read", "{\"path\":7}").code(), "E_ARG");
  EXPECT_EQ(harness.Call("read", "{\"h\":\"1\"}").code(), "E_ARG");
  EXPECT_EQ(harness.Call("read", "{\"h\":1.5}").code(), "E_ARG");
  EXPECT_EQ(harness.Call("open_write", "{\"path\":\"logs/x\",\"append\":\"yes\"}").code(), "E_ARG");
  EXPECT_EQ(harness.Call("ping", "{\"extra\":1}").code(), "E_ARG");
  uint64_t temp = harness.Open("temp");
  Answer bad_base64 = harness.Call("write", "{\"h\":" + std::to_string(temp) + ",\"data\":\"@@@\"}");
  EXPECT_EQ(bad_base64.code(), "E_ARG");
  EXPECT_NE(bad_base64.message().find("base64"), std::string::npos) << bad_base64;
  EXPECT_EQ(harness.Call("open_write", PathParams(".")).code(), "E_ARG");
}

TEST_P(VfsdSessionTest, TheHandleLimitIsELimit) {
  options_.max_handles = 3;
  Harness harness = Start();
  harness.Open("temp");
  harness.Open("temp");
  Answer pipe = harness.Call("make_pipe");  // needs two
  EXPECT_EQ(pipe.code(), "E_LIMIT") << pipe;
  EXPECT_NE(pipe.message().find("3"), std::string::npos) << pipe;
  harness.Open("temp");
  EXPECT_EQ(harness.Call("open_read", PathParams("logs/a.txt")).code(), "E_LIMIT");
  EXPECT_EQ(harness.Call("temp").code(), "E_LIMIT");
  ASSERT_TRUE(harness.Close(1).ok());
  EXPECT_TRUE(harness.Call("temp").ok());
}

// A review staged 210 MB in one temp handle with no limit (and a client
// has 1,024 handles): the open write and temp handles share a budget, a
// hole made by seeking past the end counted too.
TEST_P(VfsdSessionTest, TheStagedBytesOfTheOpenHandlesAreBounded) {
  options_.max_staged_bytes = 1000;
  Harness harness = Start();
  uint64_t temp = harness.Open("temp");
  uint64_t write = harness.Open("open_write", PathParams("logs/staged.txt"));
  ASSERT_TRUE(harness.Write(temp, std::string(600, 't')).ok());
  Answer over = harness.Write(write, std::string(401, 'w'));
  EXPECT_EQ(over.code(), "E_LIMIT") << over;
  EXPECT_NE(over.message().find("over the limit of 1000 (--max-staged-bytes)"), std::string::npos) << over;
  ASSERT_TRUE(harness.Write(write, std::string(400, 'w')).ok());
  // Rewriting bytes already staged costs nothing more; a hole does.
  ASSERT_TRUE(harness.Call("seek", "{\"h\":" + std::to_string(temp) + ",\"offset\":0}").ok());
  EXPECT_TRUE(harness.Write(temp, std::string(600, 'T')).ok());
  ASSERT_TRUE(harness.Call("seek", "{\"h\":" + std::to_string(temp) + ",\"offset\":5000}").ok());
  EXPECT_EQ(harness.Write(temp, "x").code(), "E_LIMIT");
  // Closing a handle gives its bytes back; the write handle commits.
  ASSERT_TRUE(harness.Close(write).ok());
  EXPECT_EQ(*store_->Read("logs/staged.txt"), std::string(400, 'w'));
  ASSERT_TRUE(harness.Call("seek", "{\"h\":" + std::to_string(temp) + ",\"offset\":600}").ok());
  EXPECT_TRUE(harness.Write(temp, std::string(400, 'u')).ok());
}

TEST_P(VfsdSessionTest, VersionOneIsSpokenOthersAreUnsupported) {
  Harness harness = Start();
  Answer one = ParseAnswer(harness.session().Answer(R"({"id":"v","op":"ping","version":1})"));
  EXPECT_TRUE(one.ok()) << one;
  Answer two = ParseAnswer(harness.session().Answer(R"({"id":"v","op":"ping","version":2})"));
  EXPECT_EQ(two.code(), "E_UNSUPPORTED") << two;
  EXPECT_STREQ(two.json["id"].GetString(), "v");
}

TEST_P(VfsdSessionTest, EveryOpIsAudited) {
  std::vector<AuditRecord> records;
  std::unique_ptr<AuditSink> sink = NewCallbackAuditSink([&](const AuditRecord& record) { records.push_back(record); });
  options_.audit = sink.get();
  options_.call_id = "session-1";
  Harness harness = Start();
  harness.Call("ping");
  uint64_t handle = harness.Open("open_read", PathParams("logs/a.txt"));
  harness.Read(handle, 100);
  harness.Call("open_read", PathParams("logs2/b.txt"));
  harness.Close(handle);
  harness.Close(handle);
  harness.session().Answer("not json");
  ASSERT_EQ(records.size(), 7u);
  EXPECT_EQ(records[0].method, "vfsd.ping");
  EXPECT_EQ(records[0].tool, "vfsd");
  EXPECT_EQ(records[0].call_id, "session-1");
  EXPECT_EQ(records[1].method, "vfsd.open_read");
  EXPECT_EQ(records[1].target, "logs/a.txt");
  EXPECT_EQ(records[1].decision, AuditDecision::kAllow);
  EXPECT_EQ(records[1].rule, "filesystem.allow \"logs\"");
  EXPECT_EQ(records[2].method, "vfsd.read");
  EXPECT_EQ(records[2].target, "handle 1 logs/a.txt (6 bytes)");
  EXPECT_EQ(records[3].decision, AuditDecision::kDeny);
  EXPECT_EQ(records[3].code, -32001);
  EXPECT_EQ(records[4].code, 0);
  EXPECT_EQ(records[5].decision, AuditDecision::kDeny);
  EXPECT_EQ(records[5].rule, "refused: E_CLOSED");
  EXPECT_EQ(records[6].method, "vfsd");
  EXPECT_EQ(records[6].rule, "refused: E_ARG");
  for (const AuditRecord& record : records) EXPECT_GT(record.bytes_in, 4u);
}

INSTANTIATE_TEST_SUITE_P(Stores, VfsdSessionTest, ::testing::ValuesIn(Backends()), BackendName);

TEST(VfsdSessionOptionsTest, InvalidOptionsAreNamed) {
  std::unique_ptr<ProjectFiles> store = NewMemoryStore();
  VfsdOptions options;
  options.read_max = 0;
  EXPECT_NE(NewVfsdSession(*store, options).status().message().find("read limit 0"), std::string::npos);
  options.read_max = kMaxReadMax + 1;
  EXPECT_EQ(NewVfsdSession(*store, options).status().code(), StatusCode::kInvalidArgument);
  options.read_max = 4096;
  options.max_handles = 0;
  EXPECT_EQ(NewVfsdSession(*store, options).status().code(), StatusCode::kInvalidArgument);
  options.max_handles = 10;
  options.allow = {"/etc"};
  Result<std::unique_ptr<VfsdSession>> absolute = NewVfsdSession(*store, options);
  EXPECT_EQ(absolute.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(absolute.status().message().find("/etc"), std::string::npos) << absolute.status().message();
}

}  // namespace
}  // namespace toolvfs
