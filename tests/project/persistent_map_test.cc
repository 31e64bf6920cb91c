// PersistentMap (project/persistent_map.h): against std::map as the model,
// through long random sequences of changes with copies taken along the
// way; every copy must keep exactly what it held, and ForEachDifference
// must report exactly the keys whose entries differ.
#include "project/persistent_map.h"

#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace toolvfs {
namespace {

using Map = PersistentMap<int>;
using Model = std::map<std::string, int>;

Model Contents(const Map& map) {
  Model contents;
  std::string previous;
  bool first = true;
  map.ForEach([&](const std::string& key, int value) {
    EXPECT_TRUE(first || previous < key) << "out of order: " << previous << " then " << key;
    first = false;
    previous = key;
    contents.emplace(key, value);
  });
  return contents;
}

std::string Key(uint32_t n) { return "d" + std::to_string(n % 7) + "/f" + std::to_string(n); }

TEST(PersistentMapTest, FindLowerBoundAndRangesFollowTheModel) {
  Map map;
  Model model;
  for (uint32_t i = 0; i < 500; ++i) {
    map.Assign(Key(i * 37 % 500), static_cast<int>(i));
    model[Key(i * 37 % 500)] = static_cast<int>(i);
  }
  EXPECT_EQ(Contents(map), model);
  for (const auto& [key, value] : model) {
    ASSERT_NE(map.Find(key), nullptr) << key;
    EXPECT_EQ(*map.Find(key), value);
  }
  EXPECT_EQ(map.Find("d1/f"), nullptr);
  EXPECT_EQ(map.Find(""), nullptr);

  auto [key, value] = map.LowerBound("d3/");
  ASSERT_NE(key, nullptr);
  EXPECT_EQ(*key, model.lower_bound("d3/")->first);
  EXPECT_EQ(map.LowerBound("e").first, nullptr);

  Model in_range;
  map.ForEachInRange("d2/", "d20", [&](const std::string& k, int v) { in_range.emplace(k, v); });
  Model expected(model.lower_bound("d2/"), model.lower_bound("d20"));
  EXPECT_EQ(in_range, expected);

  std::vector<std::string> reversed;
  map.ForEachReverse([&](const std::string& k, int) { reversed.push_back(k); });
  ASSERT_EQ(reversed.size(), model.size());
  EXPECT_EQ(reversed.front(), model.rbegin()->first);
  EXPECT_EQ(reversed.back(), model.begin()->first);

  EXPECT_FALSE(map.Emplace(Key(3), -1));  // present: unchanged
  EXPECT_EQ(*map.Find(Key(3)), model[Key(3)]);
  EXPECT_TRUE(map.Emplace("new", 9));
  EXPECT_TRUE(map.Erase("new"));
  EXPECT_FALSE(map.Erase("new"));

  map.EraseRange("d2/", "d20");
  model.erase(model.lower_bound("d2/"), model.lower_bound("d20"));
  EXPECT_EQ(Contents(map), model);
  map.EraseRange("z", "a");  // an empty range: nothing
  EXPECT_EQ(Contents(map), model);
}

// Random changes with a copy every few steps: each copy must keep what it
// held while the original and the other copies change, and the difference
// between any two versions must be exactly the model's.
TEST(PersistentMapTest, CopiesStayAsTheyWereAndDifferencesAreExact) {
  std::mt19937 random(20261126);
  Map map;
  Model model;
  std::vector<std::pair<Map, Model>> versions;
  for (int step = 0; step < 4000; ++step) {
    uint32_t n = random() % 300;
    switch (random() % 5) {
      case 0:
      case 1:
        map.Assign(Key(n), step);
        model[Key(n)] = step;
        break;
      case 2:
        EXPECT_EQ(map.Erase(Key(n)), model.erase(Key(n)) == 1);
        break;
      case 3: {
        std::string first = "d" + std::to_string(n % 7) + "/f" + std::to_string(n % 10);
        std::string last = first + "5";
        map.EraseRange(first, last);
        model.erase(model.lower_bound(first), model.lower_bound(last));
        break;
      }
      default:
        EXPECT_EQ(map.Emplace(Key(n), step), model.emplace(Key(n), step).second);
    }
    if (step % 97 == 0) versions.emplace_back(map, model);
  }
  EXPECT_EQ(Contents(map), model);
  versions.emplace_back(map, model);
  for (const auto& [copy, held] : versions) EXPECT_EQ(Contents(copy), held);

  for (size_t a = 0; a < versions.size(); a += 5) {
    for (size_t b = 0; b < versions.size(); b += 3) {
      const Model& from = versions[a].second;
      const Model& to = versions[b].second;
      Model added, deleted, changed;
      std::string previous;
      Map::ForEachDifference(versions[a].first, versions[b].first,
                             [&](const std::string& key, const int* before, const int* after) {
                               EXPECT_TRUE(previous.empty() || previous < key);
                               previous = key;
                               if (before == nullptr) {
                                 added.emplace(key, *after);
                               } else if (after == nullptr) {
                                 deleted.emplace(key, *before);
                               } else if (*before != *after) {
                                 changed.emplace(key, *after);
                               }
                             });
      Model expected_added, expected_deleted, expected_changed;
      for (const auto& [key, value] : to) {
        auto old = from.find(key);
        if (old == from.end()) {
          expected_added.emplace(key, value);
        } else if (old->second != value) {
          expected_changed.emplace(key, value);
        }
      }
      for (const auto& [key, value] : from) {
        if (!to.contains(key)) expected_deleted.emplace(key, value);
      }
      EXPECT_EQ(added, expected_added) << a << " -> " << b;
      EXPECT_EQ(deleted, expected_deleted) << a << " -> " << b;
      EXPECT_EQ(changed, expected_changed) << a << " -> " << b;
    }
  }
  // The comparison split the versions' trees: they still hold what they held.
  for (const auto& [copy, held] : versions) EXPECT_EQ(Contents(copy), held);
}

// The cost claim behind the memory store's snapshots: after a copy, one
// change makes the two versions differ in one key, and comparing them
// reports only it (the copied path's other entries are shared, the rest of
// the tree skipped); comparing two versions that share everything visits
// nothing.
TEST(PersistentMapTest, ACopyAndOneChangeDifferOnlyAlongOnePath) {
  Map map;
  for (uint32_t i = 0; i < 2000; ++i) map.Assign(Key(i), 0);
  Map snapshot = map;
  map.Assign(Key(1234), 1);
  int visited = 0;
  int differing = 0;
  Map::ForEachDifference(snapshot, map, [&](const std::string& key, const int* before, const int* after) {
    ++visited;
    ASSERT_NE(before, nullptr);
    ASSERT_NE(after, nullptr);
    if (*before == *after) return;
    ++differing;
    EXPECT_EQ(key, Key(1234));
  });
  EXPECT_EQ(differing, 1);
  EXPECT_EQ(visited, 1);
  visited = 0;
  Map same = map;
  Map::ForEachDifference(map, same, [&](const std::string&, const int*, const int*) { ++visited; });
  EXPECT_EQ(visited, 0);
  EXPECT_EQ(*snapshot.Find(Key(1234)), 0);
}

}  // namespace
}  // namespace toolvfs
