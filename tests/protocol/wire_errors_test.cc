#include "protocol/wire_errors.h"

#include <gtest/gtest.h>

namespace toolvfs {
namespace {

TEST(WireErrorsTest, StatusCodeTable) {
  // SPEC.md §2.5, plus NoProject (documented in docs/protocol.md).
  const std::pair<StatusCode, int> table[] = {
      {StatusCode::kInvalidArgument, -32602},   {StatusCode::kTooLarge, -32602},
      {StatusCode::kResourceExhausted, -32602}, {StatusCode::kIsDirectory, -32602},
      {StatusCode::kNotDirectory, -32602},      {StatusCode::kNotEmpty, -32602},
      {StatusCode::kPermissionDenied, -32001},  {StatusCode::kNotFound, -32002},
      {StatusCode::kNoProject, -32002},         {StatusCode::kAlreadyExists, -32003},
      {StatusCode::kTimeout, -32004},           {StatusCode::kCancelled, -32005},
      {StatusCode::kIo, -32603},                {StatusCode::kInternal, -32603},
      {StatusCode::kUnsupported, -32601},       {StatusCode::kChanged, -32603},
      {StatusCode::kUnavailable, -32006},
  };
  for (const auto& [code, wire] : table) {
    EXPECT_EQ(JsonRpcErrorCode(code), wire) << StatusCodeName(code);
  }
  EXPECT_EQ(std::size(table), static_cast<size_t>(StatusCode::kUnavailable))
      << "every status code but kOk is in the table";
}

TEST(WireErrorsTest, ErrorResponseFromStatus) {
  EXPECT_EQ(ErrorResponse(RequestId(int64_t{3}),
                          PermissionDeniedError(
                              "Access denied: path '.env' is in the sensitive paths list"))
                .ToString(),
            "{\"jsonrpc\":\"2.0\",\"id\":3,\"error\":{\"code\":-32001,\"message\":\"Access "
            "denied: path '.env' is in the sensitive paths list\"}}\n");
  EXPECT_EQ(ErrorResponse(RequestId(std::string("r")), NotFoundError("File 'a' does not exist"))
                .ToString(),
            "{\"jsonrpc\":\"2.0\",\"id\":\"r\",\"error\":{\"code\":-32002,\"message\":\"File "
            "'a' does not exist\"}}\n");
}

}  // namespace
}  // namespace toolvfs
