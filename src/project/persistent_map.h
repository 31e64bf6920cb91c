// PersistentMap: an ordered map from string keys to values whose copies
// share structure, so that a copy (a snapshot) costs O(1) and a change
// after it costs O(log n) new nodes, not a copy of the whole map.
//
// It is a treap whose node priorities are a hash of the key (seeded once
// per process, so a caller cannot choose keys that make it unbalanced).
// Because the priority depends only on the key, the shape of the tree
// depends only on its set of keys: two maps that differ in a few keys share
// every subtree away from those keys, pointer for pointer. ForEachDifference
// uses that to compare two versions in time proportional to what differs.
//
// Copy-on-write. Nodes are held by shared_ptr and never changed while
// shared: a change walks down from the root and changes a node in place
// only if it and every node above it have one owner; otherwise it copies
// the node (O(1): key, value and two child pointers) and goes on in the
// copy. A copy of the map therefore freezes the whole tree for both copies,
// and each change afterwards copies only its path (O(log n) expected).
//
// Thread safety: like a std::map. Const methods may run concurrently on
// one object; a non-const method needs exclusive access to that object.
// Distinct objects (a map and its copies) may be used from different
// threads concurrently, whatever they share.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace toolvfs {

// The priority of `key` in every PersistentMap of this process.
inline uint64_t PersistentMapPriority(std::string_view key) {
  static const uint64_t seed = [] {
    std::random_device device;
    return (static_cast<uint64_t>(device()) << 32) ^ device();
  }();
  // splitmix64's finalizer over the standard hash mixed with the seed.
  uint64_t x = std::hash<std::string_view>{}(key) ^ seed;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

template <typename Value>
class PersistentMap {
 public:
  PersistentMap() = default;
  // O(1); both maps are frozen until each changes what it needs.
  PersistentMap(const PersistentMap&) = default;
  PersistentMap& operator=(const PersistentMap&) = default;
  PersistentMap(PersistentMap&&) noexcept = default;
  PersistentMap& operator=(PersistentMap&&) noexcept = default;

  bool empty() const { return root_ == nullptr; }

  // The value at `key`, or null. The pointer is valid until the next
  // change of this map.
  const Value* Find(std::string_view key) const {
    const Node* node = root_.get();
    while (node != nullptr) {
      if (key == node->key()) return &node->value();
      node = key < node->key() ? node->left.get() : node->right.get();
    }
    return nullptr;
  }

  bool Contains(std::string_view key) const { return Find(key) != nullptr; }

  // The first entry whose key is at least `key` (key and value), or
  // {nullptr, nullptr}. Valid until the next change of this map.
  std::pair<const std::string*, const Value*> LowerBound(std::string_view key) const {
    const Node* best = nullptr;
    const Node* node = root_.get();
    while (node != nullptr) {
      if (node->key() < key) {
        node = node->right.get();
      } else {
        best = node;
        node = node->left.get();
      }
    }
    if (best == nullptr) return {nullptr, nullptr};
    return {&best->key(), &best->value()};
  }

  // Sets `key` to `value`, inserting it if absent.
  void Assign(std::string_view key, Value value) {
    root_ = Put(std::move(root_), key, PersistentMapPriority(key), value, /*replace=*/true);
  }

  // Inserts `key` if absent; returns whether it did.
  bool Emplace(std::string_view key, Value value) {
    if (Contains(key)) return false;
    root_ = Put(std::move(root_), key, PersistentMapPriority(key), value, /*replace=*/false);
    return true;
  }

  // Removes `key`; returns whether it was there.
  bool Erase(std::string_view key) {
    if (!Contains(key)) return false;
    root_ = Remove(std::move(root_), key);
    return true;
  }

  // Removes every key in [first, last). O(log n) plus freeing what was
  // held only here.
  void EraseRange(std::string_view first, std::string_view last) {
    if (!(first < last)) return;
    auto [below, rest] = Split(std::move(root_), first);
    auto [inside, above] = Split(std::move(rest), last);
    root_ = Merge(std::move(below), std::move(above));
  }

  // Calls fn(key, value) for every entry in key order.
  template <typename Fn>
  void ForEach(Fn&& fn) const {
    Walk(root_.get(), fn);
  }

  // Calls fn(key, value) for every entry in reverse key order.
  template <typename Fn>
  void ForEachReverse(Fn&& fn) const {
    WalkReverse(root_.get(), fn);
  }

  // Calls fn(key, value) for every entry with a key in [first, last), in
  // key order. O(log n + entries visited).
  template <typename Fn>
  void ForEachInRange(std::string_view first, std::string_view last, Fn&& fn) const {
    WalkRange(root_.get(), first, last, fn);
  }

  // Calls fn(key, old_value, new_value) for every key whose entry is not
  // the same shared entry in `from` and `to`, in key order: old_value is
  // null for a key only in `to`, new_value for a key only in `from`. A key
  // assigned since the two parted is reported even if the value is equal
  // (fn compares the values if that matters). Subtrees the two maps share are skipped whole, so the
  // cost follows the difference (times O(log n)), not the size.
  template <typename Fn>
  static void ForEachDifference(const PersistentMap& from, const PersistentMap& to, Fn&& fn) {
    Compare(from.root_, to.root_, fn);
  }

 private:
  struct Node;
  using NodePtr = std::shared_ptr<Node>;

  // A key and its value, immutable and shared by every copy of the node
  // that holds it: copying a node on a change's path copies pointers, not
  // the key.
  struct Entry {
    std::string key;
    Value value;
  };

  struct Node {
    std::shared_ptr<const Entry> entry;
    uint64_t priority;
    NodePtr left;
    NodePtr right;

    const std::string& key() const { return entry->key; }
    const Value& value() const { return entry->value; }
  };

  // Whether a node (priority_a, key_a) goes above a node (priority_b,
  // key_b): a total order, so that the shape stays a function of the keys
  // even when two priorities are equal.
  static bool Above(uint64_t priority_a, std::string_view key_a, uint64_t priority_b, std::string_view key_b) {
    return priority_a != priority_b ? priority_a > priority_b : key_a < key_b;
  }

  // `node`, ready to change: itself if no one else holds it, else a copy.
  // Callers reach `node` by moving it out of its parent, which they own,
  // so a count of 1 means the whole path to it is ours. The acquire fence
  // pairs with the release of the last other owner's reference (in another
  // thread's copy of the map), so its reads happen before our changes.
  static NodePtr Owned(NodePtr node) {
    if (node.use_count() == 1) {
      std::atomic_thread_fence(std::memory_order_acquire);
      return node;
    }
    return std::make_shared<Node>(*node);
  }

  // Splits into the keys below `key` and the keys at or above it.
  static std::pair<NodePtr, NodePtr> Split(NodePtr node, std::string_view key) {
    if (node == nullptr) return {nullptr, nullptr};
    node = Owned(std::move(node));
    if (node->key() < key) {
      auto [low, high] = Split(std::move(node->right), key);
      node->right = std::move(low);
      return {std::move(node), std::move(high)};
    }
    auto [low, high] = Split(std::move(node->left), key);
    node->left = std::move(high);
    return {std::move(low), std::move(node)};
  }

  // Joins two trees, every key of `low` below every key of `high`.
  static NodePtr Merge(NodePtr low, NodePtr high) {
    if (low == nullptr) return high;
    if (high == nullptr) return low;
    if (Above(low->priority, low->key(), high->priority, high->key())) {
      low = Owned(std::move(low));
      low->right = Merge(std::move(low->right), std::move(high));
      return low;
    }
    high = Owned(std::move(high));
    high->left = Merge(std::move(low), std::move(high->left));
    return high;
  }

  static NodePtr Put(NodePtr node, std::string_view key, uint64_t priority, Value& value, bool replace) {
    if (node == nullptr || Above(priority, key, node->priority, node->key())) {
      // The new node goes here (the key is not in this subtree, else its
      // node would be at this height or above).
      auto [low, high] = Split(std::move(node), key);
      return std::make_shared<Node>(Node{std::make_shared<const Entry>(Entry{std::string(key), std::move(value)}),
                                         priority, std::move(low), std::move(high)});
    }
    node = Owned(std::move(node));
    if (key == node->key()) {
      if (replace) node->entry = std::make_shared<const Entry>(Entry{node->key(), std::move(value)});
    } else if (key < node->key()) {
      node->left = Put(std::move(node->left), key, priority, value, replace);
    } else {
      node->right = Put(std::move(node->right), key, priority, value, replace);
    }
    return node;
  }

  // The caller has checked that `key` is present.
  static NodePtr Remove(NodePtr node, std::string_view key) {
    if (key == node->key()) {
      // Our own node gives its children up; a shared one lends copies.
      if (node.use_count() == 1) {
        std::atomic_thread_fence(std::memory_order_acquire);
        return Merge(std::move(node->left), std::move(node->right));
      }
      return Merge(node->left, node->right);
    }
    node = Owned(std::move(node));
    if (key < node->key()) {
      node->left = Remove(std::move(node->left), key);
    } else {
      node->right = Remove(std::move(node->right), key);
    }
    return node;
  }

  template <typename Fn>
  static void Walk(const Node* node, Fn&& fn) {
    while (node != nullptr) {
      Walk(node->left.get(), fn);
      fn(node->key(), node->value());
      node = node->right.get();
    }
  }

  template <typename Fn>
  static void WalkReverse(const Node* node, Fn&& fn) {
    while (node != nullptr) {
      WalkReverse(node->right.get(), fn);
      fn(node->key(), node->value());
      node = node->left.get();
    }
  }

  template <typename Fn>
  static void WalkRange(const Node* node, std::string_view first, std::string_view last, Fn&& fn) {
    while (node != nullptr) {
      if (node->key() < first) {
        node = node->right.get();
      } else if (!(node->key() < last)) {
        node = node->left.get();
      } else {
        WalkRange(node->left.get(), first, last, fn);
        fn(node->key(), node->value());
        node = node->right.get();
      }
    }
  }

  template <typename Fn>
  static void Compare(const NodePtr& from, const NodePtr& to, Fn& fn) {
    if (from == to) return;  // shared, or both empty
    if (from == nullptr) {
      Walk(to.get(), [&](const std::string& key, const Value& value) { fn(key, nullptr, &value); });
      return;
    }
    if (to == nullptr) {
      Walk(from.get(), [&](const std::string& key, const Value& value) { fn(key, &value, nullptr); });
      return;
    }
    if (from->key() == to->key()) {
      Compare(from->left, to->left, fn);
      if (from->entry != to->entry) fn(from->key(), &from->value(), &to->value());
      Compare(from->right, to->right, fn);
      return;
    }
    // The root holds the key of highest priority, so the higher of the two
    // roots is missing from the other tree: split the other tree at it (a
    // copy of one path; the trees themselves stay as they are, since we
    // hold them and Owned() therefore copies).
    if (Above(from->priority, from->key(), to->priority, to->key())) {
      auto [low, high] = Split(to, from->key());
      Compare(from->left, low, fn);
      fn(from->key(), &from->value(), nullptr);
      Compare(from->right, high, fn);
    } else {
      auto [low, high] = Split(from, to->key());
      Compare(low, to->left, fn);
      fn(to->key(), nullptr, &to->value());
      Compare(high, to->right, fn);
    }
  }

  NodePtr root_;
};

}  // namespace toolvfs
