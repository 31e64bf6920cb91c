// The audit log (SPEC.md §3.4): the record's JSON line and its parser, the
// readable timeline line, the sinks, and the append-only file with its line
// reader that keep the log in the project.
#include "policy/audit.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "project/append_only_file.h"

namespace toolvfs {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

namespace fs = std::filesystem;

AuditRecord SampleRecord() {
  AuditRecord record;
  record.timestamp_ms = 1795249800125;  // 2026-11-21T08:30:00.125Z
  record.tool = "gen";
  record.call_id = "c-1795249800000-0a1b2c3d";
  record.method = "fs.write";
  record.target = "src/gen/a.rs";
  record.decision = AuditDecision::kAskedAllow;
  record.rule = "user";
  record.code = 0;
  record.bytes_in = 120;
  record.bytes_out = 37;
  record.duration_us = 12;
  return record;
}

void ExpectSameRecord(const AuditRecord& actual, const AuditRecord& expected) {
  EXPECT_EQ(actual.timestamp_ms, expected.timestamp_ms);
  EXPECT_EQ(actual.tool, expected.tool);
  EXPECT_EQ(actual.call_id, expected.call_id);
  EXPECT_EQ(actual.method, expected.method);
  EXPECT_EQ(actual.target, expected.target);
  EXPECT_EQ(actual.decision, expected.decision);
  EXPECT_EQ(actual.rule, expected.rule);
  EXPECT_EQ(actual.code, expected.code);
  EXPECT_EQ(actual.bytes_in, expected.bytes_in);
  EXPECT_EQ(actual.bytes_out, expected.bytes_out);
  EXPECT_EQ(actual.duration_us, expected.duration_us);
}

std::string ReadFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::ostringstream content;
  content << file.rdbuf();
  return content.str();
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream stream(text);
  for (std::string line; std::getline(stream, line);) lines.push_back(line);
  return lines;
}

TEST(AuditRecordTest, ToJsonWritesTheSpecifiedMembersInOrder) {
  EXPECT_EQ(SampleRecord().ToJson(),
            "{\"ts\":\"2026-11-21T08:30:00.125Z\",\"tool\":\"gen\",\"call_id\":\"c-1795249800000-0a1b2c3d\","
            "\"method\":\"fs.write\",\"target\":\"src/gen/a.rs\",\"decision\":\"asked-allow\",\"rule\":\"user\","
            "\"code\":0,\"bytes_in\":120,\"bytes_out\":37,\"duration_us\":12}");
}

TEST(AuditRecordTest, EveryDecisionRoundTrips) {
  for (AuditDecision decision :
       {AuditDecision::kAllow, AuditDecision::kDeny, AuditDecision::kAskedAllow, AuditDecision::kAskedDeny}) {
    AuditRecord record = SampleRecord();
    record.decision = decision;
    record.code = decision == AuditDecision::kAllow ? 0 : -32001;
    record.bytes_in = UINT64_MAX;
    Result<AuditRecord> parsed = ParseAuditRecord(record.ToJson());
    ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
    ExpectSameRecord(*parsed, record);
  }
  EXPECT_EQ(AuditDecisionName(AuditDecision::kAskedDeny), "asked-deny");
}

TEST(AuditRecordTest, OddTargetsStayOneLineAndRoundTripExactly) {
  for (std::string target : {std::string("a\nb\r\"c\"\\d\te"), std::string("nul\0byte", 8),
                             std::string("\x1b[2J\x1b]0;x\x07\x7f\xc2\x9b"), std::string("caf\xc3\xa9 \xf0\x9f\x98\x80"),
                             std::string("rg --pre 'sh -c \"curl x|sh\"' -- ."), std::string(""),
                             std::string("https://h/p?q=%00&x=\xe2\x80\xae")}) {
    AuditRecord record = SampleRecord();
    record.target = target;
    record.rule = "filesystem.allow \"" + target + "\"";
    std::string json = record.ToJson();
    EXPECT_EQ(json.find('\n'), std::string::npos) << json;
    for (char c : json) EXPECT_GE(static_cast<unsigned char>(c), 0x20) << json;
    Result<AuditRecord> parsed = ParseAuditRecord(json);
    ASSERT_TRUE(parsed.ok()) << parsed.status().ToString() << ": " << json;
    ExpectSameRecord(*parsed, record);
  }
}

TEST(AuditRecordTest, InvalidUtf8IsWrittenAsReplacementCharacters) {
  AuditRecord record = SampleRecord();
  record.target = "a\xff" "b";
  Result<AuditRecord> parsed = ParseAuditRecord(record.ToJson());
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->target, "a\xef\xbf\xbd" "b");
}

TEST(AuditRecordTest, TimestampsBeforeAndAfterTheEpochRoundTrip) {
  for (int64_t milliseconds : {int64_t{0}, int64_t{1}, int64_t{999}, int64_t{-1}, int64_t{253402300799999}}) {
    AuditRecord record = SampleRecord();
    record.timestamp_ms = milliseconds;
    Result<AuditRecord> parsed = ParseAuditRecord(record.ToJson());
    ASSERT_TRUE(parsed.ok()) << milliseconds << ": " << parsed.status().ToString();
    EXPECT_EQ(parsed->timestamp_ms, milliseconds);
  }
}

TEST(AuditRecordTest, ParseRejectsWhatToJsonCannotWriteNamingTheProblem) {
  std::string good = SampleRecord().ToJson();
  auto replaced = [&](std::string_view from, std::string_view to) {
    std::string json = good;
    json.replace(json.find(from), from.size(), to);
    return json;
  };
  struct Case {
    std::string json;
    std::string message;
  };
  for (const Case& c : {
           Case{"", "not JSON"},
           Case{"{\"ts\":", "not JSON"},
           Case{"[1,2]", "not a JSON object"},
           Case{good.substr(0, good.size() - 1), "not JSON"},
           Case{replaced("\"tool\":\"gen\",", ""), "'tool' must be a string"},
           Case{replaced("\"tool\":\"gen\"", "\"tool\":7"), "'tool' must be a string"},
           Case{replaced("\"code\":0", "\"code\":\"0\""), "'code' must be an integer"},
           Case{replaced("\"code\":0", "\"code\":1.5"), "'code' must be an integer"},
           Case{replaced("\"code\":0", "\"code\":99999999999"), "'code' 99999999999 is out of range"},
           Case{replaced("\"bytes_in\":120", "\"bytes_in\":-1"), "'bytes_in' must be a non-negative integer"},
           Case{replaced("\"asked-allow\"", "\"maybe\""), "'decision' must be allow, deny"},
           Case{replaced("2026-11-21T08:30:00.125Z", "2026-02-30T08:30:00.125Z"), "'ts' must be a UTC time"},
           Case{replaced("2026-11-21T08:30:00.125Z", "2026-11-21 08:30:00.125"), "'ts' must be a UTC time"},
           Case{replaced("2026-11-21T08:30:00.125Z", "2026-11-21T08:30:00Z"), "'ts' must be a UTC time"},
           Case{replaced("2026-11-21T08:30:00.125Z", "2026-11-21T24:30:00.125Z"), "'ts' must be a UTC time"},
       }) {
    Result<AuditRecord> parsed = ParseAuditRecord(c.json);
    ASSERT_FALSE(parsed.ok()) << c.json;
    EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(parsed.status().message(), StartsWith("Invalid audit record: ")) << c.json;
    EXPECT_THAT(parsed.status().message(), HasSubstr(c.message)) << c.json;
  }
}

TEST(AuditRecordTest, ParseIgnoresMembersANewerToolvfsMayAdd) {
  std::string json = SampleRecord().ToJson();
  json.insert(json.size() - 1, ",\"session\":{\"id\":3},\"note\":null");
  Result<AuditRecord> parsed = ParseAuditRecord(json);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  ExpectSameRecord(*parsed, SampleRecord());
}

TEST(FormatAuditLineTest, OneReadableLine) {
  EXPECT_EQ(FormatAuditLine(SampleRecord()),
            "2026-11-21 08:30:00.125  gen  fs.write  src/gen/a.rs  asked-allow (user)  12 µs");
  AuditRecord denied = SampleRecord();
  denied.decision = AuditDecision::kDeny;
  denied.rule = "filesystem.deny \"secrets\"";
  denied.code = -32001;
  denied.duration_us = 4567;
  EXPECT_EQ(FormatAuditLine(denied),
            "2026-11-21 08:30:00.125  gen  fs.write  src/gen/a.rs  deny (filesystem.deny \"secrets\")  4.57 ms"
            "  error -32001");
  denied.rule = "";
  denied.duration_us = 2050000;
  EXPECT_THAT(FormatAuditLine(denied), HasSubstr("  deny  2.05 s  error -32001"));
}

TEST(FormatAuditLineTest, WhatAToolAskedForCannotDriveTheTerminal) {
  AuditRecord record = SampleRecord();
  record.target = "x\x1b[2J\ny\xc2\x9b";
  record.tool = "t\x07";
  std::string line = FormatAuditLine(record);
  EXPECT_EQ(line.find('\x1b'), std::string::npos);
  EXPECT_EQ(line.find('\n'), std::string::npos);
  EXPECT_EQ(line.find('\x07'), std::string::npos);
  EXPECT_THAT(line, HasSubstr("t\\x07  fs.write  x\\x1b[2J\\x0ay\\xc2\\x9b  "));
}

TEST(AuditSinkTest, CallbackAndFanOutDeliverEveryRecord) {
  std::vector<std::string> first, second;
  std::unique_ptr<AuditSink> a = NewCallbackAuditSink([&](const AuditRecord& r) { first.push_back(r.target); });
  std::unique_ptr<AuditSink> b = NewCallbackAuditSink([&](const AuditRecord& r) { second.push_back(r.target); });
  std::unique_ptr<AuditSink> both = NewFanOutAuditSink({a.get(), b.get()});
  AuditRecord record = SampleRecord();
  both->Record(record);
  record.target = "other";
  both->Record(record);
  EXPECT_EQ(first, (std::vector<std::string>{"src/gen/a.rs", "other"}));
  EXPECT_EQ(second, first);
}

TEST(AuditSinkTest, CallbackIsCalledOneAtATime) {
  int inside = 0, most_inside = 0, calls = 0;
  std::unique_ptr<AuditSink> sink = NewCallbackAuditSink([&](const AuditRecord&) {
    most_inside = std::max(most_inside, ++inside);
    ++calls;
    --inside;
  });
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 1000; ++i) sink->Record(SampleRecord());
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(calls, 4000);
  EXPECT_EQ(most_inside, 1);
}

class AuditFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/toolvfs-audit-test-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    root_ = pattern;
    log_ = root_ + "/project/.toolvfs/audit.jsonl";
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(root_, ignored);
  }

  std::unique_ptr<AuditSink> Open() {
    Result<std::unique_ptr<AuditSink>> sink = OpenAuditLogFile(log_);
    EXPECT_TRUE(sink.ok()) << sink.status().ToString();
    return sink.ok() ? std::move(sink).value() : nullptr;
  }

  std::string root_;
  std::string log_;
};

TEST_F(AuditFileTest, CreatesPrivateDirectoriesAndFile) {
  std::unique_ptr<AuditSink> sink = Open();
  ASSERT_NE(sink, nullptr);
  sink->Record(SampleRecord());
  struct stat status;
  ASSERT_EQ(::stat(log_.c_str(), &status), 0);
  EXPECT_EQ(status.st_mode & 0777, 0600u);
  ASSERT_EQ(::stat((root_ + "/project/.toolvfs").c_str(), &status), 0);
  EXPECT_EQ(status.st_mode & 0777, 0700u);
  EXPECT_EQ(ReadFile(log_), SampleRecord().ToJson() + "\n");
}

TEST_F(AuditFileTest, AppendsAndNeverTruncates) {
  fs::create_directories(fs::path(log_).parent_path());
  std::ofstream(log_) << "earlier line\n";
  AuditRecord record = SampleRecord();
  Open()->Record(record);
  record.target = "second";
  Open()->Record(record);  // a second run opens the log again
  std::vector<std::string> lines = Lines(ReadFile(log_));
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0], "earlier line");
  EXPECT_EQ(ParseAuditRecord(lines[1])->target, "src/gen/a.rs");
  EXPECT_EQ(ParseAuditRecord(lines[2])->target, "second");
}

TEST_F(AuditFileTest, ConcurrentAppendsKeepEveryLineWhole) {
  // Four threads on one sink (one run) and two more sinks on the same file
  // (other runs): every line parses and none is lost.
  std::unique_ptr<AuditSink> shared = Open();
  std::unique_ptr<AuditSink> other_runs[] = {Open(), Open()};
  constexpr int kPerThread = 500;
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t) {
    AuditSink* sink = t < 4 ? shared.get() : other_runs[t - 4].get();
    threads.emplace_back([sink, t] {
      AuditRecord record = SampleRecord();
      for (int i = 0; i < kPerThread; ++i) {
        // Long enough that a split write would show.
        record.target = std::to_string(t) + ":" + std::to_string(i) + ":" + std::string(3000 + i, 'x');
        sink->Record(record);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  std::vector<std::string> lines = Lines(ReadFile(log_));
  ASSERT_EQ(lines.size(), 6u * kPerThread);
  std::set<std::string> seen;
  for (const std::string& line : lines) {
    Result<AuditRecord> record = ParseAuditRecord(line);
    ASSERT_TRUE(record.ok()) << record.status().ToString();
    seen.insert(record->target.substr(0, record->target.find(":x")));
  }
  EXPECT_EQ(seen.size(), 6u * kPerThread);
}

TEST_F(AuditFileTest, NeverOpensThroughASymbolicLinkOrANonRegularFile) {
  fs::create_directories(fs::path(log_).parent_path());
  std::string victim = root_ + "/bashrc";
  std::ofstream(victim) << "keep me\n";
  fs::create_symlink(victim, log_);
  Result<std::unique_ptr<AuditSink>> sink = OpenAuditLogFile(log_);
  ASSERT_FALSE(sink.ok());
  EXPECT_EQ(sink.status().code(), StatusCode::kPermissionDenied);
  EXPECT_THAT(sink.status().message(), HasSubstr("symbolic link"));
  EXPECT_EQ(ReadFile(victim), "keep me\n");

  fs::remove(log_);
  ASSERT_EQ(::mkfifo(log_.c_str(), 0600), 0);
  sink = OpenAuditLogFile(log_);
  ASSERT_FALSE(sink.ok());
  EXPECT_THAT(sink.status().message(), HasSubstr("not a regular file"));
}

TEST_F(AuditFileTest, BelowTheProjectNoDirectoryOnTheWayIsALink) {
  // A cloned repository's .toolvfs linking to a directory outside it.
  const std::string project = root_ + "/project";
  const std::string outside = root_ + "/outside";
  fs::create_directories(project);
  fs::create_directories(outside);
  fs::create_symlink(outside, project + "/.toolvfs");
  Result<std::unique_ptr<AuditSink>> sink = OpenAuditLogFileBelow(project, kProjectAuditLogPath);
  ASSERT_FALSE(sink.ok());
  EXPECT_EQ(sink.status().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(sink.status().message(), "Cannot open log file '" + project + "/.toolvfs/audit.jsonl': '" + project +
                                         "/.toolvfs' is a symbolic link, which is never followed");
  EXPECT_TRUE(fs::is_empty(outside));

  // A dangling link fails the same way rather than creating its target.
  fs::remove(project + "/.toolvfs");
  fs::create_symlink(outside + "/new", project + "/.toolvfs");
  sink = OpenAuditLogFileBelow(project, kProjectAuditLogPath);
  ASSERT_FALSE(sink.ok());
  EXPECT_THAT(sink.status().message(), HasSubstr("symbolic link"));
  EXPECT_TRUE(fs::is_empty(outside));

  // The log itself as a link, and the happy path: created 0700/0600.
  fs::remove(project + "/.toolvfs");
  fs::create_directories(project + "/.toolvfs");
  fs::create_symlink(outside + "/log", project + "/.toolvfs/audit.jsonl");
  sink = OpenAuditLogFileBelow(project, kProjectAuditLogPath);
  ASSERT_FALSE(sink.ok());
  EXPECT_THAT(sink.status().message(), HasSubstr("symbolic link"));
  fs::remove_all(project + "/.toolvfs");
  sink = OpenAuditLogFileBelow(project, kProjectAuditLogPath);
  ASSERT_TRUE(sink.ok()) << sink.status().ToString();
  (*sink)->Record(SampleRecord());
  EXPECT_EQ(Lines(ReadFile(project + "/.toolvfs/audit.jsonl")).size(), 1u);
  EXPECT_EQ(fs::status(project + "/.toolvfs").permissions(), fs::perms::owner_all);
  EXPECT_TRUE(fs::is_empty(outside));
}

TEST_F(AuditFileTest, AFailedWriteIsReportedOnceAndNeverFailsTheRecord) {
  int errors[2];
  ASSERT_EQ(::pipe(errors), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // A file size limit makes every append fail with EFBIG; stderr is a
    // pipe, which the limit does not apply to.
    ::dup2(errors[1], STDERR_FILENO);
    Result<std::unique_ptr<AuditSink>> sink = OpenAuditLogFile(log_);
    if (!sink.ok()) _exit(3);
    ::signal(SIGXFSZ, SIG_IGN);
    struct rlimit limit = {10, 10};
    ::setrlimit(RLIMIT_FSIZE, &limit);
    for (int i = 0; i < 3; ++i) (*sink)->Record(SampleRecord());
    _exit(0);
  }
  ::close(errors[1]);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0);
  std::string written;
  char buffer[4096];
  for (ssize_t got; (got = ::read(errors[0], buffer, sizeof buffer)) > 0;) written.append(buffer, got);
  ::close(errors[0]);
  std::vector<std::string> lines = Lines(written);
  ASSERT_EQ(lines.size(), 1u) << written;
  EXPECT_THAT(lines[0], StartsWith("toolvfs: warning: audit log: Cannot append to '" + log_ + "'"));
  EXPECT_THAT(lines[0], HasSubstr("further failures are not reported"));
}

class FileLineReaderTest : public AuditFileTest {
 protected:
  std::vector<std::string> ReadAll(size_t max_line_bytes = FileLineReader::kDefaultMaxLineBytes,
                                   std::vector<uint64_t>* too_long = nullptr) {
    Result<FileLineReader> reader = FileLineReader::Open(path_, max_line_bytes);
    EXPECT_TRUE(reader.ok()) << reader.status().ToString();
    std::vector<std::string> lines;
    if (!reader.ok()) return lines;
    while (true) {
      Result<std::optional<std::string_view>> line = reader->NextLine();
      if (!line.ok()) {
        EXPECT_EQ(line.status().code(), StatusCode::kTooLarge);
        if (too_long != nullptr) too_long->push_back(reader->line_number());
        continue;
      }
      if (!line->has_value()) break;
      lines.emplace_back(**line);
    }
    return lines;
  }

  void WriteContent(const std::string& content) { std::ofstream(path_, std::ios::binary) << content; }

  std::string path_;
  void SetUp() override {
    AuditFileTest::SetUp();
    path_ = root_ + "/lines";
  }
};

TEST_F(FileLineReaderTest, ReadsLinesAndAnUnterminatedLastLine) {
  WriteContent("a\n\nbc\nlast");
  EXPECT_EQ(ReadAll(), (std::vector<std::string>{"a", "", "bc", "last"}));
  WriteContent("");
  EXPECT_TRUE(ReadAll().empty());
  WriteContent("one\n");
  EXPECT_EQ(ReadAll(), (std::vector<std::string>{"one"}));
}

TEST_F(FileLineReaderTest, StreamsAFileLargerThanItsBuffer) {
  std::string content;
  for (int i = 0; i < 100000; ++i) content += std::to_string(i) + std::string(i % 97, '.') + "\n";
  WriteContent(content);
  std::vector<std::string> lines = ReadAll();
  ASSERT_EQ(lines.size(), 100000u);
  EXPECT_EQ(lines[99999], "99999" + std::string(99999 % 97, '.'));
}

TEST_F(FileLineReaderTest, ALineOverTheLimitIsReportedWithItsNumberAndSkipped) {
  WriteContent("short\n" + std::string(300000, 'x') + "\nafter\n" + std::string(200000, 'y'));
  std::vector<uint64_t> too_long;
  EXPECT_EQ(ReadAll(1000, &too_long), (std::vector<std::string>{"short", "after"}));
  EXPECT_EQ(too_long, (std::vector<uint64_t>{2, 4}));
}

TEST_F(FileLineReaderTest, AMissingFileIsNotFound) {
  Result<FileLineReader> reader = FileLineReader::Open(root_ + "/nope");
  ASSERT_FALSE(reader.ok());
  EXPECT_EQ(reader.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(reader.status().message(), HasSubstr("/nope' does not exist"));
}

}  // namespace
}  // namespace toolvfs
