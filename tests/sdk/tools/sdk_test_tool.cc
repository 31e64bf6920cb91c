// A vfs tool for the SDK's end-to-end tests (tool_e2e_test.cc), built from
// sdk/toolvfs/tool.h alone. argv[1] names a scenario; each checks what the
// real host answers and ends with `result` "ok ..." or an `error` listing
// the failed checks. The test prepares the project (see kProjectFiles
// there) and checks the files the scenario leaves behind.
#include <toolvfs/tool.h>

#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

namespace {

using toolvfs::Json;
using toolvfs::Result;
using toolvfs::Tool;

class Checks {
 public:
  void Expect(bool condition, const std::string& what) {
    if (!condition) failures_.push_back(what);
  }
  template <typename T>
  void ExpectOk(const Result<T>& result, const std::string& what) {
    if (!result.ok()) failures_.push_back(what + ": " + result.error().to_string());
  }
  template <typename T>
  void ExpectCode(const Result<T>& result, int code, const std::string& what) {
    if (result.ok()) {
      failures_.push_back(what + ": succeeded, expected code " + std::to_string(code));
    } else if (result.error().code != code) {
      failures_.push_back(what + ": " + result.error().to_string() + ", expected code " + std::to_string(code));
    }
  }
  // Ends the tool: `result` "ok SUMMARY" or an `error` with every failure.
  int Finish(Tool& tool, const std::string& summary) {
    if (failures_.empty()) {
      tool.result("ok " + summary).value();
      return 0;
    }
    std::string message = std::to_string(failures_.size()) + " checks failed";
    for (const std::string& failure : failures_) message += "; " + failure;
    tool.error(message).value();
    return 1;
  }

 private:
  std::vector<std::string> failures_;
};

std::string Bytes256() {
  std::string bytes;
  for (int i = 0; i < 256; ++i) bytes += static_cast<char>(i);
  return bytes;
}

// Every fs call once, with its effect checked through other calls.
int Fs(Tool& tool) {
  Checks checks;
  checks.Expect(tool.read("hello.txt").value_or("") == "hello world\n", "read hello.txt");
  Result<toolvfs::FileContent> ranged = tool.read_bytes("hello.txt", {.offset = 6, .length = 5});
  checks.ExpectOk(ranged, "ranged read");
  if (ranged.ok()) {
    checks.Expect(ranged->content == "world", "ranged read content '" + ranged->content + "'");
    checks.Expect(ranged->size == 12, "ranged read size " + std::to_string(ranged->size));
    checks.Expect(!ranged->binary, "ranged read is text");
  }
  checks.Expect(tool.exists("hello.txt").value_or(false), "exists hello.txt");
  checks.Expect(!tool.exists("nope.txt").value_or(true), "exists nope.txt");
  checks.Expect(tool.exists("src").value_or(false), "exists src");

  Result<toolvfs::DirListing> root = tool.list_dir("");
  checks.ExpectOk(root, "list_dir root");
  if (root.ok()) {
    std::string names;
    for (const toolvfs::DirEntry& entry : root->entries) names += entry.path + ":" + entry.kind + " ";
    checks.Expect(names.find("hello.txt:file ") != std::string::npos, "root lists hello.txt: " + names);
    checks.Expect(names.find("src:dir ") != std::string::npos, "root lists src: " + names);
    checks.Expect(root->total == root->entries.size(), "root total");
  }
  Result<toolvfs::DirListing> page = tool.list_dir("many", {.offset = 2, .limit = 3});
  checks.ExpectOk(page, "list_dir page");
  if (page.ok()) {
    checks.Expect(page->entries.size() == 3 && page->total == 50, "page of 3 out of 50");
    checks.Expect(!page->entries.empty() && page->entries[0].path == "f10.txt",
                  "sorted by name: third entry " + (page->entries.empty() ? "" : page->entries[0].path));
  }

  Result<toolvfs::Metadata> metadata = tool.metadata("hello.txt");
  checks.ExpectOk(metadata, "metadata");
  if (metadata.ok()) {
    checks.Expect(metadata->kind == "file" && metadata->size == 12, "metadata kind and size");
    checks.Expect(metadata->modified.size() == 24 && metadata->modified.back() == 'Z',
                  "metadata modified is RFC 3339 UTC with ms: " + metadata->modified);
  }
  checks.Expect(tool.metadata("src").value_or(toolvfs::Metadata{}).kind == "dir", "metadata of a dir");

  checks.Expect(tool.write("out/deep/new.txt", "first\n").value_or(0) == 6, "write creates parents");
  checks.Expect(tool.write("out/deep/new.txt", "second\n", toolvfs::WriteMode::kAppend).value_or(0) == 7,
                "append returns the bytes written");
  checks.Expect(tool.read("out/deep/new.txt").value_or("") == "first\nsecond\n", "read after append");
  checks.ExpectCode(tool.write("out/deep/new.txt", "x", toolvfs::WriteMode::kCreate), toolvfs::kAlreadyExists,
                    "create over an existing file");
  checks.ExpectOk(tool.write("out/created.txt", "made", toolvfs::WriteMode::kCreate), "create a new file");
  checks.ExpectOk(tool.write("out/deep/new.txt", "replaced"), "overwrite");

  checks.ExpectOk(tool.rename("out/deep/new.txt", "out/moved.txt"), "rename");
  checks.Expect(!tool.exists("out/deep/new.txt").value_or(true), "rename source gone");
  checks.Expect(tool.read("out/moved.txt").value_or("") == "replaced", "rename target content");
  checks.ExpectCode(tool.rename("out/created.txt", "out/moved.txt"), toolvfs::kAlreadyExists,
                    "rename over an existing file");
  checks.ExpectOk(tool.rename("out/created.txt", "out/moved.txt", true), "rename with overwrite");
  checks.Expect(tool.read("out/moved.txt").value_or("") == "made", "overwritten by rename");

  checks.ExpectOk(tool.write("out/trash/a.txt", "a"), "write into trash");
  checks.ExpectOk(tool.remove("out/moved.txt"), "delete a file");
  checks.Expect(!tool.exists("out/moved.txt").value_or(true), "deleted file gone");
  checks.Expect(!tool.remove("out/trash").ok(), "deleting a non-empty dir without recursive fails");
  checks.ExpectOk(tool.remove("out/trash", true), "delete a dir recursively");
  checks.Expect(!tool.exists("out/trash").value_or(true), "deleted dir gone");

  Result<toolvfs::GrepResult> grep = tool.grep("TODO");
  checks.ExpectOk(grep, "grep");
  if (grep.ok()) {
    checks.Expect(grep->matches.size() == 1 && grep->matches[0].path == "src/a.py", "grep finds src/a.py only");
    checks.Expect(grep->match_count() == 1 && grep->matches[0].lines[0].line_number == 2, "grep line number");
    checks.Expect(!grep->truncated, "grep not truncated");
  }
  Result<toolvfs::GrepResult> context = tool.grep("todo", {.extensions = {"py"}, .context = 1, .case_insensitive = true});
  checks.ExpectOk(context, "grep with options");
  if (context.ok() && !context->matches.empty()) {
    checks.Expect(context->matches[0].lines.size() == 3, "one line of context on each side");
  }
  Result<toolvfs::GrepResult> limited = tool.grep("line", {.paths = {"many"}, .max_matches = 5});
  checks.Expect(limited.ok() && limited->truncated && limited->match_count() == 5, "grep max_matches truncates");
  return checks.Finish(tool, "fs");
}

int Binary(Tool& tool) {
  Checks checks;
  Result<toolvfs::FileContent> blob = tool.read_bytes("bin/blob.bin");
  checks.ExpectOk(blob, "read blob");
  if (blob.ok()) {
    checks.Expect(blob->binary, "blob came as base64");
    checks.Expect(blob->content == Bytes256(), "blob bytes");
    checks.Expect(blob->size == 256, "blob size");
  }
  checks.Expect(tool.write("out/copy.bin", Bytes256()).value_or(0) == 256, "write 256 bytes");
  checks.Expect(tool.read("out/copy.bin").value_or("") == Bytes256(), "read back 256 bytes");
  std::string big;
  uint32_t state = 12345;
  for (int i = 0; i < (1 << 20); ++i) {
    state = state * 1103515245 + 12345;
    big += static_cast<char>(state >> 24);
  }
  checks.Expect(tool.write("out/big.bin", big).value_or(0) == big.size(), "write 1 MiB of random bytes");
  Result<toolvfs::FileContent> back = tool.read_bytes("out/big.bin");
  checks.Expect(back.ok() && back->binary && back->content == big, "1 MiB of random bytes round trip");
  // A ranged read that cuts a UTF-8 sequence comes back as base64.
  Result<toolvfs::FileContent> cut = tool.read_bytes("unicode.txt", {.offset = 0, .length = 2});
  checks.Expect(cut.ok() && cut->content == "h\xC3", "a cut sequence keeps its bytes");
  return checks.Finish(tool, "binary");
}

int Unicode(Tool& tool) {
  Checks checks;
  const std::string text = "héllo wörld — 日本語 😀\n";
  checks.Expect(tool.read("unicode.txt").value_or("") == text, "read unicode.txt");
  std::string mixed = "tab\there \"quotes\" \\backslash\\ \x01 control\r\n" + text;
  checks.ExpectOk(tool.write("out/ü/ñame 😀.txt", mixed), "write under a unicode path");
  checks.Expect(tool.read("out/ü/ñame 😀.txt").value_or("") == mixed, "read back under a unicode path");
  Result<toolvfs::DirListing> listing = tool.list_dir("out/ü");
  checks.Expect(listing.ok() && listing->entries.size() == 1 && listing->entries[0].path == "ñame 😀.txt",
                "list a unicode name");
  Result<toolvfs::GrepResult> grep = tool.grep("日本");
  checks.Expect(grep.ok() && grep->matches.size() == 2, "grep a unicode pattern");
  return checks.Finish(tool, "unicode");
}

int Errors(Tool& tool) {
  Checks checks;
  checks.ExpectCode(tool.read("missing.txt"), toolvfs::kNotFound, "read a missing file");
  checks.ExpectCode(tool.metadata("missing/deeper"), toolvfs::kNotFound, "metadata of a missing file");
  checks.ExpectCode(tool.remove("missing.txt"), toolvfs::kNotFound, "delete a missing file");
  checks.ExpectCode(tool.call("fs.read", Json::object({{"path", "hello.txt"}, {"bogus", 1}})), toolvfs::kInvalidParams,
                    "unknown parameter");
  checks.ExpectCode(tool.call("fs.read", Json::object()), toolvfs::kInvalidParams, "missing parameter");
  checks.ExpectCode(tool.call("fs.read", Json::object({{"path", 5}})), toolvfs::kInvalidParams, "wrong type");
  checks.ExpectCode(tool.read("src"), toolvfs::kInvalidParams, "read a directory");
  checks.ExpectCode(tool.write("hello.txt", "x", toolvfs::WriteMode::kCreate), toolvfs::kAlreadyExists,
                    "create over an existing file");
  checks.ExpectCode(tool.call("fs.frobnicate"), toolvfs::kMethodNotFound, "unknown method");
  Result<std::string> escape = tool.read("../outside.txt");
  checks.Expect(!escape.ok() && (escape.error().code == toolvfs::kAccessDenied ||
                                 escape.error().code == toolvfs::kInvalidParams),
                "a path leaving the project: " + escape.error().to_string());
  checks.Expect(tool.read("hello.txt").value_or("") == "hello world\n", "the session goes on after errors");
  return checks.Finish(tool, "errors");
}

// Fifty reads in flight, waited for in reverse; then the same with raw
// send/wait, mixed with writes.
int InFlight(Tool& tool) {
  Checks checks;
  // The host serves grep on a worker thread and reads inline, so the reads
  // sent after the grep are usually answered before it.
  toolvfs::Pending<toolvfs::GrepResult> grep = tool.grep_async("line", {.paths = {"many"}});
  std::vector<toolvfs::Pending<std::string>> reads;
  for (int i = 0; i < 50; ++i) reads.push_back(tool.read_async("many/f" + std::to_string(i) + ".txt"));
  for (int i = 49; i >= 0; --i) {
    checks.Expect(reads[i].get().value_or("") == "line " + std::to_string(i) + "\n", "async read " + std::to_string(i));
  }
  Result<toolvfs::GrepResult> grepped = grep.get();
  checks.Expect(grepped.ok() && grepped->match_count() == 50, "grep sent before the reads");
  std::vector<int64_t> ids;
  for (int i = 0; i < 50; ++i) {
    std::string path = "out/w" + std::to_string(i) + ".txt";
    ids.push_back(tool.send("fs.write", Json::object({{"path", path}, {"content", std::to_string(i)}})).value());
  }
  for (int i = 49; i >= 0; --i) {
    Result<Json> written = tool.wait(ids[i]);
    checks.Expect(written.ok() && written.value()["size"].as_uint() == std::to_string(i).size(),
                  "raw write " + std::to_string(i));
  }
  std::vector<toolvfs::Pending<std::string>> mixed;
  std::vector<toolvfs::Pending<bool>> exists;
  for (int i = 0; i < 50; ++i) {
    mixed.push_back(tool.read_async("out/w" + std::to_string(i) + ".txt"));
    exists.push_back(tool.exists_async(i % 2 == 0 ? "hello.txt" : "nope.txt"));
  }
  for (int i = 49; i >= 0; --i) {
    checks.Expect(exists[i].get().value_or(i % 2 != 0) == (i % 2 == 0), "async exists " + std::to_string(i));
    checks.Expect(mixed[i].get().value_or("") == std::to_string(i), "read back " + std::to_string(i));
  }
  return checks.Finish(tool, "inflight");
}

int Big(Tool& tool) {
  Checks checks;
  Result<toolvfs::FileContent> big = tool.read_bytes("big.txt");
  checks.ExpectOk(big, "read big.txt");
  if (big.ok()) {
    checks.Expect(big->content.size() == big->size && big->size >= (4u << 20), "big.txt size");
    checks.Expect(!big->binary, "big.txt is text");
    checks.Expect(big->content.rfind("line 0 ", 0) == 0, "big.txt start");
    std::string copy = big->content;
    checks.ExpectOk(tool.write("out/big-copy.txt", copy), "write 4 MiB back");
    checks.Expect(tool.read("out/big-copy.txt").value_or("") == copy, "4 MiB round trip");
  }
  return checks.Finish(tool, "big");
}

int Blocks(Tool& tool) {
  tool.result(Json::array({toolvfs::text_block("first block"), toolvfs::text_block("second — ü"),
                           toolvfs::resource_block("file:///hello.txt", "hello world\n", "text/plain")}))
      .value();
  return 0;
}

int ReportError(Tool& tool) {
  tool.error("could not frobnicate: the widget is missing", {.trace = {"frame 1", "frame 2"}, .transient = true})
      .value();
  return 1;
}

int Arguments(Tool& tool) {
  Json report = Json::object({{"name", tool.name()},
                              {"arguments", tool.arguments()},
                              {"protocol_version", tool.protocol_version()},
                              {"root", tool.root()},
                              {"has_fs_read", tool.has_method("fs.read")}});
  tool.result(report.dump()).value();
  return 0;
}

// After connect(), stdout is the host's log: prints must not break anything.
int Prints(Tool& tool) {
  std::printf("printf after connect\n");
  std::fflush(stdout);
  std::cout << "std::cout after connect" << std::endl;
  std::string text = tool.read("hello.txt").value();
  std::printf("more output\n");
  tool.result("ok prints " + std::to_string(text.size())).value();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string scenario = argc > 1 ? argv[1] : "";
  if (scenario == "throw") {
    // tool_main turns the exception of value() into the `error` notification.
    return toolvfs::tool_main([](Tool& tool) { return tool.read("missing.txt").value(); });
  }
  Result<Tool> connected = toolvfs::connect();
  if (!connected.ok()) {
    std::fprintf(stderr, "sdk_test_tool: %s\n", connected.error().message.c_str());
    return 2;
  }
  Tool& tool = connected.value();
  if (scenario == "fs") return Fs(tool);
  if (scenario == "binary") return Binary(tool);
  if (scenario == "unicode") return Unicode(tool);
  if (scenario == "errors") return Errors(tool);
  if (scenario == "inflight") return InFlight(tool);
  if (scenario == "big") return Big(tool);
  if (scenario == "blocks") return Blocks(tool);
  if (scenario == "error") return ReportError(tool);
  if (scenario == "arguments") return Arguments(tool);
  if (scenario == "prints") return Prints(tool);
  tool.error("unknown scenario '" + scenario + "'").value();
  return 1;
}
