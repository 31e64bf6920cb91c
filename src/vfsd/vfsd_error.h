// The error codes of vfsd (the source document's set, SPEC.md §2.5) and the
// one place where the code base's Status codes become them.
#pragma once

#include <string>
#include <string_view>

#include "core/status.h"

namespace toolvfs {

enum class VfsdErrorCode {
  kArgument,     // E_ARG: bad or missing params, an invalid frame or path
  kUnsupported,  // E_UNSUPPORTED: unknown op or version; a store without the feature
  kNotFound,     // E_NOENT
  kPermission,   // E_PERM: the allowlist, an escape, the wrong end of a handle
  kIo,           // E_IO: the operating system or the store failed
  kClosed,       // E_CLOSED: a handle that is closed or was never opened
  kRange,        // E_RANGE: a frame or value beyond its bound
  kLimit,        // E_LIMIT: too many open handles, or too many bytes staged
};

// "E_ARG", "E_UNSUPPORTED", ...
std::string_view VfsdErrorCodeName(VfsdErrorCode code);

// The JSON-RPC code of the same meaning (SPEC.md §2.5), which the audit
// log records for every front end alike.
int AuditCodeOf(VfsdErrorCode code);

struct VfsdError {
  VfsdErrorCode code = VfsdErrorCode::kIo;
  std::string message;  // one line naming the value and the reason

  // InvalidArgument, AlreadyExists, IsDirectory, NotDirectory, NotEmpty ->
  // E_ARG; PermissionDenied -> E_PERM; NotFound, NoProject -> E_NOENT;
  // TooLarge -> E_RANGE; ResourceExhausted -> E_LIMIT; Unsupported ->
  // E_UNSUPPORTED; the rest (Io, Timeout, Cancelled, Internal, Changed,
  // Unavailable) ->
  // E_IO. `status` must not be OK.
  static VfsdError FromStatus(const Status& status);
};

}  // namespace toolvfs
