// Path handling does bounded work (issue 15 item 4): a path of 800,000
// components took 33 s to walk (quadratic), holding up timeouts and Ctrl+C.
// Now any path over kMaxPathBytes is refused at once, with a one-line error
// that names the limit without echoing the whole path.

#include <string>
#include <string_view>

#include <gtest/gtest.h>

#include "host/method_test_util.h"
#include "host/test_gate.h"
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
  std::string at_limit(kMaxPathBytes, 'a');
  EXPECT_TRUE(NormalizePath(at_limit).ok());
  Result<std::string> over = NormalizePath(at_limit + "a");
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(over.status().message(),
            "Invalid path '" + std::string(48, 'a') + "'... (4097 bytes): longer than the limit of 4096 bytes");
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
