// The methods a vfs tool may call (SPEC.md §4.3), one table for all of them.
//
// A handler turns one well-formed request into its answer: it checks its
// params (Params::ExpectOnly first, then the typed accessors), performs the
// operation through the ProjectFiles store of the context, and returns the
// serialized response line, an error answer included (ErrorResponse). It
// never throws and never blocks on the tool: it has no access to the pipes.
//
// The session loop (tool_session.h) looks a method up by name: an unknown
// name is answered -32601 by the loop, not here. Handlers marked `may_block`
// (grep walks the whole project; later http.* and process.run) run on the
// session's worker threads so that other requests are served meanwhile;
// the others run inline on the loop thread, which keeps the round trip of a
// small fs.read free of thread hand-offs (bench/protocol).
//
// Every handler asks context.gate (access_gate.h) before it touches a
// target; the RequestScope carries what the audit log records.
//
// Handlers may run concurrently on different threads with the same context:
// everything a context points to must be thread-safe (ProjectFiles and
// AccessGate are).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <span>
#include <string>
#include <string_view>

#include "host/access_gate.h"
#include "project/project_files.h"
#include "protocol/jsonrpc.h"
#include "protocol/wire_errors.h"
#include "sandbox/launcher.h"

namespace toolvfs {

// Limits of http.get / http.post (SPEC.md §3.2, issue 4).
struct HttpSettings {
  std::chrono::milliseconds timeout{30'000};
  uint64_t max_body_bytes = uint64_t{10} << 20;
  int max_redirects = 5;
};

// Starts a process.run child. The vfs runtime binds the same launcher it
// starts the tool with, so the sandbox confines these children too.
using ProcessLauncher = std::function<Result<ChildProcess>(const LaunchSpec& spec)>;

struct MethodContext {
  ProjectFiles& project;
  AccessGate& gate;
  // The host's environment, read only for the variables the policy lets a
  // request use (${VAR} in http.* headers, process.run envs). Null: none.
  const std::map<std::string, std::string>* host_environment = nullptr;
  // process.run's working directory: the project's real directory, made on
  // first use (ProjectFiles::Materialize: free for the fs store, a synced
  // copy for the others, so a run that never calls process.run copies
  // nothing). Called from worker threads; must be thread-safe. Empty, or a
  // failure: process.run fails with that error (NoProject).
  std::function<Result<std::string>()> process_working_directory;
  ProcessLauncher launch_process;  // empty: Launch()
  HttpSettings http;
  // The most bytes one fs.read returns, on top of the store's own read
  // limit (StoreOptions::max_read_bytes): the session's message limit
  // (max_message_mb), which sizes its answer limit (AnswerLimitBytes), so
  // that a read within both limits always fits its answer whatever its
  // encoding. The default leaves the store's limit alone (builtins, which
  // have no message limit).
  uint64_t max_read_bytes = std::numeric_limits<uint64_t>::max();
  // The longest answer line (AnswerLimitBytes of the message limit): a
  // handler whose answer can grow without bound (fs.grep) stops building
  // it there instead of building it whole and failing. The default: no
  // limit (builtins).
  uint64_t max_answer_bytes = std::numeric_limits<uint64_t>::max();
  // The host's budget for answers being built, shared by every request in
  // flight in every session of the runtime (fs.grep's lines and JSON);
  // null: none. Not owned.
  MemoryBudget* answer_memory = nullptr;
};

using MethodHandler = WireMessage (*)(const Message& request, const MethodContext& context,
                                      RequestScope& scope);

// What most handlers are written as: the answer, or the error to answer
// with. Handle<serve> is the MethodHandler for it.
using ServeFunction = Result<WireMessage> (*)(const Message& request, const MethodContext& context,
                                              RequestScope& scope);

// A failed Status becomes the error answer (its wire code comes from
// ErrorResponse, the one place that maps them) and the scope's error code.
template <ServeFunction serve>
WireMessage Handle(const Message& request, const MethodContext& context, RequestScope& scope) {
  Result<WireMessage> answer = serve(request, context, scope);
  if (answer.ok()) return std::move(answer).value();
  scope.set_error_code(JsonRpcErrorCode(answer.status().code()));
  return ErrorResponse(request.id(), answer.status());
}

struct MethodSpec {
  std::string_view name;  // namespaced: "fs.read"
  MethodHandler handler;
  bool may_block;  // run on a worker thread (see above)
};

// The fs.* methods, in the order init's `host.methods` lists them.
std::span<const MethodSpec> FsMethods();

// http.get, http.post (http_methods.cc).
std::span<const MethodSpec> HttpMethods();

// process.run (process_methods.cc).
std::span<const MethodSpec> ProcessMethods();

// Every method this host serves: fs.*, http.*, process.run, in that order.
std::span<const MethodSpec> AllMethods();

// nullptr for an unknown method.
const MethodSpec* FindMethod(std::string_view name);

}  // namespace toolvfs
