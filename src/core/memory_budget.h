// A bound on the bytes that concurrent work may hold at once, shared by
// whoever holds a pointer to it: the vfs host gives one to every request it
// serves, so that the answers being built at the same moment (fs.grep's
// lines and JSON) cannot together exceed it, however many sessions run.
//
// Thread-safe. A reservation that does not fit fails at once instead of
// waiting: requests that wait for each other's memory could wait forever.
#pragma once

#include <atomic>
#include <cstdint>

namespace toolvfs {

class MemoryBudget {
 public:
  explicit MemoryBudget(uint64_t limit_bytes) : limit_bytes_(limit_bytes) {}
  MemoryBudget(const MemoryBudget&) = delete;
  MemoryBudget& operator=(const MemoryBudget&) = delete;

  // Takes `bytes` from the budget if they fit; false (and nothing taken)
  // if the bytes reserved would then exceed the limit.
  bool TryReserve(uint64_t bytes);
  // Gives back bytes taken by TryReserve.
  void Release(uint64_t bytes);

  uint64_t limit_bytes() const { return limit_bytes_; }
  uint64_t reserved_bytes() const { return reserved_bytes_.load(std::memory_order_relaxed); }
  // The most bytes ever reserved at once (for tests and benchmarks).
  uint64_t peak_bytes() const { return peak_bytes_.load(std::memory_order_relaxed); }

 private:
  const uint64_t limit_bytes_;
  std::atomic<uint64_t> reserved_bytes_{0};
  std::atomic<uint64_t> peak_bytes_{0};
};

// Bytes held from a MemoryBudget by one owner, given back when it is
// destroyed. Move-only. Without a budget (null) it only counts.
class MemoryReservation {
 public:
  explicit MemoryReservation(MemoryBudget* budget = nullptr) : budget_(budget) {}
  MemoryReservation(MemoryReservation&& other) noexcept
      : budget_(other.budget_), bytes_(other.bytes_) {
    other.bytes_ = 0;
  }
  MemoryReservation& operator=(MemoryReservation&& other) noexcept;
  MemoryReservation(const MemoryReservation&) = delete;
  MemoryReservation& operator=(const MemoryReservation&) = delete;
  ~MemoryReservation() { ReleaseAll(); }

  // Adds `bytes` to what this holds; false if the budget has no room
  // (then nothing is added).
  bool Grow(uint64_t bytes);
  // Gives everything back.
  void ReleaseAll();

  uint64_t bytes() const { return bytes_; }

 private:
  MemoryBudget* budget_;
  uint64_t bytes_ = 0;
};

}  // namespace toolvfs
