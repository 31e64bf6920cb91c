// Status -> JSON-RPC error code of the VFS protocol: the one place where the
// status codes of the code base meet the protocol's wire codes (SPEC.md
// §2.5). Handlers return a Status; the host answers with ErrorResponse.
#pragma once

#include "core/status.h"
#include "protocol/jsonrpc.h"

namespace toolvfs {

// The wire code for `code`:
//   InvalidArgument, TooLarge, ResourceExhausted, IsDirectory, NotDirectory,
//   NotEmpty -> -32602 (invalid params; the message names the value or limit)
//   PermissionDenied -> -32001   NotFound, NoProject -> -32002
//   AlreadyExists -> -32003      Timeout -> -32004   Cancelled -> -32005
//   Unsupported -> -32601        Io, Internal (and kOk, a caller bug) -> -32603
//   Unavailable -> -32006 (the store's server is down or unreachable: the
//   same request may succeed later, unlike -32603)
// NoProject is -32002: with the null store there are no project files, so a
// tool sees what it would see for a missing file and can handle it alike.
int JsonRpcErrorCode(StatusCode code);

// {"jsonrpc":"2.0","id":ID,"error":{"code":JsonRpcErrorCode(status.code()),
// "message":status.message()}}\n. `status` must not be OK.
WireMessage ErrorResponse(const RequestId& id, const Status& status);

}  // namespace toolvfs
