#include "core/memory_budget.h"

namespace toolvfs {

bool MemoryBudget::TryReserve(uint64_t bytes) {
  uint64_t reserved = reserved_bytes_.load(std::memory_order_relaxed);
  do {
    if (bytes > limit_bytes_ || reserved > limit_bytes_ - bytes) return false;
  } while (!reserved_bytes_.compare_exchange_weak(reserved, reserved + bytes,
                                                  std::memory_order_relaxed));
  uint64_t now = reserved + bytes;
  uint64_t peak = peak_bytes_.load(std::memory_order_relaxed);
  while (now > peak && !peak_bytes_.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
  return true;
}

void MemoryBudget::Release(uint64_t bytes) {
  reserved_bytes_.fetch_sub(bytes, std::memory_order_relaxed);
}

MemoryReservation& MemoryReservation::operator=(MemoryReservation&& other) noexcept {
  if (this != &other) {
    ReleaseAll();
    budget_ = other.budget_;
    bytes_ = other.bytes_;
    other.bytes_ = 0;
  }
  return *this;
}

bool MemoryReservation::Grow(uint64_t bytes) {
  if (budget_ != nullptr && !budget_->TryReserve(bytes)) return false;
  bytes_ += bytes;
  return true;
}

void MemoryReservation::ReleaseAll() {
  if (budget_ != nullptr && bytes_ > 0) budget_->Release(bytes_);
  bytes_ = 0;
}

}  // namespace toolvfs
