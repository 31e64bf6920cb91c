// Path handling does bounded work (issue 15 item 4): a path of 800,000
// components took 33 s to walk (quadratic), holding up timeouts and Ctrl+C.
// Now any path over kMaxPathBytes is refused at once, with a one-line error
// that names the limit without echoing the whole path.

#include <string>
#include <string_view>

#include <gtest/gtest.h>

#include "host/method_test_util.h"
#include "host/test_gate.h"
#include "project/memory_store.h"
#include "project/path.h"
#include "project/project_files.h"
#include "project/test_util.h"

namespace toolvfs {
namespace {

std::string Components(size_t count) {
  std::string path;
  path.reserve(count * 2);
  for (size_t i = 0; i < count; ++i) path += "a/";
  return path;
}

TEST(PathBoundsTest, NormalizeRefusesPathsOverTheLimitNamingIt) {
  // 16 names of the longest length and a trailing '/': 4,096 bytes.
  std::string at_limit;
  for (int i = 0; i < 16; ++i) at_limit += std::string(kMaxNameBytes, 'a') + "/";
  ASSERT_EQ(at_limit.size(), kMaxPathBytes);
  EXPECT_TRUE(NormalizePath(at_limit).ok());
  Result<std::string> over = NormalizePath(at_limit + "a");
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(over.status().message(),
            "Invalid path '" + std::string(48, 'a') + "'... (4097 bytes): longer than the limit of 4096 bytes");
}

// A name a directory cannot hold (over NAME_MAX) was kept by the memory,
// sqlite and postgres stores, and its workspace then failed to export or
// materialize ("File name too long"), found by a review.
TEST(PathBoundsTest, NormalizeRefusesANameOverTheLimitNamingIt) {
  const std::string longest(kMaxNameBytes, 'n');
  EXPECT_TRUE(NormalizePath("dir/" + longest + "/f").ok());
  Result<std::string> over = NormalizePath("dir/" + longest + "n/f");
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(over.status().message(), "Invalid path: its name '" + std::string(48, 'n') +
                                         "'... (256 bytes) is longer than the limit of 255 bytes for one name");
  // The name's start is cut before a character, not inside it: "é" is 2 bytes.
  std::string accented = "a";
  while (accented.size() <= kMaxNameBytes) accented += "\xc3\xa9";
  Result<std::string> cut = NormalizePath(accented);
  ASSERT_FALSE(cut.ok());
  std::string shown = "a";
  for (int i = 0; i < 23; ++i) shown += "\xc3\xa9";  // 47 bytes: a 24th "é" would be cut
  EXPECT_NE(cut.status().message().find("'" + shown + "'... ("), std::string::npos) << cut.status().message();
}

TEST(PathBoundsTest, AStoreKeepingNamesItselfRefusesALongName) {
  std::unique_ptr<ProjectFiles> store = NewMemoryStore();
  Status written = store->Write(std::string(kMaxNameBytes + 1, 'x'), "data");
  EXPECT_EQ(written.code(), StatusCode::kInvalidArgument) << written.ToString();
  EXPECT_TRUE(store->Write(std::string(kMaxNameBytes, 'x'), "data").ok());
}

TEST(PathBoundsTest, EveryMethodRefusesAHugePathInOneShortLine) {
  TempDir dir;
  Result<std::unique_ptr<ProjectFiles>> store = OpenProject(dir.path());
  ASSERT_TRUE(store.ok());
  DefaultGate gate(ProjectWritableTool());
  std::string huge = Components(800'000);
  const std::string_view methods[] = {"fs.read", "fs.write", "fs.exists", "fs.list_dir",
                                      "fs.metadata", "fs.delete"};
  for (std::string_view method : methods) {
    std::string params = "{\"path\":" + Json(huge) + (method == "fs.write" ? ",\"content\":\"x\"}" : "}");
    std::string answer = CallMethod(**store, gate.gate, method, params);
    EXPECT_NE(answer.find("longer than the limit of 4096 bytes"), std::string::npos) << method;
    EXPECT_LT(answer.size(), 300u) << method;
  }
  std::string rename = CallMethod(**store, gate.gate, "fs.rename",
                                  "{\"from\":\"x\",\"to\":" + Json(huge) + "}");
  EXPECT_NE(rename.find("longer than the limit of 4096 bytes"), std::string::npos);
  std::string grep = CallMethod(**store, gate.gate, "fs.grep",
                                "{\"pattern\":\"x\",\"paths\":[" + Json(huge) + "]}");
  EXPECT_NE(grep.find("longer than the limit of 4096 bytes"), std::string::npos);
  // Nothing was created on the way.
  EXPECT_FALSE(std::filesystem::exists(dir.Join("a")));
}

TEST(PathBoundsTest, DeepPathsWithinTheLimitStillWork) {
  TempDir dir;
  Result<std::unique_ptr<ProjectFiles>> store = OpenProject(dir.path());
  ASSERT_TRUE(store.ok());
  // 201 components, all named "a": each new directory is a new one, not a
  // racer deleting the last one again.
  std::string deep = Components(200) + "f";
  Status written = (*store)->Write(deep, "deep");
  ASSERT_TRUE(written.ok()) << written.ToString();
  Result<std::string> back = (*store)->Read(deep);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, "deep");
}

}  // namespace
}  // namespace toolvfs
