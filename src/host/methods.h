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
// Handlers may run concurrently on different threads with the same context:
// everything a context points to must be thread-safe (ProjectFiles is).
#pragma once

#include <span>
#include <string_view>

#include "project/project_files.h"
#include "protocol/jsonrpc.h"

namespace toolvfs {

struct MethodContext {
  ProjectFiles& project;
};

using MethodHandler = WireMessage (*)(const Message& request, const MethodContext& context);

struct MethodSpec {
  std::string_view name;  // namespaced: "fs.read"
  MethodHandler handler;
  bool may_block;  // run on a worker thread (see above)
};

// The fs.* methods, in the order init's `host.methods` lists them.
std::span<const MethodSpec> FsMethods();

// Every method this host serves (the fs.* methods for now; http.* and
// process.run join with the policy issue).
std::span<const MethodSpec> AllMethods();

// nullptr for an unknown method.
const MethodSpec* FindMethod(std::string_view name);

}  // namespace toolvfs
