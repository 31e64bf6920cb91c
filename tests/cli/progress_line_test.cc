// ProgressLine (src/cli/progress_line.h): when it draws, what it draws, and
// that it erases itself, with a fake clock and the terminal's bytes recorded.
#include "cli/progress_line.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

namespace toolvfs {
namespace {

using namespace std::chrono_literals;

class ProgressLineTest : public ::testing::Test {
 protected:
  ProgressLine::Options Recording(size_t width = 80) {
    ProgressLine::Options options;
    options.write = [this](std::string_view bytes) { terminal_ += bytes; };
    options.now = [this] { return now_; };
    options.first_after = 250ms;
    options.interval = 100ms;
    options.width = width;
    return options;
  }

  // Update with a text that counts how often it was built.
  void Update(ProgressLine& line, const std::string& text) {
    line.Update([&] {
      ++texts_built_;
      return text;
    });
  }

  std::string terminal_;
  ProgressLine::Clock::time_point now_{};
  int texts_built_ = 0;
};

TEST_F(ProgressLineTest, QuickWorkDrawsNothing) {
  {
    ProgressLine line(Recording());
    for (int i = 0; i < 100; ++i) {
      now_ += 2ms;  // 200 ms in all: under first_after
      Update(line, "searching " + std::to_string(i));
    }
  }
  EXPECT_EQ(terminal_, "");
  EXPECT_EQ(texts_built_, 0) << "the text is built only for a draw";
}

TEST_F(ProgressLineTest, DrawsAfterTheDelayThenAtMostOncePerInterval) {
  ProgressLine line(Recording());
  now_ += 250ms;
  Update(line, "one");
  EXPECT_EQ(terminal_, "\rone\x1b[K");
  for (int i = 0; i < 9; ++i) {
    now_ += 10ms;  // 90 ms: still inside the interval
    Update(line, "skipped");
  }
  EXPECT_EQ(terminal_, "\rone\x1b[K");
  now_ += 10ms;
  Update(line, "two");
  EXPECT_EQ(terminal_, "\rone\x1b[K\rtwo\x1b[K");
  EXPECT_EQ(texts_built_, 2);
}

TEST_F(ProgressLineTest, ShowNowSkipsTheIntervalButNotTheFirstDelay) {
  ProgressLine line(Recording());
  now_ += 100ms;
  line.ShowNow("phase two");
  EXPECT_EQ(terminal_, "") << "quick work stays silent";
  now_ += 200ms;
  Update(line, "one");
  now_ += 1ms;
  line.ShowNow("phase two");
  EXPECT_EQ(terminal_, "\rone\x1b[K\rphase two\x1b[K");
  now_ += 50ms;
  Update(line, "skipped: the interval starts again at the last draw");
  EXPECT_EQ(terminal_, "\rone\x1b[K\rphase two\x1b[K");
}

TEST_F(ProgressLineTest, ClearErasesOnlyWhatWasDrawn) {
  ProgressLine line(Recording());
  line.Clear();
  EXPECT_EQ(terminal_, "") << "nothing drawn, nothing to erase";
  now_ += 300ms;
  Update(line, "files: 10");
  line.Clear();
  EXPECT_EQ(terminal_, "\rfiles: 10\x1b[K\r\x1b[K");
  line.Clear();
  EXPECT_EQ(terminal_, "\rfiles: 10\x1b[K\r\x1b[K") << "erased once";
}

TEST_F(ProgressLineTest, TheDestructorLeavesAClearLine) {
  {
    ProgressLine line(Recording());
    now_ += 1s;
    Update(line, "copying");
  }
  EXPECT_EQ(terminal_, "\rcopying\x1b[K\r\x1b[K");
}

TEST_F(ProgressLineTest, OutputWhileClearedIsNeverMixedWithTheLine) {
  ProgressLine line(Recording());
  now_ += 1s;
  Update(line, "searching");
  line.WhileCleared([&] { terminal_ += "a.txt:1:match\n"; });
  EXPECT_EQ(terminal_, "\rsearching\x1b[K\r\x1b[Ka.txt:1:match\n");
  now_ += 100ms;
  Update(line, "searching more");
  EXPECT_THAT(terminal_, ::testing::EndsWith("match\n\rsearching more\x1b[K"));
}

TEST_F(ProgressLineTest, LinesAreCutToTheTerminalWidthAndControlsReplaced) {
  ProgressLine line(Recording(/*width=*/10));
  now_ += 1s;
  Update(line, "0123456789abcdef");
  EXPECT_EQ(terminal_, "\r012345678\x1b[K") << "width - 1 columns: a full line would wrap";
  terminal_.clear();
  now_ += 1s;
  Update(line, "a\x1b]0;x\nb");
  EXPECT_EQ(terminal_, "\ra?]0;x?b\x1b[K");
  terminal_.clear();
  now_ += 1s;
  Update(line, "12345678\xc3\xa9");  // é straddles the cut: left out whole
  EXPECT_EQ(terminal_, "\r12345678\x1b[K");
}

TEST_F(ProgressLineTest, OffWithoutAWriterAndForNonTerminals) {
  ProgressLine::Options options;  // no writer: off
  ProgressLine line(options);
  EXPECT_FALSE(line.enabled());
  bool built = false;
  line.Update([&] {
    built = true;
    return std::string("x");
  });
  EXPECT_FALSE(built);
  bool printed = false;
  line.WhileCleared([&] { printed = true; });
  EXPECT_TRUE(printed) << "output still goes out when the line is off";
  // Under ctest stderr is a pipe or a file, never a terminal.
  if (::isatty(2) != 1) {
    EXPECT_FALSE(static_cast<bool>(ProgressLine::ForStderr(true).write));
  }
  EXPECT_FALSE(static_cast<bool>(ProgressLine::ForStderr(false).write)) << "--json and quiet turn it off";
}

TEST_F(ProgressLineTest, UpdatesFromManyThreadsDrawWholeLines) {
  ProgressLine::Options options = Recording();
  options.now = [] { return ProgressLine::Clock::now(); };
  options.first_after = 0ms;
  options.interval = 0ms;
  {
    ProgressLine line(options);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&line] {
        for (int i = 0; i < 200; ++i) line.Update([] { return std::string("working"); });
      });
    }
    for (std::thread& thread : threads) thread.join();
  }
  // Every draw is "\rworking\x1b[K" whole, then one erase at the end.
  std::string rest = terminal_;
  const std::string draw = "\rworking\x1b[K";
  size_t draws = 0;
  while (rest.starts_with(draw)) {
    rest.erase(0, draw.size());
    ++draws;
  }
  EXPECT_EQ(rest, "\r\x1b[K");
  EXPECT_GT(draws, 0u);
}

TEST(ProgressFormatTest, ElapsedBytesAndCounts) {
  EXPECT_EQ(FormatElapsed(850ms), "850 ms");
  EXPECT_EQ(FormatElapsed(12'440ms), "12.4 s");
  EXPECT_EQ(FormatElapsed(185s), "3 min 05 s");
  EXPECT_EQ(FormatApproximateBytes(512), "512 B");
  EXPECT_EQ(FormatApproximateBytes(12'600), "12.3 KiB");
  EXPECT_EQ(FormatApproximateBytes(uint64_t{3} << 30), "3.0 GiB");
  EXPECT_EQ(FormatCount(0), "0");
  EXPECT_EQ(FormatCount(999), "999");
  EXPECT_EQ(FormatCount(1'234'567), "1,234,567");
}

}  // namespace
}  // namespace toolvfs
