// GoogleTest assertions on Status and Result, shared by the store suites:
// EXPECT_TRUE(IsOk(store->Write(...))) prints the status when it fails.
#pragma once

#include <optional>
#include <string>
#include <utility>

#include <gtest/gtest.h>

#include "core/status.h"

namespace toolvfs {

inline ::testing::AssertionResult IsOk(const Status& status) {
  if (status.ok()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << status.ToString();
}
template <typename T>
::testing::AssertionResult IsOk(const Result<T>& result) {
  return IsOk(result.status());
}

// The status has `code` and, if given, exactly `message`.
inline ::testing::AssertionResult IsError(const Status& status, StatusCode code,
                                          std::optional<std::string> message = std::nullopt) {
  if (status.code() != code) {
    return ::testing::AssertionFailure() << "expected " << StatusCodeName(code) << ", got " << status.ToString();
  }
  if (message && status.message() != *message) {
    return ::testing::AssertionFailure() << "expected message \"" << *message << "\", got \"" << status.message()
                                         << "\"";
  }
  return ::testing::AssertionSuccess();
}
template <typename T>
::testing::AssertionResult IsError(const Result<T>& result, StatusCode code,
                                   std::optional<std::string> message = std::nullopt) {
  if (result.ok()) return ::testing::AssertionFailure() << "expected an error, got a value";
  return IsError(result.status(), code, std::move(message));
}

}  // namespace toolvfs
