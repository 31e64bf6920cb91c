// todo_report: a vfs tool that lists the TODO, FIXME and XXX markers of a
// project, grouped by file, with each file's size and modification time.
//
// Arguments (all optional):
//   pattern  RE2 pattern to look for (default: \b(TODO|FIXME|XXX)\b)
//   paths    array of directories/files to search (default: the project)
//
// Build (the SDK is one header):
//   g++ -std=c++20 -O2 -I sdk examples/tools/todo_report/todo_report.cc -o todo_report
// Run on the example project:
//   toolvfs exec --project examples/project -- ./todo_report
#include <toolvfs/tool.h>

#include <cctype>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace {

constexpr const char* kDefaultPattern = R"(\b(TODO|FIXME|XXX)\b)";
constexpr const char* kMarkers[] = {"TODO", "FIXME", "XXX"};

std::string HumanSize(uint64_t bytes) {
  char text[32];
  if (bytes < 1024) {
    std::snprintf(text, sizeof(text), "%llu B", static_cast<unsigned long long>(bytes));
  } else {
    std::snprintf(text, sizeof(text), "%.1f KiB", static_cast<double>(bytes) / 1024);
  }
  return text;
}

std::string Trim(const std::string& text) {
  size_t first = text.find_first_not_of(" \t");
  size_t last = text.find_last_not_of(" \t\r");
  return first == std::string::npos ? "" : text.substr(first, last - first + 1);
}

// Counts whole-word occurrences of a marker in a line.
int CountWord(const std::string& line, const std::string& word) {
  auto is_word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  int count = 0;
  for (size_t at = line.find(word); at != std::string::npos; at = line.find(word, at + 1)) {
    bool starts = at == 0 || !is_word(line[at - 1]);
    bool ends = at + word.size() == line.size() || !is_word(line[at + word.size()]);
    if (starts && ends) ++count;
  }
  return count;
}

std::string Report(toolvfs::Tool& tool) {
  const toolvfs::Json& arguments = tool.arguments();
  std::string pattern = arguments["pattern"].as_string(kDefaultPattern);
  bool default_pattern = !arguments["pattern"].is_string();

  toolvfs::GrepOptions options;
  for (const toolvfs::Json& path : arguments["paths"].as_array()) options.paths.push_back(path.as_string());
  toolvfs::GrepResult grep = tool.grep(pattern, options).value();
  if (grep.matches.empty()) return "No lines match " + pattern + ".";

  // The metadata of every file at once: all requests in flight together.
  std::vector<toolvfs::Pending<toolvfs::Metadata>> metadata;
  for (const toolvfs::GrepFile& file : grep.matches) metadata.push_back(tool.metadata_async(file.path));

  std::map<std::string, int> per_marker;
  std::string body;
  for (size_t i = 0; i < grep.matches.size(); ++i) {
    const toolvfs::GrepFile& file = grep.matches[i];
    toolvfs::Result<toolvfs::Metadata> info = metadata[i].get();
    int count = 0;
    for (const toolvfs::GrepLine& line : file.lines) count += line.is_match ? 1 : 0;
    body += "\n" + file.path + " — " + std::to_string(count) + (count == 1 ? " line" : " lines");
    if (info.ok()) body += " (" + HumanSize(info->size) + ", modified " + info->modified + ")";
    body += "\n";
    for (const toolvfs::GrepLine& line : file.lines) {
      if (!line.is_match) continue;
      body += "  " + std::to_string(line.line_number) + ": " + Trim(line.content) + "\n";
      if (default_pattern) {
        for (const char* marker : kMarkers) per_marker[marker] += CountWord(line.content, marker);
      }
    }
  }

  size_t lines = grep.match_count();
  std::string report = "Found " + std::to_string(lines) + (lines == 1 ? " line" : " lines") + " in " +
                       std::to_string(grep.matches.size()) + (grep.matches.size() == 1 ? " file" : " files");
  if (default_pattern) {
    std::string tally;
    for (const char* marker : kMarkers) {
      if (per_marker[marker] == 0) continue;
      tally += (tally.empty() ? "" : ", ") + std::string(marker) + " " + std::to_string(per_marker[marker]);
    }
    report += " (" + tally + ")";
  } else {
    report += " matching " + pattern;
  }
  report += ":\n" + body;
  if (grep.truncated) report += "\n(The search stopped at the host's match limit; narrow it with `paths`.)\n";
  return report;
}

}  // namespace

int main() { return toolvfs::tool_main(Report); }
