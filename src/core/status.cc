#include "core/status.h"

#include <cerrno>
#include <cstring>

namespace toolvfs {

std::string_view StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "ok";
    case StatusCode::kInvalidArgument: return "invalid_argument";
    case StatusCode::kPermissionDenied: return "permission_denied";
    case StatusCode::kNotFound: return "not_found";
    case StatusCode::kAlreadyExists: return "already_exists";
    case StatusCode::kTimeout: return "timeout";
    case StatusCode::kCancelled: return "cancelled";
    case StatusCode::kTooLarge: return "too_large";
    case StatusCode::kResourceExhausted: return "resource_exhausted";
    case StatusCode::kIsDirectory: return "is_directory";
    case StatusCode::kNotDirectory: return "not_directory";
    case StatusCode::kNotEmpty: return "not_empty";
    case StatusCode::kNoProject: return "no_project";
    case StatusCode::kIo: return "io";
    case StatusCode::kInternal: return "internal";
    case StatusCode::kUnsupported: return "unsupported";
    case StatusCode::kChanged: return "changed";
    case StatusCode::kUnavailable: return "unavailable";
  }
  return "unknown";
}

Status::Status(StatusCode code, std::string message)
    : code_(code), message_(std::move(message)) {}

std::string Status::ToString() const {
  if (ok()) return "ok";
  std::string text(StatusCodeName(code_));
  text += ": ";
  text += message_;
  return text;
}

Status InvalidArgumentError(std::string m) { return {StatusCode::kInvalidArgument, std::move(m)}; }
Status PermissionDeniedError(std::string m) { return {StatusCode::kPermissionDenied, std::move(m)}; }
Status NotFoundError(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
Status AlreadyExistsError(std::string m) { return {StatusCode::kAlreadyExists, std::move(m)}; }
Status TimeoutError(std::string m) { return {StatusCode::kTimeout, std::move(m)}; }
Status CancelledError(std::string m) { return {StatusCode::kCancelled, std::move(m)}; }
Status TooLargeError(std::string m) { return {StatusCode::kTooLarge, std::move(m)}; }
Status ResourceExhaustedError(std::string m) { return {StatusCode::kResourceExhausted, std::move(m)}; }
Status IsDirectoryError(std::string m) { return {StatusCode::kIsDirectory, std::move(m)}; }
Status NotDirectoryError(std::string m) { return {StatusCode::kNotDirectory, std::move(m)}; }
Status NotEmptyError(std::string m) { return {StatusCode::kNotEmpty, std::move(m)}; }
Status NoProjectError(std::string m) { return {StatusCode::kNoProject, std::move(m)}; }
Status IoError(std::string m) { return {StatusCode::kIo, std::move(m)}; }
Status InternalError(std::string m) { return {StatusCode::kInternal, std::move(m)}; }
Status UnsupportedError(std::string m) { return {StatusCode::kUnsupported, std::move(m)}; }
Status ChangedError(std::string m) { return {StatusCode::kChanged, std::move(m)}; }
Status UnavailableError(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }

Status ErrnoToStatus(int error_number, std::string_view what) {
  std::string message(what);
  message += ": ";
  message += std::strerror(error_number);
  StatusCode code = StatusCode::kIo;
  switch (error_number) {
    case ENOENT: code = StatusCode::kNotFound; break;
    case EEXIST: code = StatusCode::kAlreadyExists; break;
    case EACCES:
    case EPERM:
    case EROFS:
    // RESOLVE_BENEATH reports an escape as EXDEV, O_NOFOLLOW a symlink as ELOOP.
    case EXDEV:
    case ELOOP: code = StatusCode::kPermissionDenied; break;
    case EISDIR: code = StatusCode::kIsDirectory; break;
    case ENOTDIR: code = StatusCode::kNotDirectory; break;
    case ENOTEMPTY: code = StatusCode::kNotEmpty; break;
    case EINVAL:
    case ENAMETOOLONG: code = StatusCode::kInvalidArgument; break;
    case EFBIG: code = StatusCode::kTooLarge; break;
    case ENOSPC:
    case EDQUOT:
    case EMFILE:
    case ENFILE:
    case ENOMEM:
    case EAGAIN: code = StatusCode::kResourceExhausted; break;
    case ETIMEDOUT: code = StatusCode::kTimeout; break;
    case ECANCELED: code = StatusCode::kCancelled; break;
    case ENOSYS:
    case EOPNOTSUPP: code = StatusCode::kUnsupported; break;
    default: break;
  }
  return Status(code, std::move(message));
}

}  // namespace toolvfs
