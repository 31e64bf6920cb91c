// Multi-process harnesses written against a store URI, so each durable
// store (sqlite now, postgres next) runs the same ones: several processes
// writing one workspace at once, and a writer that keeps going through
// interruptions (its own death, or its server's restart).
//
// Children are forked from the test process (no thread runs at that
// point) and open their own store; what they did is written to a journal
// file each, since gtest assertions do not cross the fork.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "core/status.h"
#include "project/project_files.h"
#include "project/test_util.h"

namespace toolvfs {
namespace store_stress {

// What writer `writer` writes at its `step`-th write: recognizable, and
// long enough (3 KiB) that a torn write could not pass for another.
inline std::string Content(int writer, int step) {
  const std::string unit = "writer " + std::to_string(writer) + " step " + std::to_string(step) + ";";
  std::string content;
  while (content.size() < 3000) content += unit;
  return content + "end\n";
}

// One record of a shared append-only log.
inline std::string LogRecord(int writer, int step) {
  return "w" + std::to_string(writer) + "s" + std::to_string(step) + "\n";
}

inline void AppendLine(int fd, const std::string& line) {
  const std::string text = line + "\n";
  if (::write(fd, text.data(), text.size()) != static_cast<ssize_t>(text.size())) _exit(3);
}

inline std::vector<std::string> JournalLines(const std::string& path) {
  std::vector<std::string> lines;
  std::istringstream in(ReadRealFile(path));
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The mixed load of one writer: write `step` goes to its own file
// (own/W/fN, overwritten), a file every writer overwrites (shared/sN), or
// the log every writer appends to (shared/log).
struct MixedStep {
  std::string path;
  bool append = false;
};
inline MixedStep MixedStepOf(int writer, int step) {
  switch (step % 4) {
    case 0:
    case 2: return {"own/" + std::to_string(writer) + "/f" + std::to_string((step / 2) % 20)};
    case 1: return {"shared/s" + std::to_string((step / 4) % 4)};
    default: return {"shared/log", /*append=*/true};
  }
}

// `processes` processes each make `writes` mixed writes (MixedStepOf) to
// the workspace at `uri` at once. Then: no write failed; every file's
// content is one some writer wrote there (a writer's own files hold its
// last write); each file's version is the number of writes it took; the
// log holds every record exactly once, whole.
inline void ExpectMixedWritersLoseNothing(const std::string& uri, const StoreOptions& options, int processes,
                                          int writes, const std::string& journal_directory) {
  std::vector<pid_t> children;
  for (int writer = 0; writer < processes; ++writer) {
    const std::string journal = journal_directory + "/writer-" + std::to_string(writer);
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int fd = ::open(journal.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600);
      if (fd < 0) _exit(2);
      Result<std::unique_ptr<ProjectFiles>> store = OpenProject(uri, options);
      if (!store.ok()) {
        AppendLine(fd, "open " + store.status().ToString());
        _exit(1);
      }
      for (int step = 0; step < writes; ++step) {
        MixedStep mixed = MixedStepOf(writer, step);
        Status written = mixed.append ? (*store)->Write(mixed.path, LogRecord(writer, step), WriteMode::kAppend)
                                      : (*store)->Write(mixed.path, Content(writer, step));
        if (!written.ok()) AppendLine(fd, "step " + std::to_string(step) + " " + written.ToString());
      }
      _exit(0);
    }
    children.push_back(pid);
  }
  for (size_t writer = 0; writer < children.size(); ++writer) {
    int status = 0;
    ::waitpid(children[writer], &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "writer " << writer << " status " << status;
    for (const std::string& line : JournalLines(journal_directory + "/writer-" + std::to_string(writer))) {
      ADD_FAILURE() << "writer " << writer << ": " << line;
    }
  }

  // What was written where, and each writer's last write to a path.
  std::map<std::string, std::set<std::string>> written;
  std::map<std::string, uint64_t> writes_to;
  std::map<std::string, std::string> last_own;
  std::multiset<std::string> records;
  for (int writer = 0; writer < processes; ++writer) {
    for (int step = 0; step < writes; ++step) {
      MixedStep mixed = MixedStepOf(writer, step);
      ++writes_to[mixed.path];
      if (mixed.append) {
        records.insert(LogRecord(writer, step));
      } else {
        written[mixed.path].insert(Content(writer, step));
        if (mixed.path.starts_with("own/")) last_own[mixed.path] = Content(writer, step);
      }
    }
  }

  Result<std::unique_ptr<ProjectFiles>> store = OpenProject(uri, options);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  for (const auto& [path, count] : writes_to) {
    Result<std::string> content = (*store)->Read(path);
    ASSERT_TRUE(content.ok()) << path << ": " << content.status().ToString();
    if (path == "shared/log") {
      std::multiset<std::string> found;
      std::istringstream in(*content);
      for (std::string line; std::getline(in, line);) found.insert(line + "\n");
      EXPECT_EQ(found, records) << "every append is there once, whole";
      EXPECT_EQ(content->back(), '\n');
    } else if (path.starts_with("own/")) {
      EXPECT_EQ(*content, last_own[path]) << path << " holds its only writer's last write";
    } else {
      EXPECT_TRUE(written[path].contains(*content)) << path << " holds what no writer wrote there";
    }
    Result<FileMetadata> metadata = (*store)->Metadata(path);
    ASSERT_TRUE(metadata.ok()) << metadata.status().ToString();
    if (metadata->version) {
      EXPECT_EQ(*metadata->version, count) << path << ": one version per write";
    }
  }
}

// What a writer that goes through interruptions left.
struct InterruptedRun {
  int generations = 0;          // writer processes started
  uint64_t confirmed = 0;       // writes whose success the writers saw
  std::map<StatusCode, int> failures;  // failed writes by code
  std::vector<std::string> failure_messages;  // the first few
  int confirmed_after_last_interruption = 0;
};

// Runs a writer process against `uri` that overwrites "counter" and
// appends to "log" in a loop, for `interruptions` rounds: each round lets
// it write for a while, then calls `interrupt(writer_pid)`, which returns
// whether it killed the writer (a new one is then started; a writer that
// survives goes on, e.g. through a server restart). After the last round
// the writer runs a while longer and is stopped. Then: "counter" holds a
// whole write of the last writer, and "log" only whole records, as many as
// its version says.
inline InterruptedRun RunWriterThroughInterruptions(const std::string& uri, const StoreOptions& options,
                                                    int interruptions, const std::function<bool(pid_t)>& interrupt,
                                                    const std::string& journal_directory) {
  InterruptedRun run;
  const std::string stop_file = journal_directory + "/stop";
  auto start_writer = [&](int generation) {
    const std::string journal = journal_directory + "/generation-" + std::to_string(generation);
    pid_t pid = ::fork();
    if (pid == 0) {
      int fd = ::open(journal.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600);
      if (fd < 0) _exit(2);
      std::unique_ptr<ProjectFiles> store;
      for (int step = 0; ::access(stop_file.c_str(), F_OK) != 0; ++step) {
        if (store == nullptr) {
          Result<std::unique_ptr<ProjectFiles>> opened = OpenProject(uri, options);
          if (!opened.ok()) {
            AppendLine(fd, "E " + std::to_string(static_cast<int>(opened.status().code())) + " " +
                               opened.status().message());
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
            continue;
          }
          store = std::move(opened).value();
        }
        Status status = store->Write("counter", Content(generation, step));
        if (status.ok()) status = store->Write("log", LogRecord(generation, step), WriteMode::kAppend);
        if (status.ok()) {
          AppendLine(fd, "ok " + std::to_string(step));
        } else {
          AppendLine(fd, "E " + std::to_string(static_cast<int>(status.code())) + " " + status.message());
          std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
      }
      _exit(0);
    }
    return pid;
  };

  pid_t writer = start_writer(run.generations++);
  std::vector<size_t> journal_sizes_at_interruption;
  for (int round = 0; round < interruptions; ++round) {
    std::this_thread::sleep_for(std::chrono::milliseconds(150 + (round * 37) % 200));
    if (interrupt(writer)) {
      int status = 0;
      ::waitpid(writer, &status, 0);
      writer = start_writer(run.generations++);
    }
  }
  const size_t last_generation_lines_before =
      JournalLines(journal_directory + "/generation-" + std::to_string(run.generations - 1)).size();
  // Long enough for a store to reconnect and write again.
  for (int wait = 0; wait < 100; ++wait) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    std::vector<std::string> lines = JournalLines(journal_directory + "/generation-" + std::to_string(run.generations - 1));
    int confirmed = 0;
    for (size_t line = last_generation_lines_before; line < lines.size(); ++line) {
      if (lines[line].starts_with("ok ")) ++confirmed;
    }
    if (confirmed >= 20) break;
  }
  WriteRealFile(stop_file, "");
  int status = 0;
  ::waitpid(writer, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the last writer ended with " << status;

  int last_step = -1;
  for (int generation = 0; generation < run.generations; ++generation) {
    std::vector<std::string> lines = JournalLines(journal_directory + "/generation-" + std::to_string(generation));
    for (size_t index = 0; index < lines.size(); ++index) {
      const std::string& line = lines[index];
      if (line.starts_with("ok ")) {
        ++run.confirmed;
        if (generation == run.generations - 1) {
          last_step = std::stoi(line.substr(3));
          if (index >= last_generation_lines_before) ++run.confirmed_after_last_interruption;
        }
      } else if (line.starts_with("E ")) {
        size_t space = line.find(' ', 2);
        ++run.failures[static_cast<StatusCode>(std::stoi(line.substr(2, space - 2)))];
        if (run.failure_messages.size() < 5) run.failure_messages.push_back(line.substr(space + 1));
      }
    }
  }

  Result<std::unique_ptr<ProjectFiles>> store = OpenProject(uri, options);
  EXPECT_TRUE(store.ok()) << store.status().ToString();
  if (!store.ok()) return run;
  EXPECT_GE(last_step, 0) << "the last writer wrote nothing";
  // The last writer stopped between iterations: its last confirmed write
  // is what "counter" holds.
  Result<std::string> counter = (*store)->Read("counter");
  EXPECT_TRUE(counter.ok()) << counter.status().ToString();
  if (counter.ok() && last_step >= 0) {
    EXPECT_EQ(*counter, Content(run.generations - 1, last_step));
  }
  Result<std::string> log = (*store)->Read("log");
  EXPECT_TRUE(log.ok()) << log.status().ToString();
  if (log.ok()) {
    std::istringstream in(*log);
    uint64_t records = 0;
    for (std::string line; std::getline(in, line); ++records) {
      EXPECT_EQ(line.front(), 'w') << "a torn record: " << line;
    }
    EXPECT_EQ(log->back(), '\n') << "the log ends in a torn record";
    Result<FileMetadata> metadata = (*store)->Metadata("log");
    EXPECT_TRUE(metadata.ok());
    if (metadata.ok() && metadata->version) {
      EXPECT_EQ(*metadata->version, records) << "one version per append";
    }
    // Confirmed appends are there; a write whose answer was lost (killed,
    // or the connection dropped at the commit) may be there too.
    EXPECT_GE(records, run.confirmed);
  }
  return run;
}

}  // namespace store_stress
}  // namespace toolvfs
