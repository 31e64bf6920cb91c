// A whole state of a store as a value, for tests that compare two states
// (a copy and its source, a snapshot and what it was taken of).
#pragma once

#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "project/project_files.h"

namespace toolvfs {

// path -> "dir", or "file:" and the file's content.
using TreeState = std::map<std::string, std::string>;

// Every entry below the root of `store`, read through ListDir and Read.
inline TreeState ReadTree(ProjectFiles& store) {
  TreeState tree;
  std::vector<std::string> pending = {""};
  while (!pending.empty()) {
    std::string directory = pending.back();
    pending.pop_back();
    Result<std::vector<DirEntry>> entries = store.ListDir(directory);
    EXPECT_TRUE(entries.ok()) << entries.status().ToString();
    if (!entries.ok()) return tree;
    for (const DirEntry& entry : *entries) {
      std::string path = directory.empty() ? entry.name : directory + "/" + entry.name;
      if (entry.kind == EntryKind::kDirectory) {
        tree[path] = "dir";
        pending.push_back(path);
      } else {
        Result<std::string> content = store.Read(path);
        EXPECT_TRUE(content.ok()) << content.status().ToString();
        tree[path] = content.ok() ? "file:" + *content : "?";
      }
    }
  }
  return tree;
}

}  // namespace toolvfs
