#include "core/status.h"

#include <cerrno>

#include <gtest/gtest.h>

namespace toolvfs {
namespace {

Result<int> Half(int value) {
  if (value % 2 != 0) return InvalidArgumentError("value " + std::to_string(value) + " is odd");
  return value / 2;
}

Result<int> Quarter(int value) {
  TOOLVFS_ASSIGN_OR_RETURN(int half, Half(value));
  TOOLVFS_ASSIGN_OR_RETURN(int quarter, Half(half));
  return quarter;
}

Status CheckEven(int value) {
  TOOLVFS_RETURN_IF_ERROR(Half(value).status());
  return OkStatus();
}

TEST(StatusTest, DefaultIsOk) {
  Status status;
  EXPECT_TRUE(status.ok());
  EXPECT_EQ(status.ToString(), "ok");
}

TEST(StatusTest, ErrorCarriesCodeAndMessage) {
  Status status = NotFoundError("File 'a.txt' does not exist");
  EXPECT_FALSE(status.ok());
  EXPECT_EQ(status.code(), StatusCode::kNotFound);
  EXPECT_EQ(status.ToString(), "not_found: File 'a.txt' does not exist");
}

TEST(StatusTest, MacrosPropagateTheFirstError) {
  EXPECT_EQ(*Quarter(8), 2);
  Result<int> odd = Quarter(6);
  ASSERT_FALSE(odd.ok());
  EXPECT_EQ(odd.status().message(), "value 3 is odd");
  EXPECT_TRUE(CheckEven(4).ok());
  EXPECT_EQ(CheckEven(5).code(), StatusCode::kInvalidArgument);
}

TEST(StatusTest, ErrnoMapsToPreciseCodes) {
  struct Case { int error; StatusCode code; };
  for (Case c : {Case{ENOENT, StatusCode::kNotFound}, Case{EEXIST, StatusCode::kAlreadyExists},
                 Case{EACCES, StatusCode::kPermissionDenied}, Case{EXDEV, StatusCode::kPermissionDenied},
                 Case{ELOOP, StatusCode::kPermissionDenied}, Case{EISDIR, StatusCode::kIsDirectory},
                 Case{ENOTDIR, StatusCode::kNotDirectory}, Case{ENOTEMPTY, StatusCode::kNotEmpty},
                 Case{ENOSPC, StatusCode::kResourceExhausted}, Case{EIO, StatusCode::kIo}}) {
    EXPECT_EQ(ErrnoToStatus(c.error, "op").code(), c.code) << c.error;
  }
  EXPECT_EQ(ErrnoToStatus(ENOENT, "Cannot open 'x'").message(),
            "Cannot open 'x': No such file or directory");
}

TEST(StatusTest, EveryCodeHasAName) {
  for (int code = 0; code <= static_cast<int>(StatusCode::kUnavailable); ++code) {
    EXPECT_NE(StatusCodeName(static_cast<StatusCode>(code)), "unknown") << code;
  }
}

}  // namespace
}  // namespace toolvfs
