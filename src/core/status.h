// Status and Result: the one error type of toolvfs.
//
// Every fallible function returns a Status (no value) or a Result<T> (a value
// or a Status). Both are [[nodiscard]]: an ignored error is a compile warning.
// Codes are precise so callers can branch on them; messages are one line that
// names the value involved and says why (SPEC.md §2.5). Conversion to wire
// error codes happens once per protocol, never here.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace toolvfs {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,    // bad parameter or path
  kPermissionDenied,   // policy decision or an escape from the project root
  kNotFound,
  kAlreadyExists,
  kTimeout,
  kCancelled,
  kTooLarge,           // a size limit was exceeded; the message names the limit
  kResourceExhausted,  // out of space, handles, processes, ...
  kIsDirectory,        // a file operation on a directory
  kNotDirectory,       // a directory operation on a file
  kNotEmpty,           // a directory that must be empty is not
  kNoProject,          // the null store: there are no project files
  kIo,                 // the operating system failed an I/O operation
  kInternal,           // a bug in toolvfs
  kUnsupported,        // the operation does not exist for this target
  kChanged,            // the target changed between the policy's check and the act
                       // (a symlink appeared on a path judged without one); a
                       // retry judges it again
  kUnavailable,        // the store's server is down, restarting or unreachable:
                       // nothing was done, and the same request may succeed
                       // once it is back (a store reconnects by itself)
};

// Stable lower-case name of a code, e.g. "not_found"; used in logs and JSON.
std::string_view StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(StatusCode code, std::string message);

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // "not_found: File 'a.txt' does not exist" — for logs and tests.
  std::string ToString() const;

  friend bool operator==(const Status& a, const Status& b) = default;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status OkStatus() { return Status(); }
Status InvalidArgumentError(std::string message);
Status PermissionDeniedError(std::string message);
Status NotFoundError(std::string message);
Status AlreadyExistsError(std::string message);
Status TimeoutError(std::string message);
Status CancelledError(std::string message);
Status TooLargeError(std::string message);
Status ResourceExhaustedError(std::string message);
Status IsDirectoryError(std::string message);
Status NotDirectoryError(std::string message);
Status NotEmptyError(std::string message);
Status NoProjectError(std::string message);
Status IoError(std::string message);
Status InternalError(std::string message);
Status UnsupportedError(std::string message);
Status ChangedError(std::string message);
Status UnavailableError(std::string message);

// Converts an errno value into a Status with the matching code, with the
// message "<what>: <strerror>" (e.g. "Cannot read 'a.txt': No such file...").
// The one place errno meets the status codes.
Status ErrnoToStatus(int error_number, std::string_view what);

// A value or an error. Holding an OK status without a value is a bug.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : storage_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : storage_(std::move(status)) {  // NOLINT
    assert(!std::get<Status>(storage_).ok() && "Result built from an OK status");
  }

  bool ok() const { return std::holds_alternative<T>(storage_); }
  const Status& status() const& {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(storage_);
  }
  Status status() && { return ok() ? Status() : std::move(std::get<Status>(storage_)); }

  T& value() & { return std::get<T>(storage_); }
  const T& value() const& { return std::get<T>(storage_); }
  T&& value() && { return std::move(std::get<T>(storage_)); }

  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<Status, T> storage_;
};

}  // namespace toolvfs

#define TOOLVFS_CONCAT_INNER(a, b) a##b
#define TOOLVFS_CONCAT(a, b) TOOLVFS_CONCAT_INNER(a, b)

// Returns the status of `expr` from the calling function if it is an error.
#define TOOLVFS_RETURN_IF_ERROR(expr)                         \
  do {                                                        \
    ::toolvfs::Status toolvfs_status_ = (expr);               \
    if (!toolvfs_status_.ok()) return toolvfs_status_;        \
  } while (false)

// `TOOLVFS_ASSIGN_OR_RETURN(auto x, F());` declares x from F()'s value, or
// returns F()'s error from the calling function.
#define TOOLVFS_ASSIGN_OR_RETURN(lhs, expr) \
  TOOLVFS_ASSIGN_OR_RETURN_IMPL(TOOLVFS_CONCAT(toolvfs_result_, __LINE__), lhs, expr)
#define TOOLVFS_ASSIGN_OR_RETURN_IMPL(result, lhs, expr) \
  auto result = (expr);                                  \
  if (!result.ok()) return std::move(result).status();   \
  lhs = std::move(result).value()
