#include "protocol/ndjson.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

namespace toolvfs {
namespace {

using Kind = LineSplitter::EventKind;

// Events as text: "L:<line>", "TOO_LONG", "EOF:<rest>".
std::vector<std::string> Drain(LineSplitter& splitter) {
  std::vector<std::string> events;
  while (std::optional<LineSplitter::Event> event = splitter.Next()) {
    if (event->kind == Kind::kLine) {
      events.push_back("L:" + std::string(event->line));
    } else {
      EXPECT_EQ(event->kind, Kind::kTooLong);
      EXPECT_TRUE(event->line.empty());
      events.push_back("TOO_LONG");
    }
  }
  return events;
}

std::vector<std::string> Finish(LineSplitter& splitter, std::vector<std::string> events) {
  if (std::optional<LineSplitter::Event> event = splitter.Finish()) {
    EXPECT_EQ(event->kind, Kind::kUnterminated);
    events.push_back("EOF:" + std::string(event->line));
  }
  return events;
}

// Feeds `input` cut at `cuts` (sorted offsets), draining after each piece.
std::vector<std::string> Split(std::string_view input, const std::vector<size_t>& cuts,
                               size_t limit = kDefaultMaxLineBytes) {
  LineSplitter splitter(limit);
  std::vector<std::string> events;
  size_t from = 0;
  auto feed = [&](size_t to) {
    splitter.Append(input.substr(from, to - from));
    for (std::string& event : Drain(splitter)) events.push_back(std::move(event));
    from = to;
  };
  for (size_t cut : cuts) feed(cut);
  feed(input.size());
  return Finish(splitter, std::move(events));
}

TEST(LineSplitterTest, SplitsLinesAndKeepsEmptyOnes) {
  EXPECT_EQ(Split("a\nbc\n\nd\n", {}),
            (std::vector<std::string>{"L:a", "L:bc", "L:", "L:d"}));
}

TEST(LineSplitterTest, OnlyNewlineEndsALineSoCrlfKeepsItsCr) {
  // The CR is JSON whitespace: the parser accepts such lines as they are.
  EXPECT_EQ(Split("{}\r\n{}\n", {}), (std::vector<std::string>{"L:{}\r", "L:{}"}));
}

TEST(LineSplitterTest, SameEventsWhereverTheInputIsCut) {
  const std::string input =
      "{\"jsonrpc\":\"2.0\",\"id\":1}\n\ncaf\xC3\xA9\r\nxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\nend\ntail";
  const std::vector<std::string> expected = {
      "L:{\"jsonrpc\":\"2.0\",\"id\":1}", "L:", "L:caf\xC3\xA9\r", "TOO_LONG", "L:end",
      "EOF:tail"};
  const size_t limit = 25;
  EXPECT_EQ(Split(input, {}, limit), expected);
  for (size_t cut = 0; cut <= input.size(); ++cut) {
    EXPECT_EQ(Split(input, {cut}, limit), expected) << "cut at " << cut;
    for (size_t second = cut; second <= input.size(); second += 3) {
      EXPECT_EQ(Split(input, {cut, second}, limit), expected) << "cuts " << cut << "," << second;
    }
  }
  std::vector<size_t> every_byte;
  for (size_t cut = 1; cut < input.size(); ++cut) every_byte.push_back(cut);
  EXPECT_EQ(Split(input, every_byte, limit), expected);
}

TEST(LineSplitterTest, LimitCountsTheLineWithoutItsNewline) {
  EXPECT_EQ(Split("0123456789\n", {}, 10), (std::vector<std::string>{"L:0123456789"}));
  EXPECT_EQ(Split("0123456789\n", {5}, 10), (std::vector<std::string>{"L:0123456789"}));
  EXPECT_EQ(Split("0123456789A\nok\n", {}, 10), (std::vector<std::string>{"TOO_LONG", "L:ok"}));
  EXPECT_EQ(Split("0123456789A\nok\n", {11}, 10),
            (std::vector<std::string>{"TOO_LONG", "L:ok"}));
  EXPECT_EQ(Split("0123456789", {}, 10), (std::vector<std::string>{"EOF:0123456789"}));
}

TEST(LineSplitterTest, OverLongLineIsReportedAsSoonAsItPassesTheLimit) {
  LineSplitter splitter(10);
  splitter.Append("before\n0123456789");
  EXPECT_EQ(Drain(splitter), (std::vector<std::string>{"L:before"}));
  splitter.Append("A");  // the 11th byte, no newline yet
  EXPECT_EQ(Drain(splitter), (std::vector<std::string>{"TOO_LONG"}));
  splitter.Append("more of the same line");
  EXPECT_EQ(Drain(splitter), (std::vector<std::string>{}));
  splitter.Append(" end\nnext\n");
  EXPECT_EQ(Drain(splitter), (std::vector<std::string>{"L:next"}));
  EXPECT_EQ(splitter.Finish(), std::nullopt);
}

TEST(LineSplitterTest, EventsKeepTheirOrderAroundAnOverLongLine) {
  LineSplitter splitter(10);
  // Not drained between appends: the lines before the long one stay first.
  splitter.Append("a\nb\n0123456789ABCDEF");
  splitter.Append("GH\nc\n");
  EXPECT_EQ(Drain(splitter), (std::vector<std::string>{"L:a", "L:b", "TOO_LONG", "L:c"}));
  EXPECT_EQ(Split("xxxxxxxxxxxxxxx\nyyyyyyyyyyyyyyyy\nz\n", {}, 10),
            (std::vector<std::string>{"TOO_LONG", "TOO_LONG", "L:z"}));
}

TEST(LineSplitterTest, SeveralOverLongLinesBetweenTwoDrains) {
  LineSplitter splitter(10);
  splitter.Append("a\n" + std::string(20, 'x'));
  splitter.Append("\n" + std::string(20, 'y'));
  splitter.Append("\nok\n" + std::string(20, 'z') + "\nb\n");
  EXPECT_EQ(Drain(splitter), (std::vector<std::string>{"L:a", "TOO_LONG", "TOO_LONG", "L:ok",
                                                       "TOO_LONG", "L:b"}));
}

TEST(LineSplitterTest, TailOfAnOverLongLineAtEndOfStreamIsNotReportedTwice) {
  EXPECT_EQ(Split("ok\n0123456789ABC", {}, 10), (std::vector<std::string>{"L:ok", "TOO_LONG"}));
}

TEST(LineSplitterTest, DataWithoutFinalNewlineIsADistinctEventOnce) {
  LineSplitter splitter;
  splitter.Append("a\nb");
  EXPECT_EQ(Drain(splitter), (std::vector<std::string>{"L:a"}));
  std::optional<LineSplitter::Event> rest = splitter.Finish();
  ASSERT_TRUE(rest.has_value());
  EXPECT_EQ(rest->kind, Kind::kUnterminated);
  EXPECT_EQ(rest->line, "b");
  EXPECT_EQ(splitter.Finish(), std::nullopt);

  LineSplitter clean;
  clean.Append("a\n");
  EXPECT_EQ(Finish(clean, Drain(clean)), (std::vector<std::string>{"L:a"}));
  LineSplitter empty;
  EXPECT_EQ(empty.Finish(), std::nullopt);
}

TEST(LineSplitterTest, FloodWithoutNewlinesStaysWithinTheLimit) {
  const size_t limit = size_t{1} << 20;
  LineSplitter splitter(limit);
  std::vector<std::string> events;
  // 64 MiB of 'x' in pipe-sized reads through the zero-copy interface.
  for (int read = 0; read < 1024; ++read) {
    std::span<char> space = splitter.PrepareAppend();
    std::memset(space.data(), 'x', space.size());
    splitter.CommitAppend(space.size());
    for (std::string& event : Drain(splitter)) events.push_back(event);
    ASSERT_LE(splitter.capacity(), limit + LineSplitter::kDefaultReadChunk + kLinePadding);
    ASSERT_LE(splitter.buffered_bytes(), limit);
  }
  EXPECT_EQ(events, (std::vector<std::string>{"TOO_LONG"}));
  splitter.Append("x\n{}\n");
  EXPECT_EQ(Drain(splitter), (std::vector<std::string>{"L:{}"}));
}

TEST(LineSplitterTest, LargeLinesArriveWhole) {
  std::string big(3 << 20, 'a');
  big[12345] = '\r';
  LineSplitter splitter;
  std::string input = big + "\n" + big + "\n";
  std::vector<std::string> lines;
  for (size_t from = 0; from < input.size(); from += 65536) {
    splitter.Append(std::string_view(input).substr(from, 65536));
    while (std::optional<LineSplitter::Event> event = splitter.Next()) {
      ASSERT_EQ(event->kind, Kind::kLine);
      lines.emplace_back(event->line);
    }
  }
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], big);
  EXPECT_EQ(lines[1], big);
}

TEST(LineSplitterTest, ZeroCopyInputMatchesAppend) {
  LineSplitter splitter;
  std::span<char> space = splitter.PrepareAppend(100);
  ASSERT_GE(space.size(), 100u);
  std::memcpy(space.data(), "one\ntwo\nthr", 11);
  splitter.CommitAppend(11);
  EXPECT_EQ(Drain(splitter), (std::vector<std::string>{"L:one", "L:two"}));
  space = splitter.PrepareAppend(10);
  std::memcpy(space.data(), "ee\n", 3);
  splitter.CommitAppend(3);
  EXPECT_EQ(Drain(splitter), (std::vector<std::string>{"L:three"}));
  EXPECT_EQ(splitter.buffered_bytes(), 0u);
}

}  // namespace
}  // namespace toolvfs
