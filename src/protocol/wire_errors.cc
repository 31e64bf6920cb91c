#include "protocol/wire_errors.h"

#include <cassert>

namespace toolvfs {

int JsonRpcErrorCode(StatusCode code) {
  switch (code) {
    case StatusCode::kInvalidArgument:
    case StatusCode::kTooLarge:
    case StatusCode::kResourceExhausted:
    case StatusCode::kIsDirectory:
    case StatusCode::kNotDirectory:
    case StatusCode::kNotEmpty: return kJsonRpcInvalidParams;
    case StatusCode::kPermissionDenied: return kJsonRpcAccessDenied;
    case StatusCode::kNotFound:
    case StatusCode::kNoProject: return kJsonRpcNotFound;
    case StatusCode::kAlreadyExists: return kJsonRpcAlreadyExists;
    case StatusCode::kTimeout: return kJsonRpcTimeout;
    case StatusCode::kCancelled: return kJsonRpcCancelled;
    case StatusCode::kUnavailable: return kJsonRpcUnavailable;
    case StatusCode::kUnsupported: return kJsonRpcMethodNotFound;
    case StatusCode::kIo:
    case StatusCode::kChanged:  // only after every retry: a racing writer, not the request
    case StatusCode::kInternal:
    case StatusCode::kOk: return kJsonRpcInternalError;
  }
  return kJsonRpcInternalError;
}

WireMessage ErrorResponse(const RequestId& id, const Status& status) {
  assert(!status.ok() && "ErrorResponse needs an error");
  if (status.ok()) {
    return SerializeError(id, kJsonRpcInternalError, "Internal error: an OK status was answered as an error");
  }
  return SerializeError(id, JsonRpcErrorCode(status.code()), status.message());
}

}  // namespace toolvfs
