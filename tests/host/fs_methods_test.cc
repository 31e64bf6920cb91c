// The fs.* method handlers (SPEC.md §4.3), driven the way the session loop
// drives them: a request line goes through MessageParser, FindMethod picks
// the handler, and the answer line is parsed back as a tool would parse it.
// Results and errors are compared in full: the wire shape, the codes and the
// messages are the contract a tool programs against.
//
// The same cases run over an fs store (a temp dir) and a memory store; the
// null store has its own cases at the end.

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "project/test_util.h"
#include "host/method_test_util.h"
#include "config/config.h"
#include "host/methods.h"
#include "host/test_gate.h"
#include "project/project_files.h"
#include "protocol/base64.h"
#include "protocol/jsonrpc.h"

namespace toolvfs {
namespace {

// Calls `method` with the params object `params_json` (or a request without
// params when it is empty) on `project`, and returns the answer as text:
// the result object as compact JSON ("{...}"), or "error CODE: MESSAGE".
// Checks what every answer must be: one line, echoing the request's id.
std::string CallOn(ProjectFiles& project, std::string_view method, std::string_view params_json,
                   std::string* wire_out = nullptr, const ToolConfig& tool = ProjectWritableTool()) {
  DefaultGate gate(tool);
  std::string answer = CallMethod(project, gate.gate, method, params_json);
  if (answer.starts_with("<")) return answer;
  MessageParser parser;
  std::string_view bytes = answer;
  if (wire_out != nullptr) *wire_out = std::string(bytes);
  if (bytes.empty() || bytes.back() != '\n' || bytes.find('\n') != bytes.size() - 1) {
    return "<answer is not one line>";
  }
  ParsedLine response = parser.Parse(bytes.substr(0, bytes.size() - 1));
  if (!response.is_message() || response.message().kind() != MessageKind::kResponse) {
    return "<answer not parsed as a response: " + std::string(bytes) + ">";
  }
  const Message& parsed = response.message();
  if (parsed.id() != RequestId(std::string("req-7"))) return "<wrong id " + parsed.id().ToJson() + ">";
  if (parsed.is_error()) {
    return "error " + std::to_string(parsed.error_code()) + ": " + std::string(parsed.error_message());
  }
  return parsed.result_json();
}

// "error CODE: MESSAGE", as CallOn returns it.
std::string Error(int code, std::string_view message) {
  return "error " + std::to_string(code) + ": " + std::string(message);
}

std::string InvalidParams(std::string_view message) { return Error(kJsonRpcInvalidParams, message); }

// The code of an answer from CallOn, or 0 for a result.
int CodeOf(const std::string& answer) {
  if (!answer.starts_with("error ")) return 0;
  return std::stoi(answer.substr(6));
}

// ----- The table ----------------------------------------------------------------

TEST(FsMethodTableTest, ListsTheMethodsInOrderAndWhichWalkTrees) {
  std::vector<std::string> names;
  for (const MethodSpec& method : FsMethods()) {
    names.emplace_back(method.name);
    EXPECT_NE(method.handler, nullptr) << method.name;
    // A recursive delete or a directory's move walks the tree below it, on
    // a worker where timeouts and cancellation stay live.
    EXPECT_EQ(method.may_block,
              method.name == "fs.grep" || method.name == "fs.delete" || method.name == "fs.rename")
        << method.name;
  }
  EXPECT_EQ(names, (std::vector<std::string>{"fs.read", "fs.write", "fs.exists", "fs.list_dir",
                                             "fs.metadata", "fs.delete", "fs.rename", "fs.grep"}));
  ASSERT_GE(AllMethods().size(), FsMethods().size());
  for (size_t index = 0; index < FsMethods().size(); ++index) {
    EXPECT_EQ(AllMethods()[index].name, FsMethods()[index].name);
  }
  EXPECT_EQ(FindMethod("fs.read")->name, "fs.read");
  EXPECT_EQ(FindMethod("fs.grep")->handler, FsMethods()[7].handler);
  EXPECT_EQ(FindMethod("fs.nope"), nullptr);
  EXPECT_EQ(FindMethod("read"), nullptr);
}

// ----- The parameterized suite ----------------------------------------------------

class FsMethodsTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    Result<std::unique_ptr<ProjectFiles>> opened = OpenStore(Options());
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    store_ = std::move(*opened);
  }

  // A store of this backend; for fs every store of a test shares the test's
  // directory, for memory each call makes a new, empty store.
  Result<std::unique_ptr<ProjectFiles>> OpenStore(const StoreOptions& options) {
    if (GetParam() == "memory") return OpenProject("memory:", options);
    if (!dir_) dir_.emplace();
    return OpenProject("fs:" + dir_->path(), options);
  }

  // Writes are not flushed to disk: a test needs no crash safety, and a
  // flush per write would make the suite slow.
  static StoreOptions Options() {
    StoreOptions options;
    options.sync_writes = false;
    return options;
  }

  bool IsFs() const { return GetParam() == "fs"; }

  std::string Call(std::string_view method, std::string_view params_json) {
    return CallOn(*store_, method, params_json);
  }

  void Put(std::string_view path, std::string_view content) {
    Status status = store_->Write(path, content);
    ASSERT_TRUE(status.ok()) << status.ToString();
  }

  // The content of `path` in the store, or "<error: ...>".
  std::string Content(std::string_view path) {
    Result<std::string> content = store_->Read(path);
    return content.ok() ? *content : "<error: " + content.status().ToString() + ">";
  }

  std::optional<TempDir> dir_;  // declared first: outlives the store
  std::unique_ptr<ProjectFiles> store_;
};

// --- fs.read --------------------------------------------------------------------

TEST_P(FsMethodsTest, ReadReturnsTextContentAndSize) {
  Put("src/main.rs", "fn main() {}\n");
  EXPECT_EQ(Call("fs.read", R"({"path":"src/main.rs"})"),
            R"({"content":"fn main() {}\n","size":13})");
  Put("empty.txt", "");
  EXPECT_EQ(Call("fs.read", R"({"path":"./empty.txt"})"), R"({"content":"","size":0})");
}

TEST_P(FsMethodsTest, UnicodeRoundTripsUnescaped) {
  const std::string text = "h\xC3\xA9llo w\xC3\xB6rld \xE2\x80\x94 \xE6\x97\xA5\xE6\x9C\xAC "
                           "\xF0\x9F\x8E\x89 \xF0\x9F\x91\xA9\xE2\x80\x8D\xF0\x9F\x92\xBB\n"
                           "tab\there \"quoted\" back\\slash \x01\x10\x7F";
  EXPECT_EQ(Call("fs.write", R"({"path":"uni.txt","content":)" + Json(text) + "}"),
            "{\"size\":" + std::to_string(text.size()) + "}");
  EXPECT_EQ(Content("uni.txt"), text);

  std::string wire;
  std::string answer = CallOn(*store_, "fs.read", R"({"path":"uni.txt"})", &wire);
  EXPECT_EQ(answer, R"({"content":)" + Json(text) + ",\"size\":" + std::to_string(text.size()) + "}");
  // Multi-byte characters travel as they are, not as \u escapes; only
  // quotes, backslashes and control characters are escaped.
  EXPECT_NE(wire.find("h\xC3\xA9llo w\xC3\xB6rld \xE2\x80\x94 \xE6\x97\xA5\xE6\x9C\xAC \xF0\x9F\x8E\x89"),
            std::string::npos) << wire;
  EXPECT_NE(wire.find(R"(\ntab\there \"quoted\" back\\slash \u0001\u0010)" "\x7F"), std::string::npos)
      << wire;
  EXPECT_EQ(wire.find("\\u00e9"), std::string::npos);
  EXPECT_EQ(wire.find("encoding"), std::string::npos);
}

TEST_P(FsMethodsTest, AllByteValuesRoundTripThroughBase64) {
  const std::string bytes = AllBytes();
  const std::string encoded = Base64Encode(bytes);
  EXPECT_EQ(Call("fs.write", R"({"path":"bin/all.bin","content":")" + encoded +
                                 R"(","encoding":"base64"})"),
            R"({"size":256})");
  EXPECT_EQ(Content("bin/all.bin"), bytes);
  EXPECT_EQ(Call("fs.read", R"({"path":"bin/all.bin"})"),
            R"({"content":")" + encoded + R"(","size":256,"encoding":"base64"})");
  // Each byte read on its own: text up to 0x7F, base64 from 0x80 on (no
  // single byte above 0x7F is UTF-8). Compared on the wire, where control
  // characters are escaped as JsonWriter does it (\u000B).
  for (int value = 0; value <= 0xFF; ++value) {
    std::string byte(1, static_cast<char>(value));
    std::string expected = value < 0x80 ? R"({"content":)" + Json(byte) + R"(,"size":256})"
                                        : R"({"content":")" + Base64Encode(byte) +
                                              R"(","size":256,"encoding":"base64"})";
    std::string wire;
    CallOn(*store_, "fs.read",
           R"({"path":"bin/all.bin","offset":)" + std::to_string(value) + R"(,"length":1})", &wire);
    ASSERT_EQ(wire, R"({"jsonrpc":"2.0","id":"req-7","result":)" + expected + "}\n") << value;
  }
}

TEST_P(FsMethodsTest, Base64OfTextIsReadBackAsText) {
  EXPECT_EQ(Call("fs.write", R"({"path":"t.txt","content":"aMOpbGxv","encoding":"base64"})"),
            R"({"size":6})");
  EXPECT_EQ(Call("fs.read", R"({"path":"t.txt"})"), "{\"content\":\"h\xC3\xA9llo\",\"size\":6}");
  EXPECT_EQ(Call("fs.write", R"({"path":"empty.bin","content":"","encoding":"base64"})"),
            R"({"size":0})");
  EXPECT_EQ(Call("fs.read", R"({"path":"empty.bin"})"), R"({"content":"","size":0})");
}

TEST_P(FsMethodsTest, RangedReads) {
  Put("digits.txt", "0123456789");
  EXPECT_EQ(Call("fs.read", R"({"path":"digits.txt","offset":3,"length":4})"),
            R"({"content":"3456","size":10})");
  EXPECT_EQ(Call("fs.read", R"({"path":"digits.txt","offset":0,"length":2})"),
            R"({"content":"01","size":10})");
  EXPECT_EQ(Call("fs.read", R"({"path":"digits.txt","offset":7})"),
            R"({"content":"789","size":10})");
  EXPECT_EQ(Call("fs.read", R"({"path":"digits.txt","length":3})"),
            R"({"content":"012","size":10})");
  EXPECT_EQ(Call("fs.read", R"({"path":"digits.txt","offset":8,"length":100})"),
            R"({"content":"89","size":10})");
  EXPECT_EQ(Call("fs.read", R"({"path":"digits.txt","offset":10})"),
            R"({"content":"","size":10})");
  EXPECT_EQ(Call("fs.read", R"({"path":"digits.txt","offset":18446744073709551615})"),
            R"({"content":"","size":10})");
  EXPECT_EQ(Call("fs.read", R"({"path":"digits.txt","offset":2,"length":0})"),
            R"({"content":"","size":10})");
  // null means absent: a whole-file read.
  EXPECT_EQ(Call("fs.read", R"({"path":"digits.txt","offset":null,"length":null})"),
            R"({"content":"0123456789","size":10})");
}

TEST_P(FsMethodsTest, RangeThatSplitsACharacterIsBase64) {
  const std::string text = "a\xE2\x82\xAC" "b";  // "a€b": the euro sign is three bytes
  Put("euro.txt", text);
  EXPECT_EQ(Call("fs.read", R"({"path":"euro.txt","offset":0,"length":2})"),
            R"({"content":")" + Base64Encode(text.substr(0, 2)) + R"(","size":5,"encoding":"base64"})");
  EXPECT_EQ(Call("fs.read", R"({"path":"euro.txt","offset":2})"),
            R"({"content":")" + Base64Encode(text.substr(2)) + R"(","size":5,"encoding":"base64"})");
  EXPECT_EQ(Call("fs.read", R"({"path":"euro.txt","offset":1,"length":3})"),
            "{\"content\":\"\xE2\x82\xAC\",\"size\":5}");
}

TEST_P(FsMethodsTest, ReadLimitNamesTheLimitAndTheWayAround) {
  StoreOptions options = Options();
  options.max_read_bytes = 1024;
  Result<std::unique_ptr<ProjectFiles>> opened = OpenStore(options);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  ProjectFiles& limited = **opened;
  ASSERT_TRUE(limited.Write("big.txt", std::string(3000, 'x')).ok());
  EXPECT_EQ(CallOn(limited, "fs.read", R"({"path":"big.txt"})"),
            InvalidParams("Cannot read 'big.txt': 3000 bytes is larger than the read limit of 1 KiB; "
                          "read it in parts with offset and length"));
  EXPECT_EQ(CallOn(limited, "fs.read", R"({"path":"big.txt","offset":0})"),
            InvalidParams("Cannot read 'big.txt': 3000 bytes from offset 0 is larger than the read "
                          "limit of 1 KiB; read it in parts with offset and length"));
  EXPECT_EQ(CallOn(limited, "fs.read", R"({"path":"big.txt","offset":100,"length":2000})"),
            InvalidParams("Cannot read 'big.txt': 2000 bytes from offset 100 is larger than the read "
                          "limit of 1 KiB; read it in parts with offset and length"));
  EXPECT_EQ(CallOn(limited, "fs.read", R"({"path":"big.txt","offset":1024,"length":1024})"),
            R"({"content":")" + std::string(1024, 'x') + R"(","size":3000})");
  EXPECT_EQ(CallOn(limited, "fs.read", R"({"path":"big.txt","offset":2048})"),
            R"({"content":")" + std::string(952, 'x') + R"(","size":3000})");
}

TEST_P(FsMethodsTest, LargeReadRoundTrips) {
  std::string text;
  while (text.size() < (1u << 20)) text += "line " + std::to_string(text.size()) + "\t\"quoted\"\n";
  Put("large.txt", text);
  EXPECT_EQ(Call("fs.read", R"({"path":"large.txt"})"),
            R"({"content":)" + Json(text) + ",\"size\":" + std::to_string(text.size()) + "}");
}

TEST_P(FsMethodsTest, ReadErrors) {
  Put("dir/f.txt", "x");
  EXPECT_EQ(Call("fs.read", R"({"path":"missing.txt"})"),
            Error(kJsonRpcNotFound, "File 'missing.txt' does not exist"));
  EXPECT_EQ(Call("fs.read", R"({"path":"missing.txt","offset":1})"),
            Error(kJsonRpcNotFound, "File 'missing.txt' does not exist"));
  EXPECT_EQ(Call("fs.read", R"({"path":"dir"})"), InvalidParams("Cannot read 'dir': it is a directory"));
  EXPECT_EQ(Call("fs.read", R"({"path":"dir","length":1})"),
            InvalidParams("Cannot read 'dir': it is a directory"));
  EXPECT_EQ(Call("fs.read", R"({"path":"dir/f.txt/x"})"),
            InvalidParams("Cannot read 'dir/f.txt/x': 'dir/f.txt' is a file"));
  EXPECT_EQ(CodeOf(Call("fs.read", R"({"path":"../outside.txt"})")), kJsonRpcAccessDenied);
  EXPECT_EQ(CodeOf(Call("fs.read", R"({"path":"dir/../../outside.txt","offset":0})")),
            kJsonRpcAccessDenied);
  EXPECT_EQ(CodeOf(Call("fs.read", R"({"path":"/etc/passwd"})")), kJsonRpcInvalidParams);
  EXPECT_EQ(CodeOf(Call("fs.read", R"({"path":"a\u0000b"})")), kJsonRpcInvalidParams);
}

// Symlinks exist only in the fs store.
class FsStoreMethodsTest : public FsMethodsTest {};

TEST_P(FsStoreMethodsTest, EscapingSymlinkIsAccessDenied) {
  TempDir outside;
  WriteRealFile(outside.Join("secret.txt"), "secret");
  MakeSymlink(outside.Join("secret.txt"), dir_->Join("link"));
  const std::string denied =
      Error(kJsonRpcAccessDenied, "Access denied: path 'link' leads outside the project root through a symlink");
  EXPECT_EQ(Call("fs.read", R"({"path":"link"})"), denied);
  EXPECT_EQ(Call("fs.read", R"({"path":"link","offset":1})"), denied);
  EXPECT_EQ(Call("fs.exists", R"({"path":"link"})"), denied);
  EXPECT_EQ(CodeOf(Call("fs.write", R"({"path":"link","content":"x"})")), kJsonRpcAccessDenied);
  EXPECT_EQ(ReadRealFile(outside.Join("secret.txt")), "secret");
}

// --- fs.write ---------------------------------------------------------------------

TEST_P(FsMethodsTest, WriteModes) {
  EXPECT_EQ(Call("fs.write", R"({"path":"a/b/log.txt","content":"one\n"})"), R"({"size":4})");
  EXPECT_EQ(Call("fs.write", R"({"path":"a/b/log.txt","content":"two\n","mode":"append"})"),
            R"({"size":4})");
  EXPECT_EQ(Content("a/b/log.txt"), "one\ntwo\n");
  EXPECT_EQ(Call("fs.write", R"({"path":"a/b/log.txt","content":"new","mode":"overwrite"})"),
            R"({"size":3})");
  EXPECT_EQ(Content("a/b/log.txt"), "new");
  EXPECT_EQ(Call("fs.write", R"({"path":"a/b/log.txt","content":"null mode","mode":null})"),
            R"({"size":9})");
  EXPECT_EQ(Content("a/b/log.txt"), "null mode");
  EXPECT_EQ(Call("fs.write", R"({"path":"fresh.txt","content":"first","mode":"create"})"),
            R"({"size":5})");
  EXPECT_EQ(Call("fs.write", R"({"path":"fresh.txt","content":"second","mode":"create"})"),
            Error(kJsonRpcAlreadyExists, "Cannot create 'fresh.txt': it already exists"));
  EXPECT_EQ(Content("fresh.txt"), "first");
  EXPECT_EQ(Call("fs.write", R"({"path":"fresh.txt","content":"x","mode":"truncate"})"),
            InvalidParams("Invalid write mode 'truncate': expected 'overwrite', 'create' or 'append'"));
  EXPECT_EQ(Call("fs.write", R"({"path":"bin.dat","content":"AAE=","encoding":"base64","mode":"append"})"),
            R"({"size":2})");
  EXPECT_EQ(Content("bin.dat"), std::string("\0\1", 2));
}

TEST_P(FsMethodsTest, WriteEncodingErrors) {
  EXPECT_EQ(Call("fs.write", R"({"path":"a.txt","content":"x","encoding":"utf-8"})"),
            InvalidParams("Invalid params: 'encoding' must be \"base64\" (or absent for UTF-8 text), "
                          "got 'utf-8'"));
  EXPECT_EQ(Call("fs.write", R"({"path":"a.txt","content":"x","encoding":""})"),
            InvalidParams("Invalid params: 'encoding' must be \"base64\" (or absent for UTF-8 text), got ''"));
  EXPECT_EQ(Call("fs.write", R"({"path":"a.txt","content":"x","encoding":true})"),
            InvalidParams("Invalid params: 'encoding' must be a string"));
  EXPECT_EQ(Call("fs.write", R"({"path":"a.txt","content":"not base64!","encoding":"base64"})"),
            InvalidParams("Invalid base64: length 11 is not a multiple of 4 (padding with '=' is required)"));
  EXPECT_EQ(CodeOf(Call("fs.write", R"({"path":"a.txt","content":"AAAA\nAAA","encoding":"base64"})")),
            kJsonRpcInvalidParams);
  // encoding null is text.
  EXPECT_EQ(Call("fs.write", R"({"path":"a.txt","content":"AAAA","encoding":null})"), R"({"size":4})");
  EXPECT_EQ(Content("a.txt"), "AAAA");
  // Nothing was written by the failed calls.
  EXPECT_EQ(Call("fs.exists", R"({"path":"b.txt"})"), R"({"exists":false})");
}

TEST_P(FsMethodsTest, WriteErrors) {
  Put("dir/f.txt", "x");
  EXPECT_EQ(Call("fs.write", R"({"path":"dir","content":"x"})"),
            InvalidParams("Cannot write 'dir': it is a directory"));
  EXPECT_EQ(Call("fs.write", R"({"path":".","content":"x"})"),
            InvalidParams("Cannot write '.': it is the project root"));
  EXPECT_EQ(CodeOf(Call("fs.write", R"({"path":"dir/f.txt/under","content":"x"})")),
            kJsonRpcInvalidParams);
  EXPECT_EQ(CodeOf(Call("fs.write", R"({"path":"../escape.txt","content":"x"})")), kJsonRpcAccessDenied);
  EXPECT_EQ(CodeOf(Call("fs.write", R"({"path":"/abs.txt","content":"x"})")), kJsonRpcInvalidParams);
  if (IsFs()) {
    EXPECT_FALSE(RealPathExists(dir_->path() + "/../escape.txt"));
  }
}

// --- fs.exists, fs.list_dir, fs.metadata ---------------------------------------------

TEST_P(FsMethodsTest, Exists) {
  Put("dir/f.txt", "x");
  EXPECT_EQ(Call("fs.exists", R"({"path":"dir/f.txt"})"), R"({"exists":true})");
  EXPECT_EQ(Call("fs.exists", R"({"path":"dir"})"), R"({"exists":true})");
  EXPECT_EQ(Call("fs.exists", R"({"path":""})"), R"({"exists":true})");
  EXPECT_EQ(Call("fs.exists", R"({"path":"missing"})"), R"({"exists":false})");
  EXPECT_EQ(Call("fs.exists", R"({"path":"dir/f.txt/under"})"), R"({"exists":false})");
  EXPECT_EQ(CodeOf(Call("fs.exists", R"({"path":"../x"})")), kJsonRpcAccessDenied);
  EXPECT_EQ(CodeOf(Call("fs.exists", R"({"path":"/x"})")), kJsonRpcInvalidParams);
}

TEST_P(FsMethodsTest, ListDirShowsNamesAndKinds) {
  Put("src/b.rs", "b");
  Put("src/a.rs", "a");
  Put("src/sub/c.rs", "c");
  EXPECT_EQ(Call("fs.list_dir", R"({"path":"src"})"),
            R"({"entries":[{"path":"a.rs","kind":"file"},{"path":"b.rs","kind":"file"},)"
            R"({"path":"sub","kind":"dir"}],"total":3})");
  EXPECT_EQ(Call("fs.list_dir", R"({"path":"."})"),
            R"({"entries":[{"path":"src","kind":"dir"}],"total":1})");
  if (IsFs()) {
    TempDir outside;
    MakeSymlink(outside.path(), dir_->Join("src/out"));
    MakeSymlink("a.rs", dir_->Join("src/z-link"));
    EXPECT_EQ(Call("fs.list_dir", R"({"path":"src"})"),
              R"({"entries":[{"path":"a.rs","kind":"file"},{"path":"b.rs","kind":"file"},)"
              R"({"path":"out","kind":"symlink"},{"path":"sub","kind":"dir"},)"
              R"({"path":"z-link","kind":"file"}],"total":5})");
  }
}

TEST_P(FsMethodsTest, ListDirPages) {
  std::vector<std::string> names;
  for (int i = 0; i < 25; ++i) {
    char name[16];
    snprintf(name, sizeof name, "f%02d.txt", i);
    names.emplace_back(name);
    Put(std::string("many/") + name, "x");
  }
  // The entries [first, first + count) of the listing, as JSON.
  auto page = [&](size_t first, size_t count) {
    std::string json = R"({"entries":[)";
    for (size_t i = first; i < first + count; ++i) {
      if (i > first) json += ",";
      json += R"({"path":")" + names[i] + R"(","kind":"file"})";
    }
    return json + R"(],"total":25})";
  };
  EXPECT_EQ(Call("fs.list_dir", R"({"path":"many"})"), page(0, 25));
  EXPECT_EQ(Call("fs.list_dir", R"({"path":"many","limit":10})"), page(0, 10));
  EXPECT_EQ(Call("fs.list_dir", R"({"path":"many","offset":10,"limit":10})"), page(10, 10));
  EXPECT_EQ(Call("fs.list_dir", R"({"path":"many","offset":20,"limit":10})"), page(20, 5));
  EXPECT_EQ(Call("fs.list_dir", R"({"path":"many","offset":24})"), page(24, 1));
  EXPECT_EQ(Call("fs.list_dir", R"({"path":"many","offset":25})"), page(25, 0));
  EXPECT_EQ(Call("fs.list_dir", R"({"path":"many","offset":18446744073709551615,"limit":1})"), page(25, 0));
  EXPECT_EQ(Call("fs.list_dir", R"({"path":"many","limit":0})"), page(0, 0));
  EXPECT_EQ(Call("fs.list_dir", R"({"path":"many","limit":18446744073709551615})"), page(0, 25));
  EXPECT_EQ(Call("fs.list_dir", R"({"path":"many","offset":null,"limit":null})"), page(0, 25));
  // Paging with offset += limit until offset >= total visits every entry once.
  for (int offset = 0; offset < 25; offset += 7) {
    std::string answer = Call("fs.list_dir", R"({"path":"many","offset":)" + std::to_string(offset) +
                                                 R"(,"limit":7})");
    EXPECT_EQ(answer, page(static_cast<size_t>(offset), std::min(7, 25 - offset)));
  }
}

TEST_P(FsMethodsTest, ListDirErrors) {
  Put("f.txt", "x");
  EXPECT_EQ(Call("fs.list_dir", R"({"path":"missing"})"),
            Error(kJsonRpcNotFound, "Directory 'missing' does not exist"));
  EXPECT_EQ(Call("fs.list_dir", R"({"path":"f.txt"})"), InvalidParams("Cannot list 'f.txt': it is a file"));
  EXPECT_EQ(CodeOf(Call("fs.list_dir", R"({"path":".."})")), kJsonRpcAccessDenied);
  EXPECT_EQ(Call("fs.list_dir", R"({"path":"","limit":-1})"),
            InvalidParams("Invalid params: 'limit' must be a non-negative integer"));
}

TEST_P(FsMethodsTest, Metadata) {
  Put("dir/f.txt", "12345");
  Result<FileMetadata> file = store_->Metadata("dir/f.txt");
  Result<FileMetadata> dir = store_->Metadata("dir");
  ASSERT_TRUE(file.ok() && dir.ok());
  // The memory store keeps a version (files) and a created time; the fs
  // store keeps neither, and the answer leaves them out.
  const bool keeps_history = GetParam() == "memory";
  ASSERT_EQ(file->version.has_value(), keeps_history);
  ASSERT_EQ(dir->created_ms.has_value(), keeps_history);
  const std::string file_history =
      keeps_history ? R"(,"version":1,"created":")" + FormatTimestamp(*file->created_ms) + R"(")" : "";
  const std::string dir_history = keeps_history ? R"(,"created":")" + FormatTimestamp(*dir->created_ms) + R"(")" : "";
  EXPECT_EQ(Call("fs.metadata", R"({"path":"dir/f.txt"})"),
            R"({"kind":"file","size":5,"modified":")" + FormatTimestamp(file->modified_ms) + R"(")" +
                file_history + "}");
  EXPECT_EQ(Call("fs.metadata", R"({"path":"dir"})"),
            R"({"kind":"dir","size":0,"modified":")" + FormatTimestamp(dir->modified_ms) + R"(")" +
                dir_history + "}");
  EXPECT_EQ(Call("fs.metadata", R"({"path":"nope"})"),
            Error(kJsonRpcNotFound, "Path 'nope' does not exist"));
  EXPECT_EQ(CodeOf(Call("fs.metadata", R"({"path":"../x"})")), kJsonRpcAccessDenied);
}

// --- fs.delete, fs.rename --------------------------------------------------------------

TEST_P(FsMethodsTest, Delete) {
  Put("dir/sub/f.txt", "x");
  Put("g.txt", "g");
  EXPECT_EQ(Call("fs.delete", R"({"path":"g.txt"})"), "{}");
  EXPECT_EQ(Call("fs.exists", R"({"path":"g.txt"})"), R"({"exists":false})");
  EXPECT_EQ(Call("fs.delete", R"({"path":"dir","recursive":false})"),
            InvalidParams("Cannot delete 'dir': directory is not empty (pass recursive to delete it "
                          "with its contents)"));
  EXPECT_EQ(Call("fs.delete", R"({"path":"dir"})"),
            InvalidParams("Cannot delete 'dir': directory is not empty (pass recursive to delete it "
                          "with its contents)"));
  EXPECT_EQ(Call("fs.delete", R"({"path":"dir","recursive":true})"), "{}");
  EXPECT_EQ(Call("fs.list_dir", R"({"path":""})"), R"({"entries":[],"total":0})");
  EXPECT_EQ(Call("fs.delete", R"({"path":"dir"})"), Error(kJsonRpcNotFound, "Path 'dir' does not exist"));
  EXPECT_EQ(Call("fs.delete", R"({"path":""})"), InvalidParams("Cannot delete '.': it is the project root"));
  EXPECT_EQ(CodeOf(Call("fs.delete", R"({"path":"../x","recursive":true})")), kJsonRpcAccessDenied);
}

TEST_P(FsMethodsTest, Rename) {
  Put("a.txt", "a");
  Put("b.txt", "b");
  EXPECT_EQ(Call("fs.rename", R"({"from":"a.txt","to":"moved/a.txt"})"), "{}");
  EXPECT_EQ(Content("moved/a.txt"), "a");
  EXPECT_EQ(Call("fs.rename", R"({"from":"moved/a.txt","to":"b.txt"})"),
            Error(kJsonRpcAlreadyExists,
                  "Cannot rename 'moved/a.txt' to 'b.txt': 'b.txt' already exists (pass overwrite to "
                  "replace it)"));
  EXPECT_EQ(Call("fs.rename", R"({"from":"moved/a.txt","to":"b.txt","overwrite":false})"),
            Error(kJsonRpcAlreadyExists,
                  "Cannot rename 'moved/a.txt' to 'b.txt': 'b.txt' already exists (pass overwrite to "
                  "replace it)"));
  EXPECT_EQ(Call("fs.rename", R"({"from":"moved/a.txt","to":"b.txt","overwrite":true})"), "{}");
  EXPECT_EQ(Content("b.txt"), "a");
  EXPECT_EQ(Call("fs.rename", R"({"from":"nope","to":"x"})"),
            Error(kJsonRpcNotFound, "Cannot rename 'nope' to 'x': 'nope' does not exist"));
  EXPECT_EQ(CodeOf(Call("fs.rename", R"({"from":"b.txt","to":"../x"})")), kJsonRpcAccessDenied);
  EXPECT_EQ(CodeOf(Call("fs.rename", R"({"from":"b.txt","to":"/x"})")), kJsonRpcInvalidParams);
  EXPECT_EQ(Content("b.txt"), "a");
}

// --- fs.grep -------------------------------------------------------------------------

class FsGrepMethodTest : public FsMethodsTest {
 protected:
  void SetUp() override {
    FsMethodsTest::SetUp();
    if (HasFatalFailure()) return;
    Put("src/main.rs", "fn main() {\n    helper();\n}\n");
    Put("src/lib.rs", "pub fn helper() {}\n// TODO: more\n");
    Put("docs/notes.md", "Main notes\nmain ideas\n");
    Put(".gitignore", "gen/\n");
    Put("gen/out.rs", "fn main() {}\n");
  }
};

TEST_P(FsGrepMethodTest, Basic) {
  EXPECT_EQ(Call("fs.grep", R"({"pattern":"fn main"})"),
            R"({"matches":[{"path":"src/main.rs","lines":[)"
            R"({"line_number":1,"content":"fn main() {","is_match":true}]}],"truncated":false})");
  EXPECT_EQ(Call("fs.grep", R"({"pattern":"no such text"})"), R"({"matches":[],"truncated":false})");
}

TEST_P(FsGrepMethodTest, Options) {
  EXPECT_EQ(Call("fs.grep", R"({"pattern":"main","case_insensitive":true,"paths":["docs"]})"),
            R"({"matches":[{"path":"docs/notes.md","lines":[)"
            R"({"line_number":1,"content":"Main notes","is_match":true},)"
            R"({"line_number":2,"content":"main ideas","is_match":true}]}],"truncated":false})");
  EXPECT_EQ(Call("fs.grep", R"({"pattern":"main","case_insensitive":false,"paths":["docs"]})"),
            R"({"matches":[{"path":"docs/notes.md","lines":[)"
            R"({"line_number":2,"content":"main ideas","is_match":true}]}],"truncated":false})");
  EXPECT_EQ(Call("fs.grep", R"({"pattern":"helper","context":1,"extensions":["rs"]})"),
            R"({"matches":[{"path":"src/lib.rs","lines":[)"
            R"({"line_number":1,"content":"pub fn helper() {}","is_match":true},)"
            R"({"line_number":2,"content":"// TODO: more","is_match":false}]},)"
            R"({"path":"src/main.rs","lines":[)"
            R"({"line_number":1,"content":"fn main() {","is_match":false},)"
            R"({"line_number":2,"content":"    helper();","is_match":true},)"
            R"({"line_number":3,"content":"}","is_match":false}]}],"truncated":false})");
  EXPECT_EQ(Call("fs.grep", R"({"pattern":"main","extensions":["md"]})"),
            R"({"matches":[{"path":"docs/notes.md","lines":[)"
            R"({"line_number":2,"content":"main ideas","is_match":true}]}],"truncated":false})");
  EXPECT_EQ(Call("fs.grep", R"({"pattern":"fn main","include_ignored":true})"),
            R"({"matches":[{"path":"gen/out.rs","lines":[)"
            R"({"line_number":1,"content":"fn main() {}","is_match":true}]},)"
            R"({"path":"src/main.rs","lines":[)"
            R"({"line_number":1,"content":"fn main() {","is_match":true}]}],"truncated":false})");
  EXPECT_EQ(Call("fs.grep", R"({"pattern":"main","max_matches":1})"),
            R"({"matches":[{"path":"docs/notes.md","lines":[)"
            R"({"line_number":2,"content":"main ideas","is_match":true}]}],"truncated":true,)"
            R"("truncated_by":"max_matches"})");
  // null options are absent ones.
  EXPECT_EQ(Call("fs.grep", R"({"pattern":"fn main","paths":null,"extensions":null,"context":null,)"
                            R"("case_insensitive":null,"max_matches":null,"include_ignored":null})"),
            Call("fs.grep", R"({"pattern":"fn main"})"));
}

TEST_P(FsGrepMethodTest, Errors) {
  EXPECT_EQ(CodeOf(Call("fs.grep", R"({"pattern":"(unclosed"})")), kJsonRpcInvalidParams);
  EXPECT_EQ(Call("fs.grep", R"({"pattern":"x","context":4294967296})"),
            InvalidParams("Invalid params: 'context' must be at most 4294967295 lines, got 4294967296"));
  EXPECT_EQ(Call("fs.grep", R"({"pattern":"x","context":-1})"),
            InvalidParams("Invalid params: 'context' must be a non-negative integer"));
  EXPECT_EQ(Call("fs.grep", R"({"pattern":"x","paths":"src"})"),
            InvalidParams("Invalid params: 'paths' must be an array of strings"));
  EXPECT_EQ(Call("fs.grep", R"({"pattern":"x","extensions":["rs",7]})"),
            InvalidParams("Invalid params: 'extensions[1]' must be a string"));
  EXPECT_EQ(Call("fs.grep", R"({"pattern":"x","case_insensitive":"yes"})"),
            InvalidParams("Invalid params: 'case_insensitive' must be true or false"));
  EXPECT_EQ(CodeOf(Call("fs.grep", R"({"pattern":"x","paths":["missing"]})")), kJsonRpcNotFound);
  EXPECT_EQ(CodeOf(Call("fs.grep", R"({"pattern":"x","paths":["../out"]})")), kJsonRpcAccessDenied);
  EXPECT_EQ(Call("fs.grep", R"({"paths":["src"]})"), InvalidParams("Invalid params: 'pattern' is required"));
}

// Many files of many matching lines: 60 x 2,000 lines, about 8 MB of
// grep answer for '^'.
class FsGrepLargeResultTest : public FsMethodsTest {
 protected:
  void SetUp() override {
    FsMethodsTest::SetUp();
    if (HasFatalFailure()) return;
    std::string lines;
    for (int line = 0; line < 2000; ++line) lines += "a line of text that matches\n";
    for (int index = 0; index < 60; ++index) Put("d" + std::to_string(index % 6) + "/f" + std::to_string(index), lines);
  }

  // The answer line of fs.grep '^' without max_matches.
  std::string Grep(const AnswerLimits& limits) {
    DefaultGate gate(ProjectWritableTool());
    return CallMethod(*store_, gate.gate, "fs.grep", R"({"pattern":"^","max_matches":0})", limits);
  }
};

TEST_P(FsGrepLargeResultTest, AGrepStopsAtTheAnswerLimitAndSaysSo) {
  // Before: the whole answer was built (8 MB here; 629 MB for a 190 MB
  // tree) and then refused by the session as over the answer limit.
  AnswerLimits limits;
  limits.max_answer_bytes = 64 << 10;
  std::string wire = Grep(limits);
  EXPECT_LE(wire.size(), (64u << 10) + 1);
  EXPECT_TRUE(wire.starts_with(R"({"jsonrpc":"2.0","id":"req-7","result":{"matches":[{"path":"d0/f0","lines":[)"))
      << wire.substr(0, 200);
  EXPECT_TRUE(wire.ends_with(R"(]}],"truncated":true,"truncated_by":"max_result_bytes"}})" "\n"))
      << wire.substr(wire.size() - std::min<size_t>(wire.size(), 200));
  // The answer uses the limit: less than a line's worth is left over.
  EXPECT_GT(wire.size(), (64u << 10) - 400);
  MessageParser parser;
  EXPECT_TRUE(parser.Parse(std::string_view(wire).substr(0, wire.size() - 1)).is_message());
}

TEST_P(FsGrepLargeResultTest, AGrepFailsWhenTheHostsAnswerMemoryIsTaken) {
  MemoryBudget budget(uint64_t{8} << 20);
  AnswerLimits limits;
  limits.max_answer_bytes = 64 << 10;
  limits.answer_memory = &budget;
  // Other requests in flight hold all but 1,000 bytes.
  ASSERT_TRUE(budget.TryReserve(budget.limit_bytes() - 1000));
  std::string wire = Grep(limits);
  EXPECT_NE(wire.find(R"("error":{"code":-32602,)"), std::string::npos) << wire;
  EXPECT_NE(wire.find("Search stopped: the results being built at once by all requests in flight "
                      "would pass the host's memory budget of 8 MiB; try again"),
            std::string::npos)
      << wire;
  budget.Release(budget.limit_bytes() - 1000);
  EXPECT_EQ(budget.reserved_bytes(), 0u);
  // With the budget free, the same grep is answered, and gives it all back.
  wire = Grep(limits);
  EXPECT_NE(wire.find(R"("truncated_by":"max_result_bytes")"), std::string::npos) << wire.substr(0, 200);
  EXPECT_GT(budget.peak_bytes(), 64u << 10);
  EXPECT_EQ(budget.reserved_bytes(), 0u);
  // Without an answer limit (a builtin) the whole 8 MB result does not fit
  // an 8 MiB budget shared with nothing else: it fails, it is not built.
  limits.max_answer_bytes = std::numeric_limits<uint64_t>::max();
  EXPECT_NE(Grep(limits).find(R"("error":{"code":-32602,)"), std::string::npos);
  EXPECT_EQ(budget.reserved_bytes(), 0u);
}

// --- Parameters common to every method --------------------------------------------------

struct MethodCase {
  std::string_view method;
  std::string_view valid_params;  // a complete params object, without its closing '}'
  std::string_view expected;      // the names ExpectOnly lists
};

constexpr MethodCase kMethodCases[] = {
    {"fs.read", R"({"path":"a.txt")", "path, offset, length"},
    {"fs.write", R"({"path":"a.txt","content":"x")", "path, content, encoding, mode"},
    {"fs.exists", R"({"path":"a.txt")", "path"},
    {"fs.list_dir", R"({"path":"")", "path, offset, limit"},
    {"fs.metadata", R"({"path":"a.txt")", "path"},
    {"fs.delete", R"({"path":"a.txt")", "path, recursive"},
    {"fs.rename", R"({"from":"a.txt","to":"b.txt")", "from, to, overwrite"},
    {"fs.grep", R"({"pattern":"x")",
     "pattern, paths, extensions, context, case_insensitive, max_matches, include_ignored"},
};

TEST_P(FsMethodsTest, UnknownParametersAreRejectedBeforeAnythingHappens) {
  for (const MethodCase& c : kMethodCases) {
    SCOPED_TRACE(c.method);
    Put("a.txt", "a");
    EXPECT_EQ(Call(c.method, std::string(c.valid_params) + R"(,"recursve":true})"),
              InvalidParams("Invalid params: unknown parameter 'recursve' (expected " +
                            std::string(c.expected) + ")"));
    EXPECT_EQ(Content("a.txt"), "a");
  }
}

TEST_P(FsMethodsTest, MissingParametersAreNamed) {
  for (const MethodCase& c : kMethodCases) {
    SCOPED_TRACE(c.method);
    std::string first = c.method == "fs.rename" ? "from" : c.method == "fs.grep" ? "pattern" : "path";
    std::string required = InvalidParams("Invalid params: '" + first + "' is required");
    EXPECT_EQ(Call(c.method, "{}"), required);
    EXPECT_EQ(Call(c.method, ""), required);  // a request without params
    EXPECT_EQ(Call(c.method, "{\"" + first + "\":null}"),
              InvalidParams("Invalid params: '" + first + "' must be a string"));
  }
  EXPECT_EQ(Call("fs.write", R"({"path":"a.txt"})"), InvalidParams("Invalid params: 'content' is required"));
  EXPECT_EQ(Call("fs.rename", R"({"from":"a.txt"})"), InvalidParams("Invalid params: 'to' is required"));
}

TEST_P(FsMethodsTest, WrongTypesAreRejected) {
  Put("a.txt", "abc");
  struct Case {
    std::string_view method;
    std::string params;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"fs.read", R"({"path":7})", "'path' must be a string"},
      {"fs.read", R"({"path":["a.txt"]})", "'path' must be a string"},
      {"fs.read", R"({"path":"a.txt","offset":-1})", "'offset' must be a non-negative integer"},
      {"fs.read", R"({"path":"a.txt","offset":1.5})", "'offset' must be a non-negative integer"},
      {"fs.read", R"({"path":"a.txt","offset":1.0})", "'offset' must be a non-negative integer"},
      {"fs.read", R"({"path":"a.txt","length":"5"})", "'length' must be a non-negative integer"},
      {"fs.write", R"({"path":"a.txt","content":{"text":"x"}})", "'content' must be a string"},
      {"fs.write", R"({"path":"a.txt","content":"x","mode":1})", "'mode' must be a string"},
      {"fs.list_dir", R"({"path":"","offset":true})", "'offset' must be a non-negative integer"},
      {"fs.delete", R"({"path":"a.txt","recursive":1})", "'recursive' must be true or false"},
      {"fs.delete", R"({"path":"a.txt","recursive":"yes"})", "'recursive' must be true or false"},
      {"fs.rename", R"({"from":"a.txt","to":false})", "'to' must be a string"},
      {"fs.rename", R"({"from":"a.txt","to":"b.txt","overwrite":0})", "'overwrite' must be true or false"},
      {"fs.grep", R"({"pattern":"x","max_matches":-5})", "'max_matches' must be a non-negative integer"},
      {"fs.grep", R"({"pattern":"x","include_ignored":"no"})", "'include_ignored' must be true or false"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.params);
    EXPECT_EQ(Call(c.method, c.params), InvalidParams("Invalid params: " + c.message));
  }
  EXPECT_EQ(Content("a.txt"), "abc");
}

std::string BackendName(const ::testing::TestParamInfo<std::string>& info) { return info.param; }

// ----- The policy in the methods ------------------------------------------------

// What a tool may not read, it cannot see through a listing or a search
// either, and what it may not write does not go away with a directory.
TEST_P(FsMethodsTest, ThePolicyShapesWhatListingsSearchesDeletesAndRenamesReach) {
  Result<Config> config = ParseConfig(R"([tools.t]
command = "t"
runtime = "vfs"
[tools.t.sandbox]
filesystem.allow = ["."]
filesystem.writable = true
filesystem.deny = ["secrets"]
)",
                                      "test.toml");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  const ToolConfig& tool = config->tools.at("t");
  for (std::string_view path : {"README.md", "src/a.txt", "src/.env", "secrets/k.txt"}) Put(path, "needle\n");
  auto call = [&](std::string_view method, std::string_view params) {
    return CallOn(*store_, method, params, nullptr, tool);
  };

  // Denied and sensitive entries are left out of listings and their totals.
  EXPECT_EQ(call("fs.list_dir", R"({"path":""})"),
            R"({"entries":[{"path":"README.md","kind":"file"},{"path":"src","kind":"dir"}],"total":2})");
  EXPECT_EQ(call("fs.list_dir", R"({"path":"src"})"), R"({"entries":[{"path":"a.txt","kind":"file"}],"total":1})");
  EXPECT_EQ(CodeOf(call("fs.list_dir", R"({"path":"secrets"})")), kJsonRpcAccessDenied);

  // A search finds only what the tool may read; naming a denied path is denied.
  std::string found = call("fs.grep", R"({"pattern":"needle","include_ignored":true})");
  EXPECT_NE(found.find("\"README.md\""), std::string::npos) << found;
  EXPECT_NE(found.find("\"src/a.txt\""), std::string::npos) << found;
  EXPECT_EQ(found.find(".env"), std::string::npos) << found;
  EXPECT_EQ(found.find("secrets"), std::string::npos) << found;
  EXPECT_EQ(CodeOf(call("fs.grep", R"({"pattern":"needle","paths":["secrets"]})")), kJsonRpcAccessDenied);
  EXPECT_EQ(CodeOf(call("fs.read", R"({"path":"src/.env"})")), kJsonRpcAccessDenied);

  // A directory goes only with everything in it writable.
  std::string deleted = call("fs.delete", R"({"path":"src","recursive":true})");
  EXPECT_EQ(CodeOf(deleted), kJsonRpcAccessDenied);
  EXPECT_NE(deleted.find("src/.env"), std::string::npos) << deleted;
  std::string renamed = call("fs.rename", R"({"from":"src","to":"moved"})");
  EXPECT_EQ(CodeOf(renamed), kJsonRpcAccessDenied);
  EXPECT_NE(renamed.find("src/.env"), std::string::npos) << renamed;
  EXPECT_EQ(Content("src/.env"), "needle\n");
  EXPECT_EQ(Content("src/a.txt"), "needle\n");
  EXPECT_EQ(call("fs.delete", R"({"path":"src/a.txt"})"), "{}");
  EXPECT_EQ(CodeOf(call("fs.write", R"({"path":"secrets/new.txt","content":"x"})")), kJsonRpcAccessDenied);
}

INSTANTIATE_TEST_SUITE_P(Backends, FsMethodsTest, ::testing::Values("fs", "memory"), BackendName);
INSTANTIATE_TEST_SUITE_P(Backends, FsStoreMethodsTest, ::testing::Values("fs"), BackendName);
INSTANTIATE_TEST_SUITE_P(Backends, FsGrepMethodTest, ::testing::Values("fs", "memory"), BackendName);
INSTANTIATE_TEST_SUITE_P(Backends, FsGrepLargeResultTest, ::testing::Values("fs", "memory"), BackendName);

// ----- The null store ---------------------------------------------------------------------

TEST(FsMethodsNullStoreTest, NoProjectLooksLikeMissingFiles) {
  Result<std::unique_ptr<ProjectFiles>> opened = OpenProject("null:");
  ASSERT_TRUE(opened.ok());
  ProjectFiles& project = **opened;
  EXPECT_EQ(CallOn(project, "fs.read", R"({"path":"a.txt"})"),
            Error(kJsonRpcNotFound, "No project: cannot read 'a.txt'"));
  EXPECT_EQ(CallOn(project, "fs.read", R"({"path":"a.txt","offset":1,"length":2})"),
            Error(kJsonRpcNotFound, "No project: cannot read 'a.txt'"));
  EXPECT_EQ(CallOn(project, "fs.write", R"({"path":"a.txt","content":"x"})"),
            Error(kJsonRpcNotFound, "No project: cannot write 'a.txt'"));
  EXPECT_EQ(CallOn(project, "fs.metadata", R"({"path":"a.txt"})"),
            Error(kJsonRpcNotFound, "No project: cannot get metadata of 'a.txt'"));
  EXPECT_EQ(CallOn(project, "fs.delete", R"({"path":"a.txt"})"),
            Error(kJsonRpcNotFound, "No project: cannot delete 'a.txt'"));
  EXPECT_EQ(CallOn(project, "fs.rename", R"({"from":"a","to":"b"})"),
            Error(kJsonRpcNotFound, "No project: cannot rename 'a' to 'b'"));
  EXPECT_EQ(CallOn(project, "fs.exists", R"({"path":"a.txt"})"), R"({"exists":false})");
  EXPECT_EQ(CallOn(project, "fs.list_dir", R"({"path":""})"), R"({"entries":[],"total":0})");
  EXPECT_EQ(CallOn(project, "fs.grep", R"({"pattern":"x"})"), R"({"matches":[],"truncated":false})");
  // Paths and params are still checked.
  EXPECT_EQ(CodeOf(CallOn(project, "fs.read", R"({"path":"../x"})")), kJsonRpcAccessDenied);
  EXPECT_EQ(CodeOf(CallOn(project, "fs.exists", R"({"path":"/x"})")), kJsonRpcInvalidParams);
  EXPECT_EQ(CallOn(project, "fs.read", R"({"path":"a.txt","offset":"1"})"),
            InvalidParams("Invalid params: 'offset' must be a non-negative integer"));
}

TEST(FsMethodsIdTest, IntegerIdsAreEchoedInResultsAndErrors) {
  Result<std::unique_ptr<ProjectFiles>> opened = OpenProject("memory:");
  ASSERT_TRUE(opened.ok());
  DefaultGate gate;
  MethodContext context{**opened, gate.gate};
  RequestScope scope(RequestId(1), "test", true);
  MessageParser parser;
  ParsedLine ok = parser.Parse(
      R"({"jsonrpc":"2.0","id":-9223372036854775808,"method":"fs.exists","params":{"path":"x"}})");
  ASSERT_TRUE(ok.is_message());
  EXPECT_EQ(FindMethod("fs.exists")->handler(ok.message(), context, scope).ToString(),
            "{\"jsonrpc\":\"2.0\",\"id\":-9223372036854775808,\"result\":{\"exists\":false}}\n");
  ParsedLine failing =
      parser.Parse(R"({"jsonrpc":"2.0","id":42,"method":"fs.read","params":{"path":"x"}})");
  ASSERT_TRUE(failing.is_message());
  EXPECT_EQ(FindMethod("fs.read")->handler(failing.message(), context, scope).ToString(),
            "{\"jsonrpc\":\"2.0\",\"id\":42,\"error\":{\"code\":-32002,\"message\":\"File 'x' does "
            "not exist\"}}\n");
}

}  // namespace
}  // namespace toolvfs
