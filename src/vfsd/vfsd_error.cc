#include "vfsd/vfsd_error.h"

namespace toolvfs {

std::string_view VfsdErrorCodeName(VfsdErrorCode code) {
  switch (code) {
    case VfsdErrorCode::kArgument: return "E_ARG";
    case VfsdErrorCode::kUnsupported: return "E_UNSUPPORTED";
    case VfsdErrorCode::kNotFound: return "E_NOENT";
    case VfsdErrorCode::kPermission: return "E_PERM";
    case VfsdErrorCode::kIo: return "E_IO";
    case VfsdErrorCode::kClosed: return "E_CLOSED";
    case VfsdErrorCode::kRange: return "E_RANGE";
    case VfsdErrorCode::kLimit: return "E_LIMIT";
  }
  return "E_IO";
}

int AuditCodeOf(VfsdErrorCode code) {
  switch (code) {
    case VfsdErrorCode::kPermission: return -32001;
    case VfsdErrorCode::kNotFound: return -32002;
    case VfsdErrorCode::kUnsupported: return -32601;
    case VfsdErrorCode::kIo: return -32603;
    case VfsdErrorCode::kArgument:
    case VfsdErrorCode::kClosed:
    case VfsdErrorCode::kRange:
    case VfsdErrorCode::kLimit: return -32602;
  }
  return -32603;
}

VfsdError VfsdError::FromStatus(const Status& status) {
  VfsdErrorCode code = VfsdErrorCode::kIo;
  switch (status.code()) {
    case StatusCode::kInvalidArgument:
    case StatusCode::kAlreadyExists:
    case StatusCode::kIsDirectory:
    case StatusCode::kNotDirectory:
    case StatusCode::kNotEmpty: code = VfsdErrorCode::kArgument; break;
    case StatusCode::kPermissionDenied: code = VfsdErrorCode::kPermission; break;
    case StatusCode::kNotFound:
    case StatusCode::kNoProject: code = VfsdErrorCode::kNotFound; break;
    case StatusCode::kTooLarge: code = VfsdErrorCode::kRange; break;
    case StatusCode::kResourceExhausted: code = VfsdErrorCode::kLimit; break;
    case StatusCode::kUnsupported: code = VfsdErrorCode::kUnsupported; break;
    case StatusCode::kOk:
    case StatusCode::kTimeout:
    case StatusCode::kCancelled:
    case StatusCode::kIo:
    case StatusCode::kInternal:
    case StatusCode::kChanged:
    // vfsd's set has no code of its own for it; the message says the
    // server is unavailable and that a retry may succeed.
    case StatusCode::kUnavailable: code = VfsdErrorCode::kIo; break;
  }
  return VfsdError{code, status.message()};
}

}  // namespace toolvfs
