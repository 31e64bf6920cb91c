// The C++ client (sdk/toolvfs/vfsd_client.h) against the real daemon. This
// file includes the SDK only, never toolvfs's own headers: the SDK's
// toolvfs::Result is not core's.

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "project/test_util.h"
#include "toolvfs/vfsd_client.h"

namespace toolvfs {
namespace {

std::string Binary() {
  const char* binary = std::getenv("TOOLVFS_BINARY");
  return binary != nullptr && *binary != '\0' ? binary : TOOLVFS_BUILT_BINARY;
}

class VfsdClientTest : public ::testing::Test {
 protected:
  void SetUp() override { WriteRealFile(dir_.Join("project/logs/a.txt"), "hello\n"); }

  VfsdClient Spawn() {
    return VfsdClient::spawn({"--project", dir_.Join("project"), "--allow", "logs", "--no-audit"}, Binary());
  }

  TempDir dir_;
};

TEST_F(VfsdClientTest, EveryOp) {
  VfsdClient vfsd = Spawn();
  EXPECT_TRUE(vfsd.ping());
  uint64_t handle = vfsd.open_read("logs/a.txt");
  EXPECT_EQ(handle, 1u);
  VfsdChunk first = vfsd.read(handle, 2);
  EXPECT_EQ(first.data, "he");
  EXPECT_FALSE(first.eof);
  EXPECT_EQ(vfsd.seek(handle, -3, "end"), 3u);
  VfsdChunk rest = vfsd.read(handle);
  EXPECT_EQ(rest.data, "lo\n");
  EXPECT_TRUE(rest.eof);
  EXPECT_EQ(vfsd.stat_handle(handle).size, 6u);
  EXPECT_EQ(vfsd.stat("logs").kind, "dir");
  uint64_t out = vfsd.open_write("logs/b.bin");
  std::string binary(256, '\0');
  for (size_t index = 0; index < binary.size(); ++index) binary[index] = static_cast<char>(index);
  EXPECT_EQ(vfsd.write(out, binary), 256u);
  EXPECT_FALSE(RealPathExists(dir_.Join("project/logs/b.bin")));
  vfsd.close(out);
  EXPECT_EQ(ReadRealFile(dir_.Join("project/logs/b.bin")), binary);
  std::vector<VfsdEntry> entries = vfsd.list("logs");
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[1].name, "b.bin");
  EXPECT_EQ(entries[1].kind, "file");
  uint64_t temp = vfsd.temp();
  vfsd.write(temp, "scratch");
  vfsd.seek(temp, 0);
  EXPECT_EQ(vfsd.read(temp).data, "scratch");
  auto [r, w] = vfsd.make_pipe();
  EXPECT_EQ(vfsd.read(r).data, "");
  EXPECT_EQ(vfsd.write(w, "xyz"), 3u);
  vfsd.close(w);
  EXPECT_EQ(vfsd.read(r).data, "xyz");
  EXPECT_TRUE(vfsd.read(r).eof);
  vfsd.init(std::vector<std::string>{"logs"}, true);
  try {
    vfsd.open_write("logs/c.txt");
    ADD_FAILURE() << "open_write in a read-only session succeeded";
  } catch (const VfsdException& error) {
    EXPECT_EQ(error.code(), "E_PERM");
    EXPECT_NE(error.message().find("read-only"), std::string::npos) << error.message();
  }
  EXPECT_EQ(vfsd.finish(), 0);
}

TEST_F(VfsdClientTest, ErrorsCarryTheDaemonsCode) {
  VfsdClient vfsd = Spawn();
  auto code_of = [](auto&& call) -> std::string {
    try {
      call();
    } catch (const VfsdException& error) {
      return error.code();
    }
    return "no error";
  };
  EXPECT_EQ(code_of([&] { vfsd.open_read("logs/none"); }), "E_NOENT");
  EXPECT_EQ(code_of([&] { vfsd.open_read("secret.txt"); }), "E_PERM");
  EXPECT_EQ(code_of([&] { vfsd.read(42); }), "E_CLOSED");
  EXPECT_EQ(code_of([&] { vfsd.call("frobnicate"); }), "E_UNSUPPORTED");
  EXPECT_TRUE(vfsd.ping());
  EXPECT_EQ(vfsd.finish(), 0);
  EXPECT_EQ(code_of([&] { vfsd.ping(); }), "E_CHANNEL");
}

TEST_F(VfsdClientTest, OverASocketpair) {
  int ends[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends), 0);
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::dup2(ends[1], 3);
    std::string project = dir_.Join("project"), binary = Binary();
    ::execl(binary.c_str(), binary.c_str(), "vfsd", "--project", project.c_str(), "--allow", "logs", "--no-audit",
            "--fd", "3", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(ends[1]);
  {
    VfsdClient vfsd(ends[0], ends[0]);
    EXPECT_TRUE(vfsd.ping());
    EXPECT_EQ(vfsd.read(vfsd.open_read("logs/a.txt")).data, "hello\n");
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

TEST_F(VfsdClientTest, ThePipeCopyExampleCopiesAMebibyte) {
  std::string data;
  for (int index = 0; data.size() < (1u << 20); ++index) data += std::to_string(index * 7919) + ",";
  WriteRealFile(dir_.Join("project/big.bin"), data);
  std::string command = std::string(VFSD_PIPE_COPY) + " " + dir_.Join("project") + " big.bin copy.bin " + Binary() +
                        " > /dev/null";
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
  EXPECT_EQ(ReadRealFile(dir_.Join("project/copy.bin")), data);
}

}  // namespace
}  // namespace toolvfs
